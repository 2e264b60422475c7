//! `[params]` with the `--param` overrides, and the workload's own fields (`name`,
//! `description`, `machine`, `schedulers`, `duration`).

use super::{join, DeValue, P, R};
use crate::{ParamValue, MAX_SIM_TIME};
use schedlab_sim::{Ns, SourceError};
use std::collections::BTreeMap;
use toml::de::DeTable;

/// The workload's own fields.
pub(super) struct Header {
    pub name: String,
    pub description: String,
    pub machine: Option<String>,
    pub schedulers: Option<Vec<String>>,
    pub duration: Option<Ns>,
}

/// An error in a `--param` value, which has no place in the file.
fn param_error(field: &str, message: String) -> SourceError {
    SourceError { file: "--param".into(), line: 0, column: 0, field: field.into(), message, snippet: String::new() }
}

impl P<'_> {
    /// `[params]`, then each override `NAME=VALUE` (which must name a declared parameter
    /// and keep its type).
    pub(super) fn params(&self, root: &DeTable, overrides: &[(String, String)]) -> R<BTreeMap<String, ParamValue>> {
        let mut params = BTreeMap::new();
        if let Some(v) = self.get(root, "params") {
            for (k, pv) in self.table(v, "params")?.iter() {
                let f = join("params", k.get_ref());
                let val = match pv.get_ref() {
                    DeValue::Integer(_) => ParamValue::Int(self.int(pv, &f)?),
                    DeValue::String(s) => ParamValue::Text(s.to_string()),
                    _ => return Err(self.err(pv.span().start, &f, "a parameter is an integer or a string")),
                };
                params.insert(k.get_ref().to_string(), val);
            }
        }
        for (k, raw) in overrides {
            let Some(old) = params.get(k) else {
                let known: Vec<&str> = params.keys().map(String::as_str).collect();
                let m = format!("`{}` declares no parameter `{k}` (it has: {})", self.file, known.join(", "));
                return Err(param_error(k, m));
            };
            let v = match old {
                ParamValue::Int(_) => ParamValue::Int(
                    raw.trim()
                        .parse()
                        .map_err(|_| param_error(k, format!("parameter `{k}` is an integer, not `{raw}`")))?,
                ),
                ParamValue::Text(_) => ParamValue::Text(raw.clone()),
            };
            params.insert(k.clone(), v);
        }
        Ok(params)
    }

    /// The workload's own fields; `name` defaults to the file's name.
    pub(super) fn header(&self, root: &DeTable) -> R<Header> {
        let str_field =
            |key: &str| -> R<Option<String>> { self.get(root, key).map(|v| self.string(v, key)).transpose() };
        let name = str_field("name")?.unwrap_or_else(|| self.file.to_string());
        let description = str_field("description")?.unwrap_or_default();
        let machine = str_field("machine")?;
        let schedulers = self.get(root, "schedulers").map(|v| self.string_list(v, "schedulers")).transpose()?;
        let duration = self.get(root, "duration").map(|v| self.duration(v, "duration")).transpose()?;
        if let (Some(d), Some(v)) = (duration, self.get(root, "duration")) {
            if d > MAX_SIM_TIME {
                let m = format!("run time {d} exceeds the limit of {MAX_SIM_TIME}");
                return Err(self.err(v.span().start, "duration", m));
            }
        }
        Ok(Header { name, description, machine, schedulers, duration })
    }
}
