//! Reading a TOML document for the options. The `toml_parser` crate (from the
//! project that makes the `toml` crate) lexes, parses and decodes strings, keys
//! and numbers; this module walks its events, enforces what TOML says about
//! tables (nothing defined twice, inline tables and values closed once written,
//! `[[arrays]]` of tables), checks integer range and datetimes the way the `toml`
//! crate does, and lists every key/value with its full path and position.
//!
//! The tests hold it to the `toml` crate: a document one rejects, the other
//! rejects, and a document both accept gives the same options.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use toml_parser::decoder::ScalarKind;
use toml_parser::parser::{parse_document, Event, EventKind, RecursionGuard, ValidateWhitespace};
use toml_parser::{Expected, ParseError, Source};

/// Nesting of arrays and inline tables, and parts of one dotted key, that the
/// `toml` crate accepts (more is an error there, so here too).
const MAX_DEPTH: u32 = 80;

/// A decoded value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TomlValue {
    /// A string (escapes decoded).
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// An array.
    Array(Vec<TomlValue>),
    /// A table. In entries it is empty (its keys follow as entries of their
    /// own); inside an array it holds the inline table's entries.
    Table(Vec<TomlEntry>),
    /// Anything else, by kind ("a datetime", "an array of tables").
    Other(&'static str),
}

/// One key/value of the document, or a table (`[header]` or inline) whose
/// keys follow as entries. Keys inside `[[arrays of tables]]` are not listed:
/// the array is one entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TomlEntry {
    /// Table path plus the (dotted) key.
    pub path: Vec<String>,
    /// The value.
    pub value: TomlValue,
    /// Byte offset of the value (of the header's last key for a table).
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

type Res<T> = Result<T, TomlError>;

/// Every key/value of `text` in document order, or the first error.
pub(crate) fn parse(text: &str) -> Res<Vec<TomlEntry>> {
    let source = Source::new(text);
    let tokens = source.lex().into_vec();
    let mut events: Vec<Event> = Vec::with_capacity(tokens.len());
    let mut first: Option<TomlError> = None;
    {
        let mut sink = |e: ParseError| keep_first(&mut first, &e);
        let mut checked = ValidateWhitespace::new(&mut events, source);
        let mut guarded = RecursionGuard::new(&mut checked, MAX_DEPTH);
        parse_document(&tokens, &mut guarded, &mut sink);
    }
    if let Some(e) = first {
        return Err(e);
    }
    let mut reader = Reader {
        source,
        events,
        at: 0,
        nodes: vec![EXPLICIT],
        children: HashMap::new(),
        entries: Vec::new(),
    };
    reader.document()?;
    Ok(reader.entries)
}

/// Keeps the error that comes first in the text.
fn keep_first(first: &mut Option<TomlError>, e: &ParseError) {
    let offset = e.unexpected().or(e.context()).map_or(0, |s| s.start());
    if first.as_ref().is_some_and(|f| f.offset <= offset) {
        return;
    }
    let mut message = e.description().to_string();
    if let Some(expected) = e.expected().filter(|x| !x.is_empty()) {
        message.push_str(", expected ");
        for (i, x) in expected.iter().enumerate() {
            if i > 0 {
                message.push_str(" or ");
            }
            match x {
                Expected::Literal(s) => message.push_str(&format!("{s:?}")),
                Expected::Description(s) => message.push_str(s),
                _ => message.push_str("something else"),
            }
        }
    }
    *first = Some(TomlError { message, offset });
}

fn error<T>(message: String, offset: usize) -> Res<T> {
    Err(TomlError { message, offset })
}

/// What a key of the document names so far.
#[derive(Debug, Clone, Copy)]
enum Node {
    /// A table. `implicit`: only named on the way to another (`[a.b]` names
    /// `a`; so does `a.b = 1`); `dotted`: named by a dotted key, so no
    /// `[header]` may define it later; `inline`: written `{ … }`, closed.
    Table {
        implicit: bool,
        dotted: bool,
        inline: bool,
    },
    /// An array of tables (`[[a]]`) and its last table, which headers and
    /// keys below it extend.
    Tables(usize),
    /// A value, arrays included.
    Value,
}

/// A `[table]` or an array of tables' table.
const EXPLICIT: Node = Node::Table {
    implicit: false,
    dotted: false,
    inline: false,
};

/// A table named on the way to a `[header]`'s.
const IMPLICIT: Node = Node::Table {
    implicit: true,
    dotted: false,
    inline: false,
};

struct Reader<'i> {
    source: Source<'i>,
    events: Vec<Event>,
    at: usize,
    /// Node 0 is the document's table.
    nodes: Vec<Node>,
    /// `"{table node}.{key}"` → (node, where the key was first written).
    /// (The map has the type of one in `message.rs`: they share its code.)
    children: HashMap<String, (usize, usize)>,
    entries: Vec<TomlEntry>,
}

/// A key part and where it is.
type Part = (String, usize);

/// A `key = value` as read.
struct KeyValue {
    /// The key's parts.
    path: Vec<String>,
    value: TomlValue,
    /// Where the value starts.
    offset: usize,
    /// Whether the key passes through an array of tables.
    in_array: bool,
}

impl<'i> Reader<'i> {
    /// The next event that is not whitespace, a comment or a newline.
    fn next(&mut self) -> Option<Event> {
        while let Some(&e) = self.events.get(self.at) {
            self.at += 1;
            if !matches!(
                e.kind(),
                EventKind::Whitespace | EventKind::Comment | EventKind::Newline
            ) {
                return Some(e);
            }
        }
        None
    }

    fn expect_event(&mut self, kind: EventKind) -> Res<Event> {
        match self.next() {
            Some(e) if e.kind() == kind => Ok(e),
            other => self.unexpected(other),
        }
    }

