//! uclamp (`kernel/sched/core.c`, v5.15 and v6.18): each CPU's clamp buckets,
//! max-aggregated over its runnable fair and rt tasks (the classes with `uclamp_enabled`;
//! deadline tasks do not count), which schedutil reads through `CpuUtil::uclamp_min` /
//! `uclamp_max`; the task groups' effective `cpu.uclamp.min/max` (`cpu_util_update_eff`)
//! and each task's effective clamps (`uclamp_eff_get`, `uclamp_eff_value`).
//!
//! The class chain owns this state and is its only writer; it lends it, read-only, to the
//! fair class for the length of each fair hook (`Chain::fair_call`), which is how
//! energy-aware placement and the fitness tests see the clamps (ARCHITECTURE.md).

use schedlab_sched_api::cpufreq::SCALE;
use schedlab_sched_api::{TaskGroups, TaskInfo, UclampReq};
use schedlab_sim::{CpuId, TaskId};

/// `UCLAMP_BUCKETS` (`CONFIG_UCLAMP_BUCKETS_COUNT`, default 5).
const UCLAMP_BUCKETS: u32 = 5;
/// `UCLAMP_BUCKET_DELTA`: `DIV_ROUND_CLOSEST(SCHED_CAPACITY_SCALE, UCLAMP_BUCKETS)` = 205.
const UCLAMP_BUCKET_DELTA: u32 = (SCALE + UCLAMP_BUCKETS / 2) / UCLAMP_BUCKETS;
/// `sysctl_sched_uclamp_util_min_rt_default`: an rt task's minimum clamp when it set none.
pub(super) const UCLAMP_MIN_RT_DEFAULT: u32 = SCALE;
/// `sysctl_sched_uclamp_util_min` / `_max` (`uclamp_default[]`): the system-wide ceilings
/// of the effective values, 1024 both.
const UCLAMP_DEFAULT: [u32; 2] = [SCALE, SCALE];
/// `enum uclamp_id`.
pub(crate) const MIN: usize = 0;
pub(crate) const MAX: usize = 1;

/// `uclamp_bucket_id`.
fn bucket_id(value: u32) -> usize {
    (value / UCLAMP_BUCKET_DELTA).min(UCLAMP_BUCKETS - 1) as usize
}

/// `uclamp_none`: no minimum, the whole capacity as the maximum.
fn uclamp_none(id: usize) -> u32 {
    if id == MIN {
        0
    } else {
        SCALE
    }
}

/// `struct uclamp_bucket`.
#[derive(Clone, Copy, Debug, Default)]
struct Bucket {
    value: u32,
    tasks: u32,
}

/// `rq->uclamp[]` and `rq->uclamp_flags`.
#[derive(Clone, Debug)]
struct UclampRq {
    value: [u32; 2],
    bucket: [[Bucket; UCLAMP_BUCKETS as usize]; 2],
    /// `UCLAMP_FLAG_IDLE`: no runnable task; the maximum holds the last one's value.
    idle: bool,
}

impl Default for UclampRq {
    /// `init_uclamp_rq`.
    fn default() -> Self {
        UclampRq { value: [uclamp_none(MIN), uclamp_none(MAX)], bucket: Default::default(), idle: true }
    }
}

/// Every CPU's aggregation, every task group's effective clamps and every task's
/// refcounted values. `Default`: no CPU, uclamp unused (the fair class's view outside a
/// lent call, and a fair class run without the chain).
#[derive(Clone, Debug, Default)]
pub(crate) struct Uclamp {
    /// `sched_uclamp_used`: enabled the first time a task asks for a clamp
    /// (`uclamp_validate`) or a group's `cpu.uclamp.*` is written (`cpu_uclamp_write`);
    /// until then nothing is aggregated, as in the kernel.
    pub(crate) used: bool,
    rq: Vec<UclampRq>,
    /// Per task: the effective values it is counted with on its CPU (`uc_se->active`,
    /// `uc_se->value`); `None`: not counted.
    active: Vec<Option<[u32; 2]>>,
    /// Per cgroup (`TaskGroups::cgroups` order): `tg->uclamp[]`, the effective clamps.
    tg: Vec<[u32; 2]>,
}

impl Uclamp {
    pub(crate) fn new(nr_cpus: usize) -> Uclamp {
        Uclamp { rq: vec![UclampRq::default(); nr_cpus], ..Uclamp::default() }
    }

    /// A task with requests `req` appeared: the static key turns on at the first request.
    pub(crate) fn note_request(&mut self, req: UclampReq) {
        self.used |= !req.is_none();
    }

