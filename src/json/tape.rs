//! A compact binary encoding of a JSON value, the one form every input takes
//! before the adapters read it: the package's JS layer writes it from the
//! caller's objects (`pkg-templates/api.js`), [`super::parse`] from JSON text.
//!
//! Two buffers: `words` (u32) hold the structure, `bytes` the UTF-8 text of
//! every string and number. A node is one tag word plus payload:
//!
//! | tag | node | payload words |
//! |---|---|---|
//! | 0 | null | — |
//! | 1 | false | — |
//! | 2 | true | — |
//! | 3 | number | its JSON text: byte offset (from the segment's base), byte length |
//! | 4 | string | byte offset (from the segment's base), byte length |
//! | 5 | array | count, span (words of the items), then `count` nodes |
//! | 6 | object | count, span, then `count` × (key offset, key length, value node) |
//! | 7 | segment | base (an absolute byte offset), then one node |
//! | 8 | stub | — (a message the JS layer's cache knows, see [`crate::memo`]; read as null where no stub is taken) |
//! | 9 | earlier | — (a message the session holds from an earlier call, see [`crate::session`]; read as null elsewhere) |
//!
//! Nothing in a node names an absolute position but a segment's base, so the
//! words and bytes of a message written once can be copied into the next call's
//! tape as they are (the JS layer caches each message's segment).
//! [`Tape::open`] checks a tape it did not make once; after that every node
//! can be read in place ([`crate::json::Node`]) without building values.

use super::{number, Kind, Node, Value};
use crate::error::{Error, Result};

/// How deep arrays and objects may nest (as deep as `JSON.stringify` goes
/// before a cycle shows, far deeper than any message).
pub(crate) const MAX_DEPTH: usize = 128;

/// A checked value tape.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tape<'a> {
    words: &'a [u32],
    /// The bytes, checked as UTF-8 once: nothing but the strings' and numbers'
    /// UTF-8 is there, so a string is a slice on character boundaries (an O(1)
    /// check) instead of a UTF-8 check of its own on every read.
    text: &'a str,
}

/// One node of a [`Tape`]: where it starts, and the base of its strings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TapeNode<'a> {
    tape: Tape<'a>,
    at: usize,
    base: usize,
}

fn malformed(what: &str) -> Error {
    Error::input("input", format!("malformed value tape ({what})"))
}