    fn unexpected<T>(&self, found: Option<Event>) -> Res<T> {
        let offset = found.map_or(self.source.input().len(), |e| e.span().start());
        let what = found.map_or("the end of the document", |e| e.kind().description());
        error(format!("unexpected {what}"), offset)
    }

    fn add_node(&mut self, node: Node) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn document(&mut self) -> Res<()> {
        let mut table = 0;
        let mut section: Vec<String> = Vec::new();
        // inside an array of tables: keys are checked, not listed
        let mut quiet = false;
        while let Some(e) = self.next() {
            match e.kind() {
                EventKind::StdTableOpen | EventKind::ArrayTableOpen => {
                    let array = e.kind() == EventKind::ArrayTableOpen;
                    let first = self.expect_event(EventKind::SimpleKey)?;
                    let parts = self.key(first)?;
                    self.expect_event(if array {
                        EventKind::ArrayTableClose
                    } else {
                        EventKind::StdTableClose
                    })?;
                    (table, quiet) = self.header(&parts, array)?;
                    section = parts.into_iter().map(|(k, _)| k).collect();
                }
                EventKind::SimpleKey => {
                    let kv = self.key_value(e, table, false)?;
                    if !quiet && !kv.in_array {
                        let mut full = section.clone();
                        full.extend(kv.path);
                        flatten(&mut self.entries, full, kv.value, kv.offset);
                    }
                }
                _ => return self.unexpected(Some(e)),
            }
        }
        Ok(())
    }

    /// A (dotted) key starting at `first`, decoded.
    fn key(&mut self, first: Event) -> Res<Vec<Part>> {
        let mut parts = vec![self.key_part(first)?];
        loop {
            let mark = self.at;
            match self.next() {
                Some(e) if e.kind() == EventKind::KeySep => {
                    let e = self.expect_event(EventKind::SimpleKey)?;
                    parts.push(self.key_part(e)?);
                }
                _ => {
                    self.at = mark;
                    break;
                }
            }
        }
        if parts.len() > MAX_DEPTH as usize {
            return error("a key of too many parts".into(), parts[0].1);
        }
        Ok(parts)
    }

    fn key_part(&self, e: Event) -> Res<Part> {
        let mut first = None;
        let mut text = String::new();
        match self.source.get(e) {
            Some(raw) => raw.decode_key(&mut text, &mut |x: ParseError| keep_first(&mut first, &x)),
            None => return self.unexpected(Some(e)),
        }
        match first {
            Some(err) => Err(err),
            None => Ok((text, e.span().start())),
        }
    }

    /// The node `key` names in `table`, made as `new` (and remembered as
    /// written at `at`) when there is none yet. Also whether it is new.
    fn child(&mut self, table: usize, key: &str, at: usize, new: Node) -> (usize, bool) {
        match self.children.entry(format!("{table}.{key}")) {
            Entry::Occupied(o) => (o.get().0, false),
            Entry::Vacant(v) => {
                v.insert((self.nodes.len(), at));
                self.nodes.push(new);
                (self.nodes.len() - 1, true)
            }
        }
    }

    /// Where `key` of `table` was first written, for messages.
    fn first_written(&self, table: usize, key: &str) -> String {
        let at = self
            .children
            .get(&format!("{table}.{key}"))
            .map_or(0, |c| c.1);
        let (line, column) = super::LineIndex::new(self.source.input()).line_col(at);
        format!(" (first at line {line}, column {column})")
    }

    /// Opens the table of a `[header]` or `[[header]]`: returns it and whether
    /// it is inside an array of tables.
    fn header(&mut self, parts: &[Part], array: bool) -> Res<(usize, bool)> {
        let Some(((key, at), parents)) = parts.split_last() else {
            return error("a header without a key".into(), 0);
        };
        let mut table = 0;
        let mut quiet = false;
        for (part, at) in parents {
            let (next, _) = self.child(table, part, *at, IMPLICIT);
            table = match self.nodes[next] {
                Node::Table { inline: false, .. } => next,
                Node::Tables(last) => {
                    quiet = true;
                    last
                }
                node => return error(format!("{part:?} is {}", describe(node)), *at),
            };
        }
        let name = || {
            let keys: Vec<&str> = parts.iter().map(|(k, _)| k.as_str()).collect();
            keys.join(".")
        };
        let node = if array { Node::Value } else { EXPLICIT };
        let (id, new) = self.child(table, key, *at, node);
        if array {
            let element = self.nodes.len();
            self.nodes.push(EXPLICIT);
            match self.nodes[id] {
                _ if new => self.nodes[id] = Node::Tables(element),
                Node::Tables(_) => self.nodes[id] = Node::Tables(element),
                node => {
                    let was = describe(node);
                    let first = self.first_written(table, key);
                    return error(format!("[[{}]]: {key:?} is {was}{first}", name()), *at);
                }
            }
            if new && !quiet {
                self.entries.push(TomlEntry {
                    path: parts.iter().map(|(k, _)| k.clone()).collect(),
                    value: TomlValue::Other("an array of tables"),
                    offset: *at,
                });
            }
            return Ok((element, true));
        }
        match self.nodes[id] {
            _ if new => {}
            // named before on the way to another table: defined now
            Node::Table {
                implicit: true,
                dotted: false,
                inline,
            } => {
                self.nodes[id] = Node::Table {
                    implicit: false,
                    dotted: false,
                    inline,
                }
            }
            node => {
                let was = match node {
                    Node::Table { implicit: true, .. } => "a table defined by dotted keys",
                    Node::Table { inline: false, .. } => "a table defined already",
                    node => describe(node),
                };
                let first = self.first_written(table, key);
                return error(format!("[{}]: {key:?} is {was}{first}", name()), *at);
            }
        }
        if !quiet {
            self.entries.push(TomlEntry {
                path: parts.iter().map(|(k, _)| k.clone()).collect(),
                value: TomlValue::Table(Vec::new()),
                offset: *at,
            });
        }
        Ok((id, quiet))
    }

