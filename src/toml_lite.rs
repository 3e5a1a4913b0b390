//! A small TOML reader: every key/value of a document with its full key path
//! and position. Scalars (strings, integers, floats, booleans) are decoded;
//! arrays, inline tables and datetimes are parsed past and reported by kind.
//!
//! Why not the `toml` crate: it adds about 66 KB (gzipped) to the `.wasm`,
//! more than the rest of the library, to read a handful of scalar options.
//! The tests cross-check this reader against the `toml` crate.

/// A decoded value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TomlValue {
    /// A basic or literal string (escapes decoded).
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// An array.
    Array(Vec<TomlValue>),
    /// Anything else, by kind ("a table", "a datetime").
    Other(&'static str),
}

/// One key/value of the document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TomlEntry {
    /// Table path plus the (dotted) key.
    pub path: Vec<String>,
    /// The value.
    pub value: TomlValue,
    /// Byte offset of the value.
    pub offset: usize,
}

/// A syntax error: what and where (byte offset).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TomlError {
    /// What is wrong.
    pub message: String,
    /// Byte offset.
    pub offset: usize,
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

type Res<T> = Result<T, TomlError>;

impl<'a> Parser<'a> {
    fn err<T>(&self, message: impl Into<String>) -> Res<T> {
        Err(TomlError {
            message: message.into(),
            offset: self.i,
        })
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn starts(&self, p: &str) -> bool {
        self.s[self.i..].starts_with(p.as_bytes())
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_comment(&mut self) {
        if self.peek() == Some(b'#') {
            while !matches!(self.peek(), None | Some(b'\n')) {
                self.i += 1;
            }
        }
    }

    /// Whitespace, newlines and comments (inside arrays, between statements).
    fn skip_blank(&mut self) {
        loop {
            self.skip_space();
            self.skip_comment();
            match self.peek() {
                Some(b'\n') => self.i += 1,
                Some(b'\r') if self.s.get(self.i + 1) == Some(&b'\n') => self.i += 2,
                _ => return,
            }
        }
    }

    fn end_of_line(&mut self) -> Res<()> {
        self.skip_space();
        self.skip_comment();
        match self.peek() {
            None | Some(b'\n') => Ok(()),
            Some(b'\r') if self.s.get(self.i + 1) == Some(&b'\n') => Ok(()),
            Some(c) => self.err(format!(
                "expected the end of the line, found {:?}",
                c as char
            )),
        }
    }

    fn key_part(&mut self) -> Res<String> {
        match self.peek() {
            Some(b'"') => self.basic_string(),
            Some(b'\'') => self.literal_string(),
            _ => {
                let start = self.i;
                while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
                {
                    self.i += 1;
                }
                if start == self.i {
                    return self.err("expected a key");
                }
                Ok(self.text[start..self.i].to_string())
            }
        }
    }

    fn key(&mut self) -> Res<Vec<String>> {
        let mut parts = Vec::new();
        loop {
            self.skip_space();
            parts.push(self.key_part()?);
            self.skip_space();
            if self.peek() != Some(b'.') {
                return Ok(parts);
            }
            self.i += 1;
        }
    }

    fn hex_escape(&mut self, digits: usize) -> Res<char> {
        let hex = self.text.get(self.i..self.i + digits).unwrap_or("");
        let c = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
        match c {
            Some(c) if hex.len() == digits => {
                self.i += digits;
                Ok(c)
            }
            _ => self.err("invalid unicode escape"),
        }
    }

    /// `"…"` or `"""…"""`, escapes decoded.
    fn basic_string(&mut self) -> Res<String> {
        let multi = self.starts("\"\"\"");
        self.i += if multi { 3 } else { 1 };
        if multi && self.peek() == Some(b'\n') {
            self.i += 1;
        }
        let mut out = String::new();
        loop {
            let start = self.i;
            while !matches!(self.peek(), None | Some(b'"' | b'\\' | b'\n')) {
                self.i += 1;
            }
            out.push_str(&self.text[start..self.i]);
            match self.peek() {
                None => return self.err("unterminated string"),
                Some(b'\n') if !multi => return self.err("unterminated string"),
                Some(b'\n') => {
                    out.push('\n');
                    self.i += 1;
                }
                Some(b'"') if !multi => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'"') => {
                    if self.starts("\"\"\"") {
                        // up to two quotes may end the content right before the closing three
                        let mut n = 3;
                        while n < 5 && self.s.get(self.i + n) == Some(&b'"') {
                            n += 1;
                        }
                        out.push_str(&"\"".repeat(n - 3));
                        self.i += n;
                        return Ok(out);
                    }
                    out.push('"');
                    self.i += 1;
                }
                Some(_) => {
                    self.i += 1;
                    let Some(c) = self.peek() else {
                        return self.err("unterminated string");
                    };
                    self.i += 1;
                    match c {
                        b'b' => out.push('\u{8}'),
                        b't' => out.push('\t'),
                        b'n' => out.push('\n'),
                        b'f' => out.push('\u{c}'),
                        b'r' => out.push('\r'),
                        b'e' => out.push('\u{1b}'),
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'u' => out.push(self.hex_escape(4)?),
                        b'U' => out.push(self.hex_escape(8)?),
                        b' ' | b'\t' | b'\r' | b'\n' if multi => {
                            // a line-ending backslash trims the whitespace that follows
                            self.i -= 1;
                            while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
                                self.i += 1;
                            }
                        }
                        _ => {
                            self.i -= 2;
                            return self.err("invalid escape in string");
                        }
                    }
                }
            }
        }
    }