impl<'a> Tape<'a> {
    /// Checks the structure of a tape; the root node starts at word 0.
    pub(crate) fn open(words: &'a [u32], bytes: &'a [u8]) -> Result<Tape<'a>> {
        let text = std::str::from_utf8(bytes).map_err(|_| malformed("bytes not UTF-8"))?;
        let tape = Tape { words, text };
        if tape.check(0, 0, 0)? != words.len() {
            return Err(malformed("trailing words"));
        }
        Ok(tape)
    }

    /// A tape [`super::parse`] wrote: well formed by construction.
    pub(crate) fn trusted(words: &'a [u32], text: &'a str) -> Tape<'a> {
        Tape { words, text }
    }

    /// The root node.
    pub(crate) fn root(self) -> TapeNode<'a> {
        self.node(0, 0)
    }

    /// The node at `at`, seen through any segment headers there.
    fn node(self, mut at: usize, mut base: usize) -> TapeNode<'a> {
        while self.words.get(at) == Some(&7) {
            base = self.words.get(at + 1).map_or(0, |b| *b as usize);
            at += 2;
        }
        TapeNode {
            tape: self,
            at,
            base,
        }
    }

    fn word(&self, at: usize) -> Result<usize> {
        self.words
            .get(at)
            .map(|w| *w as usize)
            .ok_or_else(|| malformed("ends early"))
    }

    /// Checks that the string at `at` lies in the bytes on character boundaries.
    fn check_string(&self, at: usize, base: usize) -> Result<&'a str> {
        self.word(at + 1)?;
        self.text(at, base)
            .ok_or_else(|| malformed("string out of range or not on character boundaries"))
    }

    /// Checks the node at `at`; returns the index of the word after it.
    fn check(&self, at: usize, depth: usize, base: usize) -> Result<usize> {
        match self.word(at)? {
            0..=2 | 8 | 9 => Ok(at + 1),
            3 => match number::is_number(self.check_string(at + 1, base)?) {
                true => Ok(at + 3),
                false => Err(malformed("a number that is not JSON's")),
            },
            4 => self.check_string(at + 1, base).map(|_| at + 3),
            7 => {
                let base = self.word(at + 1)?;
                if base > self.text.len() {
                    return Err(malformed("segment base out of range"));
                }
                // A segment holds a value, never another header (which would make
                // an unbounded chain that no level counts).
                if self.word(at + 2)? == 7 {
                    return Err(malformed("a segment header right after another"));
                }
                self.check(at + 2, depth, base)
            }
            tag @ (5 | 6) => {
                if depth >= MAX_DEPTH {
                    return Err(Error::input(
                        "input",
                        format!("nested deeper than {MAX_DEPTH} levels; flatten the data or check for a cycle"),
                    ));
                }
                let (count, span) = (self.word(at + 1)?, self.word(at + 2)?);
                let end = (at + 3)
                    .checked_add(span)
                    .ok_or_else(|| malformed("span out of range"))?;
                let mut pos = at + 3;
                for _ in 0..count {
                    if pos >= end {
                        return Err(malformed("count and span disagree"));
                    }
                    if tag == 6 {
                        self.check_string(pos, base)?;
                        pos += 2;
                    }
                    pos = self.check(pos, depth + 1, base)?;
                }
                if pos != end {
                    return Err(malformed("count and span disagree"));
                }
                Ok(end)
            }
            _ => Err(malformed("unknown tag")),
        }
    }

    /// The string at `at` (`None` out of range or off character boundaries).
    fn text(&self, at: usize, base: usize) -> Option<&'a str> {
        let start = base.checked_add(*self.words.get(at)? as usize)?;
        let len = *self.words.get(at + 1)? as usize;
        self.text.get(start..start.checked_add(len)?)
    }

    /// Whether the key at `at` is `key` (lengths first: most keys differ there;
    /// then a byte loop, since keys are short and a `memcmp` call costs more).
    fn key_is(&self, at: usize, base: usize, key: &str) -> bool {
        let (Some(&offset), Some(&len)) = (self.words.get(at), self.words.get(at + 1)) else {
            return false;
        };
        len as usize == key.len()
            && base
                .checked_add(offset as usize)
                .and_then(|start| self.text.as_bytes().get(start..start + key.len()))
                .is_some_and(|found| found.iter().zip(key.as_bytes()).all(|(a, b)| a == b))
    }

    /// The index of the word after the node at `at`.
    fn next(&self, at: usize) -> usize {
        match self.words.get(at) {
            Some(0..=2 | 8 | 9) => at + 1,
            Some(3 | 4) => at + 3,
            Some(5 | 6) => self
                .words
                .get(at + 2)
                .map_or(usize::MAX, |span| at.saturating_add(3 + *span as usize)),
            Some(7) => self.next(at + 2),
            _ => usize::MAX,
        }
    }
}

impl<'a> TapeNode<'a> {
    fn tag(self) -> u32 {
        self.tape.words.get(self.at).copied().unwrap_or(0)
    }

    fn count(self) -> usize {
        self.tape.words.get(self.at + 1).map_or(0, |c| *c as usize)
    }

    fn node(self, at: usize) -> TapeNode<'a> {
        self.tape.node(at, self.base)
    }

    /// Where the node starts in its tape's words (the JSON text's parser notes
    /// where some nodes lie in the text by it).
    pub(crate) fn position(self) -> usize {
        self.at
    }
}

