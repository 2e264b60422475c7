//! Plain-text tables for the terminal, through `comfy-table`: the first column left-aligned,
//! the others right-aligned, two spaces between columns, a rule of `-` under the header row.
//! Column widths are display widths (a CJK character counts two), and no width limit panics:
//! `format!("{v:<w$}")` panics once `w` reaches 65 536, which a task name that long did
//! (issue 31); comfy-table caps a column at 65 535 columns and wraps a longer cell.
//!
//! Every cell goes through [`escape`]: what a workload names (tasks, spans) reaches the
//! terminal as text, never as control sequences.

use comfy_table::{CellAlignment, ContentLineStyle, LineStyle, Table, TableStyle};
use std::borrow::Cow;

/// No borders; a space between columns (with one column of padding: two in all) and the
/// header rule of `-`, drawn through the column gaps too.
const STYLE: TableStyle = TableStyle::new()
    .header_lines(ContentLineStyle::none().junction(' '))
    .header_separator(LineStyle::none().fill('-').junction('-'))
    .content_lines(ContentLineStyle::none().junction(' '));

/// `rows[0]` is the header. Lines carry no trailing spaces; each ends in `\n`.
pub fn table(rows: &[Vec<String>]) -> String {
    let Some((header, body)) = rows.split_first() else { return String::new() };
    let mut t = Table::new();
    t.load_style(STYLE);
    t.set_header(header.iter().map(|c| escape(c).into_owned()));
    for r in body {
        t.add_row(r.iter().map(|c| escape(c).into_owned()));
    }
    for (i, col) in t.column_iter_mut().enumerate() {
        col.set_padding((u16::from(i > 0), 0));
        col.set_cell_alignment(if i == 0 { CellAlignment::Left } else { CellAlignment::Right });
    }
    let mut s = String::new();
    for line in t.lines() {
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

/// Whether `c` would act on a terminal rather than print: C0/C1 controls (ESC starts a
/// colour or cursor sequence, CR overwrites a line) and the bidirectional overrides and
/// isolates, which reorder the text around them (CVE-2021-42574, "Trojan Source").
fn acts_on_terminal(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with each character that would act on a terminal written as its Rust escape
/// (`\n`, `\t`, `\u{1b}`); borrowed when there is none (the usual case).
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(acts_on_terminal) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if acts_on_terminal(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(r: &[&[&str]]) -> Vec<Vec<String>> {
        r.iter().map(|r| r.iter().map(|c| c.to_string()).collect()).collect()
    }

    /// The layout the hand-written tables had, kept byte for byte.
    #[test]
    fn left_then_right_aligned_two_spaces_apart_with_a_rule() {
        let t = table(&rows(&[&["task", "n", "run ms"], &["hog", "2", "10.000"], &["a-long-name", "10", "1.5"]]));
        let want =
            "task          n  run ms\n-----------------------\nhog           2  10.000\na-long-name  10     1.5\n";
        assert_eq!(t, want);
        assert_eq!(table(&rows(&[&["", "cfs"], &["x", ""]])), "   cfs\n------\nx\n");
        assert_eq!(table(&[]), "");
    }

    /// A cell of 65 536 characters or more once panicked in `format!`'s width.
    #[test]
    fn cells_of_any_width_render() {
        for n in [65_535, 65_536, 200_000] {
            let name = "x".repeat(n);
            let t = table(&rows(&[&["task", "n"], &[&name, "1"]]));
            assert_eq!(t.matches('x').count(), n, "the whole name is shown");
        }
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape("plain é ✓"), "plain é ✓");
        assert_eq!(escape("a\u{1b}[31mred\r\n\t\u{7f}\u{9b}"), "a\\u{1b}[31mred\\r\\n\\t\\u{7f}\\u{9b}");
        assert_eq!(escape("abc\u{202e}def"), "abc\\u{202e}def");
        let t = table(&rows(&[&["task"], &["evil\u{1b}]0;title\u{7}"]]));
        assert!(!t.contains('\u{1b}') && t.contains("evil\\u{1b}]0;title\\u{7}"), "{t}");
    }
}