    /// `'…'` or `'''…'''`, taken as written.
    fn literal_string(&mut self) -> Res<String> {
        let multi = self.starts("'''");
        let close = if multi { "'''" } else { "'" };
        self.i += close.len();
        if multi && self.peek() == Some(b'\n') {
            self.i += 1;
        }
        let rest = &self.text[self.i..];
        let end = if multi {
            rest.find(close)
        } else {
            rest.find(['\'', '\n'])
                .filter(|&e| rest.as_bytes()[e] == b'\'')
        };
        let Some(mut end) = end else {
            return self.err("unterminated string");
        };
        if multi {
            // up to two quotes may end the content right before the closing three
            for _ in 0..2 {
                if rest.as_bytes().get(end + 3) == Some(&b'\'') {
                    end += 1;
                }
            }
        }
        let out = rest[..end].to_string();
        self.i += end + close.len();
        Ok(out)
    }

    fn value(&mut self, depth: usize) -> Res<TomlValue> {
        if depth > 64 {
            return self.err("values nested too deeply");
        }
        match self.peek() {
            Some(b'"') => self.basic_string().map(TomlValue::Str),
            Some(b'\'') => self.literal_string().map(TomlValue::Str),
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_blank();
                    if self.peek() == Some(b']') {
                        self.i += 1;
                        return Ok(TomlValue::Array(items));
                    }
                    items.push(self.value(depth + 1)?);
                    self.skip_blank();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b']') => {}
                        _ => return self.err("expected , or ] in an array"),
                    }
                }
            }
            Some(b'{') => {
                self.i += 1;
                self.skip_space();
                if self.peek() == Some(b'}') {
                    self.i += 1;
                    return Ok(TomlValue::Other("a table"));
                }
                loop {
                    self.key()?;
                    if self.peek() != Some(b'=') {
                        return self.err("expected = in an inline table");
                    }
                    self.i += 1;
                    self.skip_space();
                    self.value(depth + 1)?;
                    self.skip_space();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(TomlValue::Other("a table"));
                        }
                        _ => return self.err("expected , or } in an inline table"),
                    }
                }
            }
            _ => self.scalar(),
        }
    }

    /// Booleans, numbers and datetimes.
    fn scalar(&mut self) -> Res<TomlValue> {
        let start = self.i;
        let word =
            |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'-' | b'.' | b':');
        while matches!(self.peek(), Some(c) if word(c)) {
            self.i += 1;
        }
        // a datetime may separate date and time with one space
        if self.i - start == 10
            && self.peek() == Some(b' ')
            && self.s.get(self.i + 1).is_some_and(u8::is_ascii_digit)
        {
            self.i += 1;
            while matches!(self.peek(), Some(c) if word(c)) {
                self.i += 1;
            }
        }
        let token = &self.text[start..self.i];
        let bytes = token.as_bytes();
        let value = match token {
            "" => None,
            "true" => Some(TomlValue::Bool(true)),
            "false" => Some(TomlValue::Bool(false)),
            "inf" | "+inf" => Some(TomlValue::Float(f64::INFINITY)),
            "-inf" => Some(TomlValue::Float(f64::NEG_INFINITY)),
            "nan" | "+nan" | "-nan" => Some(TomlValue::Float(f64::NAN)),
            _ if bytes.len() >= 8 && bytes[4] == b'-' || bytes.len() >= 5 && bytes[2] == b':' => {
                Some(TomlValue::Other("a datetime"))
            }
            _ => number(&token.replace('_', "")),
        };
        match value {
            Some(v) => Ok(v),
            None => {
                self.i = start;
                self.err(format!("invalid value {token:?}"))
            }
        }
    }
}

