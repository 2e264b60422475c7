//! A small JSON reader that keeps what `serde_json` drops and rt-app files need: the byte
//! offset of every key and value (for located errors), the order of object members (events
//! run in file order) and repeated keys (workgen, rt-app's front end, accepts a repeated
//! event key and numbers the copies). C and C++ comments are skipped, as json-c does.

/// Deepest nesting of arrays and objects (rt-app files nest five levels; the bound keeps the
/// recursive reader's stack small for any input).
pub const MAX_JSON_DEPTH: usize = 64;

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    /// An integer literal (rt-app's durations and counts are integers).
    Int(i64),
    /// A number with a fraction or exponent, kept as written.
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

impl Json {
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Int(_) => "an integer",
            Json::Float(_) => "a number with a fraction",
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

struct Reader<'a, 'r, 's> {
    s: &'a [u8],
    i: usize,
    /// Counts a step per value; once it says stop, reading ends with a syntax error that
    /// [`parse_until`]'s caller tells apart by [`Stop::stopped`].
    stop: Option<&'r mut Stop<'s>>,
}

/// Parses one JSON document (trailing whitespace and comments allowed, nothing else).
pub fn parse(text: &str) -> Result<Spanned, SyntaxError> {
    Reader { s: text.as_bytes(), i: 0, stop: None }.document()
}

