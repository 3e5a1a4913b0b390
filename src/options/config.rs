//! Options from a config document: the `[chat.compaction]` table of a
//! moltis.toml, or a document whose top level is that table. The document is
//! read elsewhere into [`Entry`]s, every key/value with its full path and
//! position: by the `toml` crate in native builds ([`from_toml`]), by a JS TOML
//! parser that the package loads only when `parseConfig` is called (its entries
//! arrive as JSON: [`from_entries_json`]). What the entries mean is decided
//! here, once, for both.

use super::{is_option, one_value_each, snake_case, validate, Given, ParsedOptions, Warning};
use crate::error::{Error, Result};
use crate::json::{Kind, Node};
use crate::names::Names;
use crate::text::Quoted;

/// A value of the document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// A string.
    Str(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// An array.
    Array(Vec<Value>),
    /// A table (its keys follow as entries of their own).
    Table,
    /// Anything else, by kind ("a datetime", "an array of tables").
    Other(&'static str),
}

/// One key/value of the document, or a table (`[header]` or inline) whose keys
/// follow as entries. Keys inside `[[arrays of tables]]` are not listed: the
/// array is one entry. In document order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    /// Table path plus the (dotted) key.
    pub path: Vec<String>,
    /// The value.
    pub value: Value,
    /// `(line, column)`, 1-based, of the value (of the header's last key for
    /// a table), where the reader knows it.
    pub location: Option<(usize, usize)>,
}

impl Given {
    fn from_config(v: Value) -> Given {
        match v {
            Value::Str(s) => Given::Str(s),
            Value::Int(i) => Given::Int(i),
            Value::Float(f) => Given::Float(f),
            Value::Bool(b) => Given::Bool(b),
            Value::Array(items) => Given::List(items.into_iter().map(Given::from_config).collect()),
            Value::Table => Given::Other("a table"),
            Value::Other(kind) => Given::Other(kind),
        }
    }
}

/// " (line l, column c)", or nothing where the position is not known.
fn at(location: Option<(usize, usize)>) -> String {
    location.map_or_else(String::new, |(l, c)| format!(" (line {l}, column {c})"))
}

/// Whether a value is a table or an array of tables: a section of the file,
/// where an option is never.
fn section(value: &Value) -> bool {
    match value {
        Value::Table | Value::Other("an array of tables") => true,
        Value::Array(items) => !items.is_empty() && items.iter().all(|v| *v == Value::Table),
        _ => false,
    }
}

/// The options of a document's entries.
pub(crate) fn from_entries(entries: Vec<Entry>) -> Result<ParsedOptions> {
    let moltis = entries
        .iter()
        .any(|e| e.path.len() >= 2 && e.path[0] == "chat");
    let prefix: &[&str] = if moltis { &["chat", "compaction"] } else { &[] };
    let mut options = Vec::new();
    let mut names = Names::new();
    let mut outside = Vec::new();
    for e in entries {
        let table = e.path.len() > prefix.len() + 1 || section(&e.value);
        if e.path.len() < prefix.len() || !e.path.iter().zip(prefix).all(|(a, b)| a == b) {
            // An option at the top of a moltis.toml or in [chat] is not read: say so.
            if let [key] | [_, key] = &e.path[..] {
                let top = e.path.len() == 1 || e.path[0] == "chat";
                if top && !section(&e.value) && is_option(key) {
                    outside.push(Warning {
                        code: "UNKNOWN_OPTION",
                        message: format!(
                            "{}{} is outside [chat.compaction], where a moltis.toml keeps the options: ignored",
                            Quoted(key),
                            at(e.location)
                        ),
                    });
                }
            }
            continue;
        }
        let Some(key) = e.path.get(prefix.len()) else {
            if e.value == Value::Table {
                continue;
            }
            return Err(Error::config(format!(
                "chat.compaction: expected a table of options ([chat.compaction]), got {}{}",
                Given::from_config(e.value).type_name(),
                at(e.location)
            )));
        };
        // A table in a bare document is another section of the file ([server]),
        // unless it is named as an option (then its type is wrong).
        if !moltis && table && !is_option(key) {
            continue;
        }
        // a table's keys follow its own entry: the option is the table
        if !names.insert(key, 0) {
            continue;
        }
        let value = if e.path.len() > prefix.len() + 1 {
            Given::Other("a table")
        } else {
            Given::from_config(e.value)
        };
        options.push(super::Entry {
            key: snake_case(key),
            name: key.clone(),
            value,
            location: e.location,
        });
    }
    // A moltis.toml user is told where the mode lives, as Moltis does; the hint
    // names `chat.compaction.mode`, which means nothing to an npm caller.
    let hint_given = options.iter().any(|e| e.key == "show_settings_hint");
    one_value_each(&options)?;
    let mut parsed = validate(options)?;
    if !hint_given {
        parsed.options.show_settings_hint = true;
    }
    parsed.warnings.append(&mut outside);
    Ok(parsed)
}

