//! The JS side: thin wasm-bindgen exports over the core.
//!
//! Histories arrive as a value tape (see [`crate::json::tape`]) that the package's JS
//! layer writes straight from the caller's objects. Each export returns an
//! envelope, `{"ok": …}` or `{"error": {"code", "message"}}`; the JS layer turns
//! error envelopes into `Error` objects with `code`. Nothing here decides anything.

// The exports are reached through the JS glue, not through the crate.
#![allow(unreachable_pub)]

mod session;

use wasm_bindgen::prelude::*;

use crate::engine::{self, text, Opened};
use crate::error::{Error, Result};
use crate::json::tape::{Tape, TapeNode};
use crate::json::{Node, WriteJson, Writer};
use crate::memo::Memo;
use crate::options::{from_json_text, ParsedOptions};
use crate::tokens::{Capped, Estimator, Profile, TokenCounter};

/// TLSF instead of Rust's default dlmalloc: −2.8 KB gzipped, the same speed
/// (A/B in one process), pools coalesced as memory grows.
#[global_allocator]
static ALLOCATOR: rlsf::GlobalTlsf = rlsf::GlobalTlsf::new();

#[wasm_bindgen]
extern "C" {
    /// The caller's `countTokens`, wrapped by the JS layer so that it never throws
    /// and answers -1 when the caller's function failed.
    pub type CountTokens;

    #[wasm_bindgen(method, js_name = call)]
    fn count(this: &CountTokens, context: &JsValue, text: &str) -> f64;
}

/// Counts with the caller's function; falls back to the estimator where it failed
/// (the JS layer then reports the failure as an error).
struct JsCounter<'a> {
    count: &'a CountTokens,
    fallback: Estimator,
}

impl TokenCounter for JsCounter<'_> {
    fn count(&self, text: &str) -> u64 {
        let n = self.count.count(&JsValue::NULL, text);
        if n.is_finite() && n >= 0.0 {
            n.round() as u64
        } else {
            self.fallback.count(text)
        }
    }

    fn profile(&self) -> Profile {
        self.fallback.0
    }
}

/// The JSON of an export's answer: the only part that depends on its type (a
/// shim over the writer's `dyn` entry). `envelope` and `with_history` are not
/// generic: one copy serves every export (a copy per answer type cost 3.7 KB
/// gzipped).
fn to_json<T: WriteJson>(result: Result<T>) -> Result<String> {
    result.map(|v| crate::json::to_json(&v))
}

/// `{"ok": …}` or `{"error": {code, message}}`.
fn envelope(body: Result<String>) -> String {
    match body {
        Ok(json) => format!("{{\"ok\":{json}}}"),
        Err(e) => {
            let mut w = Writer::default();
            w.open();
            w.key("error");
            w.open();
            w.field("code", &e.code());
            w.field("message", &e.message());
            w.close();
            w.close();
            w.finish()
        }
    }
}

/// The records the JS layer `known` holds, and records made for it only if it
/// `keep`s them (not for `cache: false` or a caller's counter).
fn memo(known: &[f64], keep: bool) -> Memo<'_> {
    if keep {
        Memo::new(known)
    } else {
        Memo::default()
    }
}

/// What an export answers before the history is read, if anything (a check of
/// the options, a text instead of a history).
type Pre<'r> =
    dyn Fn(&ParsedOptions, TapeNode<'_>, &dyn TokenCounter) -> Option<Result<String>> + 'r;

/// What an export runs on the opened history: its answer as JSON.
type Run<'r> =
    dyn for<'v, 'a> Fn(&Opened<'v, 'a, TapeNode<'a>>, &dyn TokenCounter) -> Result<String> + 'r;

/// The history's value tape and, when the call stands on the session (messages
/// the JS layer sent as `earlier` nodes) or keeps its history there, its link
/// to it.
struct History {
    tape: session::Chunk,
    link: Option<session::Link>,
}

impl History {
    fn new(words: Vec<u32>, bytes: Vec<u8>, session: u32, prefix: u32, keep: bool) -> Self {
        History {
            tape: session::Chunk { words, bytes },
            link: (keep || prefix > 0).then_some(session::Link {
                id: session,
                prefix: prefix as usize,
            }),
        }
    }
}

/// Opens the tape and runs `pre`, then `f` on the history read (through the
/// session where the JS layer asks for it) with the options, the counter to use
/// (the caller's, or the estimator) and the records the JS layer kept from
/// earlier calls (`known`, see [`Memo`]). The envelope also carries the records
/// made in this call (`memo`), for the JS layer to keep, and the session's
/// number when it holds this history (`session`); a call a stub or the session
/// missed answers `{"retry":true}` (see [`crate::memo`], [`crate::session`]).
fn with_history(
    history: History,
    options: &str,
    count_tokens: Option<CountTokens>,
    memo: Memo<'_>,
    (pre, f): (&Pre<'_>, &Run<'_>),
) -> String {
    let (mut held, mut retry) = (None, false);
    let config = from_json_text(options);
    let body = envelope(
        config
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|c| {
                let fallback = Estimator(c.options.tokenizer);
                let counter: &dyn TokenCounter = match &count_tokens {
                    Some(count) => &JsCounter { count, fallback },
                    None => &fallback,
                };
                let counter = &Capped(counter);
                // A caller's counter may answer differently later: nothing is kept.
                match history.link.filter(|_| count_tokens.is_none()) {
                    Some(link) => {
                        match session::run(history.tape, link, c, (counter, &memo), (pre, f)) {
                            session::Ran::Answer(answer, id) => {
                                held = id;
                                answer
                            }
                            session::Ran::Retry => {
                                retry = true;
                                Ok(String::new())
                            }
                        }
                    }
                    None => {
                        let tape = &history.tape;
                        let root = Tape::open(&tape.words, &tape.bytes)?.root();
                        pre(c, root, counter)
                            .unwrap_or_else(|| f(&Opened::read(root, c, counter, &memo)?, counter))
                    }
                }
            })
            .map_err(|e| noting_unknown(e, &config)),
    );
    if retry || memo.missed() {
        return "{\"retry\":true}".into();
    }
    let fresh = memo.fresh();
    let mut out = body;
    if fresh.is_empty() && held.is_none() {
        return out;
    }
    // `{"ok":…}` becomes `{"ok":…,"memo":[…],"session":n}` (counts are integers: no float text).
    out.pop();
    out.push_str(",\"memo\":[");
    for (i, n) in fresh.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(itoa::Buffer::new().format(*n as u64));
    }
    out.push(']');
    if let Some(id) = held {
        out.push_str(",\"session\":");
        out.push_str(itoa::Buffer::new().format(id));
    }
    out.push('}');
    out
}

