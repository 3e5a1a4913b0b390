//! The native build's bridge to `serde_json`: a Rust caller's values become a
//! value tape (what the adapters read), and the messages the library writes
//! become `serde_json` values again. Not in the wasm build.

use super::tape::OwnedTape;
use super::Value;

/// Writes a `serde_json` value as a tape (numbers as their JSON text).
pub(crate) fn tape_of(v: &serde_json::Value) -> OwnedTape {
    fn write(t: &mut OwnedTape, v: &serde_json::Value) {
        use serde_json::Value as V;
        match v {
            V::Null => t.scalar(0, ""),
            V::Bool(b) => t.scalar(1 + u32::from(*b), ""),
            V::Number(n) => t.scalar(3, &n.to_string()),
            V::String(s) => t.scalar(4, s),
            V::Array(a) => t.container(5, a.len(), |t| a.iter().for_each(|x| write(t, x))),
            V::Object(o) => t.container(6, o.len(), |t| {
                for (k, x) in o {
                    t.key(k);
                    write(t, x);
                }
            }),
        }
    }
    let mut t = OwnedTape::default();
    write(&mut t, v);
    t
}

/// A value as a `serde_json` value.
pub(crate) fn to_serde(v: &Value) -> serde_json::Value {
    use serde_json::Value as V;
    match v {
        Value::Null => V::Null,
        Value::Bool(b) => V::Bool(*b),
        Value::Number(n) => n.parse::<serde_json::Number>().map_or(V::Null, V::Number),
        Value::String(s) => V::String(s.clone()),
        Value::Array(a) => V::Array(a.iter().map(to_serde).collect()),
        Value::Object(m) => V::Object(m.iter().map(|(k, x)| (k.clone(), to_serde(x))).collect()),
    }
}

/// A `serde_json` value as a value.
#[cfg(test)]
pub(crate) fn from_serde(v: &serde_json::Value) -> Value {
    use crate::json::Node;
    tape_of(v)
        .open()
        .map_or(Value::Null, |t| t.root().to_value())
}
