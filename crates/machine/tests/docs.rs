//! `docs/machine.md` shows every section's fields as the tables define them: each table's
//! generated Markdown must appear in it verbatim (regenerate by pasting what a failure
//! prints).

use schedlab_machine::spec::markdown;
use schedlab_machine::{preset, CACHE_LEVEL, FREQ, FREQ_DOMAIN, IDLE, IDLE_DRIVER, IDLE_STATE, LINES, MEMORY, MM};

#[test]
fn the_docs_show_every_table() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/machine.md")).unwrap();
    let g = preset("smp4").unwrap();
    let tables = [
        ("[memory]", markdown(&MEMORY, Some(&g.caches.memory))),
        ("[[cache]]", markdown(&CACHE_LEVEL, None)),
        ("[lines]", markdown(&LINES, Some(&g.lines))),
        ("[idle]", markdown(&IDLE, Some(&g.idle))),
        ("[[idle.driver]]", markdown(&IDLE_DRIVER, None)),
        ("[[idle.driver.state]]", markdown(&IDLE_STATE, None)),
        ("[freq]", markdown(&FREQ, Some(&g.freq))),
        ("[[freq.domain]]", markdown(&FREQ_DOMAIN, None)),
        ("[mm]", markdown(&MM, Some(&g.mm))),
    ];
    let missing: Vec<String> =
        tables.iter().filter(|(_, t)| !doc.contains(t.as_str())).map(|(s, t)| format!("{s}\n\n{t}")).collect();
    assert!(missing.is_empty(), "docs/machine.md lacks these tables as generated:\n\n{}", missing.join("\n"));
}
