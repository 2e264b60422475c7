//! The code base's habits, checked as tests (`tests/tidy.rs`): every Rust file opens with a
//! `//!` header saying what it holds, and no function grows past [`MAX_FN_LINES`] lines
//! except those on an allow-list that may only shrink.
//!
//! The scanner is a small lexer, not a parser: it skips comments, string, raw-string and
//! character literals so that braces inside them do not count, which is all a line count of
//! `fn` bodies needs.

#![forbid(unsafe_code)]

/// The longest function body allowed, in lines from the `fn` line to its closing brace.
pub const MAX_FN_LINES: usize = 100;

/// A function found in a file: its name, its first line (1-based) and its length in lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FnSpan {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// The text of `src` with comments and literals blanked (each replaced by spaces, newlines
/// kept), so brace counting and keyword search see only code.
pub fn code_only(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let skip = literal_or_comment_len(b, i);
        if skip == 0 {
            out.push(b[i]);
            i += 1;
            continue;
        }
        out.extend(b[i..i + skip].iter().map(|&c| if c == b'\n' { b'\n' } else { b' ' }));
        i += skip;
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Bytes of the comment or literal starting at `i` (0 if none starts there).
fn literal_or_comment_len(b: &[u8], i: usize) -> usize {
    let rest = &b[i..];
    if rest.starts_with(b"//") {
        return rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
    }
    if rest.starts_with(b"/*") {
        return block_comment_len(rest);
    }
    let raw_start = if rest.starts_with(b"br") {
        2
    } else if rest.starts_with(b"r") {
        1
    } else {
        0
    };
    if raw_start > 0 && (i == 0 || !is_ident(b[i - 1])) {
        let hashes = rest[raw_start..].iter().take_while(|&&c| c == b'#').count();
        if rest.get(raw_start + hashes) == Some(&b'"') {
            return raw_string_len(rest, raw_start + hashes + 1, hashes);
        }
    }
    match rest[0] {
        b'"' => string_len(rest),
        b'\'' => char_len(rest),
        _ => 0,
    }
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn block_comment_len(rest: &[u8]) -> usize {
    let (mut depth, mut j) = (0usize, 0usize);
    while j < rest.len() {
        if rest[j..].starts_with(b"/*") {
            depth += 1;
            j += 2;
        } else if rest[j..].starts_with(b"*/") {
            depth -= 1;
            j += 2;
            if depth == 0 {
                return j;
            }
        } else {
            j += 1;
        }
    }
    rest.len()
}

fn string_len(rest: &[u8]) -> usize {
    let mut j = 1;
    while j < rest.len() {
        match rest[j] {
            b'\\' => j += 2,
            b'"' => return j + 1,
            _ => j += 1,
        }
    }
    rest.len()
}

fn raw_string_len(rest: &[u8], body: usize, hashes: usize) -> usize {
    let mut j = body;
    while j < rest.len() {
        if rest[j] == b'"' && rest[j + 1..].iter().take(hashes).filter(|&&c| c == b'#').count() == hashes {
            return j + 1 + hashes;
        }
        j += 1;
    }
    rest.len()
}

/// A character literal (`'{'`, `'\n'`, `'\u{7b}'`), or 0 for a lifetime (`'a`).
fn char_len(rest: &[u8]) -> usize {
    if rest.get(1) == Some(&b'\\') {
        return rest[2..].iter().position(|&c| c == b'\'').map_or(0, |p| p + 3);
    }
    // One character (UTF-8: up to 4 bytes) then the closing quote.
    (2..=5)
        .find(|&k| {
            rest.get(k) == Some(&b'\'') && std::str::from_utf8(&rest[1..k]).is_ok_and(|s| s.chars().count() == 1)
        })
        .map_or(0, |k| k + 1)
}

/// Every function with a body in `src`, with its length in lines.
pub fn functions(src: &str) -> Vec<FnSpan> {
    let code = code_only(src);
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    for (n, l) in lines.iter().enumerate() {
        let Some(name) = fn_name(l) else { continue };
        if let Some(end) = body_end(&lines, n) {
            out.push(FnSpan { name, line: n + 1, lines: end - n + 1 });
        }
    }
    out
}

/// The function a line declares (`pub(crate) async fn name<…>(`), if any.
fn fn_name(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "fn")?;
    let prefixes_ok = words[..at].iter().all(|w| {
        matches!(*w, "pub" | "const" | "async" | "unsafe" | "extern" | "default")
            || w.starts_with("pub(")
            || w.starts_with('"')
    });
    let name: String = words.get(at + 1)?.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (prefixes_ok && !name.is_empty()).then_some(name)
}

/// The line holding the brace that closes the body opened after line `start`; `None` for a
/// declaration without a body (a trait method ending in `;`).
fn body_end(lines: &[&str], start: usize) -> Option<usize> {
    let mut depth = 0i64;
    let mut opened = false;
    for (k, l) in lines.iter().enumerate().skip(start) {
        for c in l.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                ';' if !opened && depth == 0 => return None,
                _ => {}
            }
            if opened && depth == 0 {
                return Some(k);
            }
        }
    }
    None
}

/// Whether a file opens with a `//!` header (blank lines before it allowed).
pub fn has_header(src: &str) -> bool {
    src.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| l.trim_start().starts_with("//!"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_in_strings_comments_and_chars_do_not_count() {
        let src = "fn a() {\n    let s = \"}}}\";\n    // }\n    let c = '}';\n    let r = r#\"}\"#;\n    /* } */\n}\nfn b<'x>(v: &'x str) -> &'x str {\n    v\n}\n";
        let f = functions(src);
        assert_eq!(
            f,
            vec![FnSpan { name: "a".into(), line: 1, lines: 7 }, FnSpan { name: "b".into(), line: 8, lines: 3 }]
        );
    }

    #[test]
    fn declarations_without_a_body_are_not_functions() {
        assert!(functions("trait T {\n    fn f(&self);\n    fn g(&self) {}\n}\n").iter().all(|f| f.name == "g"));
        assert!(has_header("\n//! x\nfn a() {}\n") && !has_header("fn a() {}\n"));
    }
}