    /// The groups' `cpu.uclamp.min/max` as written (`cpu_uclamp_write`: any write turns
    /// the static key on), then `cpu_util_update_eff` over the hierarchy, parents first
    /// (`TaskGroups::cgroups` is in that order): each clamp is the group's request capped
    /// by its parent's effective one — the root's are 1024 both (`init_uclamp`) — and the
    /// effective minimum is capped by the effective maximum.
    pub(crate) fn set_groups(&mut self, groups: &TaskGroups) {
        self.tg.clear();
        for g in &groups.cgroups {
            self.used |= !g.uclamp.is_none();
            let parent = g.parent.map_or([SCALE, SCALE], |p| self.tg[p]);
            let req = [g.uclamp.min.unwrap_or(uclamp_none(MIN)), g.uclamp.max.unwrap_or(uclamp_none(MAX))];
            let mut eff = [req[MIN].min(parent[MIN]), req[MAX].min(parent[MAX])];
            eff[MIN] = eff[MIN].min(eff[MAX]);
            self.tg.push(eff);
        }
    }

    /// `uclamp_eff_get`: the request (or its default, the rt one for an rt task),
    /// clamped into its cgroup's effective `[min, max]` (`uclamp_tg_restrict`, v5.14+ —
    /// so v5.15 and v6.18 alike: a task in the root group or an autogroup is not
    /// restricted), at most the system default.
    fn eff(&self, info: &TaskInfo, rt: bool) -> [u32; 2] {
        let req = info.uclamp;
        let mut v = [
            req.min.unwrap_or(if rt { UCLAMP_MIN_RT_DEFAULT } else { uclamp_none(MIN) }),
            req.max.unwrap_or(uclamp_none(MAX)),
        ];
        if let Some(tg) = info.cgroup.get().and_then(|g| self.tg.get(g)) {
            v = v.map(|x| x.max(tg[MIN]).min(tg[MAX]));
        }
        [v[MIN].min(UCLAMP_DEFAULT[MIN]), v[MAX].min(UCLAMP_DEFAULT[MAX])]
    }

    /// `uclamp_eff_value(p, clamp_id)` for both ids: the values `p` is counted with while
    /// it is (`uc_se->active`), else the ones it would be (`uclamp_eff_get`).
    pub(crate) fn eff_value(&self, p: TaskId, info: &TaskInfo, rt: bool) -> [u32; 2] {
        self.active.get(p).copied().flatten().unwrap_or_else(|| self.eff(info, rt))
    }

    /// `uclamp_rq_is_idle`: no runnable task on `cpu` is counted (`UCLAMP_FLAG_IDLE`).
    pub(crate) fn rq_is_idle(&self, cpu: CpuId) -> bool {
        self.rq.get(cpu).is_none_or(|r| r.idle)
    }

    /// `uclamp_rq_inc` / `uclamp_rq_inc_id`: `p` (of the rt class if `rt`, else fair)
    /// becomes runnable on `cpu`; an idle runqueue first drops its held values
    /// (`uclamp_idle_reset`).
    pub(crate) fn inc(&mut self, cpu: CpuId, p: TaskId, info: &TaskInfo, rt: bool) {
        if !self.used {
            return;
        }
        if self.active.len() <= p {
            self.active.resize(p + 1, None);
        }
        if self.active[p].is_some() {
            return;
        }
        let v = self.eff(info, rt);
        let rq = &mut self.rq[cpu];
        for id in [MIN, MAX] {
            if rq.idle {
                rq.value[id] = v[id];
            }
            let b = &mut rq.bucket[id][bucket_id(v[id])];
            b.tasks += 1;
            // Local max aggregation: a bucket tracks the highest value it holds.
            if b.tasks == 1 || v[id] > b.value {
                b.value = v[id];
            }
            rq.value[id] = rq.value[id].max(v[id]);
        }
        rq.idle = false;
        self.active[p] = Some(v);
    }

    /// `uclamp_rq_dec` / `uclamp_rq_dec_id`: `p` leaves `cpu`'s runnable set; when its
    /// bucket empties and held the runqueue's value, the value drops to the highest
    /// non-empty bucket's (`uclamp_rq_max_value`).
    pub(crate) fn dec(&mut self, cpu: CpuId, p: TaskId) {
        let Some(v) = self.active.get_mut(p).and_then(Option::take) else { return };
        let rq = &mut self.rq[cpu];
        for id in [MIN, MAX] {
            let b = &mut rq.bucket[id][bucket_id(v[id])];
            b.tasks = b.tasks.saturating_sub(1);
            if b.tasks > 0 || b.value < rq.value[id] {
                continue;
            }
            rq.value[id] = Self::max_value(rq, id, v[id]);
        }
    }

    /// `uclamp_rq_max_value`: the highest non-empty bucket's value; none left, the idle
    /// value (`uclamp_idle_value`: no minimum; the maximum keeps the last task's
    /// `clamp_value` to avoid a frequency spike, and the runqueue is marked idle).
    fn max_value(rq: &mut UclampRq, id: usize, clamp_value: u32) -> u32 {
        if let Some(b) = rq.bucket[id].iter().rev().find(|b| b.tasks > 0) {
            return b.value;
        }
        if id == MAX {
            rq.idle = true;
            return clamp_value;
        }
        uclamp_none(MIN)
    }

