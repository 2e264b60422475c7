//! Hook-level tests of EEVDF placement against `kernel/sched/fair.c`: the fair class is
//! driven directly, without the kernel model, so the quantities the kernel computes (V,
//! lag, deadlines) can be read exactly.

use super::entity::Se;
use super::weights::calc_delta_fair;
use super::{vdiff, Fair};
use schedlab_machine::preset;
use schedlab_sched_api::{dequeue, enqueue, wf, Ctx, SchedClass, SelectKind, TaskPolicy};
use schedlab_sim::{Ns, TaskId};

use crate::testing::World;

/// A minimal stand-in for the kernel: one CPU's view, task infos, a clock.
struct Harness {
    w: World,
    f: Fair,
}

impl Harness {
    fn new(version: &str) -> Harness {
        let m = preset("smp2").unwrap();
        let f = Fair::eevdf(&m, &[("version".into(), version.into())]).unwrap();
        Harness { w: World::new(m), f }
    }

    /// CFS of `version` (4.9 or 5.15) on the same machine.
    fn cfs(version: &str) -> Harness {
        let mut h = Harness::new("6.18");
        h.f = Fair::cfs(&h.w.m, &[("version".into(), version.into())]).unwrap();
        h
    }

    fn with<R>(&mut self, f: impl FnOnce(&mut Fair, &mut Ctx) -> R) -> R {
        let Harness { w, f: fair } = self;
        w.ctx(|cx| f(fair, cx))
    }

    /// A new nice-`nice` task on CPU 0, forked and woken (`wake_up_new_task`).
    fn spawn(&mut self, nice: i32) -> TaskId {
        let p = self.w.add_task(nice, TaskPolicy::Normal, 0);
        self.with(|f, cx| f.task_new(cx, p, None));
        self.with(|f, cx| f.enqueue_task(cx, 0, p, enqueue::INITIAL));
        self.w.cpus[0].nr_running += 1;
        p
    }

    /// `schedule()` on CPU 0: put the running task, pick the next.
    fn schedule(&mut self) -> Option<TaskId> {
        if let Some(c) = self.w.cpus[0].curr {
            self.with(|f, cx| f.put_prev_task(cx, 0, c));
        }
        let next = self.with(|f, cx| f.pick_next_task(cx, 0));
        self.w.cpus[0].curr = next;
        next
    }

    fn advance(&mut self, ns: u64) {
        self.w.now = Ns(self.w.now.0 + ns);
    }

    fn se(&self, p: TaskId) -> Se {
        self.f.task_se(p)
    }
    fn root(&self) -> super::entity::RqId {
        self.f.root(0)
    }
    /// The task's true lag `V − v` while it is queued.
    fn lag(&self, p: TaskId) -> i64 {
        vdiff(self.f.avg_vruntime(self.root()), self.f.e(self.se(p)).vruntime)
    }
}

/// §2.5: a task that slept with lag `l` and wakes to a busy queue is placed so that its lag
/// right after insertion is again `l` (the inflation by (W + w)/W), up to rounding.
#[test]
fn waking_keeps_the_lag_it_slept_with() {
    let mut checked = 0;
    for v in ["6.6", "6.12", "6.18"] {
        let mut h = Harness::new(v);
        let (a, b, c) = (h.spawn(0), h.spawn(0), h.spawn(5));
        // Let `c` run a while, then make it sleep; then `a` and `b` run on.
        let mut guard = 0;
        while h.schedule() != Some(c) {
            h.advance(1_000_000);
            guard += 1;
            assert!(guard < 50, "v{v}: c never ran");
        }
        h.advance(300_000);
        let slept_lag = {
            h.with(|f, cx| f.update_curr(cx, f.root(0)));
            h.lag(c)
        };
        let done = h.with(|f, cx| f.dequeue_task(cx, 0, c, dequeue::SLEEP));
        assert!(done, "v{v}: c (just picked, so eligible) was delayed");
        h.w.cpus[0].nr_running -= 1;
        assert_eq!(h.f.e(h.se(c)).vlag, slept_lag, "v{v}: vlag stored at dequeue");
        for _ in 0..5 {
            h.schedule();
            h.advance(700_000);
        }
        h.with(|f, cx| f.enqueue_task(cx, 0, c, enqueue::WAKEUP));
        let now_lag = h.lag(c);
        assert!((now_lag - slept_lag).abs() <= 2, "v{v}: slept with lag {slept_lag}, woke with {now_lag}");
        assert!(slept_lag != 0, "v{v}: a zero lag proves nothing");
        let _ = (a, b);
        checked += 1;
    }
    assert_eq!(checked, 3);
}