impl<'a> Node<'a> for TapeNode<'a> {
    fn kind(self) -> Kind {
        match self.tag() {
            1 | 2 => Kind::Bool,
            3 => Kind::Number,
            4 => Kind::String,
            5 => Kind::Array,
            6 => Kind::Object,
            _ => Kind::Null,
        }
    }

    fn is_stub(self) -> bool {
        self.tag() == 8
    }

    fn is_earlier(self) -> bool {
        self.tag() == 9
    }

    fn as_str(self) -> Option<&'a str> {
        (self.tag() == 4)
            .then(|| self.tape.text(self.at + 1, self.base))
            .flatten()
    }

    fn number_text(self) -> Option<&'a str> {
        (self.tag() == 3)
            .then(|| self.tape.text(self.at + 1, self.base))
            .flatten()
    }

    fn as_bool(self) -> Option<bool> {
        match self.tag() {
            1 => Some(false),
            2 => Some(true),
            _ => None,
        }
    }

    /// The last member named `key`, as `JSON.parse` takes a key given twice
    /// (JSON text may hold one; the JS layer's objects cannot).
    fn get(self, key: &str) -> Option<Self> {
        if self.tag() != 6 {
            return None;
        }
        let (mut pos, mut found) = (self.at + 3, None);
        for _ in 0..self.count() {
            if self.tape.key_is(pos, self.base, key) {
                found = Some(pos + 2);
            }
            pos = self.tape.next(pos + 2);
        }
        found.map(|at| self.node(at))
    }

    fn items(self) -> impl Iterator<Item = Self> + 'a {
        let count = if self.tag() == 5 { self.count() } else { 0 };
        let mut pos = self.at + 3;
        (0..count).map(move |_| {
            let item = self.node(pos);
            pos = self.tape.next(pos);
            item
        })
    }

    fn members(self) -> impl Iterator<Item = (&'a str, Self)> + 'a {
        let count = if self.tag() == 6 { self.count() } else { 0 };
        let mut pos = self.at + 3;
        (0..count).map(move |_| {
            let key = self.tape.text(pos, self.base).unwrap_or("");
            let value = self.node(pos + 2);
            pos = self.tape.next(pos + 2);
            (key, value)
        })
    }

    /// Approximate (escapes not counted): sizing needs no exact figure, and this
    /// builds no value for large opaque parts such as base64 audio.
    fn json_len(self) -> usize {
        match self.tag() {
            0 | 2 => 4,
            1 => 5,
            3 | 4 => {
                let len = self.tape.words.get(self.at + 2).map_or(0, |l| *l as usize);
                len + 2 * usize::from(self.tag() == 4)
            }
            5 => 2 + self.items().map(|i| i.json_len() + 1).sum::<usize>(),
            6 => {
                2 + self
                    .members()
                    .map(|(k, v)| k.len() + 4 + v.json_len())
                    .sum::<usize>()
            }
            _ => 0,
        }
    }
}

/// Decodes a tape into a value.
#[cfg(test)]
pub(crate) fn decode(words: &[u32], bytes: &[u8]) -> Result<Value> {
    Ok(Tape::open(words, bytes)?.root().to_value())
}

/// An owned tape, as [`encode`] writes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct OwnedTape {
    /// Structure words.
    pub words: Vec<u32>,
    /// UTF-8 text of the strings and numbers.
    pub bytes: Vec<u8>,
}

impl OwnedTape {
    fn string(&mut self, s: &str) {
        self.words.extend([self.bytes.len() as u32, s.len() as u32]);
        self.bytes.extend_from_slice(s.as_bytes());
    }

    /// Writes an array or object node: `children` writes its items.
    pub(crate) fn container(&mut self, tag: u32, count: usize, children: impl FnOnce(&mut Self)) {
        self.words.extend([tag, count as u32, 0]);
        let span_at = self.words.len() - 1;
        children(self);
        self.words[span_at] = (self.words.len() - span_at - 1) as u32;
    }

    /// Writes a scalar node (`tag` 0 to 4; `text`: a number's or string's).
    pub(crate) fn scalar(&mut self, tag: u32, text: &str) {
        self.words.push(tag);
        if tag >= 3 {
            self.string(text);
        }
    }

    /// Writes an object key.
    pub(crate) fn key(&mut self, key: &str) {
        self.string(key);
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.scalar(0, ""),
            Value::Bool(b) => self.scalar(1 + u32::from(*b), ""),
            Value::Number(n) => self.scalar(3, n),
            Value::String(s) => self.scalar(4, s),
            Value::Array(a) => self.container(5, a.len(), |t| a.iter().for_each(|x| t.value(x))),
            Value::Object(o) => self.container(6, o.len(), |t| {
                for (k, x) in o.iter() {
                    t.key(k);
                    t.value(x);
                }
            }),
        }
    }

    /// The tape as a checked [`Tape`].
    pub(crate) fn open(&self) -> Result<Tape<'_>> {
        Tape::open(&self.words, &self.bytes)
    }
}

/// Writes `v` as a tape (what the JS layer does for the caller's objects).
pub(crate) fn encode(v: &Value) -> OwnedTape {
    let mut t = OwnedTape::default();
    t.value(v);
    t
}

