//! JSON text → value tape, in one pass: no values are built. A string without
//! escapes stays where it is in the input (the tape points into it); one with
//! escapes is written out unescaped after the input; a number stays its text.
//! Where the nodes of the first three levels lie in the input is noted
//! ([`Parsed::span`]), so that a kept message can be copied as its bytes.
//!
//! Written by hand, not serde_json: serde_json builds values (the point is not
//! to), and it is 9 KB gzipped of the `.wasm` the package no longer carries.

use std::fmt;

use super::tape::{Tape, TapeNode, MAX_DEPTH};
use crate::lanes::find_special;
use crate::text::Quoted;

/// A JSON text read into a tape.
#[derive(Debug)]
pub(crate) struct Parsed {
    words: Vec<u32>,
    /// The input, then the strings that had escapes, unescaped.
    text: String,
    input_len: usize,
    /// Where nodes of the first three levels lie in the input (by their
    /// position in `words`, in order).
    spans: Vec<(u32, u32, u32)>,
    /// A `\uD800`-style escape of a lone surrogate was read (as U+10F800 + k,
    /// the stand-in the JS layer uses too: valid UTF-8, and distinct).
    hidden: bool,
}

/// Where and why a JSON text could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParseError {
    /// The byte offset.
    pub offset: usize,
    /// What was wrong there.
    pub what: String,
    /// The 1-based line and column (in characters) of `offset`.
    pub line_column: (usize, usize),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (line, column) = self.line_column;
        write!(
            f,
            "{} at byte {} (line {line}, column {column})",
            self.what, self.offset
        )
    }
}

impl ParseError {
    fn new(offset: usize, what: impl Into<String>) -> Self {
        ParseError {
            offset,
            what: what.into(),
            line_column: (0, 0),
        }
    }

    /// The error with its line and column in `bytes` (valid UTF-8 up to it).
    fn located(mut self, bytes: &[u8]) -> Self {
        let before = bytes.get(..self.offset).unwrap_or(bytes);
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let line = 1 + before.iter().filter(|b| **b == b'\n').count();
        let column =
            1 + std::str::from_utf8(&before[line_start..]).map_or(0, |l| l.chars().count());
        self.line_column = (line, column);
        self
    }
}

impl Parsed {
    /// The tape.
    pub(crate) fn tape(&self) -> Tape<'_> {
        Tape::trusted(&self.words, &self.text)
    }

    /// The JSON text read.
    pub(crate) fn input(&self) -> &str {
        &self.text[..self.input_len]
    }

    /// Where `node` lies in the input, when it is a node of the first three
    /// levels (the root; a request's members or a history's messages; a
    /// request's messages).
    pub(crate) fn span(&self, node: TapeNode<'_>) -> Option<(usize, usize)> {
        let at = node.position() as u32;
        let k = self.spans.binary_search_by_key(&at, |s| s.0).ok()?;
        let (_, start, end) = self.spans[k];
        Some((start as usize, end as usize))
    }

    /// Whether a lone surrogate was read (see [`Parsed`]).
    pub(crate) fn hidden(&self) -> bool {
        self.hidden
    }
}

/// Reads JSON bytes: UTF-8 (checked here), no byte order mark.
pub(crate) fn parse_bytes(bytes: Vec<u8>) -> Result<Parsed, ParseError> {
    match String::from_utf8(bytes) {
        Ok(text) => parse(text),
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            Err(ParseError::new(offset, "not valid UTF-8").located(e.as_bytes()))
        }
    }
}

