//! Loading is interruptible: the caller's stop check is asked when loading starts and every
//! `POLL_EVERY` steps, in every phase of a native or rt-app file, and once it says stop,
//! loading ends with `LoadError::Interrupted` without asking again.

use schedlab_workload::rtapp::convert_until;
use schedlab_workload::{parse_workload, parse_workload_until, synthetic, LoadError, POLL_EVERY};

/// Loads `text` with a check that says stop on its call number `at` (never if `None`);
/// the result and how often the check was asked.
fn load(text: &str, at: Option<u64>) -> (Result<schedlab_workload::Workload, LoadError>, u64) {
    let mut calls = 0u64;
    let mut check = || {
        calls += 1;
        Some(calls) == at
    };
    let r = parse_workload_until("w", text, &[], 4, &mut check);
    (r, calls)
}

fn interrupted<T: std::fmt::Debug>(r: Result<T, LoadError>) -> bool {
    match r {
        Err(LoadError::Interrupted { file }) => file == "w",
        other => panic!("expected an interruption, got {other:?}"),
    }
}

#[test]
fn a_stop_asked_before_loading_ends_it_at_once() {
    for text in [synthetic::native(100), synthetic::rtapp(100)] {
        let (r, calls) = load(&text, Some(1));
        assert!(interrupted(r));
        assert_eq!(calls, 1, "asked once, when loading started");
    }
    let mut asked = 0;
    let r = convert_until("w", &synthetic::rtapp(100), &mut || {
        asked += 1;
        true
    });
    assert!(interrupted(r) && asked == 1);
    assert_eq!(LoadError::Interrupted { file: "w.toml".into() }.to_string(), "w.toml: loading interrupted");
}

/// A check that never says stop is asked about once per `POLL_EVERY` steps and changes
/// nothing; one that says stop on any of those calls ends loading there.
#[test]
fn a_stop_asked_while_loading_ends_it_there() {
    for (text, tasks) in [(synthetic::native(5000), 5000u64), (synthetic::rtapp(5000), 5000)] {
        let (r, calls) = load(&text, None);
        let wl = r.unwrap_or_else(|e| panic!("{e}"));
        let plain = parse_workload("w", &text, &[], 4).unwrap();
        assert_eq!(format!("{:?}", wl.templates), format!("{:?}", plain.templates));
        // Each task is at least a table, an operation and a lowered program.
        assert!(calls > 3 * tasks / u64::from(POLL_EVERY), "{calls} calls");
        for at in [2, calls / 2, calls] {
            let (r, asked) = load(&text, Some(at));
            assert!(interrupted(r));
            assert_eq!(asked, at, "not asked again after it said stop");
        }
    }
}

/// One table may declare a million objects: the stop check is asked while they are.
#[test]
fn a_stop_is_asked_within_one_large_table() {
    let text = "[[pipe]]\nname = \"p\"\ncount = 200000\n[[task]]\nname = \"t\"\nprogram = [ \"yield\" ]\n";
    let (r, calls) = load(text, None);
    assert_eq!(r.unwrap().pipes.len(), 200_000);
    assert!(calls > 200_000 / u64::from(POLL_EVERY), "{calls} calls");
}
