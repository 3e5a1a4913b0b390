//! Writing JSON text: the answers the wasm exports return (a plan, a notice, a
//! meter) and the messages the library writes. One small writer instead of
//! serde's derives and serde_json's serializer: the shapes are few and flat,
//! and written out by hand they cost a fraction of the generic code.

use super::number::write_f64;
use super::value::Value;
use super::{Kind, Node};
use crate::lanes::find_special;

/// A JSON text being written. Values are written one after another; a comma
/// goes in before a member or item unless it opens its object or array.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    out: String,
    /// Write the stand-ins of lone UTF-16 surrogates (U+10F800 + k, see
    /// `pkg-templates/api.js`) back as `\uD800`-style escapes.
    surrogates: bool,
}

/// A value the writer knows how to write.
pub(crate) trait WriteJson {
    /// Writes the value's JSON.
    fn write_json(&self, w: &mut Writer);
}

impl Writer {
    /// A writer that turns surrogate stand-ins back into escapes when `restore`.
    pub(crate) fn restoring(restore: bool) -> Self {
        Writer {
            out: String::new(),
            surrogates: restore,
        }
    }

    /// The text written.
    pub(crate) fn finish(self) -> String {
        self.out
    }

    /// The text written so far, to append raw JSON to (a kept message's bytes).
    pub(crate) fn raw(&mut self, json: &str) {
        self.out.push_str(json);
    }

    /// A comma unless the last thing written opened an object or array.
    pub(crate) fn separate(&mut self) {
        if !matches!(self.out.as_bytes().last(), None | Some(b'{' | b'[' | b':')) {
            self.out.push(',');
        }
    }

    /// Opens an object.
    pub(crate) fn open(&mut self) {
        self.out.push('{');
    }

    /// Closes an object.
    pub(crate) fn close(&mut self) {
        self.out.push('}');
    }

    /// Opens an array.
    pub(crate) fn open_array(&mut self) {
        self.out.push('[');
    }

    /// Closes an array.
    pub(crate) fn close_array(&mut self) {
        self.out.push(']');
    }

    /// Writes `"key":`, after a comma where one is due.
    pub(crate) fn key(&mut self, key: &str) {
        self.separate();
        self.string(key);
        self.out.push(':');
    }

    /// Writes member `key` with `value`.
    pub(crate) fn field(&mut self, key: &str, value: &dyn WriteJson) {
        self.key(key);
        value.write_json(self);
    }

    /// Writes member `key` when there is a value.
    pub(crate) fn field_some<T: WriteJson>(&mut self, key: &str, value: Option<&T>) {
        if let Some(v) = value {
            self.field(key, v);
        }
    }

    /// Writes `items` as an array.
    pub(crate) fn array<T: WriteJson>(&mut self, items: &[T]) {
        self.open_array();
        for item in items {
            self.separate();
            item.write_json(self);
        }
        self.close_array();
    }

    /// Writes `s` as a JSON string (escaped as `JSON.stringify` escapes).
    pub(crate) fn string(&mut self, s: &str) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        self.out.reserve(s.len() + 2);
        self.out.push('"');
        let bytes = s.as_bytes();
        // (a hidden surrogate is the 4-byte UTF-8 of U+10F800..U+10FFFF: F4 8F A0..BF)
        let also = self.surrogates.then_some(0xF4);
        let (mut start, mut i) = (0, 0);
        loop {
            i = find_special(bytes, i, also);
            let Some(&b) = bytes.get(i) else { break };
            let hidden = b == 0xF4
                && bytes.get(i + 1) == Some(&0x8F)
                && bytes.get(i + 2).is_some_and(|c| *c >= 0xA0);
            let escape: &str = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0x08 => "\\b",
                0x0C => "\\f",
                0..=0x1F => "",
                _ if hidden => "",
                _ => {
                    i += 1; // an F4 that starts another character
                    continue;
                }
            };
            self.out.push_str(&s[start..i]);
            if !escape.is_empty() {
                self.out.push_str(escape);
                i += 1;
                start = i;
                continue;
            }
            let unit = if hidden {
                let c = s[i..].chars().next().map_or(0, u32::from);
                i += 4;
                c - 0x10F800 + 0xD800
            } else {
                i += 1;
                u32::from(b)
            };
            start = i;
            self.out.push_str("\\u");
            for shift in [12, 8, 4, 0] {
                self.out
                    .push(char::from(HEX[(unit >> shift & 15) as usize]));
            }
        }
        self.out.push_str(&s[start..]);
        self.out.push('"');
    }

    /// Writes an owned value.
    pub(crate) fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.out.push_str(if *b { "true" } else { "false" }),
            Value::Number(n) => self.out.push_str(n),
            Value::String(s) => self.string(s),
            Value::Array(items) => {
                self.open_array();
                for item in items {
                    self.separate();
                    self.value(item);
                }
                self.close_array();
            }
            Value::Object(map) => {
                self.open();
                for (k, item) in map.iter() {
                    self.key(k);
                    self.value(item);
                }
                self.close();
            }
        }
    }

    /// Writes a node of a JSON tree as it is (no value built on the way).
    pub(crate) fn node<'a, N: Node<'a>>(&mut self, n: N) {
        match n.kind() {
            Kind::Null => self.out.push_str("null"),
            Kind::Bool => self.out.push_str(if n.as_bool() == Some(true) {
                "true"
            } else {
                "false"
            }),
            Kind::Number => self.out.push_str(n.number_text().unwrap_or("0")),
            Kind::String => self.string(n.as_str().unwrap_or("")),
            Kind::Array => {
                self.open_array();
                for item in n.items() {
                    self.separate();
                    self.node(item);
                }
                self.close_array();
            }
            Kind::Object => {
                self.open();
                for (k, item) in n.members() {
                    self.key(k);
                    self.node(item);
                }
                self.close();
            }
        }
    }
}