/// Reads a JSON text.
pub(crate) fn parse(text: String) -> Result<Parsed, ParseError> {
    if text.starts_with('\u{FEFF}') {
        return Err(ParseError::new(
            0,
            "a byte order mark (U+FEFF), which JSON text does not start with: strip it",
        ));
    }
    // Positions are kept as u32, and unescaped strings are stored after the text.
    if text.len() > (u32::MAX / 2) as usize {
        return Err(ParseError::new(
            0,
            "a text over 2 GiB, which is more than this reader takes",
        ));
    }
    let mut p = Parser {
        s: &text,
        b: text.as_bytes(),
        pos: 0,
        words: Vec::with_capacity(text.len() / 16 + 8),
        extra: String::new(),
        spans: Vec::new(),
        hidden: false,
        base: text.len(),
    };
    let read = p.value(0).and_then(|()| {
        p.space();
        match p.pos < p.b.len() {
            true => Err(p.error("more after the JSON value")),
            false => Ok(()),
        }
    });
    if let Err(e) = read {
        return Err(e.located(text.as_bytes()));
    }
    let Parser {
        words,
        extra,
        spans,
        hidden,
        ..
    } = p;
    let input_len = text.len();
    let mut text = text;
    text.push_str(&extra);
    Ok(Parsed {
        words,
        text,
        input_len,
        spans,
        hidden,
    })
}

/// Reads a short JSON text (options, a reply, tool-call arguments).
pub(crate) fn parse_str(text: &str) -> Result<Parsed, ParseError> {
    parse(text.to_string())
}

