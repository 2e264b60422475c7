use crate::{Costs, Machine, Topology, MAX_CPUS};
use schedlab_sim::SourceError;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// An error in a machine file, located by line and column.
pub type MachineError = SourceError;

/// Parses a machine description (TOML).
///
/// ```toml
/// name = "mybox"
/// hz = 1000
/// [topology]
/// nodes = 1
/// llcs_per_node = 1
/// cores_per_llc = 4
/// threads_per_core = 2
/// [costs]
/// context_switch = "2us"
/// ```
pub fn parse_machine(file: &str, text: &str) -> Result<Machine, MachineError> {
    let err =
        |span: std::ops::Range<usize>, field: &str, msg: String| SourceError::at(file, text, span.start, field, msg);
    let doc = DeTable::parse(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        err(span, "(syntax)", e.message().to_string())
    })?;
    let root = doc.get_ref();
    let int = |v: &Spanned<DeValue>, field: &str| -> Result<u64, MachineError> {
        match v.get_ref() {
            DeValue::Integer(i) => i
                .as_str()
                .parse::<u64>()
                .ok()
                .filter(|_| i.radix() == 10)
                .ok_or_else(|| err(v.span(), field, "expected a non-negative integer".into())),
            _ => Err(err(v.span(), field, "expected an integer".into())),
        }
    };
    let mut name = file.to_string();
    let mut hz = 250u32;
    let mut shape = [1u64, 1, 1, 1];
    let mut topo_span = 0..0;
    let mut distance = None;
    let mut costs = Costs::default();
    for (k, v) in root.iter() {
        match k.get_ref().as_ref() {
            "name" => {
                name =
                    v.get_ref().as_str().ok_or_else(|| err(v.span(), "name", "expected a string".into()))?.to_string()
            }
            "hz" => {
                let h = int(v, "hz")?;
                if !(1..=10_000).contains(&h) {
                    return Err(err(v.span(), "hz", format!("HZ {h} out of range 1..=10000")));
                }
                hz = h as u32;
            }
            "topology" => {
                topo_span = v.span();
                let DeValue::Table(t) = v.get_ref() else {
                    return Err(err(v.span(), "topology", "expected a table".into()));
                };
                for (tk, tv) in t.iter() {
                    let key = tk.get_ref().as_ref();
                    let field = format!("topology.{key}");
                    let idx = match key {
                        "nodes" => 0,
                        "llcs_per_node" => 1,
                        "cores_per_llc" => 2,
                        "threads_per_core" => 3,
                        "numa_distance" => {
                            let DeValue::Array(rows) = tv.get_ref() else {
                                return Err(err(tv.span(), &field, "expected an array of arrays".into()));
                            };
                            let mut m = Vec::new();
                            for (i, r) in rows.iter().enumerate() {
                                let DeValue::Array(cols) = r.get_ref() else {
                                    return Err(err(r.span(), &field, "expected an array".into()));
                                };
                                let mut row = Vec::new();
                                for (j, c) in cols.iter().enumerate() {
                                    let d = int(c, &field)?;
                                    check_distance(i, j, d).map_err(|m| err(c.span(), &format!("{field}[{i}][{j}]"), m))?;
                                    row.push(d as u32);
                                }
                                m.push(row);
                            }
                            distance = Some((m, tv.span()));
                            continue;
                        }
                        _ => {
                            return Err(err(
                                tk.span(),
                                &field,
                                "unknown field; expected one of nodes, llcs_per_node, cores_per_llc, threads_per_core, numa_distance".into(),
                            ))
                        }
                    };
                    let n = int(tv, &field)?;
                    if n == 0 {
                        return Err(err(tv.span(), &field, "must be at least 1 (a machine needs CPUs)".into()));
                    }
                    shape[idx] = n;
                }
            }
            "costs" => {
                let DeValue::Table(t) = v.get_ref() else {
                    return Err(err(v.span(), "costs", "expected a table".into()));
                };
                for (ck, cv) in t.iter() {
                    let key = ck.get_ref().as_ref();
                    let field = format!("costs.{key}");
                    let text_value = match cv.get_ref() {
                        DeValue::String(s) => s.to_string(),
                        DeValue::Integer(i) => i.as_str().to_string(),
                        DeValue::Boolean(b) => b.to_string(),
                        _ => return Err(err(cv.span(), &field, "expected a duration string".into())),
                    };
                    costs.set(key, &text_value).map_err(|m| {
                        let span = if m.starts_with("unknown cost") { ck.span() } else { cv.span() };
                        err(span, &field, m)
                    })?;
                }
            }
            other => {
                return Err(err(k.span(), other, "unknown field; expected one of name, hz, topology, costs".into()))
            }
        }
    }
    let total = shape.iter().try_fold(1u64, |a, &b| a.checked_mul(b)).unwrap_or(u64::MAX);
    if total as usize > MAX_CPUS {
        return Err(err(topo_span, "topology", format!("{total} CPUs exceeds the limit of {MAX_CPUS}")));
    }
    let nodes = shape[0] as usize;
    let numa = match distance {
        Some((m, span)) => {
            if m.len() != nodes || m.iter().any(|r| r.len() != nodes) {
                return Err(err(span, "topology.numa_distance", format!("must be a {nodes}x{nodes} matrix")));
            }
            Some(m)
        }
        None => None,
    };
    Ok(Machine {
        name,
        hz,
        topology: Topology::new(nodes, shape[1] as usize, shape[2] as usize, shape[3] as usize, numa),
        costs,
    })
}

