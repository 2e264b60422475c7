//! A UTF-8 byte-order mark at the start of a workload file (some Windows editors write
//! one) is no part of the document: an rt-app file with one is still read as JSON, a TOML
//! file as TOML, and errors are located as in the file without it.

use schedlab_workload::parse_workload;
use schedlab_workload::rtapp::{convert, looks_like_json};

const BOM: &str = "\u{feff}";
const JSON: &str = "{ \"tasks\": { \"t\": { \"instance\": 2, \"run\": 10 } } }\n";
const TOML: &str = "[[task]]\nname = \"t\"\ncount = 2\nprogram = [ { run = \"10us\" } ]\n";

#[test]
fn an_rtapp_file_with_a_byte_order_mark_is_read_as_json() {
    let with = format!("{BOM}{JSON}");
    assert!(looks_like_json(&with));
    let (a, b) = (parse_workload("t.json", &with, &[], 2).unwrap(), parse_workload("t.json", JSON, &[], 2).unwrap());
    assert_eq!((a.templates[0].name.as_str(), a.templates[0].count), ("t", 2));
    assert_eq!(a.program(0, 0).unwrap(), b.program(0, 0).unwrap());
    assert_eq!(convert("t.json", &with).unwrap().toml, convert("t.json", JSON).unwrap().toml);
}

#[test]
fn a_toml_file_with_a_byte_order_mark_is_read_as_toml() {
    let with = format!("{BOM}{TOML}");
    assert!(!looks_like_json(&with));
    let (a, b) = (parse_workload("t.toml", &with, &[], 2).unwrap(), parse_workload("t.toml", TOML, &[], 2).unwrap());
    assert_eq!(a.program(0, 0).unwrap(), b.program(0, 0).unwrap());
}

/// Errors point where they would without the mark: same line, column and field.
#[test]
fn errors_are_located_as_without_the_mark() {
    for (file, text) in [
        ("t.json", "{ \"tasks\": { \"t\": { \"run\": \"ten\" } } }\n"),
        ("t.json", "{ \"tasks\": { \"t\": { \"run\": 1, \"cpus\": [9] } } }\n"),
        ("t.toml", "[[task]]\nname = \"t\"\nprogram = [ { run = 5 } ]\n"),
    ] {
        let a = parse_workload(file, &format!("{BOM}{text}"), &[], 2).unwrap_err();
        let b = parse_workload(file, text, &[], 2).unwrap_err();
        assert_eq!((a.line, a.column, &a.field, &a.message), (b.line, b.column, &b.field, &b.message), "{text}");
    }
}