/// §2.5: on an empty queue lag is dropped: the task is placed at the queue's V.
#[test]
fn waking_to_an_empty_queue_loses_the_lag() {
    let mut h = Harness::new("6.18");
    let a = h.spawn(0);
    h.with(|f, _| f.em(f.task_se(a)).vlag = 5_000_000);
    assert_eq!(h.schedule(), Some(a));
    h.w.cpus[0].curr = Some(a);
    let v_before = h.f.avg_vruntime(h.root());
    let done = h.with(|f, cx| f.dequeue_task(cx, 0, a, dequeue::SLEEP));
    assert!(done);
    h.w.cpus[0].nr_running -= 1;
    h.schedule();
    h.advance(2_000_000);
    h.with(|f, _| f.em(f.task_se(a)).vlag = 3_000_000);
    h.with(|f, cx| f.enqueue_task(cx, 0, a, enqueue::WAKEUP));
    let e = h.f.e(h.se(a));
    assert_eq!(vdiff(e.vruntime, h.f.rq(h.root()).min_vruntime), 0, "placed at V of an empty queue");
    let _ = v_before;
}

/// §2.11: a new task starts at V; from 6.12 its first deadline is half a request away
/// (PLACE_DEADLINE_INITIAL with ENQUEUE_INITIAL), in 6.6 a whole one.
#[test]
fn a_new_task_starts_at_v_with_half_a_request() {
    for (v, divisor) in [("6.6", 1), ("6.12", 2), ("6.18", 2)] {
        let mut h = Harness::new(v);
        let a = h.spawn(0);
        h.schedule();
        h.advance(3_000_000);
        h.with(|f, cx| f.update_curr(cx, f.root(0)));
        let b = h.spawn(0);
        let e = h.f.e(h.se(b));
        let vslice = calc_delta_fair(h.f.t.base_slice, e.load);
        assert_eq!(e.vlag, 0, "v{v}");
        assert_eq!(vdiff(e.deadline, e.vruntime), (vslice / divisor) as i64, "v{v}: first deadline");
        // Placed at V of the queue without it (the queue held only `a`).
        assert_eq!(e.vruntime, h.f.e(h.se(a)).vruntime, "v{v}: at V");
        let _ = (wf::FORK, SelectKind::Fork);
    }
}

/// §2.10: re-weighting a queued task keeps its lag's effect: its true lag w·(V − v) is
/// unchanged up to rounding (6.12 `reweight_eevdf`, 6.18 re-placement).
#[test]
fn reweight_keeps_the_true_lag() {
    for v in ["6.12", "6.18"] {
        let mut h = Harness::new(v);
        let (a, b) = (h.spawn(0), h.spawn(0));
        h.schedule();
        h.advance(1_000_000);
        h.with(|f, cx| f.update_curr(cx, f.root(0)));
        let waiting = if h.w.cpus[0].curr == Some(a) { b } else { a };
        let w0 = h.f.e(h.se(waiting)).load.weight as i64;
        let lag0 = h.lag(waiting) * w0;
        h.w.tasks[waiting].nice = 5;
        h.with(|f, cx| f.reweight_task(cx, waiting));
        let w1 = h.f.e(h.se(waiting)).load.weight as i64;
        assert_eq!(w1, 335, "v{v}");
        let lag1 = h.lag(waiting) * w1;
        assert!((lag1 - lag0).abs() <= 2 * w0, "v{v}: true lag {lag0} before, {lag1} after");
        h.f.check_fair(None).unwrap();
    }
}