    /// `key = value` in `table` (an inline one when `inline`).
    fn key_value(&mut self, first: Event, mut table: usize, inline: bool) -> Res<KeyValue> {
        let parts = self.key(first)?;
        self.expect_event(EventKind::KeyValSep)?;
        let Some(((key, at), parents)) = parts.split_last() else {
            return self.unexpected(Some(first));
        };
        let mut in_array = false;
        // a dotted key may pass through an array of tables (into its last
        // table), as in the `toml` crate, but not end there
        let mut at_array = None;
        for (part, at) in parents {
            let dotted = Node::Table {
                implicit: true,
                dotted: true,
                inline,
            };
            let (next, _) = self.child(table, part, *at, dotted);
            at_array = None;
            table = match &mut self.nodes[next] {
                Node::Table {
                    implicit: true,
                    dotted,
                    ..
                } => {
                    *dotted = true;
                    next
                }
                Node::Tables(element) => {
                    in_array = true;
                    at_array = Some((part, *at));
                    *element
                }
                &mut node => {
                    let was = match node {
                        Node::Table { inline: false, .. } => "a table defined by a header",
                        node => describe(node),
                    };
                    return error(format!("{part:?} is {was}"), *at);
                }
            };
        }
        if let Some((part, at)) = at_array {
            return error(format!("{part:?} is an array of tables"), at);
        }
        let (id, new) = self.child(table, key, *at, Node::Value);
        if !new {
            let first = self.first_written(table, key);
            return error(format!("{key:?} is defined twice{first}"), *at);
        }
        let Some(start) = self.next() else {
            return self.unexpected(None);
        };
        let value = self.value(start, id)?;
        Ok(KeyValue {
            path: parts.into_iter().map(|(k, _)| k).collect(),
            value,
            offset: start.span().start(),
            in_array,
        })
    }

    /// The value starting at `e`, whose node is `id`.
    fn value(&mut self, e: Event, id: usize) -> Res<TomlValue> {
        match e.kind() {
            EventKind::Scalar => self.scalar(e),
            EventKind::ArrayOpen => {
                let mut items = Vec::new();
                loop {
                    match self.next() {
                        Some(x) if x.kind() == EventKind::ArrayClose => break,
                        Some(x) if x.kind() == EventKind::ValueSep => {}
                        Some(x) => {
                            let item = self.add_node(Node::Value);
                            items.push(self.value(x, item)?);
                        }
                        None => return self.unexpected(None),
                    }
                }
                Ok(TomlValue::Array(items))
            }
            EventKind::InlineTableOpen => {
                self.nodes[id] = Node::Table {
                    implicit: false,
                    dotted: false,
                    inline: true,
                };
                let mut entries = Vec::new();
                loop {
                    match self.next() {
                        Some(x) if x.kind() == EventKind::InlineTableClose => break,
                        Some(x) if x.kind() == EventKind::ValueSep => {}
                        Some(x) if x.kind() == EventKind::SimpleKey => {
                            let kv = self.key_value(x, id, true)?;
                            flatten(&mut entries, kv.path, kv.value, kv.offset);
                        }
                        other => return self.unexpected(other),
                    }
                }
                Ok(TomlValue::Table(entries))
            }
            _ => self.unexpected(Some(e)),
        }
    }

    /// A string, number, boolean or datetime, decoded and checked as the
    /// `toml` crate checks it (integers must fit an i64, floats must not
    /// overflow to infinity).
    fn scalar(&self, e: Event) -> Res<TomlValue> {
        let Some(raw) = self.source.get(e) else {
            return self.unexpected(Some(e));
        };
        let mut first = None;
        let mut text = String::new();
        let kind = raw.decode_scalar(&mut text, &mut |x: ParseError| keep_first(&mut first, &x));
        if let Some(err) = first {
            return Err(err);
        }
        let at = e.span().start();
        match kind {
            ScalarKind::String => Ok(TomlValue::Str(text)),
            ScalarKind::Boolean(b) => Ok(TomlValue::Bool(b)),
            ScalarKind::Integer(radix) => match i64::from_str_radix(&text, radix.value()) {
                Ok(i) => Ok(TomlValue::Int(i)),
                Err(_) => error("integer out of range for 64 bits".into(), at),
            },
            ScalarKind::Float => match text.parse::<f64>() {
                Ok(f) if !f.is_infinite() || text.contains("inf") => Ok(TomlValue::Float(f)),
                _ => error("float out of range".into(), at),
            },
            ScalarKind::DateTime if is_datetime(&text) => Ok(TomlValue::Other("a datetime")),
            ScalarKind::DateTime => error("invalid datetime".into(), at),
        }
    }
}

/// Adds `value` at `path` to `out`; a table as an entry of its own followed by
/// its keys.
fn flatten(out: &mut Vec<TomlEntry>, path: Vec<String>, value: TomlValue, offset: usize) {
    let TomlValue::Table(inner) = value else {
        out.push(TomlEntry {
            path,
            value,
            offset,
        });
        return;
    };
    out.push(TomlEntry {
        path: path.clone(),
        value: TomlValue::Table(Vec::new()),
        offset,
    });
    for e in inner {
        let mut full = path.clone();
        full.extend(e.path);
        out.push(TomlEntry {
            path: full,
            value: e.value,
            offset: e.offset,
        });
    }
}

fn describe(node: Node) -> &'static str {
    match node {
        Node::Table { inline: true, .. } => "an inline table, closed where it is written",
        Node::Table { .. } => "a table",
        Node::Tables(_) => "an array of tables",
        Node::Value => "a value, not a table",
    }
}

