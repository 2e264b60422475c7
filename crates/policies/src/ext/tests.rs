//! DSQ ordering (`ext.c:dispatch_enqueue`): FIFO with head inserts, vtime with ties in
//! insertion order, and the FIFO/vtime mixing error.

use super::dsq::Dsq;
use super::vtime_before;

fn order(d: &Dsq) -> Vec<usize> {
    d.iter().map(|(_, p)| p).collect()
}

#[test]
fn fifo_tail_and_head() {
    let mut d = Dsq::default();
    d.insert_fifo(1, false).unwrap();
    d.insert_fifo(2, false).unwrap();
    d.insert_fifo(3, true).unwrap();
    d.insert_fifo(4, true).unwrap();
    assert_eq!(order(&d), [4, 3, 1, 2]);
}

#[test]
fn vtime_order_keeps_insertion_order_on_ties() {
    let mut d = Dsq::default();
    d.insert_vtime(1, 50).unwrap();
    d.insert_vtime(2, 10).unwrap();
    d.insert_vtime(3, 50).unwrap();
    d.insert_vtime(4, 20).unwrap();
    assert_eq!(order(&d), [2, 4, 1, 3]);
    let (k, p) = d.first().unwrap();
    assert_eq!(p, 2);
    d.remove(k);
    assert_eq!(order(&d), [4, 1, 3]);
}

#[test]
fn mixing_fifo_and_vtime_is_an_error_while_non_empty() {
    let mut d = Dsq::default();
    let k = d.insert_fifo(1, false).unwrap();
    assert!(d.insert_vtime(2, 5).is_err());
    d.remove(k);
    assert!(d.insert_vtime(2, 5).is_ok(), "an empty DSQ takes either order");
    assert!(d.insert_fifo(3, false).is_err());
}

#[test]
fn vtime_before_is_wrap_safe() {
    assert!(vtime_before(1, 2));
    assert!(!vtime_before(2, 1));
    assert!(vtime_before(u64::MAX - 5, 3), "across the wrap");
    assert!(!vtime_before(0, 0u64.wrapping_sub(20_000_000)), "a floor below zero clamps nothing");
}

/// The tutorial's policy (`docs/write-a-scheduler.md`, step 2) compiles as written.
mod tutorial {
    use crate::ext::{ScxCtx, ScxOps, SLICE_DFL};
    use schedlab_sim::{CpuId, TaskId};

    const SHARED: u64 = 0;

    #[derive(Default)]
    pub struct Mine {
        vtime_now: u64,
    }

    impl ScxOps for Mine {
        fn name(&self) -> &'static str {
            "ext:mine"
        }
        fn init(&mut self, cx: &mut ScxCtx) -> Result<(), String> {
            cx.create_dsq(SHARED)
        }
        fn enqueue(&mut self, cx: &mut ScxCtx, p: TaskId, enq_flags: u64) {
            let vtime = cx.dsq_vtime(p).max(self.vtime_now.saturating_sub(SLICE_DFL));
            cx.dsq_insert_vtime(p, SHARED, SLICE_DFL, vtime, enq_flags);
        }
        fn dispatch(&mut self, cx: &mut ScxCtx, _cpu: CpuId, _prev: Option<TaskId>) {
            cx.dsq_move_to_local(SHARED);
        }
        fn stopping(&mut self, cx: &mut ScxCtx, p: TaskId, _runnable: bool) {
            let used = SLICE_DFL.saturating_sub(cx.slice(p));
            cx.set_dsq_vtime(p, cx.dsq_vtime(p) + used * 100 / u64::from(cx.weight(p)));
        }
        fn running(&mut self, cx: &mut ScxCtx, p: TaskId) {
            self.vtime_now = self.vtime_now.max(cx.dsq_vtime(p));
        }
    }

    #[test]
    fn builds_a_scheduler() {
        let m = schedlab_machine::preset("smp2").unwrap();
        let s = crate::ext::build(&m, &[], Box::<Mine>::default()).unwrap();
        assert_eq!(s.name(), "ext:mine");
        assert!(s.tunables().iter().any(|t| t.name == "watchdog_timeout_ms" && t.value == "30000"));
    }
}
