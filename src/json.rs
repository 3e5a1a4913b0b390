//! A read-only view of a JSON tree that the format adapters read through, so one
//! adapter serves both parsed `serde_json` values (native callers, JSON text)
//! and the value tape the JS layer writes from the caller's own objects.

use serde_json::Value;

/// The kind of a JSON node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl Kind {
    /// "a string", "an array" …, for error messages.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "a boolean",
            Kind::Number => "a number",
            Kind::String => "a string",
            Kind::Array => "an array",
            Kind::Object => "an object",
        }
    }
}

/// A borrowed handle to one node of a JSON tree.
pub(crate) trait Node<'a>: Copy {
    /// The node's kind.
    fn kind(self) -> Kind;
    /// The text of a string node.
    fn as_str(self) -> Option<&'a str>;
    /// The value of a boolean node.
    fn as_bool(self) -> Option<bool>;
    /// The value of a non-negative integer node.
    fn as_u64(self) -> Option<u64>;
    /// The member `key` of an object node.
    fn get(self, key: &str) -> Option<Self>;
    /// The elements of an array node (nothing for other kinds).
    fn items(self) -> impl Iterator<Item = Self> + 'a;
    /// A `serde_json` copy of the node (for edits and synthesized messages).
    fn to_value(self) -> Value;
    /// Whether the node is a stub the JS layer wrote for a message whose record
    /// it holds (see [`crate::memo`]); only the value tape has them.
    fn is_stub(self) -> bool {
        false
    }
    /// Whether the node stands for a message an earlier call read, which the
    /// session holds (see [`crate::session`]); only the value tape has them.
    fn is_earlier(self) -> bool {
        false
    }
    /// Length of the node as compact JSON text (for sizing parts the library
    /// does not interpret).
    fn json_len(self) -> usize {
        self.to_value().to_string().len()
    }
}

impl<'a> Node<'a> for &'a Value {
    fn kind(self) -> Kind {
        match self {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            Value::Number(_) => Kind::Number,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        }
    }

    fn as_str(self) -> Option<&'a str> {
        Value::as_str(self)
    }

    fn as_bool(self) -> Option<bool> {
        Value::as_bool(self)
    }

    fn as_u64(self) -> Option<u64> {
        Value::as_u64(self)
    }

    fn get(self, key: &str) -> Option<Self> {
        self.as_object()?.get(key)
    }

    fn items(self) -> impl Iterator<Item = Self> + 'a {
        self.as_array().into_iter().flatten()
    }

    fn to_value(self) -> Value {
        self.clone()
    }

    fn json_len(self) -> usize {
        self.to_string().len()
    }
}