struct Parser<'t> {
    s: &'t str,
    b: &'t [u8],
    pos: usize,
    words: Vec<u32>,
    /// Strings with escapes, unescaped (they follow the input in the text).
    extra: String,
    spans: Vec<(u32, u32, u32)>,
    hidden: bool,
    /// Where `extra` starts in the text: the input's length.
    base: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> ParseError {
        let what = match self.b.get(self.pos) {
            None => format!("the text ends early (truncated?): {what}"),
            Some(_) => {
                let found = (self.s.get(self.pos..))
                    .and_then(|rest| rest.chars().next())
                    .unwrap_or('\u{FFFD}');
                format!(
                    "unexpected {}: {what}",
                    Quoted(found.encode_utf8(&mut [0; 4]))
                )
            }
        };
        ParseError::new(self.pos, what)
    }

    fn space(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    fn expect_word(&mut self, word: &[u8], tag: u32) -> Result<(), ParseError> {
        if self.b.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            self.words.push(tag);
            Ok(())
        } else {
            Err(self.error("expected a value"))
        }
    }

    /// Reads the value at the current position (after spaces) at `depth`.
    fn value(&mut self, depth: usize) -> Result<(), ParseError> {
        self.space();
        // noted before the value's own nodes, so that the spans stay in order
        let noted = (depth <= 2).then(|| {
            let at = self.words.len() as u32;
            self.spans.push((at, self.pos as u32, 0));
            self.spans.len() - 1
        });
        match self.b.get(self.pos) {
            Some(b'"') => {
                self.words.push(4);
                self.string()?;
            }
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(b't') => self.expect_word(b"true", 2)?,
            Some(b'f') => self.expect_word(b"false", 1)?,
            Some(b'n') => self.expect_word(b"null", 0)?,
            Some(open @ (b'[' | b'{')) => {
                if depth >= MAX_DEPTH {
                    return Err(ParseError::new(
                        self.pos,
                        format!("nested deeper than {MAX_DEPTH} levels"),
                    ));
                }
                self.container(*open == b'{', depth)?;
            }
            _ => return Err(self.error("expected a value")),
        }
        if let Some(k) = noted {
            self.spans[k].2 = self.pos as u32;
        }
        Ok(())
    }

    fn container(&mut self, object: bool, depth: usize) -> Result<(), ParseError> {
        let close = if object { b'}' } else { b']' };
        let head = self.words.len();
        self.words.extend([if object { 6 } else { 5 }, 0, 0]);
        self.pos += 1;
        self.space();
        let mut count = 0u32;
        if self.b.get(self.pos) == Some(&close) {
            self.pos += 1;
        } else {
            loop {
                if object {
                    self.space();
                    if self.b.get(self.pos) != Some(&b'"') {
                        return Err(self.error("expected a key (a string)"));
                    }
                    self.string()?;
                    self.space();
                    if self.b.get(self.pos) != Some(&b':') {
                        return Err(self.error("expected ':' after the key"));
                    }
                    self.pos += 1;
                }
                self.value(depth + 1)?;
                count += 1;
                self.space();
                match self.b.get(self.pos) {
                    Some(b',') => self.pos += 1,
                    Some(&c) if c == close => {
                        self.pos += 1;
                        break;
                    }
                    _ if object => return Err(self.error("expected ',' or '}'")),
                    _ => return Err(self.error("expected ',' or ']'")),
                }
            }
        }
        self.words[head + 1] = count;
        self.words[head + 2] = (self.words.len() - head - 3) as u32;
        Ok(())
    }

    fn number(&mut self) -> Result<(), ParseError> {
        let start = self.pos;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.b.get(self.pos) {
            self.pos += 1;
        }
        let text = self.s.get(start..self.pos).unwrap_or("");
        if !super::number::is_number(text) {
            self.pos = start;
            return Err(ParseError::new(
                start,
                format!("{} is not a JSON number", Quoted(text)),
            ));
        }
        self.words
            .extend([3, start as u32, (self.pos - start) as u32]);
        Ok(())
    }

    /// The offset of the first `"`, `\` or control byte from `i` on.
    fn special(&self, i: usize) -> usize {
        find_special(self.b, i, None)
    }

    /// Reads a string (at its opening quote); pushes its offset and length.
    fn string(&mut self) -> Result<(), ParseError> {
        let start = self.pos + 1;
        let end = self.special(start);
        match self.b.get(end) {
            Some(b'"') => {
                self.words.extend([start as u32, (end - start) as u32]);
                self.pos = end + 1;
                Ok(())
            }
            Some(b'\\') => self.escaped(start, end),
            Some(&c) => {
                self.pos = end;
                Err(ParseError::new(
                    end,
                    format!("a control character (U+{c:04X}) in a string, which JSON escapes"),
                ))
            }
            None => {
                self.pos = end;
                Err(self.error("a string is not closed"))
            }
        }
    }

    /// Reads a string with escapes into `extra`: `start` is its first byte,
    /// `at` its first backslash.
    fn escaped(&mut self, start: usize, mut at: usize) -> Result<(), ParseError> {
        let out_start = self.extra.len();
        let mut from = start;
        loop {
            // (`from..at` lies between ASCII bytes: whole characters of the input)
            self.extra.push_str(self.s.get(from..at).unwrap_or(""));
            match self.b.get(at) {
                Some(b'"') => break,
                Some(b'\\') => {}
                Some(&c) => {
                    self.pos = at;
                    return Err(ParseError::new(
                        at,
                        format!("a control character (U+{c:04X}) in a string, which JSON escapes"),
                    ));
                }
                None => {
                    self.pos = at;
                    return Err(self.error("a string is not closed"));
                }
            }
            let c = match self.b.get(at + 1) {
                Some(b'"') => '"',
                Some(b'\\') => '\\',
                Some(b'/') => '/',
                Some(b'b') => '\u{8}',
                Some(b'f') => '\u{C}',
                Some(b'n') => '\n',
                Some(b'r') => '\r',
                Some(b't') => '\t',
                Some(b'u') => {
                    let (c, len) = self.unicode(at)?;
                    self.extra.push(c);
                    from = at + len;
                    at = self.special(from);
                    continue;
                }
                _ => {
                    self.pos = at;
                    return Err(ParseError::new(
                        at,
                        "an escape JSON does not have (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)",
                    ));
                }
            };
            self.extra.push(c);
            from = at + 2;
            at = self.special(from);
        }
        let offset = self.base + out_start;
        let len = self.extra.len() - out_start;
        self.words.extend([offset as u32, len as u32]);
        self.pos = at + 1;
        Ok(())
    }

    /// The character of the `\u` escape at `at` (a surrogate pair is one
    /// escape of 12 bytes) and the escape's length.
    fn unicode(&mut self, at: usize) -> Result<(char, usize), ParseError> {
        let hex = |i: usize| -> Option<u32> {
            let digits = self.b.get(i..i + 4)?;
            let text = std::str::from_utf8(digits).ok()?;
            u32::from_str_radix(text, 16)
                .ok()
                .filter(|_| digits.iter().all(u8::is_ascii_hexdigit))
        };
        let Some(unit) = hex(at + 2) else {
            self.pos = at;
            return Err(ParseError::new(at, "a \\u escape without four hex digits"));
        };
        if (0xD800..0xDC00).contains(&unit) && self.b.get(at + 6..at + 8) == Some(b"\\u") {
            if let Some(low @ 0xDC00..=0xDFFF) = hex(at + 8) {
                let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                return Ok((char::from_u32(c).unwrap_or('\u{FFFD}'), 12));
            }
        }
        Ok(match char::from_u32(unit) {
            Some(c) => (c, 6),
            None => {
                // a lone surrogate: its stand-in (see `Parsed::hidden`)
                self.hidden = true;
                (
                    char::from_u32(0x10F800 + unit - 0xD800).unwrap_or('\u{FFFD}'),
                    6,
                )
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Node, Value};

    fn read(text: &str) -> Value {
        parse_str(text).unwrap().tape().root().to_value()
    }

    #[test]
    fn reads_every_kind_of_value() {
        let v = read(
            r#" {"a": [1, -2.5e3, true, false, null], "s": "x\"y\\n\u00e9\ud83d\ude00", "o": {}} "#,
        );
        assert_eq!(
            v.to_string(),
            r#"{"a":[1,-2.5e3,true,false,null],"s":"x\"y\\né😀","o":{}}"#
        );
    }

    #[test]
    fn notes_where_the_first_levels_lie() {
        let text = r#"{"model": "m", "messages": [ {"role":"user"} ,  {"role": "assistant"}]}"#;
        let p = parse_str(text).unwrap();
        let root = p.tape().root();
        assert_eq!(p.span(root), Some((0, text.len())));
        let messages = root.get("messages").unwrap();
        let items: Vec<_> = messages.items().collect();
        let (s, e) = p.span(items[1]).unwrap();
        assert_eq!(&text[s..e], r#"{"role": "assistant"}"#);
        let (s, e) = p.span(messages).unwrap();
        assert!(text[s..e].starts_with('[') && text[s..e].ends_with(']'));
        // deeper nodes are not noted
        assert_eq!(p.span(items[0].get("role").unwrap()), None);
    }

    #[test]
    fn lone_surrogates_take_their_stand_ins() {
        let p = parse_str(r#"["\ud83d", "\udc00x"]"#).unwrap();
        assert!(p.hidden());
        let v = p.tape().root().to_value();
        let Value::Array(items) = v else {
            panic!("an array")
        };
        assert_eq!(items[0].as_str(), Some("\u{10F83D}"));
        assert_eq!(items[1].as_str(), Some("\u{10FC00}x"));
    }

    #[test]
    fn bad_text_names_the_byte() {
        for (text, offset, what) in [
            ("", 0, "ends early"),
            ("[1, 2", 5, "ends early"),
            ("[1 2]", 3, "expected ',' or ']'"),
            ("{\"a\" 1}", 5, "expected ':'"),
            ("{1: 2}", 1, "expected a key"),
            ("[01]", 1, "not a JSON number"),
            ("\"a\nb\"", 2, "control character"),
            ("\"\\x\"", 1, "escape"),
            ("\"\\u12\"", 1, "four hex digits"),
            ("[nul]", 1, "expected a value"),
            ("[] []", 3, "more after"),
            ("\u{FEFF}[]", 0, "byte order mark"),
            ("\"open", 5, "not closed"),
        ] {
            let e = parse_str(text).unwrap_err();
            assert_eq!(e.offset, offset, "{text:?}: {e}");
            assert!(e.what.contains(what), "{text:?}: {e}");
        }
        let e = parse_bytes(vec![b'"', 0xff, b'"']).unwrap_err();
        assert_eq!((e.offset, e.what.as_str()), (1, "not valid UTF-8"));
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(parse_str(&deep).unwrap_err().what.contains("nested deeper"));
    }

    #[test]
    fn strings_are_found_across_the_eight_byte_steps() {
        for n in 0..40 {
            let s = "é".repeat(n / 2) + &"a".repeat(n % 2);
            for text in [format!("\"{s}\""), format!("\"{s}\\n{s}\"")] {
                let v = read(&text);
                let want = if text.contains('\\') {
                    format!("{s}\n{s}")
                } else {
                    s.clone()
                };
                assert_eq!(v.as_str(), Some(want.as_str()), "{text}");
            }
        }
    }
}

/// Whatever the bytes, reading them never panics (a panic would kill the wasm
/// instance), and what serde_json reads as JSON reads the same here.
#[cfg(test)]
mod proptests {
    use super::*;
    use crate::json::serde::to_serde;
    use crate::json::Node;
    use proptest::prelude::*;

    /// Bytes that look like JSON: its punctuation, escapes, numbers, some UTF-8.
    fn jsonish() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"{".to_vec()),
            Just(b"}".to_vec()),
            Just(b"[".to_vec()),
            Just(b"]".to_vec()),
            Just(b",".to_vec()),
            Just(b":".to_vec()),
            Just(b"\"".to_vec()),
            Just(b"\\".to_vec()),
            Just(b"\\u".to_vec()),
            Just(b"d83d".to_vec()),
            Just(b"\\n".to_vec()),
            Just(b"true".to_vec()),
            Just(b"null".to_vec()),
            Just(b"-1.5e3".to_vec()),
            Just(b" ".to_vec()),
            Just("é😀".as_bytes().to_vec()),
            any::<u8>().prop_map(|b| vec![b]),
            "[a-z]{1,20}".prop_map(String::into_bytes),
        ];
        prop::collection::vec(piece, 0..40).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn any_bytes_read_or_say_where_they_stop(bytes in jsonish()) {
            let serde: Option<serde_json::Value> = serde_json::from_slice(&bytes).ok();
            match parse_bytes(bytes.clone()) {
                Ok(parsed) => {
                    let root = parsed.tape().root();
                    let _ = root.to_json();
                    // serde_json refuses lone surrogates, which we keep
                    if let Some(v) = serde {
                        prop_assert_eq!(to_serde(&root.to_value()), v);
                    }
                    let config = crate::options::from_json_text("").unwrap();
                    let _ = crate::engine::text::run(&parsed, &config, None, crate::engine::text::Answer::Body);
                }
                Err(e) => {
                    prop_assert!(serde.is_none(), "serde_json reads what we refuse: {}", e);
                    prop_assert!(e.offset <= bytes.len());
                }
            }
        }

        #[test]
        fn json_of_any_value_reads_back(v in arbitrary_json()) {
            let text = serde_json::to_string_pretty(&v).unwrap();
            let parsed = parse_str(&text).unwrap();
            prop_assert_eq!(to_serde(&parsed.tape().root().to_value()), v);
        }
    }

    fn arbitrary_json() -> impl Strategy<Value = serde_json::Value> {
        use serde_json::Value as V;
        let leaf = prop_oneof![
            Just(V::Null),
            any::<bool>().prop_map(V::Bool),
            any::<i32>().prop_map(V::from),
            "\\PC{0,12}".prop_map(V::String),
        ];
        leaf.prop_recursive(4, 40, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(V::Array),
                prop::collection::vec(("[a-z\"\\\\]{0,6}", inner), 0..6)
                    .prop_map(|kv| V::Object(kv.into_iter().collect())),
            ]
        })
    }
}
