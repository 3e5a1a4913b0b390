//! The JS side: thin wasm-bindgen exports over the core.
//!
//! Histories arrive as a value tape (see [`crate::tape`]) that the package's JS
//! layer writes straight from the caller's objects. Each export returns an
//! envelope, `{"ok": …}` or `{"error": {"code", "message"}}`; the JS layer turns
//! error envelopes into `Error` objects with `code`. Nothing here decides anything.

// The exports are reached through the JS glue, not through the crate.
#![allow(unreachable_pub)]

use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::memo::Memo;
use crate::options::from_json_text;
use crate::tape::{Tape, TapeNode};
use crate::tokens::{Estimator, Profile, TokenCounter};
use crate::{Error, ErrorKind, ParsedOptions, Result};

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

/// The JSON of an export's answer (the only part that depends on its type).
fn to_json<T: Serialize>(result: Result<T>) -> Result<String> {
    result.and_then(|v| {
        serde_json::to_string(&v).map_err(|e| Error::new(ErrorKind::InvalidInput, e.to_string()))
    })
}

/// `{"ok": …}` or `{"error": {code, message}}`. Not generic, nor is
/// `with_history`: one copy serves every export (a copy per answer type cost
/// 3.7 KB gzipped).
fn envelope(body: Result<String>) -> String {
    match body {
        Ok(json) => format!("{{\"ok\":{json}}}"),
        Err(e) => {
            serde_json::json!({"error": {"code": e.code(), "message": e.message()}}).to_string()
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

/// What an export runs on the opened history: its answer as JSON.
type Run<'r> =
    dyn Fn(TapeNode<'_>, &ParsedOptions, &dyn TokenCounter, &Memo<'_>) -> Result<String> + 'r;

/// Opens the tape and runs `f` on its root with the options, the counter to use
/// (the caller's, or the estimator) and the records the JS layer kept from
/// earlier calls (`known`, see [`Memo`]). The envelope also carries the records
/// made in this call (`memo`), for the JS layer to keep; a call a stub missed
/// answers `{"retry":true}` (see [`crate::memo`]).
fn with_history(
    (words, bytes): (&[u32], &[u8]),
    options: &str,
    count_tokens: Option<CountTokens>,
    memo: Memo<'_>,
    f: &Run<'_>,
) -> String {
    let body = envelope(from_json_text(options).and_then(|c| {
        let root = Tape::open(words, bytes)?.root();
        let fallback = Estimator(c.options.tokenizer);
        match &count_tokens {
            Some(count) => f(root, &c, &JsCounter { count, fallback }, &memo),
            None => f(root, &c, &fallback, &memo),
        }
    }));
    if memo.missed() {
        return "{\"retry\":true}".into();
    }
    let fresh = memo.fresh();
    if fresh.is_empty() {
        return body;
    }
    // `{"ok":…}` becomes `{"ok":…,"memo":[…]}` (counts are integers: no float text).
    let mut out = body;
    out.pop();
    out.push_str(",\"memo\":[");
    for (i, n) in fresh.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(itoa::Buffer::new().format(*n as u64));
    }
    out.push_str("]}");
    out
}

/// Compacts a history given as a value tape; kept messages come back as input
/// indices (`{plan, notice, summary?, warnings}`).
#[wasm_bindgen(js_name = compactTape)]
pub fn compact_tape(
    words: &[u32],
    bytes: &[u8],
    options: &str,
    count_tokens: Option<CountTokens>,
    known: &[f64],
    keep: bool,
) -> String {
    with_history(
        (words, bytes),
        options,
        count_tokens,
        memo(known, keep),
        &|root, c, counter, memo| to_json(crate::compact_planned(root, c, counter, memo)),
    )
}

/// One step of a compaction in any mode, given the summarizer's replies so far
/// (a JSON array): `{ask: request}` (kept messages as input indices) or
/// `{done: {plan, notice, summary?, warnings}}`. The JS layer awaits the
/// summarizer between steps, so the await never holds wasm state.
#[wasm_bindgen(js_name = compactStepTape)]
pub fn compact_step_tape(
    words: &[u32],
    bytes: &[u8],
    options: &str,
    replies: &str,
    count_tokens: Option<CountTokens>,
    known: &[f64],
    keep: bool,
) -> String {
    with_history(
        (words, bytes),
        options,
        count_tokens,
        memo(known, keep),
        &|root, c, counter, memo| {
            let replies = crate::summarizer::replies_from_json(replies)?;
            to_json(crate::step(root, c, counter, &replies, memo))
        },
    )
}

/// Checks the seam of a compacted history and the messages appended since
/// (`from` = where the appended ones start).
#[wasm_bindgen(js_name = checkSeamTape)]
pub fn check_seam_tape(words: &[u32], bytes: &[u8], options: &str, from: u32) -> String {
    with_history(
        (words, bytes),
        options,
        None,
        Memo::default(),
        &|root, c, _, _| to_json(crate::check_seam(root, c, from as usize)),
    )
}

/// Estimated tokens of a text or a history, given as a value tape.
#[wasm_bindgen(js_name = estimateTokensTape)]
pub fn estimate_tokens_tape(
    words: &[u32],
    bytes: &[u8],
    options: &str,
    count_tokens: Option<CountTokens>,
    known: &[f64],
    keep: bool,
) -> String {
    with_history(
        (words, bytes),
        options,
        count_tokens,
        memo(known, keep).with_stubs(),
        &|root, c, counter, memo| to_json(crate::estimate(root, c, counter, memo)),
    )
}

/// The context meter for a history (value tape) plus pending text.
#[wasm_bindgen(js_name = measureTape)]
pub fn measure_tape(
    words: &[u32],
    bytes: &[u8],
    options: &str,
    pending: &str,
    count_tokens: Option<CountTokens>,
    known: &[f64],
    keep: bool,
) -> String {
    with_history(
        (words, bytes),
        options,
        count_tokens,
        memo(known, keep).with_stubs(),
        &|root, c, counter, memo| to_json(crate::meter(root, c, pending, counter, memo)),
    )
}

/// Effective options and warnings from a TOML document.
#[wasm_bindgen(js_name = parseConfigToml)]
pub fn parse_config_toml(toml: &str) -> String {
    envelope(to_json(crate::options::from_toml(toml)))
}

/// Checks a history against its format's provider rules (`options`: the JSON of
/// `{format?, provider?, strictAlternation?}`): `{format, violations}`.
#[wasm_bindgen(js_name = validateTape)]
pub fn validate_tape(words: &[u32], bytes: &[u8], options: &str) -> String {
    envelope(to_json(
        serde_json::from_str(options)
            .map_err(|e| Error::config(format!("validate options are not valid JSON: {e}")))
            .and_then(|o| crate::ValidateOptions::from_json(&o))
            .and_then(|o| crate::validate::check(Tape::open(words, bytes)?.root(), &o)),
    ))
}
