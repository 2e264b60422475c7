//! The rt-app reader's grammar is json-c's non-strict one, as rt-app calls it
//! (`json_object_from_file`, default flags): `json_tokener.c:json_tokener_parse_ex`,
//! json-c 0.16–0.19. Every verdict below is what that source predicts; each was also
//! checked against json-c 0.17 built from source, calling `json_object_from_file` on the
//! same bytes.

use schedlab_workload::rtapp::json::{parse, parse_document, Json, Spanned};
use schedlab_workload::rtapp::{convert, MAX_JSON_DEPTH};

/// The value of member `a` of the root object of `text`.
fn a(text: &str) -> Json {
    let root = parse(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
    let Json::Object(m) = root.v else { panic!("{text:?}: not an object") };
    m.into_iter().find(|(k, _, _)| k == "a").map(|(_, _, v)| v.v).unwrap_or_else(|| panic!("{text:?}: no `a`"))
}

/// The offset and message json-c's refusal of `text` gives here.
fn refused(text: &str) -> (usize, String) {
    match parse(text) {
        Ok(v) => panic!("{text:?} parsed as {v:?}; json-c refuses it"),
        Err(e) => e,
    }
}

fn ints(v: &Json) -> Vec<i64> {
    let Json::Array(items) = v else { panic!("{v:?}: not an array") };
    items.iter().map(|Spanned { v, .. }| if let Json::Int(i) = v { *i } else { panic!("{v:?}") }).collect()
}

/// `object_field_start_after_sep` and `array_after_sep` take the closing bracket in
/// non-strict mode: one trailing comma, never two, never a comma alone.
#[test]
fn one_trailing_comma_closes_an_object_or_an_array() {
    assert_eq!(a(r#"{"a":1,}"#), Json::Int(1));
    assert_eq!(ints(&a(r#"{"a":[1,2,]}"#)), [1, 2]);
    assert_eq!(ints(&a("{\"a\":[1,2 , /* c */ ]\n,\n}")), [1, 2]);
    for (t, at) in [(r#"{"a":[1,,]}"#, 8), (r#"{"a":[,]}"#, 6), ("{,}", 1), (r#"{"a":1,,}"#, 7), ("[,1]", 1)] {
        assert_eq!(refused(t).0, at, "{t}");
    }
}

/// `eatws` → `comment_start`: comments wherever whitespace may be, also before the root
/// and between a key and its `:`. A `//` comment runs to a newline: on the last line
/// without one, json-c runs out of input in `comment_eol` and fails; so does an unclosed
/// `/*` and a `/` that starts neither. Whitespace is `is_ws_char`'s (json-c 0.16 on):
/// space, tab, LF and CR only.
#[test]
fn comments_go_where_whitespace_goes_and_a_line_comment_needs_its_newline() {
    assert_eq!(a("\r\n\t {\r\n\t \"a\"\r\n\t :\r\n\t 1\r\n\t }"), Json::Int(1));
    refused("{\"a\":\u{b}1}");
    refused("{\"a\":\u{c}1}");
    assert_eq!(a("/*x*/{\"a\" /* c */ : // d\n 1}\n// end\n"), Json::Int(1));
    assert_eq!(a("{\"a\":1/*c*/}"), Json::Int(1));
    let (at, m) = refused("{\"a\":1}\n// end");
    assert_eq!(at, 8);
    assert!(m.contains("newline"), "{m}");
    assert!(refused("{\"a\":1} /* x").1.contains("unterminated"));
    assert!(refused("{\"a\":1} /x").1.contains("expected a comment"));
    assert!(refused("{\"a\": /x 1}").1.contains("expected a comment"));
}

/// `state_start` takes `'` for a string in non-strict mode and `object_field_start` takes
/// it for a key; inside, `"` is plain and `\'` is no escape (`string_escape`).
#[test]
fn strings_and_keys_may_be_single_quoted() {
    assert_eq!(a(r#"{'a':'x"y'}"#), Json::Str("x\"y".into()));
    assert_eq!(a(r#"{"a":'it''s'}"#.replace("''", "\\u0027").as_str()), Json::Str("it's".into()));
    assert!(refused(r#"{"a":'x\'y'}"#).1.contains("unknown escape"));
    assert!(refused("{a:1}").1.contains("key in quotes"));
}

/// Only strict mode refuses control characters in strings and keys; a NUL byte ends
/// json-c's input (unexpected end of data) and is refused anywhere.
#[test]
fn raw_control_characters_are_kept_and_nul_is_refused() {
    assert_eq!(a("{\"a\":\"x\ty\nz\u{1}\"}"), Json::Str("x\ty\nz\u{1}".into()));
    let root = parse("{\"a\tb\":1}").unwrap();
    let Json::Object(m) = root.v else { panic!() };
    assert_eq!(m[0].0, "a\tb");
    assert_eq!(refused("{\"a\":\"x\0y\"}").0, 7);
    assert!(refused("{\"a\":\0}").1.contains("NUL"));
    // json-c keeps a `\u0000`, but rt-app's C strings would end there: refused here.
    assert!(refused(r#"{"a":"x\u0000y"}"#).1.contains("NUL"));
}

/// `escape_unicode` and its two follow-up states: a surrogate pair is one character, a
/// lone surrogate is U+FFFD and what follows it is read as it stands.
#[test]
fn unicode_escapes_decode_as_json_c_decodes_them() {
    assert_eq!(a(r#"{"a":"\u00e9\u00E9"}"#), Json::Str("éé".into()));
    assert_eq!(a(r#"{"a":"\ud83d\ude00"}"#), Json::Str("😀".into()));
    assert_eq!(a(r#"{"a":"\ud800x"}"#), Json::Str("\u{fffd}x".into()));
    assert_eq!(a(r#"{"a":"\udc00"}"#), Json::Str("\u{fffd}".into()));
    assert_eq!(a(r#"{"a":"\ud800\u0041"}"#), Json::Str("\u{fffd}A".into()));
    assert_eq!(a(r#"{"a":"\ud800\n"}"#), Json::Str("\u{fffd}\n".into()));
    assert!(refused(r#"{"a":"\u12"}"#).1.contains("four hex digits"));
    assert!(refused(r#"{"a":"\x41"}"#).1.contains("unknown escape"));
}

/// `state_boolean` and `state_null` compare with `strncasecmp` in non-strict mode;
/// `NaN` and `Infinity` (`state_inf`: each letter in either case) are doubles.
#[test]
fn literals_are_read_in_any_case_and_nan_and_infinity_are_numbers() {
    assert_eq!(a(r#"{"a":TRUE}"#), Json::Bool(true));
    assert_eq!(a(r#"{"a":False}"#), Json::Bool(false));
    assert_eq!(a(r#"{"a":nULl}"#), Json::Null);
    assert_eq!(a(r#"{"a":nan}"#), Json::Float("NaN".into()));
    assert_eq!(a(r#"{"a":Infinity}"#), Json::Float("Infinity".into()));
    assert_eq!(a(r#"{"a":-iNfInItY}"#), Json::Float("-Infinity".into()));
    for t in [r#"{"a":inf}"#, r#"{"a":tru}"#, r#"{"a":truex}"#, r#"{"a":-NaN}"#, r#"{"a":undefined}"#] {
        refused(t);
    }
}

/// `state_number`: leading zeros are decimal, `-.5`, `1.` and `2.e3` are numbers, a
/// dangling exponent is dropped; `+1`, `.5`, hex and a bare `-` are not. Integers
/// saturate at 64 bits as `strtoll`/`strtoull` do.
#[test]
fn numbers_scan_as_json_c_scans_them() {
    assert_eq!(a(r#"{"a":007}"#), Json::Int(7));
    assert_eq!(a(r#"{"a":-0}"#), Json::Int(0));
    assert_eq!(a(r#"{"a":-.5}"#), Json::Float("-.5".into()));
    assert_eq!(a(r#"{"a":1.}"#), Json::Float("1.".into()));
    assert_eq!(a(r#"{"a":2.e3}"#), Json::Float("2.e3".into()));
    assert_eq!(a(r#"{"a":1e}"#), Json::Float("1".into()));
    assert_eq!(a(r#"{"a":1e+}"#), Json::Float("1".into()));
    assert_eq!(a(r#"{"a":1E-2}"#), Json::Float("1E-2".into()));
    assert_eq!(a(r#"{"a":99999999999999999999}"#), Json::Int(i64::MAX));
    assert_eq!(a(r#"{"a":-99999999999999999999}"#), Json::Int(i64::MIN));
    for t in [
        r#"{"a":+1}"#,
        r#"{"a":.5}"#,
        r#"{"a":0x10}"#,
        r#"{"a":-}"#,
        r#"{"a":1.-5}"#,
        r#"{"a":1e5e}"#,
        r#"{"a":12abc}"#,
        r#"{"a":1I}"#,
    ] {
        refused(t);
    }
}

/// `json_object_from_fd_ex` gives its tokener `JSON_TOKENER_DEFAULT_DEPTH` (32): 32
/// nested arrays parse, 33 do not.
#[test]
fn nesting_stops_at_json_c_s_default_depth() {
    assert_eq!(MAX_JSON_DEPTH, 32);
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    parse(&nest(32)).unwrap();
    assert!(refused(&nest(33)).1.contains("nested deeper"));
    parse(&format!("{{\"a\":{}}}", nest(31))).unwrap();
    refused(&format!("{{\"a\":{}}}", nest(32)));
}

/// After the root value json-c eats whitespace and comments and stops; the caller never
/// looks at the rest. The text is kept out of the model and noted.
#[test]
fn text_after_the_document_is_ignored_and_noted() {
    let d = parse_document("{\"a\":1} /* c */ xyz {").unwrap();
    assert_eq!(d.trailing, Some(16));
    assert_eq!(parse_document("{\"a\":1}\n// c\n  \n").unwrap().trailing, None);
    let c = convert("t.json", "{ \"tasks\": { \"t\": { \"run\": 10 } } }\n}\n").unwrap();
    assert!(c.notes.iter().any(|n| n.contains("after the JSON document (from line 2)")), "{:?}", c.notes);
    // Empty input is no document.
    refused("");
    refused(" \n// c\n");
}

/// Repeated keys stay, in file order (workgen numbers repeated event keys; rt-app runs
/// them in order).
#[test]
fn repeated_keys_are_kept_in_file_order_with_their_offsets() {
    let t = "{ 'b': 1, \"a\": [true, null,], \"b\": \"x\\u0041\", }";
    let Json::Object(m) = parse(t).unwrap().v else { panic!() };
    let keys: Vec<&str> = m.iter().map(|(k, _, _)| k.as_str()).collect();
    assert_eq!(keys, ["b", "a", "b"]);
    assert_eq!(&t[m[1].1..m[1].1 + 3], "\"a\"");
    assert_eq!(&t[m[0].1..m[0].1 + 3], "'b'");
    assert_eq!(m[2].2.v, Json::Str("xA".into()));
}

/// The constructs together in an rt-app file, as rt-app's own examples write them: a
/// comment after a value, trailing commas at every level, single quotes, `TRUE`.
#[test]
fn an_rtapp_file_in_the_lenient_grammar_converts() {
    let text = "{\n\t'tasks' : {\n\t\t't' : {\n\t\t\t\"priority\" : -19, /* the nice value */\n\t\t\t\"run\" : 007,\n\t\t\t\"sleep\" : 1000,\n\t\t},\n\t},\n\t\"global\" : { \"gnuplot\" : TRUE, \"duration\" : 2, },\n}\n";
    let c = convert("t.json", text).unwrap();
    assert!(c.toml.contains("nice = -19") && c.toml.contains("{ run = \"7us\" }"), "{}", c.toml);
    assert!(c.toml.contains("duration = \"2s\""), "{}", c.toml);
}