/// `rd->overload` as the kernel keeps it (v5.15 `add_nr_running`, `update_sd_lb_stats`):
/// set when a runqueue goes from one task to two, still set after that runqueue drains
/// (nothing clears it on dequeue), cleared only by a balance at the root domain that
/// finds no runqueue with two tasks. `newidle_balance` returns early while it is clear.
#[test]
fn rd_overload_set_by_enqueue_cleared_only_by_root_balance() {
    use super::balance::CpuIdleType;
    let mut h = Harness::new("6.6");
    h.spawn(0);
    assert!(!h.f.rd_overload[0], "one task: nothing overloaded");
    // A second task, counted before the hook as the kernel model does (`add_nr_running`).
    let b = h.w.tasks.len();
    let mut info = h.w.tasks[0].clone();
    info.name = "b".into();
    h.w.tasks.push(info);
    h.with(|f, cx| f.task_new(cx, b, None));
    h.w.cpus[0].nr_running += 1;
    h.with(|f, cx| f.enqueue_task(cx, 0, b, enqueue::INITIAL));
    assert!(h.f.rd_overload[0], "a runqueue reached two tasks");
    h.with(|f, cx| assert!(f.dequeue_task(cx, 0, b, dequeue::SLEEP)));
    h.w.cpus[0].nr_running -= 1;
    assert!(h.f.rd_overload[0], "sub_nr_running does not clear rd->overload");
    let root = h.f.domains.per_cpu[1].len() - 1;
    h.f.adj.reset(2);
    h.with(|f, cx| f.load_balance(cx, 1, root, CpuIdleType::Idle, &mut true));
    assert!(!h.f.rd_overload[0], "a root balance that sees no overloaded runqueue clears it");
}

/// `max_newidle_lb_cost` decays by 3/256 once more than a second (HZ jiffies) after its last
/// decay, on the periodic balance's visit to every domain (v5.15 `rebalance_domains`, v6.6
/// `update_newidle_cost`), and the runqueue's `max_idle_balance_cost` follows, floored at
/// the migration cost. A costlier newidle attempt restarts the decay clock in v6.6 only.
#[test]
fn max_newidle_lb_cost_decays_about_one_percent_a_second() {
    use super::balance::CpuIdleType;
    for version in ["5.15", "6.6"] {
        let mut h = if version == "5.15" { Harness::cfs(version) } else { Harness::new(version) };
        let hz = u64::from(h.w.m.hz);
        let levels = h.f.domains.per_cpu[0].len();
        for sd in &mut h.f.domains.per_cpu[0] {
            sd.max_newidle_lb_cost = 1 << 20;
        }
        h.f.cpu[0].max_idle_balance_cost = 1 << 30;
        h.advance(500_000_000);
        h.f.adj.reset(2);
        h.with(|f, cx| f.rebalance_domains(cx, 0, CpuIdleType::Idle));
        assert_eq!(h.f.domains.per_cpu[0][0].max_newidle_lb_cost, 1 << 20, "{version}: not a second yet");
        assert_eq!(h.f.cpu[0].max_idle_balance_cost, 1 << 30, "{version}: no decay, no update");
        h.advance(600_000_000);
        h.with(|f, cx| f.rebalance_domains(cx, 0, CpuIdleType::Idle));
        let decayed = (1u64 << 20) * 253 / 256;
        assert!(h.f.domains.per_cpu[0].iter().all(|sd| sd.max_newidle_lb_cost == decayed), "{version}");
        let floor = h.f.t.migration_cost;
        assert_eq!(h.f.cpu[0].max_idle_balance_cost, (decayed * levels as u64).max(floor), "{version}");
        h.with(|f, cx| f.rebalance_domains(cx, 0, CpuIdleType::Idle));
        assert_eq!(h.f.domains.per_cpu[0][0].max_newidle_lb_cost, decayed, "{version}: once per second");
        // A costlier attempt 0.9 s later: v6.6 restarts the clock, v5.15 keeps it.
        h.advance(900_000_000);
        let j = h.w.now.0 * hz / 1_000_000_000;
        h.f.newidle_raise(0, 0, 1 << 21, j);
        h.advance(200_000_000);
        h.with(|f, cx| f.rebalance_domains(cx, 0, CpuIdleType::Idle));
        let want = if version == "6.6" { 1 << 21 } else { (1u64 << 21) * 253 / 256 };
        assert_eq!(h.f.domains.per_cpu[0][0].max_newidle_lb_cost, want, "{version}");
    }
}

