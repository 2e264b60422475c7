//! A JSON reader for rt-app files: it accepts what rt-app's reader accepts and refuses the
//! rest, keeping what `serde_json` drops: the byte offset of every key and value (for
//! located errors), the order of object members (events run in file order) and repeated
//! keys (workgen, rt-app's front end, numbers the copies of a repeated key).
//!
//! rt-app reads its file with json-c's `json_object_from_file` (`src/rt-app_parse_config.c:
//! parse_config`), which runs one `json_tokener_parse_ex` over the whole file with the
//! default flags (`json_util.c:json_object_from_fd_ex`: `json_tokener_new_ex(
//! JSON_TOKENER_DEFAULT_DEPTH)`, no `json_tokener_set_flags`), that is json-c's non-strict
//! mode, and checks only that a value came back, not where parsing ended. The grammar
//! below is that of `json_tokener.c:json_tokener_parse_ex` in non-strict mode, json-c 0.16
//! to 0.19 (0.16 is Debian 12's, 0.17 Ubuntu 24.04's; the non-strict states did not change
//! between them). Beyond RFC 8259 it accepts:
//!
//! - `/* … */` and `// …` comments wherever whitespace may be (state `eatws` →
//!   `comment_start`); a `//` comment ends at a newline, so one on the last line without a
//!   newline fails (state `comment_eol` runs out of input), as does an unclosed `/*`;
//! - one trailing comma before `}` or `]` (states `object_field_start_after_sep`,
//!   `array_after_sep`; strict mode refuses them);
//! - strings and keys in single quotes (`state_start` `'\''`, `object_field_start`), in
//!   which `"` is an ordinary character; no escape for `'` exists (`string_escape`);
//! - raw control characters (U+0001–U+001F) inside strings and keys (strict mode alone
//!   refuses them);
//! - `true`, `false` and `null` in any case (`state_boolean`, `state_null`: `strncasecmp`),
//!   and `NaN`, `Infinity`, `-Infinity` in any case (`state_null`, `state_inf`), as
//!   floating-point numbers;
//! - numbers as `state_number` scans them: leading zeros (`007` is 7, decimal), `-.5`,
//!   `1.`, `2.e3`, and a dangling exponent dropped (`1e`, `1e+` are 1.0); integers beyond
//!   64 bits saturate (`json_parse_int64`/`json_parse_uint64` through `strtoll`/`strtoull`);
//! - text after the document: parsing stops after the root value and the comments and
//!   whitespace following it, and `json_object_from_fd_ex` ignores the rest (reported in
//!   [`Document::trailing`]).
//!
//! And it refuses, like json-c: unquoted keys, `+1`, `.5`, hexadecimal (`0x10`), `inf`,
//! two commas in a row or a comma alone (`[,]`, `{,}`), escapes other than `\" \\ \/ \b
//! \f \n \r \t \uXXXX`, a NUL byte anywhere in the document, whitespace other than space,
//! tab, LF and CR (`is_ws_char`; json-c 0.15 and older also took `\v` and `\f`), and
//! nesting deeper than 32 levels ([`MAX_JSON_DEPTH`]). `\u` escapes decode as json-c's
//! `escape_unicode` states do: a surrogate pair is one character, a lone surrogate becomes
//! U+FFFD.
//!
//! Two deliberate differences, each refused or documented rather than silently different:
//! a leading UTF-8 byte-order mark is skipped ([`without_bom`]; json-c refuses it), and a
//! `\u0000` escape is refused (json-c keeps the NUL, and rt-app's C strings would then end
//! there, so the name rt-app used would not be the one written).

