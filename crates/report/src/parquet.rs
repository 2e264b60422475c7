//! Tidy tables as Parquet files: the same cells as the CSV renderers write, typed so that
//! pandas, polars or DuckDB read numbers as numbers without a schema of their own.
//!
//! The writer uses the `parquet` crate's column writers directly (no Arrow): a table of
//! text cells needs no in-memory columnar format, and leaving Arrow out keeps the build
//! small. One row group, snappy pages, every column optional (an empty cell is a null).
//!
//! Typing is decided per column from its cells, so the file says what the CSV says:
//! - `INT64` when every non-empty cell is an integer written the way Rust writes an `i64`
//!   (`"7"`, not `"007"` or `"+7"`, so the text comes back unchanged);
//! - `DOUBLE` when every non-empty cell is a finite number written the way Rust writes an
//!   `f64` (the shortest form that reads back to the same value: `"0.5"`, `"1000"`);
//! - otherwise, or for a column named in `text`, or when every cell is empty, a `UTF8`
//!   string.
//!
//! [`read`] turns a file back into text cells; for any table, `read(table(t))` is `t`.

use bytes::Bytes;
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::ByteArray;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::record::Field;
use parquet::schema::types::Type;
use std::sync::Arc;

/// How a column is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Text,
}

fn is_int(s: &str) -> bool {
    s.parse::<i64>().is_ok_and(|v| v.to_string() == s)
}

fn is_float(s: &str) -> bool {
    s.parse::<f64>().is_ok_and(|v| v.is_finite() && v.to_string() == s)
}

/// The kind of column `c` of `rows` (see the module's rules).
pub fn kind(rows: &[Vec<String>], c: usize) -> Kind {
    let cells: Vec<&str> = rows.iter().map(|r| r.get(c).map_or("", String::as_str)).filter(|s| !s.is_empty()).collect();
    if cells.is_empty() {
        Kind::Text
    } else if cells.iter().all(|s| is_int(s)) {
        Kind::Int
    } else if cells.iter().all(|s| is_float(s)) {
        Kind::Float
    } else {
        Kind::Text
    }
}

/// The Parquet file of a table: `columns` names, `rows` of cells (a short row's missing
/// cells are empty); the columns named in `text` are strings whatever they hold (names and
/// hashes that may look like numbers).
pub fn table(columns: &[String], rows: &[Vec<String>], text: &[&str]) -> Result<Vec<u8>, String> {
    let kinds: Vec<Kind> = (0..columns.len())
        .map(|c| if text.contains(&columns[c].as_str()) { Kind::Text } else { kind(rows, c) })
        .collect();
    write(columns, rows, &kinds).map_err(|e| format!("writing Parquet: {e}"))
}

fn file_schema(columns: &[String], kinds: &[Kind]) -> parquet::errors::Result<Type> {
    let mut fields = Vec::with_capacity(columns.len());
    for (name, k) in columns.iter().zip(kinds) {
        let (physical, logical) = match k {
            Kind::Int => (Physical::INT64, Some(LogicalType::integer(64, true))),
            Kind::Float => (Physical::DOUBLE, None),
            Kind::Text => (Physical::BYTE_ARRAY, Some(LogicalType::String)),
        };
        let f = Type::primitive_type_builder(name, physical)
            .with_repetition(Repetition::OPTIONAL)
            .with_logical_type(logical)
            .build()?;
        fields.push(Arc::new(f));
    }
    Type::group_type_builder("schema").with_fields(fields).build()
}

fn write(columns: &[String], rows: &[Vec<String>], kinds: &[Kind]) -> parquet::errors::Result<Vec<u8>> {
    let props = WriterProperties::builder().set_compression(Compression::SNAPPY).build();
    let mut w = SerializedFileWriter::new(Vec::new(), Arc::new(file_schema(columns, kinds)?), Arc::new(props))?;
    let mut group = w.next_row_group()?;
    let mut c = 0;
    while let Some(mut col) = group.next_column()? {
        let cells: Vec<&str> = rows.iter().map(|r| r.get(c).map_or("", String::as_str)).collect();
        // Definition level 1: a value; 0: a null (the empty cell).
        let defs: Vec<i16> = cells.iter().map(|s| i16::from(!s.is_empty())).collect();
        let present = cells.iter().filter(|s| !s.is_empty());
        // The kinds were chosen so that every present cell parses.
        match col.untyped() {
            ColumnWriter::Int64ColumnWriter(cw) => {
                let v: Vec<i64> = present.map(|s| s.parse().unwrap_or_default()).collect();
                cw.write_batch(&v, Some(&defs), None)?;
            }
            ColumnWriter::DoubleColumnWriter(cw) => {
                let v: Vec<f64> = present.map(|s| s.parse().unwrap_or_default()).collect();
                cw.write_batch(&v, Some(&defs), None)?;
            }
            ColumnWriter::ByteArrayColumnWriter(cw) => {
                let v: Vec<ByteArray> = present.map(|s| ByteArray::from(*s)).collect();
                cw.write_batch(&v, Some(&defs), None)?;
            }
            _ => unreachable!("the schema holds only INT64, DOUBLE and BYTE_ARRAY columns"),
        }
        col.close()?;
        c += 1;
    }
    group.close()?;
    w.into_inner()
}