/// `LOCAL_DISTANCE` (`include/linux/topology.h`).
const LOCAL_DISTANCE: u64 = 10;

/// A SLIT entry as the kernel validates it (`drivers/acpi/numa/srat.c: slit_valid`, and
/// `numa_set_distance`, which refuses what does not fit in a `u8`): a node's distance to
/// itself is `LOCAL_DISTANCE`, to another node more than that and at most 255.
fn check_distance(i: usize, j: usize, d: u64) -> Result<(), String> {
    if i == j && d != LOCAL_DISTANCE {
        return Err(format!("a node's distance to itself is {LOCAL_DISTANCE} (LOCAL_DISTANCE), not {d}"));
    }
    if i != j && !(LOCAL_DISTANCE + 1..=255).contains(&d) {
        return Err(format!("distance {d} between two nodes is outside 11..=255 (a SLIT entry)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_a_machine() {
        let m = parse_machine(
            "m.toml",
            "name = \"box\"\nhz = 1000\n[topology]\ncores_per_llc = 4\nthreads_per_core = 2\n[costs]\ncontext_switch = \"2us\"\n",
        )
        .unwrap();
        assert_eq!(m.nr_cpus(), 8);
        assert_eq!(m.tick_ns().0, 1_000_000);
        assert_eq!(m.costs.context_switch.0, 2_000);
    }
    #[test]
    fn zero_cpus_is_an_error_with_location() {
        let e = parse_machine("m.toml", "[topology]\ncores_per_llc = 0\n").unwrap_err();
        assert_eq!((e.line, e.column), (2, 17));
        assert_eq!(e.field, "topology.cores_per_llc");
    }
    #[test]
    fn numa_distances_are_slit_entries() {
        let topo = |d: &str| format!("[topology]\nnodes = 2\nnuma_distance = [[10, {d}], [21, 10]]\n");
        assert!(parse_machine("m.toml", &topo("21")).is_ok());
        for bad in ["4294967317", "256", "10", "0"] {
            let e = parse_machine("m.toml", &topo(bad)).unwrap_err();
            assert_eq!(e.field, "topology.numa_distance[0][1]", "{bad}");
            assert_eq!((e.line, e.column), (3, 23), "{bad}");
            assert!(e.message.contains(bad) && e.message.contains("11..=255"), "{e}");
        }
        let e = parse_machine("m.toml", "[topology]\nnodes = 2\nnuma_distance = [[12, 21], [21, 10]]\n").unwrap_err();
        assert!(e.message.contains("LOCAL_DISTANCE"), "{e}");
    }
    #[test]
    fn unknown_cost_and_missing_unit() {
        let e = parse_machine("m.toml", "[costs]\nwarp = \"1us\"\n").unwrap_err();
        assert!(e.message.contains("unknown cost"));
        let e = parse_machine("m.toml", "[costs]\nfork = \"15\"\n").unwrap_err();
        assert!(e.message.contains("missing unit"), "{e}");
    }
}
