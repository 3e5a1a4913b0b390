//! What the JS layer's per-message cache carries between calls. A chat UI calls
//! the library on every turn of a growing conversation; the JS layer keeps each
//! message's record (per message object, guarded by a snapshot of the message:
//! see `pkg-templates/api.js`) and hands it back, so a call estimates only the
//! messages that are new or changed, and a meter reads nothing else at all.
//!
//! A record is `[facts, reported, tokens, tokens of result 0, result 1, …]`.
//! `facts` packs, low bits first: the format the message was read as (3 bits,
//! its place in `FORMATS`: the same object reads differently as another
//! format), whether a stub may stand for it (1), its format [`Evidence`]
//! (signals 6, marker 3) and what the meter needs of its view (role 3, boundary
//! 1, whether `reported` holds provider-reported usage 1, whether it holds a
//! summary or marker a compaction wrote 1). `known` holds one
//! entry per message in input order: its length, then the record (length 0:
//! not known). Records of the messages read in this call are noted in `fresh`
//! as `[index, length, record…]`, for the JS layer to keep.
//!
//! For `measure` and `estimateTokens` the JS layer writes a message whose
//! record is known as a *stub* (one tape word, see [`crate::json::tape`]) instead of
//! its content: the view is rebuilt from the record. Should the history read as
//! another format than a stub's record was made in, the call is *missed*, and
//! the JS layer calls again with every message written out.

use std::cell::{Cell, RefCell};

use crate::formats::{Document, Evidence, Format, FORMATS};
use crate::json::Node;
use crate::message::{Message, Role};
use crate::tokens::{message_tokens, TokenCounter};

/// Where a record's fields are.
const FACTS: usize = 0;
const REPORTED: usize = 1;
const TOKENS: usize = 2;
/// The fields before the result tokens.
const HEADER: usize = 3;

/// The bit fields of `facts`: (lowest bit, width).
const FORMAT: (u32, u32) = (0, 3);
/// (the JS layer reads this bit as `RECORD_STUB` in pkg-templates/api.js)
const STUB: (u32, u32) = (3, 1);
const SIGNALS: (u32, u32) = (4, 6);
const MARKER: (u32, u32) = (10, 3);
const ROLE: (u32, u32) = (13, 3);
const BOUNDARY: (u32, u32) = (16, 1);
const REPORTED_GIVEN: (u32, u32) = (17, 1);
const WRITTEN: (u32, u32) = (18, 1);

/// Field `(at, width)` of a record's `facts`.
fn field(facts: f64, (at, width): (u32, u32)) -> u32 {
    (facts as u32 >> at) & ((1 << width) - 1)
}

/// Roles by their number in a record.
const ROLES: [Role; 5] = [
    Role::System,
    Role::User,
    Role::Assistant,
    Role::Tool,
    Role::Notice,
];

/// Records known from earlier calls, and the ones made in this call.
#[derive(Debug, Default)]
pub(crate) struct Memo<'k> {
    known: &'k [f64],
    /// Each message's record as `(start, length)` in `known`.
    records: Vec<(usize, usize)>,
    /// Whether stubs may stand for messages (only the meter and the total take them).
    stubs: bool,
    missed: Cell<bool>,
    /// Whether the JS layer keeps records: only then are they made.
    keeps: bool,
    fresh: RefCell<Vec<f64>>,
}

/// What a record says of a message sent as a stub.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Known {
    format: u32,
    role: Role,
    boundary: bool,
    reported: Option<u64>,
    written: bool,
    tokens: u64,
}

/// A format's number in a record.
fn tag(format: Format) -> u32 {
    FORMATS.iter().position(|(_, f)| *f == format).unwrap_or(0) as u32
}

impl Known {
    /// The view a meter reads: role, tokens, usage, boundary, no content. A
    /// record made in another format than the history reads as misses the call.
    pub(crate) fn view<'a>(&self, format: Format, memo: &Memo<'_>) -> Message<'a> {
        if self.format != tag(format) {
            memo.missed.set(true);
        }
        let mut view = Message::new(self.role);
        view.boundary = self.boundary;
        view.reported_input_tokens = self.reported;
        view.written = self.written;
        view.tokens = self.tokens;
        view
    }
}

impl<'k> Memo<'k> {
    /// A memo over the JS layer's `known` records (a malformed layout reads as
    /// nothing known from there on).
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn new(known: &'k [f64]) -> Self {
        let mut records = Vec::new();
        let mut at = 0;
        while let Some(n) = known.get(at) {
            let len = *n as usize;
            if at + 1 + len > known.len() {
                break;
            }
            records.push((at + 1, len));
            at += 1 + len;
        }
        Memo {
            known,
            records,
            keeps: true,
            ..Memo::default()
        }
    }