/// linux-fair §3.7/§5.12: the CPU load the balancer and `wake_affine` read. v5.15's
/// `cpu_load` is the queue's `load_avg`, which keeps a sleeping task's (blocked) load and
/// lets it decay; v4.9's `weighted_cpuload` is `runnable_load_avg`, which the task leaves
/// when it is dequeued. A CPU whose only task just went to sleep therefore looks loaded
/// to v5.15 and empty to v4.9.
#[test]
fn v4_9_load_is_runnable_only() {
    let mut loads = Vec::new();
    for v in ["4.9", "5.15"] {
        let mut h = Harness::cfs(v);
        let a = h.spawn(0);
        assert_eq!(h.schedule(), Some(a));
        for _ in 0..100 {
            h.advance(1_000_000);
            h.with(|f, cx| f.task_tick(cx, 0, a));
        }
        let running = h.f.cpu_load(0);
        assert!(running > 800, "v{v}: a hog's CPU load after 100 ms is {running}");
        h.with(|f, cx| f.dequeue_task(cx, 0, a, dequeue::SLEEP));
        h.w.cpus[0].nr_running -= 1;
        assert_eq!(h.schedule(), None);
        h.advance(4_000_000);
        h.with(|f, cx| f.update_blocked_averages(0, cx));
        loads.push(h.f.cpu_load(0));
    }
    assert_eq!(loads[0], 0, "v4.9: a sleeping task weighs nothing");
    assert!(loads[1] > 700, "v5.15: the blocked load stays (decaying): {}", loads[1]);
}

/// §5.12: `cpu_load[i] = (old·(2^i − 1) + new) / 2^i` per tick, rounded up while rising;
/// `source_load` takes the smaller of history and now, `target_load` the larger.
#[test]
fn v4_9_cpu_load_history_smooths_per_tick() {
    let mut h = Harness::cfs("4.9");
    let a = h.spawn(0);
    assert_eq!(h.schedule(), Some(a));
    let mut j = 0;
    for _ in 0..200 {
        h.advance(4_000_000);
        h.with(|f, cx| f.task_tick(cx, 0, a));
        // `scheduler_tick` → `cpu_load_update_active` (the kernel's tick does both).
        j = h.w.now.0 / h.f.jiffy;
        h.f.cpu_load_update_active(0, j);
    }
    let now = h.f.cpu_load(0);
    let hist = h.f.cpu[0].cpu_load;
    assert_eq!(hist[0], now);
    // A steady load: every history converges on it.
    assert!(hist.iter().all(|&l| l.abs_diff(now) <= 40), "{hist:?} vs {now}");
    // A step down to 0 halves cpu_load[1] per tick and takes 1/16 off cpu_load[4].
    h.f.cpu[0].cpu_load = [0, 1024, 1024, 1024, 1024];
    h.f.cpu[0].cpu_load_jiffy = j;
    h.with(|f, cx| f.dequeue_task(cx, 0, a, dequeue::SLEEP));
    h.w.cpus[0].nr_running -= 1;
    h.f.cpu_load_update_active(0, j + 1);
    assert_eq!(h.f.cpu[0].cpu_load, [0, 512, 768, 896, 960]);
}

/// Two nice-0 tasks on CPU 0; the first picked runs 3 ms (well past V) and goes to sleep.
/// Returns (sleeper, other, whether the dequeue completed).
fn sleep_past_v(h: &mut Harness) -> (TaskId, TaskId, bool) {
    let (a, b) = (h.spawn(0), h.spawn(0));
    let s = h.schedule().expect("a task is queued");
    let other = if s == a { b } else { a };
    h.advance(3_000_000);
    h.with(|f, cx| f.update_curr(cx, f.root(0)));
    assert!(h.lag(s) < 0, "the sleeper ran past V");
    let done = h.with(|f, cx| f.dequeue_task(cx, 0, s, dequeue::SLEEP));
    (s, other, done)
}

