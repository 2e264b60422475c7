//! uclamp's runqueue side (`kernel/sched/core.c`, v5.15 and v6.18): each CPU's clamp
//! buckets, max-aggregated over its runnable fair and rt tasks (the classes with
//! `uclamp_enabled`; deadline tasks do not count), which schedutil reads through
//! `CpuUtil::uclamp_min` / `uclamp_max`. No per-group clamps (`cpu.uclamp.min/max`): a
//! task's effective value is its request restricted by the system default only.

use schedlab_sched_api::cpufreq::SCALE;
use schedlab_sched_api::UclampReq;
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
const MIN: usize = 0;
const MAX: usize = 1;

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

/// Every CPU's aggregation and every task's refcounted values.
#[derive(Clone, Debug)]
pub(super) struct Uclamp {
    /// `sched_uclamp_used`: enabled the first time a task asks for a clamp
    /// (`uclamp_validate`); until then nothing is aggregated, as in the kernel.
    pub(super) used: bool,
    rq: Vec<UclampRq>,
    /// Per task: the effective values it is counted with on its CPU (`uc_se->active`,
    /// `uc_se->value`); `None`: not counted.
    active: Vec<Option<[u32; 2]>>,
}

impl Uclamp {
    pub(super) fn new(nr_cpus: usize) -> Uclamp {
        Uclamp { used: false, rq: vec![UclampRq::default(); nr_cpus], active: Vec::new() }
    }

    /// A task with requests `req` appeared: the static key turns on at the first request.
    pub(super) fn note_request(&mut self, req: UclampReq) {
        self.used |= !req.is_none();
    }

    /// `uclamp_eff_get` without task groups: the request (or its default, the rt one for an
    /// rt task), at most the system default.
    fn eff(req: UclampReq, rt: bool) -> [u32; 2] {
        let min = req.min.unwrap_or(if rt { UCLAMP_MIN_RT_DEFAULT } else { uclamp_none(MIN) });
        let max = req.max.unwrap_or(uclamp_none(MAX));
        [min.min(UCLAMP_DEFAULT[MIN]), max.min(UCLAMP_DEFAULT[MAX])]
    }

    /// `uclamp_rq_inc` / `uclamp_rq_inc_id`: `p` (of the rt class if `rt`, else fair)
    /// becomes runnable on `cpu`; an idle runqueue first drops its held values
    /// (`uclamp_idle_reset`).
    pub(super) fn inc(&mut self, cpu: CpuId, p: TaskId, req: UclampReq, rt: bool) {
        if !self.used {
            return;
        }
        if self.active.len() <= p {
            self.active.resize(p + 1, None);
        }
        if self.active[p].is_some() {
            return;
        }
        let v = Self::eff(req, rt);
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
    pub(super) fn dec(&mut self, cpu: CpuId, p: TaskId) {
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
    pub(super) fn rq_values(&self, cpu: CpuId) -> (u32, u32) {
        let v = self.rq[cpu].value;
        (v[MIN], v[MAX])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(min: Option<u32>, max: Option<u32>) -> UclampReq {
        UclampReq { min, max }
    }

    /// The aggregation is the max over runnable tasks, drops when the holder leaves, and
    /// an idle runqueue keeps the last maximum but no minimum.
    #[test]
    fn max_aggregation_follows_runnable_tasks() {
        let mut u = Uclamp::new(1);
        u.note_request(req(Some(512), None));
        u.inc(0, 0, req(Some(512), Some(700)), false);
        u.inc(0, 1, req(Some(100), Some(300)), false);
        assert_eq!(u.rq_values(0), (512, 700));
        u.dec(0, 0);
        assert_eq!(u.rq_values(0), (100, 300), "the other task's bucket");
        u.dec(0, 0);
        assert_eq!(u.rq_values(0), (100, 300), "a second dequeue is not counted");
        u.dec(0, 1);
        assert_eq!(u.rq_values(0), (0, 300), "idle: no minimum, the last maximum held");
        u.inc(0, 2, req(None, None), true);
        assert_eq!(u.rq_values(0), (UCLAMP_MIN_RT_DEFAULT, 1024), "idle exit resets; rt default minimum");
    }

    /// Two tasks in one bucket (205 wide): the bucket keeps the higher value until it
    /// empties (the kernel's accepted over-boost).
    #[test]
    fn a_bucket_keeps_its_highest_value() {
        let mut u = Uclamp::new(1);
        u.note_request(req(Some(1), None));
        u.inc(0, 0, req(Some(450), None), false);
        u.inc(0, 1, req(Some(420), None), false);
        u.dec(0, 0);
        assert_eq!(u.rq_values(0).0, 450);
        u.dec(0, 1);
        assert_eq!(u.rq_values(0).0, 0);
    }

    /// Before any task asks for a clamp nothing is aggregated (`sched_uclamp_used` off).
    #[test]
    fn nothing_is_aggregated_before_uclamp_is_used() {
        let mut u = Uclamp::new(1);
        u.inc(0, 0, req(None, None), true);
        assert_eq!(u.rq_values(0), (0, 1024));
        assert!(!u.used);
    }
}
