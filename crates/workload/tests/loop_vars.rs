//! `set_nice` and the futex operations' values and counts take expressions of the instance
//! index `n` and `for` variables, as every integer of an operation may
//! (docs/workload-language.md, "Parameters and expressions"); each is checked once
//! evaluated, and a constant still when the file is read.

use schedlab_workload::{parse_workload, FutexOp, Op, Workload, FUTEX_ALL};

fn workload(program: &str) -> Result<Workload, String> {
    let text = format!(
        "[params]\nbase = 2\n[[futex]]\nname = \"f\"\ncount = 4\n[[task]]\nname = \"t\"\ncount = 3\nprogram = [\n{program}\n]\n"
    );
    parse_workload("w.toml", &text, &[], 2).map_err(|e| e.to_string())
}

/// The program of instance `n`.
fn ops(wl: &Workload, n: u64) -> Vec<Op> {
    wl.program(0, n).unwrap_or_else(|e| panic!("{e}")).ops
}

#[test]
fn set_nice_takes_loop_variables_and_the_instance_index() {
    let wl =
        workload("{ for = \"i\", count = 3, do = [ { set_nice = \"{i * 5 - base}\" } ] }, { set_nice = \"{n - 1}\" }")
            .unwrap();
    assert!(wl.templates[0].instance_dependent, "the program mentions n");
    assert_eq!(ops(&wl, 0), [Op::SetNice(-2), Op::SetNice(3), Op::SetNice(8), Op::SetNice(-1)]);
    assert_eq!(ops(&wl, 2)[3], Op::SetNice(1));
}

#[test]
fn futex_values_and_counts_take_loop_variables() {
    let wl = workload(
        "{ for = \"i\", count = 2, do = [\n\
           { futex_set = \"f.{i}\", value = \"{i + 10}\" }, { futex_add = \"f.{i}\", value = \"{0 - i}\" },\n\
           { futex_wait = \"f.{i}\", expected = \"{i}\" }, { futex_wake = \"f.{i}\", count = \"{i + 1}\" },\n\
           { futex_wake_op = \"f.0\", count = \"{i}\", word2 = \"f.1\", count2 = \"{n}\", op = \"add\", oparg = \"{i}\", cmp = \"eq\", cmparg = \"{n + i}\" },\n\
           { futex_requeue = \"f.2\", to = \"f.3\", wake = \"{i}\", requeue = \"{n * 2}\", expected = \"{i}\" },\n\
           { futex_swap = \"f.{i}\", expected = \"{n}\", wake = \"f.3\" } ] },\n\
         { futex_wake = \"f.0\", count = \"all\" }",
    )
    .unwrap();
    let ops = ops(&wl, 2);
    let f = |k: usize| match &ops[k] {
        Op::Futex(op) => op.clone(),
        other => panic!("{other:?}"),
    };
    // The second iteration (i = 1) of instance 2.
    assert_eq!(f(7), FutexOp::Set { word: 1, value: 11 });
    assert_eq!(f(8), FutexOp::Add { word: 1, value: u32::MAX }, "-1 as the word's two's complement");
    assert_eq!(f(9), FutexOp::Wait { word: 1, expected: 1 });
    assert!(matches!(f(10), FutexOp::Wake { word: 1, count: 2, .. }));
    assert!(matches!(f(11), FutexOp::WakeOp { count: 1, count2: 2, oparg: 1, cmparg: 3, .. }), "{:?}", f(11));
    assert_eq!(f(12), FutexOp::CmpRequeue { word: 2, to: 3, wake: 1, requeue: 4, expected: 1 });
    assert!(matches!(f(13), FutexOp::Swap { wait: 1, expected: 2, wake: 3, .. }));
    assert!(matches!(f(14), FutexOp::Wake { word: 0, count: FUTEX_ALL, .. }));
}

#[test]
fn an_expression_out_of_range_is_an_error_at_its_operation() {
    let bad = [
        ("{ for = \"i\", count = 3, do = [ { set_nice = \"{i * 10}\" } ] }", "nice 20 outside -20..=19"),
        ("{ futex_set = \"f.0\", value = \"{(n + 1) * 4294967296}\" }", "does not fit a 32-bit futex word"),
        ("{ futex_wake = \"f.0\", count = \"{n - 1}\" }", "must be >= 0, found -1"),
        ("{ futex_wake = \"f.0\", count = \"{n + 2147483648}\" }", "waiters is more than the kernel takes"),
        ("{ set_nice = \"{x}\" }", "unknown variable `x` (known here: base, n)"),
    ];
    for (program, msg) in bad {
        let e = workload(&format!("{{ run = \"1ms\" }},\n{program}")).unwrap_err();
        assert!(e.contains("w.toml:11:") && e.contains(msg), "{program}: {e}");
        assert!(e.contains("task[0].program[1]"), "{program}: {e}");
    }
}

/// Constants are checked when the file is read, at the value itself, as before.
#[test]
fn a_constant_out_of_range_is_an_error_at_its_field() {
    let bad = [
        ("{ set_nice = 20 }", "task[0].program[0].set_nice", "nice 20 outside -20..=19"),
        ("{ futex_set = \"f.0\", value = 4294967296 }", "task[0].program[0].value", "does not fit"),
        ("{ futex_wake = \"f.0\", count = -1 }", "task[0].program[0].count", "must be >= 0, found -1"),
        ("{ futex_wake = \"f.0\", count = \"{base - 3}\" }", "task[0].program[0].count", "must be >= 0, found -1"),
    ];
    for (program, field, msg) in bad {
        let e = workload(program).unwrap_err();
        assert!(e.contains(field) && e.contains(msg), "{program}: {e}");
    }
}