impl WriteJson for str {
    fn write_json(&self, w: &mut Writer) {
        w.string(self);
    }
}

impl WriteJson for String {
    fn write_json(&self, w: &mut Writer) {
        w.string(self);
    }
}

impl WriteJson for bool {
    fn write_json(&self, w: &mut Writer) {
        w.out.push_str(if *self { "true" } else { "false" });
    }
}

impl WriteJson for u64 {
    fn write_json(&self, w: &mut Writer) {
        w.out.push_str(itoa::Buffer::new().format(*self));
    }
}

impl WriteJson for usize {
    fn write_json(&self, w: &mut Writer) {
        (*self as u64).write_json(w);
    }
}

impl WriteJson for u32 {
    fn write_json(&self, w: &mut Writer) {
        u64::from(*self).write_json(w);
    }
}

impl WriteJson for i64 {
    fn write_json(&self, w: &mut Writer) {
        w.out.push_str(itoa::Buffer::new().format(*self));
    }
}

impl WriteJson for f64 {
    fn write_json(&self, w: &mut Writer) {
        write_f64(*self, &mut w.out);
    }
}

impl WriteJson for Value {
    fn write_json(&self, w: &mut Writer) {
        w.value(self);
    }
}

impl<T: WriteJson> WriteJson for Vec<T> {
    fn write_json(&self, w: &mut Writer) {
        w.array(self);
    }
}

impl<T: WriteJson + ?Sized> WriteJson for &T {
    fn write_json(&self, w: &mut Writer) {
        (**self).write_json(w);
    }
}

/// `value` as JSON text.
pub(crate) fn to_json(value: &dyn WriteJson) -> String {
    let mut w = Writer::default();
    value.write_json(&mut w);
    w.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::value::Map;

    #[test]
    fn escapes_as_json_stringify_does() {
        let mut w = Writer::default();
        w.string("a\"b\\c\nd\u{1}e\u{7f}é😀/");
        assert_eq!(w.finish(), "\"a\\\"b\\\\c\\nd\\u0001e\u{7f}é😀/\"");
    }

    #[test]
    fn hidden_surrogates_go_back_as_escapes_only_when_asked() {
        let hidden = "x\u{10F83D}y";
        let mut w = Writer::restoring(true);
        w.string(hidden);
        assert_eq!(w.finish(), "\"x\\ud83dy\"");
        let mut w = Writer::default();
        w.string(hidden);
        assert_eq!(w.finish(), format!("\"{hidden}\""));
    }

    #[test]
    fn commas_go_between_members_and_items() {
        let mut m = Map::new();
        m.insert(
            "a".into(),
            Value::Array(vec![Value::Null, true.into(), Value::Number("1.50".into())]),
        );
        m.insert("b".into(), Value::Object(Map::new()));
        m.insert("c".into(), "x".into());
        assert_eq!(
            Value::Object(m).to_string(),
            r#"{"a":[null,true,1.50],"b":{},"c":"x"}"#
        );
    }
}
