//! `SourceError`: an input error located by file, line, column and field, rendered with
//! the source line and a caret.
//!
//! Hand-written rather than rendered by `annotate-snippets` or `miette`, for two reasons:
//! the first line, `file:line:column: field `path`: message`, is the format editors and
//! our hostile-input suites parse (those crates render rustc's `error: … --> file:line:col`
//! block instead, a different first line); and this crate is one of the pure crates the
//! browser build compiles, kept free of rendering dependencies. The renderer is the two
//! functions below: one line of source, cut around the column, and a caret.

use std::fmt;

/// An error in an input file, located by line, column and field path.
///
/// Rendered as `file:line:column: field `path`: message`, followed by the source line and
/// a caret, so both people and editors can jump to it.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub field: String,
    pub message: String,
    /// The offending source line, for the snippet.
    pub snippet: String,
}

impl SourceError {
    /// Builds an error located at byte `offset` of `text`.
    pub fn at(file: &str, text: &str, offset: usize, field: &str, message: impl Into<String>) -> SourceError {
        let (line, column) = line_col(text, offset);
        let snippet = text.lines().nth(line.saturating_sub(1)).unwrap_or("").to_string();
        SourceError { file: file.to_string(), line, column, field: field.to_string(), message: message.into(), snippet }
    }
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: field `{}`: {}", self.file, self.line, self.column, self.field, self.message)?;
        if !self.snippet.is_empty() {
            let pad: String = " ".repeat(self.line.to_string().len());
            let (shown, caret) = window(&self.snippet, self.column.saturating_sub(1));
            write!(f, "\n{pad} |\n{} | {shown}\n{pad} | {}^", self.line, " ".repeat(caret))?;
        }
        Ok(())
    }
}

/// Characters of a source line shown on each side of the error's column: a hostile file's
/// 60 000-character line is shown as the part around the error, not whole.
const SNIPPET_HALF: usize = 60;

/// The part of `line` around character `col`, with `…` where it is cut, and the caret's
/// position in it.
fn window(line: &str, col: usize) -> (String, usize) {
    let n = line.chars().count();
    if n <= 2 * SNIPPET_HALF {
        return (line.to_string(), col);
    }
    let start = col.saturating_sub(SNIPPET_HALF).min(n.saturating_sub(2 * SNIPPET_HALF));
    let end = (start + 2 * SNIPPET_HALF).min(n);
    let mut shown: String = line.chars().skip(start).take(end - start).collect();
    let mut caret = col - start;
    if start > 0 {
        shown.insert(0, '…');
        caret += 1;
    }
    if end < n {
        shown.push('…');
    }
    (shown, caret)
}
impl std::error::Error for SourceError {}

/// Byte offsets where each line of `text` starts: built once per file so that locating
/// many offsets (every lowered op records its line) costs a binary search each.
pub fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect()
}

/// 1-based line of byte `offset`, given the file's [`line_starts`].
pub fn line_of(starts: &[usize], offset: usize) -> usize {
    starts.partition_point(|&s| s <= offset).max(1)
}

/// 1-based line and column (in characters) of byte `offset`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut o = offset.min(text.len());
    while !text.is_char_boundary(o) {
        o -= 1;
    }
    let before = &text[..o];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_shown_around_the_column() {
        let line = format!("{}X{}", "a".repeat(1000), "b".repeat(1000));
        let e = SourceError::at("f", &line, 1000, "x", "bad");
        let shown = e.to_string();
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines[2].chars().count() < 140, "{}", lines[2]);
        let caret = lines[3].chars().position(|c| c == '^').unwrap();
        assert_eq!(lines[2].chars().nth(caret), Some('X'));
        let short = SourceError::at("f", "k = 1", 4, "k", "bad").to_string();
        assert!(short.ends_with("1 | k = 1\n  |     ^"), "{short}");
    }
    #[test]
    fn line_of_agrees_with_line_col() {
        let text = "a = 1\n\nbc = [\n  2 ]\n";
        let starts = line_starts(text);
        for o in 0..=text.len() {
            assert_eq!(line_of(&starts, o), line_col(text, o).0, "offset {o}");
        }
    }
}