fn number(t: &str) -> Option<TomlValue> {
    let (sign, digits) = match t.as_bytes().first() {
        Some(b'-') => (-1, &t[1..]),
        Some(b'+') => (1, &t[1..]),
        _ => (1, t),
    };
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(d) = t.strip_prefix(prefix) {
            return i64::from_str_radix(d, radix).ok().map(TomlValue::Int);
        }
    }
    if !digits.bytes().next().is_some_and(|c| c.is_ascii_digit()) {
        return None;
    }
    if digits.bytes().all(|c| c.is_ascii_digit()) {
        return digits.parse::<i64>().ok().map(|v| TomlValue::Int(sign * v));
    }
    t.parse::<f64>().ok().map(TomlValue::Float)
}

/// Every key/value of `text`, in document order.
pub(crate) fn parse(text: &str) -> Result<Vec<TomlEntry>, TomlError> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    let mut table: Vec<String> = Vec::new();
    let mut out = Vec::new();
    loop {
        p.skip_blank();
        match p.peek() {
            None => return Ok(out),
            Some(b'[') => {
                let array = p.starts("[[");
                p.i += if array { 2 } else { 1 };
                table = p.key()?;
                if !p.starts(if array { "]]" } else { "]" }) {
                    return p.err("expected ] to close the table header");
                }
                p.i += if array { 2 } else { 1 };
                p.end_of_line()?;
            }
            Some(_) => {
                let key = p.key()?;
                if p.peek() != Some(b'=') {
                    return p.err("expected = after the key");
                }
                p.i += 1;
                p.skip_space();
                let offset = p.i;
                let value = p.value(0)?;
                p.end_of_line()?;
                let mut path = table.clone();
                path.extend(key);
                out.push(TomlEntry {
                    path,
                    value,
                    offset,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> Vec<(String, TomlValue)> {
        parse(text)
            .unwrap()
            .into_iter()
            .map(|e| (e.path.join("."), e.value))
            .collect()
    }

    #[test]
    fn reads_a_moltis_toml() {
        let doc = r#"
# Moltis config
[server]
bind = "0.0.0.0"   # comment
ports = [80, 443,
  8080, # trailing
]
meta = { a = 1, b = { c = "x" } }

[chat.compaction]
mode = 'recency_preserving'
threshold_percent = 0.8
protect_head = 1_0
show_settings_hint = false
summary_model = """
multi "line" \
  text"""
when = 1979-05-27 07:32:00Z
"quoted key" = 0x10
"#;
        let e = entries(doc);
        assert_eq!(
            e[0],
            ("server.bind".into(), TomlValue::Str("0.0.0.0".into()))
        );
        assert_eq!(
            e[1].1,
            TomlValue::Array(vec![
                TomlValue::Int(80),
                TomlValue::Int(443),
                TomlValue::Int(8080)
            ])
        );
        assert_eq!(e[2].1, TomlValue::Other("a table"));
        assert_eq!(
            e[3],
            (
                "chat.compaction.mode".into(),
                TomlValue::Str("recency_preserving".into())
            )
        );
        assert_eq!(e[4].1, TomlValue::Float(0.8));
        assert_eq!(e[5].1, TomlValue::Int(10));
        assert_eq!(e[6].1, TomlValue::Bool(false));
        assert_eq!(e[7].1, TomlValue::Str("multi \"line\" text".into()));
        assert_eq!(e[8].1, TomlValue::Other("a datetime"));
        assert_eq!(
            e[9],
            ("chat.compaction.quoted key".into(), TomlValue::Int(16))
        );
        assert!(parse("x = -0x10\n").is_err(), "TOML has no signed hex");
    }

    #[test]
    fn errors_point_at_the_problem() {
        let err = parse("[chat.compaction]\nmode = \"open\n").unwrap_err();
        assert_eq!(err.offset, 30);
        assert!(err.message.contains("unterminated"));
        assert!(parse("a = \n").is_err());
        assert!(parse("a = 1 2\n").is_err());
        assert!(parse("[a\n").is_err());
    }

    #[test]
    fn agrees_with_the_toml_crate_on_scalars() {
        let doc = "a = \"x\\u00e9\\n\"\nb = 'lit\\'\nc = 3\nd = -2.5e3\ne = true\n[t]\nf = +7\ng = \"\"\"\nq\"\"\"\"\n";
        let ours = entries(doc);
        let theirs: toml::Table = toml::from_str(doc).unwrap();
        for (path, v) in ours {
            let mut cur = &toml::Value::Table(theirs.clone());
            for p in path.split('.') {
                cur = &cur[p];
            }
            let same = match (&v, cur) {
                (TomlValue::Str(a), toml::Value::String(b)) => a == b,
                (TomlValue::Int(a), toml::Value::Integer(b)) => a == b,
                (TomlValue::Float(a), toml::Value::Float(b)) => a == b,
                (TomlValue::Bool(a), toml::Value::Boolean(b)) => a == b,
                _ => false,
            };
            assert!(same, "{path}: {v:?} vs {cur:?}");
        }
    }
}

/// The reader never panics (a panic would kill the wasm instance) and reads
/// generated `[chat.compaction]` tables exactly as the `toml` crate does.
#[cfg(test)]
mod proptests {
    use super::{parse, TomlValue};
    use crate::options;
    use proptest::prelude::*;

    /// Pieces that TOML documents are made of, glued at random.
    fn tomlish() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("[chat.compaction]\n".to_string()),
            Just("[[x]]\n".to_string()),
            Just("mode = ".to_string()),
            Just("\"\"\"".to_string()),
            Just("'''".to_string()),
            Just("\\u00e9".to_string()),
            Just("[1, [2, {a = 3}],\n]".to_string()),
            Just("{ b = \"c\" }".to_string()),
            Just("# comment\n".to_string()),
            Just("1979-05-27T07:32:00Z".to_string()),
            Just("0x1F".to_string()),
            Just("-inf".to_string()),
            "[ -~]{0,12}",
            "\\PC{0,4}",
            Just("\n".to_string()),
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    fn scalar() -> impl Strategy<Value = (String, String)> {
        prop_oneof![
            "[a-zA-Z0-9 _é\\\\\"\\t-]{0,20}".prop_map(|s| {
                let lit = toml_escape(&s);
                (lit, s)
            }),
            (-1_000_000i64..1_000_000).prop_map(|i| (i.to_string(), i.to_string())),
            any::<bool>().prop_map(|b| (b.to_string(), b.to_string())),
            (-1.0e6f64..1.0e6).prop_map(|f| (format!("{f:?}"), format!("{f:?}"))),
        ]
    }

    fn toml_escape(s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\t' => out.push_str("\\t"),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
            let _ = parse(&text);
            let _ = options::from_toml(&text);
        }

        #[test]
        fn never_panics_on_toml_like_text(text in tomlish()) {
            let _ = parse(&text);
            let _ = options::from_toml(&text);
        }

        #[test]
        fn scalars_read_like_the_toml_crate(values in prop::collection::vec(scalar(), 1..8)) {
            let mut doc = String::from("[server]\nports = [1, 2]\n\n[chat.compaction]\n");
            for (i, (lit, _)) in values.iter().enumerate() {
                doc.push_str(&format!("k{i} = {lit}\n"));
            }
            let theirs: toml::Table = toml::from_str(&doc).unwrap();
            let ours = parse(&doc).unwrap();
            let table = theirs["chat"]["compaction"].as_table().unwrap();
            for entry in ours.iter().filter(|e| e.path[0] == "chat") {
                let key = &entry.path[2];
                let same = match (&entry.value, &table[key]) {
                    (TomlValue::Str(a), toml::Value::String(b)) => a == b,
                    (TomlValue::Int(a), toml::Value::Integer(b)) => a == b,
                    (TomlValue::Float(a), toml::Value::Float(b)) => a == b,
                    (TomlValue::Bool(a), toml::Value::Boolean(b)) => a == b,
                    _ => false,
                };
                prop_assert!(same, "{key}: {:?} vs {:?} in\n{doc}", entry.value, table[key]);
            }
        }
    }
}