/// [`parse`], counting a step of `stop` per value.
pub(crate) fn parse_until(text: &str, stop: &mut Stop) -> Result<Spanned, SyntaxError> {
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

impl Reader<'_, '_, '_> {
    fn document(&mut self) -> Result<Spanned, SyntaxError> {
        let v = self.value(0)?;
        self.skip_ws()?;
        if self.i < self.s.len() {
            return Err((self.i, "unexpected text after the JSON document".into()));
        }
        Ok(v)
    }

    fn skip_ws(&mut self) -> Result<(), SyntaxError> {
        loop {
            match (self.s.get(self.i), self.s.get(self.i + 1)) {
                (Some(b' ' | b'\t' | b'\n' | b'\r'), _) => self.i += 1,
                (Some(b'/'), Some(b'/')) => {
                    while self.s.get(self.i).is_some_and(|&c| c != b'\n') {
                        self.i += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let start = self.i;
                    self.i += 2;
                    loop {
                        match (self.s.get(self.i), self.s.get(self.i + 1)) {
                            (Some(b'*'), Some(b'/')) => {
                                self.i += 2;
                                break;
                            }
                            (Some(_), _) => self.i += 1,
                            (None, _) => return Err((start, "unterminated comment".into())),
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Spanned, SyntaxError> {
        self.skip_ws()?;
        let at = self.i;
        if depth > MAX_JSON_DEPTH {
            return Err((at, format!("nested deeper than {MAX_JSON_DEPTH} levels")));
        }
        if self.stop.as_mut().is_some_and(|s| s.step()) {
            return Err((at, "loading interrupted".into()));
        }
        let v = match self.s.get(at) {
            None => return Err((at, "unexpected end of input: expected a value".into())),
            Some(b'{') => self.object(depth)?,
            Some(b'[') => self.array(depth)?,
            Some(b'"') => Json::Str(self.string()?),
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => self.word()?,
        };
        Ok(Spanned { at, v })
    }

    fn expect(&mut self, c: u8, what: &str) -> Result<(), SyntaxError> {
        self.skip_ws()?;
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            Ok(())
        } else {
            Err((self.i, format!("expected {what}")))
        }
    }

    /// After `{`/`[`: `close` ends it at once, else members until `close`.
    fn more(&mut self, close: u8, first: bool) -> Result<bool, SyntaxError> {
        self.skip_ws()?;
        match self.s.get(self.i) {
            Some(&c) if c == close => {
                self.i += 1;
                Ok(false)
            }
            Some(b',') if !first => {
                self.i += 1;
                Ok(true)
            }
            _ if first => Ok(true),
            None => Err((self.i, "unexpected end of input: an object or array is not closed".into())),
            _ => Err((self.i, format!("expected `,` or `{}`", close as char))),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, SyntaxError> {
        self.i += 1;
        let mut members = Vec::new();
        while self.more(b'}', members.is_empty())? {
            self.skip_ws()?;
            let kat = self.i;
            if self.s.get(kat) != Some(&b'"') {
                return Err((kat, "expected a key in double quotes".into()));
            }
            let key = self.string()?;
            self.expect(b':', "`:` after the key")?;
            let v = self.value(depth + 1)?;
            members.push((key, kat, v));
        }
        Ok(Json::Object(members))
    }

    fn array(&mut self, depth: usize) -> Result<Json, SyntaxError> {
        self.i += 1;
        let mut items = Vec::new();
        while self.more(b']', items.is_empty())? {
            items.push(self.value(depth + 1)?);
        }
        Ok(Json::Array(items))
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.i;
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.i) else {
                return Err((start, "unterminated string".into()));
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => out.extend_from_slice(self.escape()?.encode_utf8(&mut [0; 4]).as_bytes()),
                c if c < 0x20 => return Err((self.i - 1, "control character in a string".into())),
                c => out.push(c),
            }
        }
        // The input is a `str` and escapes add whole characters: still UTF-8.
        String::from_utf8(out).map_err(|_| (start, "invalid UTF-8 in a string".into()))
    }

    fn escape(&mut self) -> Result<char, SyntaxError> {
        let at = self.i - 1;
        let c = *self.s.get(self.i).ok_or((at, "unterminated string".to_string()))?;
        self.i += 1;
        Ok(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hex = self.s.get(self.i..self.i + 4).ok_or((at, "short \\u escape".to_string()))?;
                let code = std::str::from_utf8(hex)
                    .ok()
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .ok_or((at, "bad \\u escape".to_string()))?;
                self.i += 4;
                char::from_u32(code).ok_or((at, "\\u escape of a surrogate (not supported)".to_string()))?
            }
            _ => return Err((at, format!("unknown escape `\\{}`", c as char))),
        })
    }

    fn number(&mut self) -> Result<Json, SyntaxError> {
        let start = self.i;
        let mut float = false;
        while let Some(&c) = self.s.get(self.i) {
            match c {
                b'0'..=b'9' | b'-' | b'+' => {}
                b'.' | b'e' | b'E' => float = true,
                _ => break,
            }
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).expect("ASCII digits");
        if float {
            return match text.parse::<f64>() {
                Ok(_) => Ok(Json::Float(text.to_string())),
                Err(_) => Err((start, format!("malformed number `{text}`"))),
            };
        }
        text.parse::<i64>().map(Json::Int).map_err(|_| (start, format!("malformed or out-of-range integer `{text}`")))
    }

    fn word(&mut self) -> Result<Json, SyntaxError> {
        let start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_alphabetic) {
            self.i += 1;
        }
        match &self.s[start..self.i] {
            b"true" => Ok(Json::Bool(true)),
            b"false" => Ok(Json::Bool(false)),
            b"null" => Ok(Json::Null),
            _ => Err((start, "expected a value (object, array, string, number, true, false or null)".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_offsets_and_repeated_keys() {
        let t = "{ /* c */ \"b\": 1, \"a\": [true, null], \"b\": \"x\\u0041\" } // end";
        let v = parse(t).unwrap();
        let Json::Object(m) = v.v else { panic!("object") };
        let keys: Vec<&str> = m.iter().map(|(k, _, _)| k.as_str()).collect();
        assert_eq!(keys, ["b", "a", "b"]);
        assert_eq!(&t[m[1].1..m[1].1 + 3], "\"a\"");
        assert_eq!(m[2].2.v, Json::Str("xA".into()));
        assert_eq!(&t[m[1].2.at..m[1].2.at + 1], "[");
    }

    #[test]
    fn errors_are_located() {
        for (t, at) in [("{\"a\": 1,, }", 8), ("{\"a\" 1}", 5), ("{\"a\": tru}", 6), ("[1, 2", 5), ("{} x", 3)] {
            assert_eq!(parse(t).unwrap_err().0, at, "{t}");
        }
        let deep = "[".repeat(100);
        assert!(parse(&deep).unwrap_err().1.contains("nested"));
    }

    #[test]
    fn json_is_told_from_toml() {
        assert!(looks_like_json(" // rt-app\n{ \"tasks\": {} }"));
        assert!(!looks_like_json("# toml\n[[task]]\nname = \"x\""));
        assert!(!looks_like_json("name = \"{\""));
    }
}