/// The options of entries given as JSON (the package's TOML reader writes
/// them): an array of `[path, value, line, column]`, where a value JSON cannot
/// hold is `{"$": kind}` (`"a table"`, `"a datetime"`, `"an array of tables"`)
/// and an unknown position is `0, 0`.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn from_entries_json<'a, N: Node<'a>>(entries: N) -> Result<ParsedOptions> {
    let bad = || Error::config("config entries: expected [[path, value, line, column], …]");
    fn value<'a, N: Node<'a>>(v: N) -> Value {
        match v.kind() {
            Kind::String => Value::Str(v.as_str().unwrap_or("").to_string()),
            Kind::Bool => Value::Bool(v.as_bool() == Some(true)),
            Kind::Number => match v.number_text().unwrap_or("").parse::<i64>() {
                Ok(i) => Value::Int(i),
                Err(_) => Value::Float(v.as_f64().unwrap_or(f64::NAN)),
            },
            Kind::Array => Value::Array(v.items().map(value).collect()),
            Kind::Object => match v.get("$").and_then(Node::as_str) {
                Some("a table") => Value::Table,
                Some("a datetime") => Value::Other("a datetime"),
                Some("an array of tables") => Value::Other("an array of tables"),
                _ => Value::Other("a value"),
            },
            Kind::Null => Value::Other("a value"),
        }
    }
    if entries.kind() != Kind::Array {
        return Err(bad());
    }
    let mut out = Vec::new();
    for e in entries.items() {
        let items: Vec<N> = e.items().collect();
        let [path, v, line, column] = items[..] else {
            return Err(bad());
        };
        let mut keys = Vec::new();
        for k in path.items() {
            keys.push(k.as_str().ok_or_else(bad)?.to_string());
        }
        let path = keys;
        let (line, column) = (line.as_u64().unwrap_or(0), column.as_u64().unwrap_or(0));
        out.push(Entry {
            path,
            value: value(v),
            location: (line > 0).then_some((line as usize, column as usize)),
        });
    }
    from_entries(out)
}

/// Options from a TOML document: the `[chat.compaction]` table of a moltis.toml
/// (a document whose `chat` table has a key), or a document whose top level is
/// that table. Read by the `toml` crate.
#[cfg(feature = "toml")]
pub fn from_toml(text: &str) -> Result<ParsedOptions> {
    use toml::de::{DeTable, DeValue};
    let lines = LineIndex::new(text);
    let doc = DeTable::parse(text).map_err(|e| {
        let (l, c) = lines.line_col(e.span().map_or(0, |s| s.start));
        Error::config(format!(
            "invalid TOML (line {l}, column {c}): {}",
            e.message().trim()
        ))
    })?;
    fn value(v: &DeValue<'_>, at: usize) -> Result<Value> {
        Ok(match v {
            DeValue::String(s) => Value::Str(s.to_string()),
            DeValue::Integer(i) => {
                Value::Int(i64::from_str_radix(i.as_str(), i.radix()).map_err(|_| {
                    Error::config(format!(
                        "invalid TOML (byte {at}): integer {i} is out of range"
                    ))
                })?)
            }
            DeValue::Float(f) => Value::Float(match f.as_str() {
                "inf" | "+inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                "nan" | "+nan" | "-nan" => f64::NAN,
                text => text.parse().unwrap_or(f64::NAN),
            }),
            DeValue::Boolean(b) => Value::Bool(*b),
            DeValue::Datetime(_) => Value::Other("a datetime"),
            DeValue::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|x| value(x.get_ref(), x.span().start))
                    .collect::<Result<_>>()?,
            ),
            DeValue::Table(_) => Value::Table,
        })
    }
    fn walk(
        table: &DeTable<'_>,
        path: &mut Vec<String>,
        out: &mut Vec<(usize, Vec<String>, Value)>,
    ) -> Result<()> {
        for (k, v) in table {
            path.push(k.get_ref().to_string());
            let start = v.span().start;
            match v.get_ref() {
                DeValue::Table(t) => {
                    out.push((k.span().start, path.clone(), Value::Table));
                    walk(t, path, out)?;
                }
                DeValue::Array(items)
                    if !items.is_empty()
                        && items
                            .iter()
                            .all(|i| matches!(i.get_ref(), DeValue::Table(_))) =>
                {
                    out.push((
                        k.span().start,
                        path.clone(),
                        Value::Other("an array of tables"),
                    ));
                }
                other => out.push((start, path.clone(), value(other, start)?)),
            }
            path.pop();
        }
        Ok(())
    }
    let mut found = Vec::new();
    walk(doc.get_ref(), &mut Vec::new(), &mut found)?;
    found.sort_by_key(|(at, _, _)| *at);
    let entries = found
        .into_iter()
        .map(|(at, path, value)| Entry {
            path,
            value,
            location: Some(lines.line_col(at)),
        })
        .collect();
    from_entries(entries)
}

/// Where the lines of a text start, to turn byte offsets into 1-based line and
/// column (in characters) without rescanning the text for each one.
#[cfg(feature = "toml")]
struct LineIndex<'t> {
    text: &'t str,
    starts: Vec<usize>,
}

#[cfg(feature = "toml")]
impl<'t> LineIndex<'t> {
    fn new(text: &'t str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.starts.partition_point(|s| *s <= offset);
        let start = self.starts[line.saturating_sub(1)];
        let col = self
            .text
            .get(start..offset)
            .map_or(0, |l| l.chars().count())
            + 1;
        (line, col)
    }
}