/// The columns and text cells of a Parquet file (nulls as empty cells; the inverse of
/// [`table`] for the column kinds it writes).
pub fn read(file: Vec<u8>) -> Result<(Vec<String>, Vec<Vec<String>>), String> {
    let reader = SerializedFileReader::new(Bytes::from(file)).map_err(|e| format!("reading Parquet: {e}"))?;
    let columns: Vec<String> =
        reader.metadata().file_metadata().schema_descr().columns().iter().map(|c| c.name().to_string()).collect();
    let mut rows = Vec::new();
    for row in reader.get_row_iter(None).map_err(|e| format!("reading Parquet: {e}"))? {
        let row = row.map_err(|e| format!("reading Parquet: {e}"))?;
        let cells = row
            .get_column_iter()
            .map(|(name, f)| match f {
                Field::Null => Ok(String::new()),
                Field::Long(v) => Ok(v.to_string()),
                Field::Double(v) => Ok(v.to_string()),
                Field::Str(s) => Ok(s.clone()),
                other => Err(format!("reading Parquet: column `{name}` holds {other:?}, not a number or text")),
            })
            .collect::<Result<Vec<String>, String>>()?;
        rows.push(cells);
    }
    Ok((columns, rows))
}

/// The columns of a Parquet file and how each is stored (`None`: a type [`table`] does not
/// write).
pub fn schema(file: Vec<u8>) -> Result<Vec<(String, Option<Kind>)>, String> {
    let reader = SerializedFileReader::new(Bytes::from(file)).map_err(|e| format!("reading Parquet: {e}"))?;
    let columns = reader.metadata().file_metadata().schema_descr().columns().iter().map(|c| {
        let kind = match c.physical_type() {
            Physical::INT64 => Some(Kind::Int),
            Physical::DOUBLE => Some(Kind::Float),
            Physical::BYTE_ARRAY if c.logical_type_ref() == Some(&LogicalType::String) => Some(Kind::Text),
            _ => None,
        };
        (c.name().to_string(), kind)
    });
    Ok(columns.collect())
}

/// The per-task table of several runs (the columns of `--format csv`) as a Parquet file.
pub fn tasks(rs: &[schedlab_metrics::RunRecord]) -> Result<Vec<u8>, String> {
    let columns: Vec<String> = crate::CSV_HEADER.iter().map(|c| c.to_string()).collect();
    table(&columns, &crate::task_rows(rs), &["scheduler", "name"])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(cols: &[&str], rows: &[&[&str]]) -> (Vec<String>, Vec<Vec<String>>) {
        (
            cols.iter().map(|s| s.to_string()).collect(),
            rows.iter().map(|r| r.iter().map(|s| s.to_string()).collect()).collect(),
        )
    }

    #[test]
    fn kinds_follow_the_cells() {
        let (_, rows) = t(&[], &[&["1", "0.5", "x", "007", "", "-3", "1e3"], &["", "1000", "2", "7", "", "4", "5"]]);
        let kinds: Vec<Kind> = (0..7).map(|c| kind(&rows, c)).collect();
        use Kind::*;
        // "007" and "1e3" are not how Rust writes those numbers: text, so they survive.
        assert_eq!(kinds, [Int, Float, Text, Text, Text, Int, Text]);
    }

    #[test]
    fn a_table_reads_back_cell_for_cell_with_nulls_and_awkward_text() {
        let (cols, rows) = t(
            &["run", "name", "per_sec", "hash", "span.a,b.count"],
            &[
                &["0", "a, \"quoted\"\nname", "12.25", "0123456789abcdef", ""],
                &["1", "", "1000", "1234567890123456", "3"],
                &["2", "ünïcode", "", "00000000000000ff", "-9223372036854775808"],
            ],
        );
        let file = table(&cols, &rows, &["hash"]).unwrap();
        assert_eq!(&file[..4], b"PAR1");
        let kinds: Vec<Option<Kind>> = schema(file.clone()).unwrap().into_iter().map(|(_, k)| k).collect();
        assert_eq!(kinds, [Some(Kind::Int), Some(Kind::Text), Some(Kind::Float), Some(Kind::Text), Some(Kind::Int)]);
        assert_eq!(read(file).unwrap(), (cols, rows));
    }

    #[test]
    fn the_same_table_gives_the_same_bytes() {
        let (cols, rows) = t(&["a", "b"], &[&["x", "1"], &["y", "2"], &["x", "3"]]);
        assert_eq!(table(&cols, &rows, &[]).unwrap(), table(&cols, &rows, &[]).unwrap());
    }

    #[test]
    fn an_empty_table_is_a_valid_file() {
        let (cols, rows) = t(&["run", "scheduler"], &[]);
        assert_eq!(read(table(&cols, &rows, &[]).unwrap()).unwrap(), (cols, rows));
    }
}
