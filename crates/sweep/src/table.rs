//! The sweep's tidy table: one row per run, in run order; the columns are the union of
//! every row's, in order of first appearance (runs of a workload whose spans differ with a
//! parameter leave the others' span columns empty).

use crate::point::Row;

/// Columns and rows of text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The table of `rows` (each `(column, value)` pairs), sorted by their `run` column.
    pub fn from_rows(mut rows: Vec<Row>) -> Table {
        let run = |r: &Row| r.iter().find(|(c, _)| c == "run").and_then(|(_, v)| v.parse::<usize>().ok());
        rows.sort_by_key(|r| run(r));
        let mut columns: Vec<String> = Vec::new();
        for r in &rows {
            for (c, _) in r {
                if !columns.contains(c) {
                    columns.push(c.clone());
                }
            }
        }
        let cells = rows
            .iter()
            .map(|r| {
                columns
                    .iter()
                    .map(|c| r.iter().find(|(k, _)| k == c).map_or(String::new(), |(_, v)| v.clone()))
                    .collect()
            })
            .collect();
        Table { columns, rows: cells }
    }

    /// The columns that stay text in a typed file (Parquet) whatever their cells look like:
    /// names, the run's end, its hash (hex digits may all be decimal), and versions
    /// (`6.6` is a kernel, not a number).
    pub fn text_columns(&self) -> Vec<&str> {
        const NAMES: [&str; 5] = ["workload", "machine", "scheduler", "end_reason", "trace_hash"];
        self.columns.iter().map(String::as_str).filter(|c| NAMES.contains(c) || c.ends_with("version")).collect()
    }

    /// RFC 4180 CSV with a header line (fields with commas, quotes or newlines quoted).
    pub fn to_csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&self.columns).expect("writing to memory");
        for r in &self.rows {
            w.write_record(r).expect("writing to memory");
        }
        String::from_utf8(w.into_inner().expect("writing to memory")).expect("UTF-8 in, UTF-8 out")
    }
}