    /// Lets stubs stand for the messages whose records are known.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn with_stubs(self) -> Self {
        Memo {
            stubs: true,
            ..self
        }
    }

    /// Whether stubs may stand for messages in this call.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn takes_stubs(&self) -> bool {
        self.stubs
    }

    /// Whether a stub could not be read as the history's format: the result is
    /// not to be used, and the call is to be made again without stubs.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn missed(&self) -> bool {
        self.missed.get()
    }

    fn record(&self, i: usize) -> Option<&'k [f64]> {
        let (start, len) = *self.records.get(i)?;
        self.known.get(start..start + len)
    }

    /// The format evidence message `i`'s record holds (made in any format: the
    /// evidence is the message's own shape).
    pub(crate) fn evidence(&self, i: usize) -> Option<Evidence> {
        let r = self.record(i).filter(|r| r.len() >= HEADER)?;
        Some(Evidence {
            signals: field(r[FACTS], SIGNALS) as u8,
            marker: field(r[FACTS], MARKER) as u8,
        })
    }

    /// What the record says of message `i` when a stub stands for it (`None`
    /// when `m` is not a stub, or stubs are not taken here: it is then read as
    /// the value it is). A stub without a usable record misses the call.
    pub(crate) fn stub<'a, N: Node<'a>>(&self, i: usize, m: N) -> Option<Known> {
        if !self.stubs || !m.is_stub() {
            return None;
        }
        let known = self
            .record(i)
            .filter(|r| r.len() >= HEADER && field(r[FACTS], STUB) == 1)
            .and_then(|r| {
                Some(Known {
                    format: field(r[FACTS], FORMAT),
                    role: *ROLES.get(field(r[FACTS], ROLE) as usize)?,
                    boundary: field(r[FACTS], BOUNDARY) == 1,
                    reported: (field(r[FACTS], REPORTED_GIVEN) == 1).then(|| r[REPORTED] as u64),
                    written: field(r[FACTS], WRITTEN) == 1,
                    tokens: r[TOKENS] as u64,
                })
            });
        if known.is_none() {
            self.missed.set(true);
        }
        Some(known.unwrap_or(Known {
            format: u32::MAX,
            role: Role::User,
            boundary: false,
            reported: None,
            written: false,
            tokens: 0,
        }))
    }

    /// Sets the tokens of every view from `from` on (and its results'), from a
    /// known record where one fits the message as read, else by counting (and
    /// noting the record). Stubs came with their tokens.
    pub(crate) fn estimate<'a, N: Node<'a>>(
        &self,
        doc: &Document<'a, N>,
        views: &mut [Message<'_>],
        from: usize,
        counter: &dyn TokenCounter,
    ) {
        let format = tag(doc.format);
        for (i, v) in views.iter_mut().enumerate().skip(from) {
            if doc.stubs.get(i).is_some_and(Option::is_some) {
                continue;
            }
            match self.record(i) {
                Some(r)
                    if r.len() == HEADER + v.results.len() && field(r[FACTS], FORMAT) == format =>
                {
                    v.tokens = r[TOKENS] as u64;
                    for (res, t) in v.results.iter_mut().zip(&r[HEADER..]) {
                        res.tokens = *t as u64;
                    }
                }
                _ => {
                    v.tokens = message_tokens(v, counter);
                    if !self.keeps {
                        continue;
                    }
                    let evidence = doc.evidence.get(i).copied().unwrap_or_default();
                    let role = ROLES.iter().position(|r| *r == v.role).unwrap_or(0);
                    // Responses items are checked across the turn (call ids): always read.
                    let stub = u32::from(doc.format != Format::OpenaiResponses);
                    let facts = [
                        (format, FORMAT),
                        (stub, STUB),
                        (u32::from(evidence.signals), SIGNALS),
                        (u32::from(evidence.marker), MARKER),
                        (role as u32, ROLE),
                        (u32::from(v.boundary), BOUNDARY),
                        (u32::from(v.reported_input_tokens.is_some()), REPORTED_GIVEN),
                        (u32::from(v.holds_written()), WRITTEN),
                    ]
                    .iter()
                    .fold(0, |acc, (value, (at, _))| acc | value << at);
                    let mut fresh = self.fresh.borrow_mut();
                    fresh.extend([
                        i as f64,
                        (HEADER + v.results.len()) as f64,
                        f64::from(facts),
                        // read from a JS number: exact as an f64
                        v.reported_input_tokens.map_or(0.0, |t| t as f64),
                        v.tokens as f64,
                    ]);
                    fresh.extend(v.results.iter().map(|r| r.tokens as f64));
                }
            }
        }
    }

    /// The records noted in this call.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn fresh(self) -> Vec<f64> {
        self.fresh.into_inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::serde::tape_of as encode;
    use crate::json::tape::{compact_root, OwnedTape};
    use crate::options;
    use crate::tokens::Estimator;
    use serde_json::{json, Value};

    /// `history` with the messages at `stubbed` written as stubs (as the JS layer
    /// does), each in place of a null written there first.
    fn with_stubs(history: &Value, stubbed: &[usize]) -> OwnedTape {
        let mut blanked = history.clone();
        for i in stubbed {
            blanked[*i] = Value::Null;
        }
        let mut tape = encode(&blanked);
        // The array's items start after its three words; a null is one word.
        let mut at = 3;
        for i in 0..blanked.as_array().unwrap().len() {
            if stubbed.contains(&i) {
                tape.words[at] = 8;
            }
            let item = encode(&blanked[i]);
            at += item.words.len();
        }
        tape
    }

    /// The `known` layout for the records `fresh` noted, for the messages at `stubbed`.
    fn known_for(fresh: &[f64], count: usize, stubbed: &[usize]) -> Vec<f64> {
        let mut records = vec![None; count];
        let mut at = 0;
        while at < fresh.len() {
            let (i, len) = (fresh[at] as usize, fresh[at + 1] as usize);
            records[i] = Some(fresh[at + 2..at + 2 + len].to_vec());
            at += 2 + len;
        }
        let mut known = Vec::new();
        for (i, r) in records.into_iter().enumerate() {
            match r.filter(|_| stubbed.contains(&i)) {
                Some(r) => {
                    known.push(r.len() as f64);
                    known.extend(r);
                }
                None => known.push(0.0),
            }
        }
        known
    }

    /// The meter of `tape` with the built-in estimator.
    fn meter(
        tape: &OwnedTape,
        config: &options::ParsedOptions,
        pending: &str,
        memo: &Memo<'_>,
    ) -> crate::Result<crate::Meter> {
        let counter = &crate::tokens::Capped(&Estimator::default());
        Ok(
            crate::engine::Opened::read(tape.open()?.root(), config, counter, memo)?
                .meter(pending, counter),
        )
    }

    fn history() -> Value {
        json!([
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Read a.rs ".repeat(40)},
            {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}], "inputTokens": 700},
            {"role": "tool", "tool_call_id": "c1", "content": "fn main() {}".repeat(30)},
            {"role": "user", "content": "thanks"}
        ])
    }

    #[test]
    fn a_meter_over_stubs_reads_what_a_full_one_does() {
        let h = history();
        let config = options::from_json(&json!({"contextWindow": 4000})).unwrap();
        let full = encode(&h);
        let first = Memo::new(&[]).with_stubs();
        let expected = meter(&full, &config, "next", &first).unwrap();
        let fresh = first.fresh();
        let stubbed = [0, 1, 2, 3];
        let tape = with_stubs(&h, &stubbed);
        let known = known_for(&fresh, 5, &stubbed);
        let memo = Memo::new(&known).with_stubs();
        let got = meter(&tape, &config, "next", &memo).unwrap();
        assert!(!memo.missed());
        assert_eq!(got, expected);
        // Only the message written out was read and noted.
        assert_eq!(memo.fresh()[0], 4.0);
    }

    #[test]
    fn a_stub_without_a_usable_record_misses_the_call() {
        let h = history();
        let config = options::from_json(&json!({})).unwrap();
        let tape = with_stubs(&h, &[1]);
        let memo = Memo::new(&[]).with_stubs();
        let _ = meter(&tape, &config, "", &memo);
        assert!(memo.missed(), "no record at all");
        // A record made as Moltis for a history that reads as OpenAI.
        let first = Memo::new(&[]).with_stubs();
        let forced = options::from_json(&json!({"format": "moltis"})).unwrap();
        meter(&encode(&h), &forced, "", &first).unwrap();
        let known = known_for(&first.fresh(), 5, &[1]);
        let memo = Memo::new(&known).with_stubs();
        let _ = meter(&tape, &config, "", &memo);
        assert!(memo.missed(), "a record of another format");
    }

    #[test]
    fn where_no_stub_is_taken_a_stub_is_not_a_message() {
        let h = history();
        let config = options::from_json(&json!({"mode": "deterministic"})).unwrap();
        let tape = with_stubs(&h, &[1]);
        let err = compact_root(tape.open().unwrap().root(), &config, &Memo::new(&[])).unwrap_err();
        assert_eq!(err.code(), "INVALID_INPUT");
        assert!(err.message().contains("messages[1]"), "{}", err.message());
    }
}