/// Whether `s` is an RFC 3339 date-time, local date-time, local date or local
/// time as TOML allows them (seconds optional after a time's minutes, a space
/// or `T` between date and time, `Z` or `±HH:MM` after a date-time) and the
/// `toml` crate accepts them: real calendar days, hours to 23, minutes to 59,
/// seconds to 60.
fn is_datetime(s: &str) -> bool {
    let mut c = Digits {
        s: s.as_bytes(),
        i: 0,
    };
    let (lead, year) = c.run();
    let date = c.eat(b'-');
    if date {
        let (4, Some(month)) = (lead, c.fixed(2)) else {
            return false;
        };
        let Some(day) = c.eat(b'-').then(|| c.fixed(2)).flatten() else {
            return false;
        };
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
        let days = match month {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        if !(1..=12).contains(&month) || !(1..=days).contains(&day) {
            return false;
        }
        match c.peek() {
            None => return true,
            Some(b'T' | b't' | b' ') => c.i += 1,
            Some(_) => return false,
        }
    } else if c.peek() == Some(b':') {
        c.i = 0;
    } else {
        return false;
    }
    let (Some(hour), true, Some(minute)) = (c.fixed(2), c.eat(b':'), c.fixed(2)) else {
        return false;
    };
    let mut second = 0;
    if c.eat(b':') {
        let Some(s) = c.fixed(2) else {
            return false;
        };
        second = s;
        if c.eat(b'.') && c.run().0 == 0 {
            return false;
        }
    }
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    if date {
        match c.peek() {
            Some(b'Z' | b'z') => c.i += 1,
            Some(b'+' | b'-') => {
                c.i += 1;
                let (Some(h), true, Some(m)) = (c.fixed(2), c.eat(b':'), c.fixed(2)) else {
                    return false;
                };
                if h > 23 || m > 59 {
                    return false;
                }
            }
            _ => {}
        }
    }
    c.i == s.len()
}

/// A cursor over the digits and separators of a datetime.
struct Digits<'s> {
    s: &'s [u8],
    i: usize,
}

