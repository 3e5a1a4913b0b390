//! JSON, the library's own: a read-only view the format adapters read through
//! ([`Node`]), the value tape that view is over ([`tape`]: written by the JS
//! layer from the caller's objects, or by [`parse`] from JSON text), an owned
//! [`Value`] for the messages the library writes, and a [`Writer`].
//!
//! The wasm build has no serde_json: one reader serves every input, so each
//! adapter is compiled once, and numbers stay their text (see [`number`]).
//! Native callers hand `serde_json` values in and get them back ([`serde`]).

pub(crate) mod number;
pub(crate) mod parse;
#[cfg(feature = "serde_json")]
pub(crate) mod serde;
pub(crate) mod tape;
mod value;
mod write;

pub(crate) use value::{Map, Value};
pub(crate) use write::{to_json, WriteJson, Writer};

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
    /// The JSON text of a number node.
    fn number_text(self) -> Option<&'a str>;
    /// The value of a boolean node.
    fn as_bool(self) -> Option<bool>;
    /// The member `key` of an object node.
    fn get(self, key: &str) -> Option<Self>;
    /// The elements of an array node (nothing for other kinds).
    fn items(self) -> impl Iterator<Item = Self> + 'a;
    /// The members of an object node, in order (nothing for other kinds).
    fn members(self) -> impl Iterator<Item = (&'a str, Self)> + 'a;
    /// Length of the node as compact JSON text (for sizing parts the library
    /// does not interpret; escapes need not be counted).
    fn json_len(self) -> usize;
    /// Whether the node is a stub the JS layer wrote for a message whose record
    /// it holds (see [`crate::memo`]); only the JS layer's tape has them.
    fn is_stub(self) -> bool {
        false
    }
    /// Whether the node stands for a message an earlier call read, which the
    /// session holds (see [`crate::session`]); only the JS layer's tape has them.
    fn is_earlier(self) -> bool {
        false
    }

    /// The value of a number node that is a whole number from 0 on.
    fn as_u64(self) -> Option<u64> {
        self.number_text().and_then(number::to_u64)
    }

    /// The value of a number node.
    fn as_f64(self) -> Option<f64> {
        self.number_text().and_then(number::to_f64)
    }

    /// An owned copy of the node (for edits and synthesized messages).
    fn to_value(self) -> Value {
        match self.kind() {
            Kind::Null => Value::Null,
            Kind::Bool => Value::Bool(self.as_bool() == Some(true)),
            Kind::Number => Value::Number(self.number_text().unwrap_or("0").to_string()),
            Kind::String => Value::String(self.as_str().unwrap_or("").to_string()),
            Kind::Array => Value::Array(self.items().map(Node::to_value).collect()),
            Kind::Object => {
                let mut map = Map::new();
                for (k, v) in self.members() {
                    map.append(k.to_string(), v.to_value());
                }
                Value::Object(map)
            }
        }
    }

    /// The node as compact JSON text.
    fn to_json(self) -> String {
        let mut w = Writer::default();
        w.node(self);
        w.finish()
    }
}