/// §9 item 14, §2.9 (v6.12+ DELAY_DEQUEUE): a task going to sleep while ineligible stays
/// queued — counted in `nr_running` and the load, not in `h_nr_runnable` — and a wakeup in
/// that window requeues it where it is (its vruntime unchanged). 6.6 dequeues at once.
#[test]
fn an_ineligible_sleeper_stays_queued_and_is_requeued_in_place() {
    for v in ["6.6", "6.12", "6.18"] {
        let mut h = Harness::new(v);
        let (s, _, done) = sleep_past_v(&mut h);
        let r = h.f.rq(h.root());
        if v == "6.6" {
            assert!(done && r.nr_running == 1 && r.load == 1024, "6.6 has no delayed dequeue");
            continue;
        }
        assert!(!done, "v{v}: the ineligible sleeper was dequeued");
        assert_eq!((r.nr_running, r.load, r.h_nr_runnable), (2, 2048, 1), "v{v}: still counted, not runnable");
        let e = h.f.e(h.se(s));
        assert!(e.on_rq && e.sched_delayed, "v{v}");
        let before = e.vruntime;
        h.with(|f, cx| f.enqueue_task(cx, 0, s, enqueue::DELAYED | enqueue::WAKEUP));
        let e = h.f.e(h.se(s));
        assert!(e.on_rq && !e.sched_delayed, "v{v}: requeued");
        assert_eq!(e.vruntime, before, "v{v}: a negative-lag wakee is requeued in place");
        let r = h.f.rq(h.root());
        assert_eq!((r.nr_running, r.h_nr_runnable), (2, 2), "v{v}");
    }
}

/// §9 item 14, DELAY_ZERO: a delayed task whose lag has turned positive by the time it is
/// woken is re-placed with lag 0, and if it is left asleep until picked (eligible), it is
/// dequeued for good with a stored lag of 0; without DELAY_ZERO it keeps that positive lag.
#[test]
fn delay_zero_drops_the_lag_a_delayed_task_earned() {
    for (zero, v) in [(true, "6.12"), (true, "6.18"), (false, "6.18")] {
        for wake in [true, false] {
            let mut h = Harness::new(v);
            let sets = [("version".into(), v.into()), ("DELAY_ZERO".into(), u8::from(zero).to_string())];
            h.f = Fair::eevdf(&h.w.m, &sets).unwrap();
            let (s, other, done) = sleep_past_v(&mut h);
            assert!(!done, "v{v}: delayed");
            // The other task runs long enough for the sleeper's lag to turn positive.
            assert_eq!(h.schedule(), Some(other), "v{v}: the delayed sleeper is not eligible yet");
            h.advance(9_000_000);
            h.with(|f, cx| f.update_curr(cx, f.root(0)));
            let earned = h.lag(s);
            assert!(earned > 1_000_000, "v{v}: lag {earned}");
            let kept = if wake {
                h.with(|f, cx| f.enqueue_task(cx, 0, s, enqueue::DELAYED | enqueue::WAKEUP));
                h.lag(s)
            } else {
                // `schedule()` finds the sleeper eligible: it leaves the queue for good.
                assert_eq!(h.schedule(), Some(other), "v{v}");
                let e = h.f.e(h.se(s));
                assert!(!e.on_rq && !e.sched_delayed, "v{v}: dequeued when picked");
                assert_eq!(h.f.rq(h.root()).nr_running, 1, "v{v}");
                e.vlag
            };
            if zero {
                assert!(kept.abs() <= 1, "v{v} wake={wake}: DELAY_ZERO kept lag {kept}");
            } else {
                assert!(kept > earned / 2, "v{v} wake={wake}: without DELAY_ZERO the lag {earned} became {kept}");
            }
        }
    }
}