    /// `uclamp_rq_get(rq, UCLAMP_MIN)` and `(rq, UCLAMP_MAX)` of `cpu`.
    pub(crate) fn rq_values(&self, cpu: CpuId) -> (u32, u32) {
        let v = self.rq.get(cpu).map_or([uclamp_none(MIN), uclamp_none(MAX)], |r| r.value);
        (v[MIN], v[MAX])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_sched_api::{CgroupDef, CpuMax, OptIdx, TaskPolicy};

    fn req(min: Option<u32>, max: Option<u32>) -> UclampReq {
        UclampReq { min, max }
    }

    /// A task with requests `r`, in cgroup `cg` (none: the root).
    fn task(r: UclampReq, cg: Option<usize>) -> TaskInfo {
        TaskInfo {
            name: "t".into(),
            nice: 0,
            policy: TaskPolicy::Normal,
            affinity: schedlab_machine::CpuSet::default(),
            cpu: 0,
            parent: OptIdx::NONE,
            cgroup: cg.map_or(OptIdx::NONE, OptIdx::some),
            session: OptIdx::NONE,
            slice: None,
            kthread: false,
            uclamp: r,
            core_cookie: 0,
        }
    }

    fn group(parent: Option<usize>, min: Option<u32>, max: Option<u32>) -> CgroupDef {
        CgroupDef {
            name: "g".into(),
            parent,
            weight: 100,
            nice: None,
            idle: false,
            max: CpuMax::default(),
            cpus: None,
            partition: Default::default(),
            uclamp: req(min, max),
        }
    }

    /// `cpu_util_update_eff`: a child's clamps are capped by its parent's effective ones
    /// and its minimum by its maximum; `uclamp_tg_restrict` clamps a task's request (or
    /// default) into its group's range, and a root task is not restricted.
    #[test]
    fn group_clamps_restrict_the_task() {
        let mut u = Uclamp::new(1);
        let groups = TaskGroups {
            cgroups: vec![group(None, Some(300), Some(512)), group(Some(0), Some(900), Some(1024))],
            sessions: Vec::new(),
        };
        u.set_groups(&groups);
        assert!(u.used, "writing cpu.uclamp.* turns the static key on");
        assert_eq!(u.tg, vec![[300, 512], [300, 512]]);
        let asks_80 = req(Some(819), None);
        assert_eq!(u.eff_value(0, &task(asks_80, Some(0)), false), [512, 512], "min 80 % → the group's max");
        assert_eq!(u.eff_value(0, &task(req(None, None), Some(1)), false), [300, 512], "defaults clamped");
        assert_eq!(u.eff_value(0, &task(asks_80, None), false), [819, 1024], "root: unrestricted");
        u.inc(0, 0, &task(asks_80, Some(0)), false);
        assert_eq!(u.rq_values(0), (512, 512));
        assert!(!u.rq_is_idle(0));
    }

    /// The aggregation is the max over runnable tasks, drops when the holder leaves, and
    /// an idle runqueue keeps the last maximum but no minimum.
    #[test]
    fn max_aggregation_follows_runnable_tasks() {
        let mut u = Uclamp::new(1);
        u.note_request(req(Some(512), None));
        u.inc(0, 0, &task(req(Some(512), Some(700)), None), false);
        u.inc(0, 1, &task(req(Some(100), Some(300)), None), false);
        assert_eq!(u.rq_values(0), (512, 700));
        u.dec(0, 0);
        assert_eq!(u.rq_values(0), (100, 300), "the other task's bucket");
        u.dec(0, 0);
        assert_eq!(u.rq_values(0), (100, 300), "a second dequeue is not counted");
        u.dec(0, 1);
        assert_eq!(u.rq_values(0), (0, 300), "idle: no minimum, the last maximum held");
        u.inc(0, 2, &task(req(None, None), None), true);
        assert_eq!(u.rq_values(0), (UCLAMP_MIN_RT_DEFAULT, 1024), "idle exit resets; rt default minimum");
    }

    /// Two tasks in one bucket (205 wide): the bucket keeps the higher value until it
    /// empties (the kernel's accepted over-boost).
    #[test]
    fn a_bucket_keeps_its_highest_value() {
        let mut u = Uclamp::new(1);
        u.note_request(req(Some(1), None));
        u.inc(0, 0, &task(req(Some(450), None), None), false);
        u.inc(0, 1, &task(req(Some(420), None), None), false);
        u.dec(0, 0);
        assert_eq!(u.rq_values(0).0, 450);
        u.dec(0, 1);
        assert_eq!(u.rq_values(0).0, 0);
    }

    /// Before any task asks for a clamp nothing is aggregated (`sched_uclamp_used` off).
    #[test]
    fn nothing_is_aggregated_before_uclamp_is_used() {
        let mut u = Uclamp::new(1);
        u.inc(0, 0, &task(req(None, None), None), true);
        assert_eq!(u.rq_values(0), (0, 1024));
        assert!(!u.used);
    }
}