impl Digits<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.i += usize::from(hit);
        hit
    }

    /// The run of digits here: its length and value (saturating).
    fn run(&mut self) -> (usize, u32) {
        let start = self.i;
        let mut value: u32 = 0;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            value = value.saturating_mul(10).saturating_add(u32::from(d - b'0'));
            self.i += 1;
        }
        (self.i - start, value)
    }

    /// A run of exactly `len` digits.
    fn fixed(&mut self, len: usize) -> Option<u32> {
        let (n, value) = self.run();
        (n == len).then_some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Error, ErrorKind, Result};
    use crate::options::{from_json, from_toml, snake_case, ParsedOptions};
    use proptest::prelude::*;
    use serde_json::{json, Value};
    use std::collections::HashSet;

    /// Our entries describe exactly the `toml` crate's tree: every entry is
    /// there with the same value, and every key of the tree (outside arrays of
    /// tables) has an entry, or keys below it that do.
    fn same_tree(ours: &[TomlEntry], theirs: &::toml::Table) -> std::result::Result<(), String> {
        for e in ours {
            let mut at = theirs;
            let (last, parents) = e.path.split_last().ok_or("an entry without a path")?;
            for p in parents {
                at = at
                    .get(p)
                    .and_then(|v| v.as_table())
                    .ok_or_else(|| format!("{:?}: {p:?} is not a table there", e.path))?;
            }
            let value = at
                .get(last)
                .ok_or_else(|| format!("{:?}: missing there", e.path))?;
            if !same_value(&e.value, value) {
                return Err(format!("{:?}: {:?} vs {value:?}", e.path, e.value));
            }
        }
        let paths: HashSet<&[String]> = ours.iter().map(|e| e.path.as_slice()).collect();
        fn walk(
            table: &::toml::Table,
            path: &mut Vec<String>,
            paths: &HashSet<&[String]>,
        ) -> std::result::Result<(), String> {
            for (k, v) in table {
                path.push(k.clone());
                match v.as_table() {
                    Some(t) if !t.is_empty() => walk(t, path, paths)?,
                    _ if paths.contains(path.as_slice()) => {}
                    _ => return Err(format!("{path:?} ({v:?}) has no entry")),
                }
                path.pop();
            }
            Ok(())
        }
        walk(theirs, &mut Vec::new(), &paths)
    }

    fn same_value(ours: &TomlValue, theirs: &::toml::Value) -> bool {
        use ::toml::Value as V;
        match (ours, theirs) {
            (TomlValue::Str(a), V::String(b)) => a == b,
            (TomlValue::Int(a), V::Integer(b)) => a == b,
            (TomlValue::Float(a), V::Float(b)) => {
                a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
            }
            (TomlValue::Bool(a), V::Boolean(b)) => a == b,
            (TomlValue::Array(a), V::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_value(x, y))
            }
            (TomlValue::Table(_), V::Table(_)) => true,
            (TomlValue::Other("a datetime"), V::Datetime(_)) => true,
            (TomlValue::Other("an array of tables"), V::Array(items)) => {
                items.iter().all(|i| i.is_table())
            }
            _ => false,
        }
    }

    fn to_json(v: &::toml::Value) -> Value {
        use ::toml::Value as V;
        match v {
            V::String(s) => json!(s),
            V::Integer(i) => json!(i),
            V::Float(f) => serde_json::Number::from_f64(*f)
                .map_or_else(|| json!(format!("{f}")), Value::Number),
            V::Boolean(b) => json!(b),
            V::Datetime(d) => json!({ "datetime": d.to_string() }),
            V::Array(items) => items.iter().map(to_json).collect(),
            V::Table(t) => t.iter().map(|(k, v)| (k.clone(), to_json(v))).collect(),
        }
    }

    /// The options the `toml` crate's reading of a document gives: the
    /// compaction table picked by the same rule, validated through the JSON
    /// path. `None` when two keys are one option (JSON rejects that; TOML takes
    /// the later one).
    fn reference(doc: &::toml::Table) -> Option<Result<ParsedOptions>> {
        let chat = doc
            .get("chat")
            .and_then(|c| c.as_table())
            .filter(|c| !c.is_empty());
        let empty = ::toml::Table::new();
        // A bare document's tables (and arrays of them) that name no option are
        // other sections.
        let section = |v: &::toml::Value| {
            v.is_table()
                || v.as_array()
                    .is_some_and(|a| !a.is_empty() && a.iter().all(::toml::Value::is_table))
        };
        let bare: ::toml::Table = doc
            .iter()
            .filter(|(k, v)| !section(v) || crate::options::is_option(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let table = match chat.map(|c| c.get("compaction")) {
            None => &bare,
            Some(None) => &empty,
            Some(Some(::toml::Value::Table(t))) => t,
            Some(Some(_)) => return Some(Err(Error::config("chat.compaction is not a table"))),
        };
        let names: HashSet<String> = table.keys().map(|k| snake_case(k)).collect();
        if names.len() < table.len() {
            return None;
        }
        let object = table.iter().map(|(k, v)| (k.clone(), to_json(v))).collect();
        // Options at the top of a moltis.toml or in its [chat] are said to be ignored.
        let outside = chat.map_or(0, |chat| {
            doc.iter()
                .chain(chat.iter().filter(|(k, _)| *k != "compaction"))
                .filter(|(k, v)| !section(v) && crate::options::is_option(k))
                .count()
        });
        // A moltis.toml shows the settings hint unless it says otherwise.
        Some(from_json(&Value::Object(object)).map(|mut parsed| {
            if !names.contains("show_settings_hint") {
                parsed.options.show_settings_hint = true;
            }
            parsed
                .warnings
                .extend((0..outside).map(|_| crate::options::Warning {
                    code: "UNKNOWN_OPTION",
                    message: String::new(),
                }));
            parsed
        }))
    }

    /// Where the `toml` crate rejects `text`, `from_toml` rejects it as
    /// invalid TOML; where it accepts, we list the same tree and the options
    /// are those of the same compaction table.
    fn agrees(text: &str) -> std::result::Result<(), String> {
        let ours = parse(text);
        let options = from_toml(text);
        match ::toml::from_str::<::toml::Table>(text) {
            Err(e) => {
                let Err(err) = options else {
                    return Err(format!("toml rejects ({}), we accept", e.message()));
                };
                if ours.is_ok() || err.kind() != ErrorKind::InvalidConfig {
                    return Err(format!("toml rejects ({}), we say {err:?}", e.message()));
                }
                if !err.message().starts_with("invalid TOML (line ") {
                    return Err(format!("no position in {:?}", err.message()));
                }
                Ok(())
            }
            Ok(doc) => {
                let ours = ours.map_err(|e| format!("toml accepts, we reject: {e:?}"))?;
                same_tree(&ours, &doc)?;
                let Some(expected) = reference(&doc) else {
                    return Ok(());
                };
                match (&options, &expected) {
                    (Ok(a), Ok(b))
                        if a.options == b.options && a.warnings.len() == b.warnings.len() =>
                    {
                        Ok(())
                    }
                    (Err(a), Err(b)) if a.kind() == b.kind() => Ok(()),
                    _ => Err(format!("options differ: {options:?} vs {expected:?}")),
                }
            }
        }
    }

    fn options(text: &str) -> crate::options::Options {
        from_toml(text).unwrap().options
    }

    /// Floats are read correctly rounded, to the last bit, as the `toml` crate
    /// reads them (a faster parser is off by one ULP on some 17-digit spellings).
    #[test]
    fn floats_are_read_to_the_last_bit() {
        for (text, exact) in [
            ("0.21164723465838614", 0.211_647_234_658_386_14_f64),
            ("0.72816735897787543", 0.728_167_358_977_875_4),
            ("7.2816735897787543e-1", 0.728_167_358_977_875_4),
        ] {
            let doc = format!("[chat.compaction]\ntail_budget_ratio = {text}\n");
            assert_eq!(
                options(&doc).tail_budget_ratio.to_bits(),
                exact.to_bits(),
                "{text}"
            );
            let theirs: ::toml::Table = doc.parse().unwrap();
            let theirs = theirs["chat"]["compaction"]["tail_budget_ratio"]
                .as_float()
                .unwrap();
            assert_eq!(
                theirs.to_bits(),
                exact.to_bits(),
                "{text}: as toml reads it"
            );
        }
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
        agrees(doc).unwrap();
        let e: Vec<(String, TomlValue)> = parse(doc)
            .unwrap()
            .into_iter()
            .map(|e| (e.path.join("."), e.value))
            .collect();
        let at = |k: &str| &e.iter().find(|(p, _)| p == k).unwrap().1;
        assert_eq!(at("server.bind"), &TomlValue::Str("0.0.0.0".into()));
        assert_eq!(
            at("server.ports"),
            &TomlValue::Array(vec![
                TomlValue::Int(80),
                TomlValue::Int(443),
                TomlValue::Int(8080)
            ])
        );
        assert_eq!(at("server.meta"), &TomlValue::Table(Vec::new()));
        assert_eq!(at("server.meta.b.c"), &TomlValue::Str("x".into()));
        assert_eq!(at("chat.compaction.protect_head"), &TomlValue::Int(10));
        assert_eq!(
            at("chat.compaction.summary_model"),
            &TomlValue::Str("multi \"line\" text".into())
        );
        assert_eq!(at("chat.compaction.when"), &TomlValue::Other("a datetime"));
        assert_eq!(at("chat.compaction.quoted key"), &TomlValue::Int(16));
        let o = options(doc);
        assert_eq!(o.protect_head, 10);
        assert_eq!(o.threshold_percent, 0.8);
    }

    #[test]
    fn inline_tables_and_dotted_keys_reach_the_options() {
        use crate::options::Mode;
        for doc in [
            "[chat]\ncompaction = { mode = \"structured\" }\n",
            "chat.compaction.mode = \"structured\"\n",
            "[chat]\ncompaction.mode = \"structured\"\n",
            "chat = { compaction = { mode = \"structured\" } }\n",
            "[chat.compaction]\nmode = \"\"\"structured\"\"\"\n",
            "mode = 'structured'\n",
        ] {
            agrees(doc).unwrap();
            assert_eq!(options(doc).mode, Mode::Structured, "{doc}");
        }
        let e = from_toml("[chat]\ncompaction = { mode = \"x\" }\n").unwrap_err();
        assert!(e.message().contains("line 2, column 23"), "{}", e.message());
    }

    #[test]
    fn errors_say_where() {
        for (doc, line_col) in [
            ("[chat.compaction]\nmode = \"open\n", "line 2"),
            ("[chat.compaction\nmode = 1\n", "line 1"),
            ("a = 1\n[b]\nc = 01\n", "line 3, column 5"),
            ("a = 1\n\n[a]\n", "line 3"),
            ("[t]\nx = 1\nx = 2\n", "line 3, column 1"),
            ("a = { b = 1 }\na.c = 2\n", "line 2, column 1"),
            ("n = 9223372036854775808\n", "line 1, column 5"),
            ("d = 1979-02-29\n", "line 1, column 5"),
        ] {
            let e = from_toml(doc).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidConfig);
            assert!(
                e.message().starts_with("invalid TOML (") && e.message().contains(line_col),
                "{doc:?}: {}",
                e.message()
            );
            agrees(doc).unwrap();
        }
    }

    #[test]
    fn a_second_definition_points_at_the_first() {
        let e = from_toml("[t]\nx = 1\nx = 2\n").unwrap_err();
        assert_eq!(
            e.message(),
            "invalid TOML (line 3, column 1): \"x\" is defined twice (first at line 2, column 1)"
        );
        let e = from_toml("[a.b]\nc = 1\n\n[a.b]\n").unwrap_err();
        assert!(
            e.message().contains("line 4, column 4)")
                && e.message().contains(
                    "[a.b]: \"b\" is a table defined already (first at line 1, column 4)"
                ),
            "{}",
            e.message()
        );
    }

    /// Each of these is accepted or rejected as the `toml` crate does it.
    #[test]
    fn agrees_with_the_toml_crate_on_the_edges() {
        let docs = [
            // numbers
            "a = 0\nb = +0\nc = -0\nd = 1_000\ne = -9223372036854775808\nf = 9223372036854775807\n",
            "a = 01\n",
            "a = _1\n",
            "a = 1_\n",
            "a = 1__0\n",
            "a = 1.\n",
            "a = .5\n",
            "a = 1.e5\n",
            "a = 1e\n",
            "a = 00.5\n",
            "a = -9223372036854775809\n",
            "a = 9223372036854775808\n",
            "a = 0x7fffffffffffffff\nb = 0o17\nc = 0b101\nd = 0xdead_beef\n",
            "a = 0x8000000000000000\n",
            "a = 0X1\n",
            "a = -0x1\n",
            "a = 0o8\n",
            "a = 0d10\n",
            "a = +-1\n",
            "a = 8e-1\nb = 80E-2\nc = 6.02e23\nd = 1e-400\ne = -0.0\nf = 1_0.0_1\n",
            "a = 1e400\n",
            "a = inf\nb = +inf\nc = -inf\nd = nan\ne = +nan\nf = -nan\n",
            "a = Inf\n",
            "a = infinity\n",
            "a = True\n",
            // strings
            "a = \"x\\u00e9\\n\\t\\\"\\\\\"\nb = 'lit\\'\nc = \"\"\"\nq\"\"\"\"\nd = '''a\n''b'''''\n",
            "a = \"\\e\\x41\"\n",
            "a = \"\\q\"\n",
            "a = \"\\uD800\"\n",
            "a = \"\"\"a \\\n   b\"\"\"\n",
            "a = \"new\nline\"\n",
            "a = 'open\n",
            "a = \"tab\there\"\n",
            "a = \"\u{1}\"\n",
            "# comment \u{7f}\n",
            // dates and times
            "a = 1979-05-27T07:32:00Z\nb = 1979-05-27T00:32:00.999999-07:00\nc = 1979-05-27 07:32:00\nd = 1979-05-27\ne = 07:32:00\nf = 07:32\ng = 2000-02-29\nh = 1979-05-27t07:32:00z\n",
            "a = 1979-13-27\n",
            "a = 1900-02-29\n",
            "a = 1979-05-32\n",
            "a = 24:00:00\n",
            "a = 07:60:00\n",
            "a = 07:32:61\n",
            "a = 07:32:60\n",
            "a = 1979-05-27T07:32:00+24:00\n",
            "a = 1979-05-27T07:32Z\n",
            "a = 1979-5-27\n",
            "a = 1979-05-27T\n",
            "a = 1979-05-27T07:32:00.\n",
            "a = 07:32:00Z\n",
            "a = 1979-05-27T07:32:00+0800\n",
            // keys and tables
            "[a]\n[a]\n",
            "[a]\nb = 1\n[a.b]\n",
            "[a.b]\n[a]\n",
            "[a.b.c]\n[a]\nb.d = 1\n",
            "[a.b.c]\n[a]\nb.d = 1\n[a.b]\n",
            "[a]\nb.c = 1\n[a.b]\n",
            "a.b = 1\n[a]\n",
            "a.b.c = 1\n[a.b.d]\n",
            "a = 1\na = 2\n",
            "a = 1\n\"a\" = 2\n",
            "a = 1\na.b = 2\n",
            "a = {}\n[a]\n",
            "a = {b = 1}\n[a.c]\n",
            "a = {b = 1}\na.c = 1\n",
            "a = { a.b = 1, a.c = 2 }\n",
            "a = { b = 1, b = 2 }\n",
            "a = { b = { c = 1 }, b.d = 2 }\n",
            "a = { b.c = 1, b = 2 }\n",
            "a = { b = 1, }\n",
            "a = {\n  b = 1\n}\n",
            "a = [{ b = 1, b = 2 }]\n",
            "[[a]]\nb = 1\n[[a]]\nb = 2\n[a.c]\n",
            "[a]\n[[a]]\n",
            "[[a]]\n[a]\n",
            "a = [1]\n[[a]]\n",
            "[[a]]\nb.c = 1\n[a.b]\n",
            "[[a.b]]\n[a]\nb.c = 1\n",
            "[[a.b]]\n[a]\nb.c.d = 1\n",
            "[[a.b]]\n[a.b.c]\n[a]\nb.c.d = 1\n",
            "[[a.b]]\n[a.b.c.x]\n[a]\nb.c.d = 1\n",
            "[[chat.compaction]]\n[chat]\ncompaction.x.mode = \"structured\"\n",
            "\"\" = 1\n",
            "a.\"b.c\" = 1\n",
            "[ a . 'b' ]\n",
            "a = [1, 2,]\nb = [\n  1, # c\n  2\n]\nc = [[1], [\"x\"]]\n",
            "a = [1,,2]\n",
            "a = [1 2]\n",
            "\u{feff}a = 1\r\n",
            "a = 1\rb = 2\n",
            // the options
            "[chat]\ncompaction = 3\n",
            "[[chat.compaction]]\nmode = \"structured\"\n",
            "[[chat]]\nmode = \"structured\"\n",
            "[chat.compaction]\n[chat.compaction.x]\n",
            "mode = \"structured\"\n[chat]\n",
            "mode = \"structured\"\n[chat.x]\n",
            "[chat]\ncompaction = {}\nmodel = \"x\"\n",
            "pin = [1, 2.0]\npin_roles = ['user']\nnow = -9223372036854775808\n",
            "threshold_percent = nan\n",
            "strict = true\n[x]\n",
        ];
        for doc in docs {
            agrees(doc).unwrap_or_else(|e| panic!("{doc:?}: {e}"));
        }
        let deep = format!("a = {}1{}\n", "[".repeat(80), "]".repeat(80));
        let deeper = format!("a = {}1{}\n", "[".repeat(81), "]".repeat(81));
        let long = format!("{} = 1\n", vec!["k"; 80].join("."));
        let longer = format!("{} = 1\n", vec!["k"; 81].join("."));
        for doc in [deep, deeper, long, longer] {
            agrees(&doc).unwrap_or_else(|e| panic!("{doc:?}: {e}"));
        }
    }

    #[test]
    fn reads_the_extremes_of_the_integers() {
        let e = parse("a = -9223372036854775808\nb = 0x7FFF_FFFF_FFFF_FFFF\n").unwrap();
        assert_eq!(e[0].value, TomlValue::Int(i64::MIN));
        assert_eq!(e[1].value, TomlValue::Int(i64::MAX));
    }

    /// One of `options` by weight; those of weight 0 are left out.
    fn pick(options: Vec<(u32, BoxedStrategy<String>)>) -> BoxedStrategy<String> {
        let kept = options.into_iter().filter(|(w, _)| *w > 0).collect();
        prop::strategy::Union::new_weighted(kept).boxed()
    }

    fn words(list: &[&'static str]) -> BoxedStrategy<String> {
        prop::sample::select(list.to_vec())
            .prop_map(String::from)
            .boxed()
    }

    /// Dotted keys from a small pool, so that they collide; malformed parts
    /// and separators with weight `odd`.
    fn key(odd: u32) -> BoxedStrategy<String> {
        let part = pick(vec![
            (
                12,
                words(&[
                    "chat",
                    "compaction",
                    "mode",
                    "threshold_percent",
                    "protect_head",
                    "pin",
                    "pin_roles",
                    "show_settings_hint",
                    "strict",
                    "context_window",
                    "a",
                    "b",
                    "\"a\"",
                    "'b'",
                    "\"chat\"",
                    "\"\"",
                    "\"x.y\"",
                    "bare-key_1",
                    "1234",
                    "true",
                ]),
            ),
            (
                odd,
                words(&["é", "a b", "'''a'''", "\"\"\"a\"\"\"", "\"\\q\""]),
            ),
        ]);
        let sep = pick(vec![
            (24, words(&["."])),
            (8, words(&[" . "])),
            (odd, words(&[".."])),
        ]);
        (part.clone(), prop::collection::vec((sep, part), 0..3))
            .prop_map(|(first, rest)| {
                rest.into_iter()
                    .fold(first, |k, (s, p)| format!("{k}{s}{p}"))
            })
            .boxed()
    }

    /// Scalars in every form TOML has, and near misses (most of the second
    /// list is invalid).
    fn scalar() -> BoxedStrategy<String> {
        let valid = words(&[
            "\"structured\"",
            "\"recency-preserving\"",
            "'deterministic'",
            "\"llm_replace\"",
            "\"user\"",
            "'system'",
            "\"\"\"\nstructured\"\"\"",
            "'''deterministic'''",
            "\"a\\u00e9\\n\\t\\\"b\\\\\"",
            "\"\\e\\x41\"",
            "\"\"\"a\\\n   b\"\"\"",
            "\"tab\there\"",
            "'''a''''",
            "\"\\U0001F600\"",
            "''",
            "'C:\\path'",
            "0",
            "+0",
            "-0",
            "1",
            "+5",
            "-3",
            "1_000",
            "0x1F",
            "0xdead_beef",
            "0o17",
            "0b101",
            "9223372036854775807",
            "-9223372036854775808",
            "0x7fffffffffffffff",
            "3",
            "4096",
            "200000",
            "0.8",
            "+0.8",
            "-0.0",
            "8e-1",
            "80E-2",
            "1_0.0_1",
            "1e-400",
            // 17 significant digits: read exactly (a faster parser was off by one ULP here)
            "0.21164723465838614",
            "0.72816735897787543",
            "1.7976931348623157e308",
            "inf",
            "+inf",
            "-inf",
            "nan",
            "+nan",
            "-nan",
            "0.95",
            "5e-2",
            "6.02e23",
            "0.3",
            "true",
            "false",
            "1979-05-27T07:32:00Z",
            "1979-05-27T07:32:00-08:00",
            "1979-05-27 07:32:00",
            "1979-05-27t07:32:00.5z",
            "1979-05-27",
            "07:32:00",
            "07:32",
            "00:32:00.5",
            "2000-02-29",
            "07:32:60",
        ]);
        let near = words(&[
            "\"\\q\"",
            "\"\\uD800\"",
            "'open",
            "\"new\nline\"",
            "01",
            "00",
            "_1",
            "1_",
            "1__0",
            "0X1",
            "-0x1",
            "0o8",
            "0b2",
            "0d10",
            "9223372036854775808",
            "-9223372036854775809",
            "0xffffffffffffffff",
            "+-1",
            "1.",
            ".5",
            "1.e5",
            "1e",
            "1e+",
            "1.0_",
            "00.5",
            "1e400",
            "-1e400",
            "Inf",
            "infinity",
            "True",
            "tru",
            "1979-13-27",
            "1979-02-29",
            "1979-05-32",
            "24:00:00",
            "07:60:00",
            "07:32:61",
            "1979-05-27T07:32:00+24:00",
            "1979-05-27T07:32Z",
            "1979-5-27",
            "1979-05-27T",
            "07:32:00Z",
            "+1979-05-27",
            "1979-05-27T07:32:00.",
            "1979-05-27T07:32:00+0800",
        ]);
        pick(vec![(5, valid), (1, near)])
    }

    /// Scalars, arrays (with and without a trailing comma) and inline tables,
    /// nested.
    fn value(odd: u32) -> BoxedStrategy<String> {
        scalar()
            .prop_recursive(3, 12, 4, move |inner| {
                let array = (prop::collection::vec(inner.clone(), 0..4), any::<bool>()).prop_map(
                    |(items, trailing)| {
                        let comma = if trailing && !items.is_empty() {
                            ","
                        } else {
                            ""
                        };
                        format!("[{}{comma}]", items.join(", "))
                    },
                );
                let table = prop::collection::vec((key(odd), inner), 0..4).prop_map(|pairs| {
                    let body: Vec<String> =
                        pairs.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                    format!("{{ {} }}", body.join(", "))
                });
                pick(vec![(1, array.boxed()), (1, table.boxed())])
            })
            .boxed()
    }

    /// Documents of headers and key/values, plus stray pieces when `stray`,
    /// so that keys and tables collide and every scalar form shows up, valid
    /// or not.
    fn document(stray: u32) -> BoxedStrategy<String> {
        let key_value = (key(stray), value(stray)).prop_map(|(k, v)| format!("{k} = {v}"));
        let header = (key(stray), any::<bool>()).prop_map(|(k, array)| {
            if array {
                format!("[[{k}]]")
            } else {
                format!("[{k}]")
            }
        });
        let line = pick(vec![
            (8, key_value.boxed()),
            (2, header.boxed()),
            (2, words(&["[chat.compaction]", "[chat]", "# comment", ""])),
            (
                stray,
                words(&[
                    "=", "[", "]", "{", "}", "\"", "'''", "\"\"\"", ",", "a =", "= 1", "[a]]",
                    "[[a]", "\t", "\r",
                ]),
            ),
            (stray, "[ -~]{0,10}".boxed()),
            (stray, "\\PC{0,4}".boxed()),
        ]);
        let end = pick(vec![
            (12, words(&["\n"])),
            (2, words(&["\r\n"])),
            (2, words(&[" # c\n"])),
            (stray, words(&[" "])),
        ]);
        prop::collection::vec((line, end), 0..10)
            .prop_map(|lines| lines.into_iter().map(|(l, e)| l + &e).collect())
            .boxed()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn documents_read_as_the_toml_crate_reads_them(doc in document(0)) {
            agrees(&doc).map_err(|e| TestCaseError::fail(format!("{e}\n--- document:\n{doc}")))?;
        }

        #[test]
        fn near_toml_reads_as_the_toml_crate_reads_it(doc in document(1)) {
            agrees(&doc).map_err(|e| TestCaseError::fail(format!("{e}\n--- document:\n{doc}")))?;
        }

        #[test]
        fn arbitrary_text_reads_as_the_toml_crate_reads_it(text in "\\PC{0,200}") {
            agrees(&text).map_err(|e| TestCaseError::fail(format!("{e}\n--- text:\n{text:?}")))?;
        }

        #[test]
        fn values_read_as_the_toml_crate_reads_them(values in prop::collection::vec(value(0), 1..8)) {
            let mut doc = String::from("[server]\nports = [1, 2]\n\n[chat.compaction]\n");
            for (i, v) in values.iter().enumerate() {
                doc.push_str(&format!("k{i} = {v}\n"));
            }
            agrees(&doc).map_err(|e| TestCaseError::fail(format!("{e}\n--- document:\n{doc}")))?;
        }
    }
}
