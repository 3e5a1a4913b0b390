//! An owned JSON value, for the messages the library writes or edits (a
//! summary, a stub, a copy of a kept message with a placeholder in it). Objects
//! keep their keys in the order they were read or inserted, numbers their text.

use std::fmt;

use super::write::Writer;

/// A JSON value.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) enum Value {
    /// `null`.
    #[default]
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as its JSON text.
    Number(String),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, its keys in order.
    Object(Map),
}

/// The members of a JSON object, in order. A history's objects have a handful
/// of keys, so a list searched in order does what a hash map would, with less
/// code in the `.wasm`.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Map(Vec<(String, Value)>);

impl Map {
    /// An empty object.
    pub(crate) fn new() -> Self {
        Map(Vec::new())
    }

    /// The value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The value of `key`, to change.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether the object has `key`.
    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `value` (in its place when the key is there, else last);
    /// the value it replaced.
    pub(crate) fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        match self.get_mut(&key) {
            Some(old) => Some(std::mem::replace(old, value)),
            None => {
                self.0.push((key, value));
                None
            }
        }
    }

    /// Sets `key` to `value` unless the object has it.
    pub(crate) fn insert_absent(&mut self, key: String, value: Value) {
        if !self.contains_key(&key) {
            self.0.push((key, value));
        }
    }

    /// Appends `key` and `value` as they come (a copy of an object read, whose
    /// keys are as its text had them: a check for each would make a copy
    /// quadratic in the keys).
    pub(crate) fn append(&mut self, key: String, value: Value) {
        self.0.push((key, value));
    }

    /// Removes `key` (the others keep their order); its value.
    pub(crate) fn remove(&mut self, key: &str) -> Option<Value> {
        let at = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(at).1)
    }

    /// Keeps the members `keep` says yes to.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&str, &Value) -> bool) {
        self.0.retain(|(k, v)| keep(k, v));
    }

    /// The members in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// The number of members.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

impl IntoIterator for Map {
    type Item = (String, Value);
    type IntoIter = std::vec::IntoIter<(String, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl FromIterator<(String, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(items: I) -> Self {
        Map(items.into_iter().collect())
    }
}

impl Value {
    /// Member `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.as_object()?.get(key)
    }

    /// Member `key` of an object, to change.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.as_object_mut()?.get_mut(key)
    }

    /// The text of a string.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value of a boolean.
    pub(crate) fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The items of an array, to change.
    pub(crate) fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The members of an object.
    pub(crate) fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The members of an object, to change.
    pub(crate) fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// Whether the value is a string.
    pub(crate) fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Self {
        Value::Number(itoa::Buffer::new().format(n).to_string())
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Value::Object(m)
    }
}

/// Compact JSON text, as `JSON.stringify` writes it.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut w = Writer::default();
        w.value(self);
        f.write_str(&w.finish())
    }
}