/// Compacts the history at `root` offline (tests of the readers).
#[cfg(test)]
pub(crate) fn compact_root(
    root: TapeNode<'_>,
    config: &crate::options::ParsedOptions,
    memo: &crate::memo::Memo<'_>,
) -> Result<crate::engine::IndexedCompaction> {
    use crate::tokens::{Capped, Estimator};
    let counter = &Capped(&Estimator(config.options.tokenizer));
    crate::engine::Opened::read(root, config, counter, memo)?.compact(counter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::serde::{tape_of, to_serde};
    use serde_json::json;

    fn decode_serde(words: &[u32], bytes: &[u8]) -> Result<serde_json::Value> {
        decode(words, bytes).map(|v| to_serde(&v))
    }

    #[test]
    fn round_trips_json() {
        let v = json!([{"role": "user", "content": "héllo 😀", "n": 3, "f": 1.5, "ok": true, "x": null, "a": [1, [2, {}]]}]);
        let t = tape_of(&v);
        assert_eq!(decode_serde(&t.words, &t.bytes).unwrap(), v);
        // and back through the owned value's own writer
        let again = encode(&decode(&t.words, &t.bytes).unwrap());
        assert_eq!(again, t);
    }

    #[test]
    fn numbers_are_their_text() {
        // [3, 1712345678.123456] as the JS layer writes them
        let t = Tape::open(&[5, 2, 6, 3, 0, 1, 3, 1, 17], b"31712345678.123456").unwrap();
        let items: Vec<_> = t.root().items().collect();
        assert_eq!(items[0].as_u64(), Some(3));
        assert_eq!(items[1].number_text(), Some("1712345678.123456"));
        assert_eq!(t.root().to_json(), "[3,1712345678.123456]");
        assert!(Tape::open(&[3, 0, 3], b"1.e").is_err(), "not JSON's number");
    }

    #[test]
    fn segments_read_their_strings_from_their_base() {
        // ["ab", {"k": "cd"}] with the object in a segment based at byte 2.
        let words = [5, 2, 13, 4, 0, 2, 7, 2, 6, 1, 5, 0, 1, 4, 1, 2];
        let v = decode_serde(&words[..], b"abkcd").unwrap();
        assert_eq!(v, json!(["ab", {"k": "cd"}]));
        assert!(decode(&[7, 9, 0], b"abc").is_err(), "base beyond the bytes");
        assert!(
            decode(&[7, 2, 4, 0, 2], b"abc").is_err(),
            "string beyond the bytes"
        );
        assert!(decode(&[4, 0, 2], &[0xff, 0xfe]).is_err(), "not UTF-8");
        let mut chain: Vec<u32> = std::iter::repeat_n([7, 0], 100_000).flatten().collect();
        chain.push(0);
        assert!(decode(&chain, b"").is_err(), "a chain of segment headers");
    }

    #[test]
    fn json_len_is_close_to_the_real_length() {
        let v = json!({"type": "input_audio", "input_audio": {"data": "QUJD".repeat(1000), "format": "wav"}, "n": [1, 2, null, true]});
        let t = tape_of(&v);
        let exact = v.to_string().len() as f64;
        let approx = t.open().unwrap().root().json_len() as f64;
        assert!((approx / exact - 1.0).abs() < 0.05, "{approx} vs {exact}");
    }

    #[test]
    fn stubs_and_earlier_messages_are_one_word_read_as_null() {
        for tag in [8, 9] {
            assert_eq!(
                decode_serde(&[5, 2, 2, tag, 0], &[]).unwrap(),
                json!([null, null])
            );
        }
        let tape = Tape::open(&[5, 2, 2, 9, 8], &[]).unwrap();
        let items: Vec<_> = tape.root().items().collect();
        assert!(items[0].is_earlier() && !items[0].is_stub());
        assert!(items[1].is_stub() && !items[1].is_earlier());
    }

    #[test]
    fn rejects_truncated_and_bogus_tapes_without_panicking() {
        assert!(decode(&[], &[]).is_err());
        assert!(decode(&[5, 3, 0], &[]).is_err());
        assert!(decode(&[5, 1, 9, 0], &[]).is_err());
        assert!(decode(&[4, 0, 10], b"abc").is_err());
        assert!(decode(&[3, 7], &[]).is_err());
        assert!(decode(&[10], &[]).is_err());
        assert!(decode(&[5, u32::MAX, 3], &[]).is_err());
        assert!(decode(&[5, 1, u32::MAX, 0], &[]).is_err());
        let mut deep: Vec<u32> = Vec::new();
        for level in 0..200u32 {
            deep.extend([5, 1, 3 * (199 - level) + 1]);
        }
        deep.push(0);
        let e = decode(&deep, &[]).unwrap_err();
        assert!(e.message().contains("nested deeper"), "{e}");
    }
}

/// Whatever a tape holds, reading it never panics (a panic would kill the wasm
/// instance); a well-formed tape reads back as the value it encodes; and a
/// history planned from the JS layer's tape and from its JSON text plans alike.
#[cfg(test)]
mod proptests {
    use super::{compact_root, Tape};
    use crate::json::parse::parse_str;
    use crate::json::serde::{tape_of, to_serde};
    use crate::json::Node;
    use crate::memo::Memo;
    use crate::options;
    use proptest::prelude::*;
    use serde_json::json;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn arbitrary_tapes_never_panic(
            words in prop::collection::vec(prop_oneof![0u32..9, 0u32..64, any::<u32>()], 0..64),
            bytes in prop::collection::vec(any::<u8>(), 0..64),
        ) {
            if let Ok(tape) = Tape::open(&words, &bytes) {
                let root = tape.root();
                let _ = root.to_value();
                let _ = root.to_json();
                let _ = root.json_len();
                let _ = root.get("messages");
                let _ = root.items().count();
                let config = options::from_json(&json!({"mode": "recency_preserving"})).unwrap();
                let _ = compact_root(root, &config, &Memo::default());
            }
        }

        /// Valid histories reach the modes, and the tape the JS layer writes
        /// from the objects plans exactly as the tape read from the JSON text.
        #[test]
        fn valid_histories_plan_the_same_from_objects_and_text(
            turns in prop::collection::vec((any::<bool>(), "[a-z \"\\\\\n]{0,300}", 0usize..3), 2..40),
            mode in prop::sample::select(vec!["deterministic", "recency_preserving"]),
            window in 200u64..4000,
        ) {
            let mut messages = Vec::new();
            for (k, (user, text, calls)) in turns.into_iter().enumerate() {
                if user {
                    messages.push(json!({"role": "user", "content": text}));
                    continue;
                }
                let ids: Vec<String> = (0..calls).map(|c| format!("c{k}_{c}")).collect();
                let tool_calls: Vec<_> = ids
                    .iter()
                    .map(|id| json!({"id": id, "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"src/a.rs\"}"}}))
                    .collect();
                messages.push(if calls == 0 {
                    json!({"role": "assistant", "content": text})
                } else {
                    json!({"role": "assistant", "content": text, "tool_calls": tool_calls})
                });
                for id in ids {
                    messages.push(json!({"role": "tool", "tool_call_id": id, "content": text.repeat(3)}));
                }
            }
            let history = serde_json::Value::Array(messages);
            let config = options::from_json(&json!({"mode": mode, "contextWindow": window, "protectTailMin": 2})).unwrap();
            let memo = Memo::default();
            let objects = tape_of(&history);
            let from_objects = compact_root(objects.open().unwrap().root(), &config, &memo);
            let text = parse_str(&serde_json::to_string_pretty(&history).unwrap()).unwrap();
            let from_text = compact_root(text.tape().root(), &config, &memo);
            if let Err(e) = &from_text {
                prop_assert_eq!(e.kind(), crate::ErrorKind::TooSmallToCompact, "{}", e);
            }
            prop_assert_eq!(from_objects, from_text);
        }

        #[test]
        fn well_formed_tapes_read_back(text in "\\PC{0,40}", n in any::<i32>(), b in any::<bool>()) {
            let v = json!([{"role": "user", "content": text, "n": n, "b": b, "nested": [null, {"k": [1.5]}]}]);
            let tape = tape_of(&v);
            prop_assert_eq!(to_serde(&tape.open().unwrap().root().to_value()), v.clone());
            let parsed = parse_str(&v.to_string()).unwrap();
            prop_assert_eq!(to_serde(&parsed.tape().root().to_value()), v);
        }
    }
}