/// The runqueue check after every event (one walk of the tree gathers all it compares)
/// catches each corruption it looks for and names it: the hierarchical count, a tree entry
/// not recorded as queued there, the queue's load, and under CFS an entity far left of
/// `min_vruntime`; each undone, it passes again.
#[test]
fn the_rq_check_catches_counts_stale_entries_load_and_spread() {
    for cfs in [false, true] {
        let mut h = if cfs { Harness::cfs("5.15") } else { Harness::new("6.18") };
        let ps: Vec<TaskId> = [0, 5, -3].into_iter().map(|n| h.spawn(n)).collect();
        h.schedule();
        h.advance(1_000_000);
        h.with(|f, cx| f.update_curr(cx, f.root(0)));
        h.f.check_fair(Some(&[0])).unwrap();
        let root = h.root();
        let se = h.se(*ps.iter().find(|&&p| Some(p) != h.w.cpus[0].curr).expect("a task in the tree"));
        let fails = |h: &Harness, what: &str| {
            let e = h.f.check_fair(Some(&[0])).unwrap_err();
            assert!(e.contains(what), "cfs={cfs}: expected `{what}`, got {e}");
        };
        h.f.rqm(root).h_nr_running += 1;
        fails(&h, "h_nr_running");
        h.f.rqm(root).h_nr_running -= 1;
        h.f.em(se).relative = true;
        fails(&h, "is stale");
        h.f.em(se).relative = false;
        h.f.rqm(root).load += 1;
        fails(&h, "disagree with the entities");
        h.f.rqm(root).load -= 1;
        h.f.check_fair(Some(&[0])).unwrap();
        if cfs {
            let far = 10 * h.f.t.latency;
            h.f.em(se).vruntime = h.f.e(se).vruntime.wrapping_sub(far);
            fails(&h, "more than sched_latency left of min_vruntime");
        }
    }
}

/// §9 item 11: the EEVDF check run after every event is not vacuous. It passes on a busy
/// queue and fails when the queue's weighted key sum (from which V is computed) no longer
/// matches its entities, or when a pick was ineligible.
#[test]
fn the_v_check_catches_a_stale_sum_and_an_ineligible_pick() {
    let mut h = Harness::new("6.18");
    for nice in [0, 5, -3] {
        h.spawn(nice);
    }
    for _ in 0..4 {
        h.schedule();
        h.advance(1_700_000);
        h.with(|f, cx| f.update_curr(cx, f.root(0)));
        h.f.check_fair(None).unwrap();
    }
    let root = h.root();
    h.f.rqm(root).avg_vruntime += 1 << 20;
    let e = h.f.check_fair(None).unwrap_err();
    assert!(e.contains("avg_vruntime"), "{e}");
    h.f.rqm(root).avg_vruntime -= 1 << 20;
    h.f.check_fair(Some(&[0])).unwrap();
    h.f.counters.ineligible_picks = 1;
    let e = h.f.check_fair(Some(&[0])).unwrap_err();
    assert!(e.contains("ineligible"), "{e}");
}

/// `fair.c:wake_affine_idle` (v6.18): a sync wakeup pulls the wakee to the waker's CPU when
/// the waker is that CPU's only task not counting delayed-dequeue ones (`cfs_h_nr_delayed`);
/// v6.12 counts the delayed sleeper and does not pull. The waker's CPU 0 holds the waker and
/// an ineligible sleeper kept queued; the wakee's previous CPU 1 is busy.
#[test]
fn a_sync_wakeup_ignores_delayed_tasks_on_the_wakers_cpu_from_v6_18() {
    for (v, pulled) in [("6.12", None), ("6.18", Some(0))] {
        let mut h = Harness::new(v);
        let (_, other, done) = sleep_past_v(&mut h);
        assert!(!done, "v{v}: the sleeper is delayed");
        assert_eq!(h.schedule(), Some(other), "v{v}: the waker runs");
        assert_eq!(h.w.cpus[0].nr_running, 2, "v{v}: the delayed sleeper is still counted");
        let busy = h.w.add_task(0, TaskPolicy::Normal, 1);
        h.w.cpus[1].curr = Some(busy);
        h.w.cpus[1].nr_running = 1;
        let got = h.with(|f, cx| f.wake_affine_idle(cx, 0, 1, true)).map(|(c, _)| c);
        assert_eq!(got, pulled, "v{v}");
        // Without the sync hint neither version pulls.
        assert_eq!(h.with(|f, cx| f.wake_affine_idle(cx, 0, 1, false)).map(|(c, _)| c), None, "v{v}");
    }
}