/// `e` with the options `config` left aside as unknown named: a misspelt option
/// is left aside with a warning, which an error would not show.
fn noting_unknown(e: Error, config: &Result<ParsedOptions>) -> Error {
    let mut note = String::new();
    for w in config.iter().flat_map(|c| &c.warnings) {
        if w.code == "UNKNOWN_OPTION" {
            note.push_str(if note.is_empty() { "note: " } else { "; " });
            note.push_str(&w.message);
        }
    }
    if note.is_empty() {
        e
    } else {
        e.noting(&note)
    }
}

/// Compacts a history given as a value tape. With `replies` empty, an offline
/// compaction: `{plan, notice, summary?, warnings}` (kept messages as input
/// indices). Otherwise one step of a compaction in any mode, given the
/// summarizer's replies so far (a JSON array): `{ask: request}` or `{done:
/// {plan, …}}`; the JS layer awaits the summarizer between steps, so the await
/// never holds wasm state. `known`, `keep`: the records (see [`Memo`]);
/// `session`, `prefix`, `hold`: the session (see [`History`]).
#[wasm_bindgen(js_name = compactStepTape)]
#[allow(clippy::too_many_arguments)]
pub fn compact_step_tape(
    words: Vec<u32>,
    bytes: Vec<u8>,
    options: &str,
    replies: &str,
    count_tokens: Option<CountTokens>,
    known: &[f64],
    keep: bool,
    session: u32,
    prefix: u32,
    hold: bool,
) -> String {
    let offline = replies.is_empty();
    let replies = match offline {
        true => Ok(Vec::new()),
        false => crate::summarizer::replies_from_json(replies),
    };
    with_history(
        History::new(words, bytes, session, prefix, hold),
        options,
        count_tokens,
        memo(known, keep),
        (
            &|c, _, _| match &replies {
                Err(e) => Some(Err(e.clone())),
                Ok(_) if offline => engine::offline_only(c).err().map(Err),
                Ok(_) => None,
            },
            &|opened, counter| match &replies {
                Ok(_) if offline => to_json(opened.compact(counter)),
                Ok(replies) => to_json(opened.step(counter, replies)),
                Err(e) => Err(e.clone()),
            },
        ),
    )
}

/// Checks the seam of a compacted history and the messages appended since
/// (`from` = where the appended ones start).
#[wasm_bindgen(js_name = checkSeamTape)]
pub fn check_seam_tape(words: &[u32], bytes: &[u8], options: &str, from: u32) -> String {
    envelope(from_json_text(options).and_then(|c| {
        engine::check_seam(Tape::open(words, bytes)?.root(), &c, from as usize)?;
        Ok("null".into())
    }))
}

/// Estimated tokens of a text or a history, given as a value tape.
#[wasm_bindgen(js_name = estimateTokensTape)]
#[allow(clippy::too_many_arguments)]
pub fn estimate_tokens_tape(
    words: Vec<u32>,
    bytes: Vec<u8>,
    options: &str,
    count_tokens: Option<CountTokens>,
    known: &[f64],
    keep: bool,
    session: u32,
    prefix: u32,
    hold: bool,
) -> String {
    with_history(
        History::new(words, bytes, session, prefix, hold),
        options,
        count_tokens,
        memo(known, keep).with_stubs(),
        (
            // a text is counted as it is
            &|_, root, counter| root.as_str().map(|text| to_json(Ok(counter.count(text)))),
            &|opened, _| to_json(Ok(opened.tokens())),
        ),
    )
}