/// Deepest nesting of arrays and objects: json-c's `JSON_TOKENER_DEFAULT_DEPTH` (32, the
/// depth `json_object_from_fd_ex` gives its tokener). The root is at depth 0 and a value
/// at depth 32 is refused (`json_tokener_parse_ex`: `tok->depth >= tok->max_depth - 1`
/// before descending), so 32 nested `[` parse and 33 do not.
pub const MAX_JSON_DEPTH: usize = 32;

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// An integer literal (rt-app's durations and counts are integers), saturated to 64
    /// bits as json-c does (a literal above `i64::MAX`, json-c's `uint64`, is kept as
    /// `i64::MAX`: rt-app reads every integer through `json_object_get_int`, which clamps
    /// both to `INT32_MAX`).
    Int(i64),
    /// A floating-point number (a fraction, an exponent, `NaN` or `Infinity`), as written
    /// after json-c's trimming of a dangling exponent.
    Float(String),
    Str(String),
    Array(Vec<Spanned>),
    /// Members in file order, repeated keys included: `(key, key offset, value)`.
    Object(Vec<(String, usize, Spanned)>),
}

/// A value and the byte offset where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned {
    pub at: usize,
    pub v: Json,
}

/// A parsed file: the root value and where ignored text after it starts, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    pub root: Spanned,
    /// The byte offset of text after the root value and the comments and whitespace that
    /// follow it: json-c stops there and rt-app never looks at it.
    pub trailing: Option<usize>,
}

