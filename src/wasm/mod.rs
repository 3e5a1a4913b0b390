//! The JS side: thin wasm-bindgen exports over the core.
//!
//! Histories arrive as a value tape (see [`crate::tape`]) that the package's JS
//! layer writes straight from the caller's objects.
//! Each export returns an envelope, `{"ok": …}` or `{"error": {"code", "message"}}`;
//! the JS layer turns error envelopes into `Error` objects with `code`.
//! Nothing here decides anything.

use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::tape::Tape;
use crate::tokens::Estimator;
use crate::{config_from_json_text, Error, ErrorKind, Result};

fn envelope<T: Serialize>(result: Result<T>) -> String {
    let body = result.and_then(|v| {
        serde_json::to_string(&v).map_err(|e| Error::new(ErrorKind::InvalidInput, e.to_string()))
    });
    match body {
        Ok(json) => format!("{{\"ok\":{json}}}"),
        Err(e) => {
            serde_json::json!({"error": {"code": e.code(), "message": e.message()}}).to_string()
        }
    }
}

/// Compacts a history given as a value tape; kept messages come back as input
/// indices (`{plan, notice, summary?, warnings}`).
#[wasm_bindgen(js_name = compactTape)]
pub fn compact_tape(words: &[u32], numbers: &[f64], bytes: &[u8], options: &str) -> String {
    envelope(config_from_json_text(options).and_then(|c| {
        let tape = Tape::open(words, numbers, bytes)?;
        crate::compact_planned(tape.root(), &c, &Estimator(c.options.tokenizer))
    }))
}

/// Estimated tokens of a text or a history, given as a value tape.
#[wasm_bindgen(js_name = estimateTokensTape)]
pub fn estimate_tokens_tape(words: &[u32], numbers: &[f64], bytes: &[u8], options: &str) -> String {
    envelope(
        config_from_json_text(options)
            .and_then(|c| crate::estimate_tokens(Tape::open(words, numbers, bytes)?.root(), &c)),
    )
}

/// The auto-compact trigger for a history (value tape) plus pending text.
#[wasm_bindgen(js_name = shouldCompactTape)]
pub fn should_compact_tape(
    words: &[u32],
    numbers: &[f64],
    bytes: &[u8],
    options: &str,
    pending: &str,
) -> String {
    envelope(config_from_json_text(options).and_then(|c| {
        crate::should_compact(Tape::open(words, numbers, bytes)?.root(), &c, pending)
    }))
}

/// Effective options and warnings from a TOML document.
#[wasm_bindgen(js_name = parseConfigToml)]
pub fn parse_config_toml(toml: &str) -> String {
    envelope(crate::options::from_toml(toml))
}