/// The context meter for a history (value tape) plus pending text. With
/// `then_compact`, one read decides and compacts: `{meter, done?}`, the
/// compaction (an offline mode's plan) only when the meter reaches the
/// threshold.
#[wasm_bindgen(js_name = measureTape)]
#[allow(clippy::too_many_arguments)]
pub fn measure_tape(
    words: Vec<u32>,
    bytes: Vec<u8>,
    options: &str,
    pending: &str,
    then_compact: bool,
    count_tokens: Option<CountTokens>,
    known: &[f64],
    keep: bool,
    session: u32,
    prefix: u32,
    hold: bool,
) -> String {
    // (a compaction plans on whole views: no stubs then)
    let memo = match then_compact {
        true => memo(known, keep),
        false => memo(known, keep).with_stubs(),
    };
    with_history(
        History::new(words, bytes, session, prefix, hold),
        options,
        count_tokens,
        memo,
        (
            &|c, _, _| match then_compact {
                true => engine::offline_only(c).err().map(Err),
                false => None,
            },
            &|opened, counter| {
                let meter = opened.meter(pending, counter);
                if !then_compact {
                    return to_json(Ok(meter));
                }
                let done = match meter.should_compact {
                    true => Some(opened.compact(counter)?),
                    false => None,
                };
                let mut w = Writer::default();
                w.open();
                w.field("meter", &meter);
                w.field_some("done", done.as_ref());
                w.close();
                Ok(w.finish())
            },
        ),
    )
}

/// Seeds the hash of the name tables (see `crate::names`) with 64 random bits
/// the JS layer draws once.
#[wasm_bindgen(js_name = seedTables)]
pub fn seed_tables(low: u32, high: u32) {
    crate::names::set_seed(u64::from(high) << 32 | u64::from(low));
}

/// Ends the session (see [`session`]): the JS layer calls this before a call
/// that starts a new one.
#[wasm_bindgen(js_name = endSession)]
pub fn end_session() {
    session::end();
}

/// Effective options and warnings from a config document's entries (the JSON
/// the package's TOML reader writes, see `crate::options::from_entries_json`).
#[wasm_bindgen(js_name = parseConfigEntries)]
pub fn parse_config_entries(entries: &str) -> String {
    envelope(
        crate::json::parse::parse_str(entries)
            .map_err(|e| Error::config(format!("config entries are not JSON: {e}")))
            .and_then(|p| crate::options::from_entries_json(p.tape().root()))
            .and_then(|o| to_json(Ok(o))),
    )
}

/// Meters a history or request given as JSON bytes and, as `answer` says,
/// compacts it: 0 only when the meter reaches the threshold, 1 whatever it
/// says (both answer the input with its messages compacted), 2 the whole
/// result as JSON (`compactJsonString`), 3 not at all (the meter only). Answers the envelope's length (4
/// bytes, little-endian), the envelope (`{ok: {meter, compaction?}}` or
/// `{error}`), then the text written, if any: kept messages and every other
/// field as the input's bytes.
#[wasm_bindgen(js_name = compactText)]
pub fn compact_text(
    body: Vec<u8>,
    options: &str,
    answer: u8,
    count_tokens: Option<CountTokens>,
) -> Vec<u8> {
    let answer = match answer {
        0 => text::Answer::BodyIfOver,
        1 => text::Answer::Body,
        2 => text::Answer::Result,
        _ => text::Answer::Meter,
    };
    let config = from_json_text(options);
    let body = config.as_ref().map_err(Clone::clone).and_then(|c| {
        let fallback = Estimator(c.options.tokenizer);
        let js = count_tokens
            .as_ref()
            .map(|count| JsCounter { count, fallback });
        let parsed = text::read(body, "input")?;
        let outcome = text::run(&parsed, c, js.as_ref().map(|j| j as _), answer)?;
        // (stand-ins of lone surrogates quoted in a summary or notice go back as escapes)
        let mut w = Writer::restoring(parsed.hidden());
        outcome.write_json(&mut w);
        Ok((w.finish(), outcome.text))
    });
    let (json, text) = match body {
        Ok((json, text)) => (Ok(json), text),
        Err(e) => (Err(noting_unknown(e, &config)), None),
    };
    let json = envelope(json);
    let text = text.unwrap_or_default();
    let mut out = Vec::with_capacity(4 + json.len() + text.len());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(json.as_bytes());
    out.extend_from_slice(text.as_bytes());
    out
}

/// Checks a history against its format's provider rules (`options`: the JSON of
/// `{format?, provider?, strictAlternation?}`): `{format, violations}`.
#[wasm_bindgen(js_name = validateTape)]
pub fn validate_tape(words: &[u32], bytes: &[u8], options: &str) -> String {
    envelope(
        crate::json::parse::parse_str(options)
            .map_err(|e| Error::config(format!("validate options are not valid JSON: {e}")))
            .and_then(|p| crate::validate::ValidateOptions::from_node(p.tape().root()))
            .and_then(|o| crate::validate::check(Tape::open(words, bytes)?.root(), &o))
            .and_then(|v| to_json(Ok(v))),
    )
}
