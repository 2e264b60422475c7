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
