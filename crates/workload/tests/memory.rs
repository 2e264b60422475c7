//! The memory fields of a task (`working_set`, `mem_intensity`, `mlp`, `mem_policy`,
//! `mem_node`, `resident`) and a `run`'s own working set: values as written, errors located
//! at the field.

use schedlab_workload::{parse_workload, MemPhase, MemPolicy, Op, Workload};

fn parse(tasks: &str) -> Result<Workload, String> {
    let text = format!("name = \"m\"\n[[task]]\nname = \"t\"\n{tasks}");
    parse_workload("m.toml", &text, &[], 4).map_err(|e| e.to_string())
}

#[test]
fn memory_fields_read_as_written() {
    let w = parse(
        "working_set = \"512KiB\"\nmem_intensity = 0.35\nmlp = 4\nmem_node = 1\nprocess = true\n\
         resident = \"2MiB\"\nprogram = [ { run = \"1ms\" } ]\n",
    )
    .expect("parses");
    let m = &w.templates[0].memory;
    assert_eq!((m.working_set, m.intensity, m.mlp, m.resident), (512 << 10, 350, Some(4), 2 << 20));
    assert_eq!(m.policy, MemPolicy::Bind(1), "mem_node alone binds");
    let w = parse("working_set = 4096\nmem_policy = \"interleave\"\nprocess = true\nprogram = [ { run = \"1ms\" } ]\n")
        .expect("parses");
    let m = &w.templates[0].memory;
    assert_eq!((m.policy, m.resident, m.intensity, m.mlp), (MemPolicy::Interleave, 4096, 0, None));
    let w = parse("program = [ { run = \"1ms\" } ]\n").expect("parses");
    assert_eq!(w.templates[0].memory.policy, MemPolicy::FirstTouch);
    assert_eq!(w.templates[0].memory.working_set, 0);
}

/// A `run` with its own working set lowers to the phase, the run, and the task's own
/// phase again.
#[test]
fn a_run_with_its_own_working_set_is_a_memory_phase() {
    let w =
        parse("working_set = \"1MiB\"\nmem_intensity = 0.2\nprogram = [ { run = \"1ms\", working_set = \"8MiB\" } ]\n")
            .expect("parses");
    let p = w.program(0, 0).expect("lowers");
    let own = MemPhase { working_set: 1 << 20, intensity: 200 };
    let phase = MemPhase { working_set: 8 << 20, intensity: 200 };
    assert!(matches!(p.ops[..], [Op::Memory(a), Op::Run(_), Op::Memory(b)] if a == phase && b == own), "{:?}", p.ops);
}

#[test]
fn bad_memory_fields_are_located_errors() {
    let cases = [
        ("working_set = \"12 parsecs\"\n", "working_set"),
        ("working_set = \"2TiB\"\n", "working_set"),
        ("mem_intensity = 1.5\n", "mem_intensity"),
        ("mem_intensity = \"much\"\n", "mem_intensity"),
        ("mlp = 0\n", "mlp"),
        ("mlp = 65\n", "mlp"),
        ("mem_policy = \"bind\"\n", "mem_node"),
        ("mem_policy = \"interleave\"\nmem_node = 0\n", "mem_node"),
        ("mem_policy = \"nearest\"\n", "mem_policy"),
        ("resident = \"1MiB\"\n", "resident"),
    ];
    for (fields, field) in cases {
        let err = parse(&format!("{fields}program = [ {{ run = \"1ms\" }} ]\n")).expect_err(fields);
        assert!(err.contains("m.toml:") && err.contains(field), "{fields}: {err}");
    }
    let err = parse("program = [ { run = \"1ms\", mem_intensity = 2 } ]\n").expect_err("above 1");
    assert!(err.contains("mem_intensity"), "{err}");
}
