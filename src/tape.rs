//! A compact binary encoding of a JSON value, used to hand JS objects to the
//! core without `JSON.stringify` (the package's JS layer writes it; see
//! `pkg-templates/api.js`).
//!
//! Three buffers: `words` (u32) hold the structure, `numbers` (f64) the numbers,
//! `bytes` the UTF-8 text of every string. A node is one tag word plus payload:
//!
//! | tag | node | payload words |
//! |---|---|---|
//! | 0 | null | — |
//! | 1 | false | — |
//! | 2 | true | — |
//! | 3 | number | index into `numbers` |
//! | 4 | string | byte offset, byte length |
//! | 5 | array | count, then `count` nodes |
//! | 6 | object | count, then `count` × (key offset, key length, value node) |

use serde_json::{Map, Number, Value};

use crate::error::{Error, Result};

/// How deep arrays and objects may nest (the same limit as `serde_json`'s parser).
pub const MAX_DEPTH: usize = 128;

struct Reader<'a> {
    words: &'a [u32],
    numbers: &'a [f64],
    bytes: &'a [u8],
    at: usize,
}

fn malformed(what: &str) -> Error {
    Error::input("input", format!("malformed value tape ({what})"))
}

impl Reader<'_> {
    fn word(&mut self) -> Result<u32> {
        let w = *self
            .words
            .get(self.at)
            .ok_or_else(|| malformed("ends early"))?;
        self.at += 1;
        Ok(w)
    }

    fn string(&mut self) -> Result<String> {
        let start = self.word()? as usize;
        let len = self.word()? as usize;
        let slice = start
            .checked_add(len)
            .and_then(|end| self.bytes.get(start..end))
            .ok_or_else(|| malformed("string out of range"))?;
        let text = std::str::from_utf8(slice).map_err(|_| malformed("string is not UTF-8"))?;
        Ok(text.to_string())
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        Ok(match self.word()? {
            0 => Value::Null,
            1 => Value::Bool(false),
            2 => Value::Bool(true),
            3 => {
                let n = *self
                    .numbers
                    .get(self.word()? as usize)
                    .ok_or_else(|| malformed("number out of range"))?;
                number(n)
            }
            4 => Value::String(self.string()?),
            tag @ (5 | 6) => {
                if depth >= MAX_DEPTH {
                    return Err(Error::input(
                        "input",
                        format!("nested deeper than {MAX_DEPTH} levels; flatten the data or check for a cycle"),
                    ));
                }
                let count = self.word()? as usize;
                // every element needs at least one word: a bound against bogus counts
                if count > self.words.len() - self.at.min(self.words.len()) {
                    return Err(malformed("count out of range"));
                }
                if tag == 5 {
                    let mut items = Vec::with_capacity(count);
                    for _ in 0..count {
                        items.push(self.value(depth + 1)?);
                    }
                    Value::Array(items)
                } else {
                    let mut map = Map::with_capacity(count);
                    for _ in 0..count {
                        let key = self.string()?;
                        let value = self.value(depth + 1)?;
                        map.insert(key, value);
                    }
                    Value::Object(map)
                }
            }
            _ => return Err(malformed("unknown tag")),
        })
    }
}

/// A JSON number for `n` (integers stay integers; NaN and infinities become
/// null, as `JSON.stringify` writes them).
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
        Value::Number(Number::from(n as i64))
    } else {
        Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

/// Decodes a tape into a value.
pub fn decode(words: &[u32], numbers: &[f64], bytes: &[u8]) -> Result<Value> {
    let mut r = Reader {
        words,
        numbers,
        bytes,
        at: 0,
    };
    let v = r.value(0)?;
    if r.at != words.len() {
        return Err(malformed("trailing words"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A test encoder, mirroring the JS one.
    #[derive(Default)]
    struct Tape {
        words: Vec<u32>,
        numbers: Vec<f64>,
        bytes: Vec<u8>,
    }

    impl Tape {
        fn string(&mut self, s: &str) {
            self.words.extend([self.bytes.len() as u32, s.len() as u32]);
            self.bytes.extend_from_slice(s.as_bytes());
        }

        fn encode(&mut self, v: &Value) {
            match v {
                Value::Null => self.words.push(0),
                Value::Bool(b) => self.words.push(1 + u32::from(*b)),
                Value::Number(n) => {
                    self.words.extend([3, self.numbers.len() as u32]);
                    self.numbers.push(n.as_f64().unwrap_or(0.0));
                }
                Value::String(s) => {
                    self.words.push(4);
                    self.string(s);
                }
                Value::Array(a) => {
                    self.words.extend([5, a.len() as u32]);
                    a.iter().for_each(|x| self.encode(x));
                }
                Value::Object(o) => {
                    self.words.extend([6, o.len() as u32]);
                    for (k, x) in o {
                        self.string(k);
                        self.encode(x);
                    }
                }
            }
        }
    }

    #[test]
    fn round_trips_json() {
        let v = json!([{"role": "user", "content": "héllo 😀", "n": 3, "f": 1.5, "ok": true, "x": null, "a": [1, [2, {}]]}]);
        let mut t = Tape::default();
        t.encode(&v);
        assert_eq!(decode(&t.words, &t.numbers, &t.bytes).unwrap(), v);
    }

    #[test]
    fn rejects_truncated_and_bogus_tapes_without_panicking() {
        assert!(decode(&[], &[], &[]).is_err());
        assert!(decode(&[5, 3, 0], &[], &[]).is_err());
        assert!(decode(&[4, 0, 10], &[], b"abc").is_err());
        assert!(decode(&[3, 7], &[1.0], &[]).is_err());
        assert!(decode(&[9], &[], &[]).is_err());
        assert!(decode(&[5, u32::MAX], &[], &[]).is_err());
        let deep: Vec<u32> = std::iter::repeat_n([5, 1], 200)
            .flatten()
            .chain([0])
            .collect();
        assert!(decode(&deep, &[], &[])
            .unwrap_err()
            .message()
            .contains("nested deeper"));
    }
}
