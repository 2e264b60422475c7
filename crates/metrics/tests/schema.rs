//! The run record's JSON Schema is generated from the types and checked in
//! (`docs/record.schema.json`), under the compatibility rule of `docs/report-format.md`:
//! adding keys keeps `schema_version`; removing a key or changing its type bumps it.
//!
//! `SCHEDLAB_RECORD_SCHEMA=1 cargo test -p schedlab-metrics --test schema` rewrites the
//! file, and refuses to when a key the checked-in schema has is gone or changed type while
//! the version stayed the same.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn checked_in() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/record.schema.json")
}

fn generated() -> Value {
    serde_json::to_value(schedlab_metrics::json_schema()).expect("the schema serialises")
}

/// Every key path the schema describes (`kernel.switches`, `tasks[].runtime_ns`), with a
/// description of its type, following `$ref`s into `$defs` (bounded: a path is never
/// deeper than `MAX_DEPTH`).
fn key_types(schema: &Value) -> BTreeMap<String, String> {
    const MAX_DEPTH: usize = 12;
    fn resolve<'a>(root: &'a Value, v: &'a Value) -> &'a Value {
        match v.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
            Some(name) => &root["$defs"][name],
            None => v,
        }
    }
    fn walk(root: &Value, v: &Value, path: &str, depth: usize, out: &mut BTreeMap<String, String>) {
        let v = resolve(root, v);
        if depth > MAX_DEPTH {
            return;
        }
        let ty = v.get("type").map(Value::to_string).unwrap_or_else(|| "any".into());
        if !path.is_empty() {
            out.insert(path.to_string(), ty);
        }
        for alt in ["anyOf", "oneOf", "allOf"].iter().filter_map(|k| v.get(*k)?.as_array()) {
            for a in alt {
                walk(root, a, path, depth + 1, out);
            }
        }
        if let Some(props) = v.get("properties").and_then(Value::as_object) {
            for (k, p) in props {
                let sub = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                walk(root, p, &sub, depth + 1, out);
            }
        }
        if let Some(items) = v.get("items") {
            walk(root, items, &format!("{path}[]"), depth + 1, out);
        }
    }
    let mut out = BTreeMap::new();
    walk(schema, schema, "", 0, &mut out);
    out
}

/// Keys of `old` that `new` lacks or types differently.
fn incompatible(old: &Value, new: &Value) -> Vec<String> {
    let (old, new) = (key_types(old), key_types(new));
    old.iter()
        .filter(|(k, t)| new.get(*k) != Some(t))
        .map(|(k, t)| format!("{k} ({t} → {})", new.get(k).map_or("gone", String::as_str)))
        .collect()
}

#[test]
fn the_checked_in_schema_is_the_generated_one() {
    let new = generated();
    let path = checked_in();
    let old: Option<Value> = std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str(&t).ok());
    if std::env::var_os("SCHEDLAB_RECORD_SCHEMA").is_some() {
        if let Some(old) = &old {
            let broken = incompatible(old, &new);
            let same_version = old["x-schema-version"] == new["x-schema-version"];
            assert!(
                broken.is_empty() || !same_version,
                "these keys went away or changed type: bump SCHEMA_VERSION (crates/metrics/src/record.rs):\n  {}",
                broken.join("\n  ")
            );
        }
        std::fs::write(&path, serde_json::to_string_pretty(&new).unwrap() + "\n").unwrap();
        return;
    }
    let old = old.expect("docs/record.schema.json: run with SCHEDLAB_RECORD_SCHEMA=1 to write it");
    assert!(
        old == new,
        "docs/record.schema.json differs from the record's types: re-record it with SCHEDLAB_RECORD_SCHEMA=1 \
         (keys that went away or changed type: {:?})",
        incompatible(&old, &new)
    );
}

#[test]
fn the_schema_describes_the_documented_keys() {
    let keys = key_types(&generated());
    for k in [
        "schema_version",
        "kernel.switches",
        "kernel.changed",
        "machine.cost_model",
        "warnings",
        "tasks[].runtime_ns",
        "tasks[].wakeup_latency_ns.p99",
        "cpus[].kernel_paths",
        "end_reason",
        "host",
    ] {
        assert!(keys.contains_key(k), "no `{k}` in the schema: {:?}", keys.keys().collect::<Vec<_>>());
    }
    assert!(!keys.contains_key("trace") && !keys.contains_key("explained"), "keys the JSON never has");
}

#[test]
fn removing_or_retyping_a_key_is_incompatible_and_adding_one_is_not() {
    let base = serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}});
    let added = serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "string"}}});
    let removed = serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}}});
    let retyped =
        serde_json::json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}});
    assert!(incompatible(&base, &added).is_empty());
    assert_eq!(incompatible(&base, &removed).len(), 1);
    assert_eq!(incompatible(&base, &retyped).len(), 1);
}
