//! The JS side: thin wasm-bindgen exports over the core's JSON-text API.
//!
//! Each export takes JSON text and returns an envelope, `{"ok": …}` or
//! `{"error": {"code", "message"}}`; the package's JS layer turns error envelopes
//! into `Error` objects with `code`. Nothing here decides anything.

use serde::Serialize;
use wasm_bindgen::prelude::*;

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

fn parse(text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::InvalidInput,
            format!("history is not valid JSON: {e}"),
        )
    })
}

/// Compacts a history (JSON text) with the offline modes.
#[wasm_bindgen(js_name = compactJson)]
pub fn compact_json(input: &str, options: &str) -> String {
    envelope(config_from_json_text(options).and_then(|c| {
        let (history, warning) = crate::parse_history(input)?;
        let mut result = crate::compact(&history, &c)?;
        result.warnings.extend(warning);
        Ok(result)
    }))
}

/// Estimated tokens of a text (JSON string) or a history.
#[wasm_bindgen(js_name = estimateTokensJson)]
pub fn estimate_tokens_json(input: &str, options: &str) -> String {
    envelope(
        config_from_json_text(options).and_then(|c| crate::estimate_tokens(&parse(input)?, &c)),
    )
}

/// The auto-compact trigger for a history plus pending text.
#[wasm_bindgen(js_name = shouldCompactJson)]
pub fn should_compact_json(input: &str, options: &str, pending: &str) -> String {
    envelope(
        config_from_json_text(options)
            .and_then(|c| crate::should_compact(&parse(input)?, &c, pending)),
    )
}

/// Effective options and warnings from a TOML document.
#[wasm_bindgen(js_name = parseConfigToml)]
pub fn parse_config_toml(toml: &str) -> String {
    envelope(crate::options::from_toml(toml))
}