impl Json {
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Int(_) => "an integer",
            Json::Float(_) => "a floating-point number",
            Json::Str(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// The dotted path (`tasks.t.run`) of the member whose key or value starts at byte `at`.
pub fn path_at(v: &Spanned, at: usize) -> Option<String> {
    match &v.v {
        Json::Object(m) => m.iter().find_map(|(k, kat, x)| {
            if *kat == at || x.at == at {
                return Some(k.clone());
            }
            path_at(x, at).map(|p| format!("{k}.{p}"))
        }),
        Json::Array(items) => items.iter().enumerate().find_map(|(i, x)| path_at(x, at).map(|p| format!("[{i}].{p}"))),
        _ => None,
    }
}

use crate::stop::Stop;

/// A syntax error: byte offset and message.
pub type SyntaxError = (usize, String);

type Rs<T> = Result<T, SyntaxError>;

struct Reader<'a, 'r, 's> {
    s: &'a [u8],
    i: usize,
    /// Counts a step per value; once it says stop, reading ends with a syntax error that
    /// [`parse_until`]'s caller tells apart by [`Stop::stopped`].
    stop: Option<&'r mut Stop<'s>>,
}

/// Parses one rt-app JSON document (the grammar of this module's header) and returns its
/// root value; text after it is ignored, as json-c ignores it ([`parse_document`] says
/// where it starts).
pub fn parse(text: &str) -> Result<Spanned, SyntaxError> {
    parse_document(text).map(|d| d.root)
}

/// [`parse`], also saying where ignored trailing text starts.
pub fn parse_document(text: &str) -> Result<Document, SyntaxError> {
    Reader { s: text.as_bytes(), i: 0, stop: None }.document()
}

/// [`parse_document`], counting a step of `stop` per value.
pub(crate) fn parse_until(text: &str, stop: &mut Stop) -> Result<Document, SyntaxError> {
    Reader { s: text.as_bytes(), i: 0, stop: Some(stop) }.document()
}

/// `text` without a leading UTF-8 byte-order mark (U+FEFF, which some editors write at
/// the start of a file; it is no part of the document, JSON's or TOML's).
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Whether `text` is JSON rather than TOML: its first character outside a byte-order mark,
/// whitespace and comments is `{` (a TOML document never starts with an inline table).
pub fn looks_like_json(text: &str) -> bool {
    let mut r = Reader { s: without_bom(text).as_bytes(), i: 0, stop: None };
    r.skip_ws().is_ok() && r.s.get(r.i) == Some(&b'{')
}

/// json-c's whitespace (`json_tokener.c:is_ws_char`, json-c 0.16 and later).
fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// The characters that may follow a number inside an array or object
/// (`json_tokener_parse_ex`, state `number`: anything else is "number expected").
fn ends_number(c: u8) -> bool {
    matches!(c, b',' | b']' | b'}' | b'/' | b'I' | b'i') || is_ws(c)
}

/// The Unicode replacement character json-c writes for a lone surrogate escape.
const REPLACEMENT: char = '\u{fffd}';

impl Reader<'_, '_, '_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn document(&mut self) -> Rs<Document> {
        let root = self.value(0)?;
        self.skip_ws()?;
        let trailing = (self.i < self.s.len()).then_some(self.i);
        Ok(Document { root, trailing })
    }

    /// Whitespace and comments (`json_tokener_parse_ex`, states `eatws`, `comment_start`,
    /// `comment`, `comment_end`, `comment_eol`).
    fn skip_ws(&mut self) -> Rs<()> {
        loop {
            match self.peek() {
                Some(c) if is_ws(c) => self.i += 1,
                Some(b'/') => self.comment()?,
                _ => return Ok(()),
            }
        }
    }

    fn comment(&mut self) -> Rs<()> {
        let start = self.i;
        match self.s.get(start + 1) {
            Some(b'*') => match self.s[start + 2..].windows(2).position(|w| w == b"*/") {
                Some(p) => self.i = start + 2 + p + 2,
                None => return Err((start, "unterminated `/*` comment".into())),
            },
            Some(b'/') => match self.s[start..].iter().position(|&c| c == b'\n') {
                Some(p) => self.i = start + p + 1,
                None => {
                    return Err((
                        start,
                        "a `//` comment on the last line needs a newline after it: json-c reads such a \
                         comment up to a newline and fails at the end of the file without one"
                            .into(),
                    ))
                }
            },
            _ => return Err((start, "expected a comment (`/*` or `//`) after `/`".into())),
        }
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Rs<Spanned> {
        self.skip_ws()?;
        let at = self.i;
        if depth >= MAX_JSON_DEPTH {
            return Err((at, format!("nested deeper than {MAX_JSON_DEPTH} levels (json-c's limit)")));
        }
        if self.stop.as_mut().is_some_and(|s| s.step()) {
            return Err((at, "loading interrupted".into()));
        }
        let v = match self.peek() {
            None => return Err((at, "unexpected end of input: expected a value".into())),
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(q @ (b'"' | b'\'')) => Json::Str(self.string(q)?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't' | b'T' | b'f' | b'F' | b'n' | b'N' | b'i' | b'I') => self.word()?,
            Some(0) => return Err((at, "a NUL byte: json-c's input ends there (unexpected end of data)".into())),
            Some(_) => {
                return Err((at, "expected a value (object, array, string, number, true, false or null)".into()))
            }
        };
        Ok(Spanned { at, v })
    }

    /// After an item of an object or array: `,` (then perhaps the closing bracket: one
    /// trailing comma) or the closing bracket. Whether another item follows.
    fn after_item(&mut self, close: u8) -> Rs<bool> {
        self.skip_ws()?;
        match self.peek() {
            Some(b',') => {
                self.i += 1;
                self.skip_ws()?;
                if self.peek() == Some(close) {
                    self.i += 1;
                    return Ok(false);
                }
                Ok(true)
            }
            Some(c) if c == close => {
                self.i += 1;
                Ok(false)
            }
            None => Err((self.i, "unexpected end of input: an object or array is not closed".into())),
            _ => Err((self.i, format!("expected `,` or `{}`", close as char))),
        }
    }

    /// After `{` or `[`: whether the container is empty (`close` follows at once).
    fn empty(&mut self, close: u8) -> Rs<bool> {
        self.i += 1;
        self.skip_ws()?;
        let empty = self.peek() == Some(close);
        if empty {
            self.i += 1;
        }
        Ok(empty)
    }

    fn object(&mut self, depth: usize) -> Rs<Json> {
        let mut members = Vec::new();
        let mut more = !self.empty(b'}')?;
        while more {
            self.skip_ws()?;
            let kat = self.i;
            let key = match self.peek() {
                Some(q @ (b'"' | b'\'')) => self.string(q)?,
                None => return Err((kat, "unexpected end of input: an object is not closed".into())),
                _ => return Err((kat, "expected a key in quotes (json-c takes `\"` or `'`)".into())),
            };
            self.skip_ws()?;
            if self.peek() != Some(b':') {
                return Err((self.i, "expected `:` after the key".into()));
            }
            self.i += 1;
            let v = self.value(depth + 1)?;
            members.push((key, kat, v));
            more = self.after_item(b'}')?;
        }
        Ok(Json::Object(members))
    }

    fn array(&mut self, depth: usize) -> Rs<Json> {
        let mut items = Vec::new();
        let mut more = !self.empty(b']')?;
        while more {
            items.push(self.value(depth + 1)?);
            more = self.after_item(b']')?;
        }
        Ok(Json::Array(items))
    }

    /// A string or key between `quote`s (`json_tokener_parse_ex`, states `string`,
    /// `object_field`, `string_escape`).
    fn string(&mut self, quote: u8) -> Rs<String> {
        let start = self.i;
        self.i += 1;
        let mut out = String::new();
        loop {
            let run = self.i;
            while self.peek().is_some_and(|c| c != quote && c != b'\\' && c != 0) {
                self.i += 1;
            }
            // The input is a `str` and the run stops only at ASCII bytes: whole characters.
            out.push_str(std::str::from_utf8(&self.s[run..self.i]).expect("UTF-8 input"));
            match self.peek() {
                None => return Err((start, "unterminated string".into())),
                Some(0) => {
                    return Err((
                        self.i,
                        "a NUL byte in a string: json-c's input ends there (unexpected end of data)".into(),
                    ))
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(_) => {
                    self.i += 1;
                    return Ok(out);
                }
            }
        }
    }

    /// One escape after `\`, a `\u` surrogate pair as one.
    fn escape(&mut self, out: &mut String) -> Rs<()> {
        let at = self.i;
        let c = *self.s.get(at + 1).ok_or((at, "unterminated string".to_string()))?;
        self.i += 2;
        out.push(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => return self.unicode(at, out),
            c => {
                let shown = if c.is_ascii_graphic() { format!("`\\{}`", c as char) } else { "`\\`".into() };
                return Err((
                    at,
                    format!("unknown escape {shown}: json-c knows \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"),
                ));
            }
        });
        Ok(())
    }

    /// Four hex digits after `\u` at `self.i`.
    fn hex4(&mut self, at: usize) -> Rs<u32> {
        let hex = self.s.get(self.i..self.i + 4).filter(|h| h.iter().all(u8::is_ascii_hexdigit));
        let hex = hex.ok_or((at, "a \\u escape needs four hex digits".to_string()))?;
        self.i += 4;
        Ok(u32::from_str_radix(std::str::from_utf8(hex).expect("ASCII"), 16).expect("hex digits"))
    }

    /// `\uXXXX` (json-c's `escape_unicode`, `escape_unicode_need_escape`,
    /// `escape_unicode_need_u`): a high surrogate followed by `\u` and a low one is one
    /// character; any other surrogate is U+FFFD, and what follows a lone high one is read
    /// as it stands.
    fn unicode(&mut self, at: usize, out: &mut String) -> Rs<()> {
        let mut code = self.hex4(at)?;
        loop {
            match code {
                0 => {
                    return Err((
                        at,
                        "`\\u0000` (a NUL character): rt-app's C strings would end there; write the text without it"
                            .into(),
                    ))
                }
                0xd800..=0xdbff if self.s.get(self.i..self.i + 2) == Some(b"\\u") => {
                    let next_at = self.i;
                    self.i += 2;
                    let low = self.hex4(next_at)?;
                    if (0xdc00..=0xdfff).contains(&low) {
                        let pair = 0x10000 + ((code & 0x3ff) << 10) + (low & 0x3ff);
                        out.push(char::from_u32(pair).expect("a surrogate pair is a character"));
                        return Ok(());
                    }
                    out.push(REPLACEMENT);
                    code = low;
                }
                c => {
                    out.push(char::from_u32(c).unwrap_or(REPLACEMENT));
                    return Ok(());
                }
            }
        }
    }

    /// A number as json-c's state `number` scans it: digits, one `.` before any exponent,
    /// one `e`/`E`, a `-` first or after `.`/`e`, a `+` after `.`/`e`.
    fn number(&mut self) -> Rs<Json> {
        let start = self.i;
        let (mut neg_ok, mut pos_ok, mut double, mut exp) = (true, false, false, false);
        while let Some(c) = self.peek() {
            let takes = c.is_ascii_digit()
                || (!exp && matches!(c, b'e' | b'E'))
                || (neg_ok && c == b'-')
                || (pos_ok && c == b'+')
                || (!double && c == b'.');
            if !takes {
                break;
            }
            (neg_ok, pos_ok) = (false, false);
            match c {
                b'.' => (double, neg_ok, pos_ok) = (true, true, true),
                b'e' | b'E' => (exp, double, neg_ok, pos_ok) = (true, true, true, true),
                _ => {}
            }
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).expect("ASCII");
        if text == "-" && matches!(self.peek(), Some(b'i' | b'I')) {
            self.i = start;
            return self.word();
        }
        if self.peek().is_some_and(|c| !ends_number(c)) {
            return Err((self.i, format!("malformed number: `{text}` followed by `{}`", self.s[self.i] as char)));
        }
        if double {
            // json-c drops a dangling exponent (`1e`, `1e+`), then `strtod` must read it all.
            let kept = text.trim_end_matches(['e', 'E', '-', '+']);
            let kept = if kept.is_empty() { &text[..1] } else { kept };
            return match kept.parse::<f64>() {
                Ok(_) => Ok(Json::Float(kept.to_string())),
                Err(_) => Err((start, format!("malformed number `{text}`"))),
            };
        }
        let (neg, digits) = text.strip_prefix('-').map_or((false, text), |d| (true, d));
        if digits.is_empty() {
            return Err((start, format!("malformed number `{text}`")));
        }
        // `strtoll`/`strtoull` saturate; rt-app then clamps to a C int anyway.
        let mag = digits.bytes().fold(0u64, |a, d| a.saturating_mul(10).saturating_add(u64::from(d - b'0')));
        let v = if neg { 0i64.saturating_sub_unsigned(mag) } else { i64::try_from(mag).unwrap_or(i64::MAX) };
        Ok(Json::Int(v))
    }

    /// `true`, `false`, `null`, `NaN`, `Infinity` and `-Infinity`, in any case.
    fn word(&mut self) -> Rs<Json> {
        let start = self.i;
        let neg = self.peek() == Some(b'-');
        let rest = &self.s[start + usize::from(neg)..];
        let is = |w: &str| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w.as_bytes());
        let (len, v) = match rest.first().map(u8::to_ascii_lowercase) {
            Some(b'i') if is("infinity") => (8, Json::Float(if neg { "-Infinity" } else { "Infinity" }.into())),
            Some(b't') if !neg && is("true") => (4, Json::Bool(true)),
            Some(b'f') if !neg && is("false") => (5, Json::Bool(false)),
            Some(b'n') if !neg && is("null") => (4, Json::Null),
            Some(b'n') if !neg && is("nan") => (3, Json::Float("NaN".into())),
            _ => {
                return Err((
                    start,
                    "expected a value (object, array, string, number, true, false, null, NaN or Infinity)".into(),
                ))
            }
        };
        self.i = start + usize::from(neg) + len;
        Ok(v)
    }
}
