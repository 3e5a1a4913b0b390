//! Compacts LLM chat histories so an agent can keep working when a conversation
//! outgrows the model's context window.
//!
//! ```
//! use chat_compaction::{compact, options};
//! let history = serde_json::json!([
//!     {"role": "system", "content": "You are helpful."},
//!     {"role": "user", "content": "Fix the bug in src/main.rs"},
//!     {"role": "assistant", "content": "Done. Next: add a test."},
//! ]);
//! let config = options::from_json(&serde_json::json!({"mode": "deterministic"}))?;
//! let result = compact(&history, &config)?;
//! assert_eq!(result.messages.len(), 2); // system prompt + one summary
//! assert!(result.notice.text.starts_with("🧹 Conversation compacted"));
//! # Ok::<(), chat_compaction::Error>(())
//! ```
//!
//! The input is untrusted: every malformed message gets an [`Error`] with a
//! stable code and a message naming the location; nothing derived from input is
//! unwrapped, so the wasm build never panics on bad data. The input is never
//! mutated and the same input and options always give byte-identical output.
//!
//! Pipeline: every input becomes a value tape (from JSON text, a `serde_json`
//! value, or the JS layer's objects), [`formats`] reads its messages once into
//! light [`message`] views, a mode in [`modes`] turns the views into a
//! [`plan`], and the format adapter renders the plan, copying kept messages
//! verbatim ([`engine`]).
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

// Foundations.
mod error;
mod json;
mod lanes;
mod names;
mod text;
// Counting and reading.
mod formats;
mod message;
mod request;
pub mod tokens;
// Planning.
mod modes;
mod plan;
mod summary;
// The engine and what it answers.
mod engine;
mod meter;
mod notice;
pub mod options;
pub mod summarizer;
mod validate;
// What the JS layer keeps between calls.
mod memo;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod session;

#[cfg(target_arch = "wasm32")]
mod wasm;

pub use error::{Error, ErrorKind, Result};
pub use formats::Format;
pub use meter::Meter;
pub use notice::{Fallback, Notice};
pub use options::{Mode, Options, ParsedOptions, Warning};
pub use request::WindowSource;
pub use summarizer::{Reply, SummaryRequest, Usage};
pub use validate::{ValidateOptions, Validation, Violation};

#[cfg(feature = "serde_json")]
mod api;
#[cfg(feature = "serde_json")]
pub use api::{
    compact, compact_step, compact_with, estimate_tokens, estimate_tokens_with, measure,
    measure_with, validate, Compaction, Next,
};
#[cfg(feature = "serde_json")]
pub use summarizer::{compact_with_summarizer, Summarizer};

/// What [`compact_body`] answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    /// The compacted JSON text: the input with its messages compacted, every
    /// kept message and every other field as the input's bytes. `None` when
    /// nothing was compacted (the input stands as it is).
    pub text: Option<String>,
    /// The input's meter (what decided).
    pub meter: Meter,
    /// What the compaction did, when there was one.
    pub notice: Option<Notice>,
    /// The summary text, for modes that write one.
    pub summary: Option<String>,
    /// Clamped options and the like (the meter's, or the compaction's).
    pub warnings: Vec<Warning>,
}

/// Meters a request (or a history) given as JSON bytes and, when it reaches
/// the auto-compact threshold (or whatever it says, with `force`), compacts
/// its messages with an offline mode: in one pass over the bytes, without
/// building values of them. Bad bytes are `INVALID_INPUT` naming the byte
/// offset, line and column.
pub fn compact_body(input: &[u8], config: &ParsedOptions, force: bool) -> Result<Body> {
    use engine::text::{self, Answer};
    let parsed = text::read(input.to_vec(), "input")?;
    let answer = if force {
        Answer::Body
    } else {
        Answer::BodyIfOver
    };
    let outcome = text::run(&parsed, config, None, answer)?;
    let (notice, summary, warnings) = match outcome.compaction {
        Some(c) => (Some(c.notice), c.summary, c.warnings),
        None => (None, None, outcome.meter.warnings.clone()),
    };
    Ok(Body {
        text: outcome.text,
        meter: outcome.meter,
        notice,
        summary,
        warnings,
    })
}

/// [`compact`] over JSON text: a history (message array or request object) and
/// options in, the result as JSON out (`{messages, notice, warnings, summary?,
/// request?}`). Kept messages, and a request's other fields, are copied as the
/// input's bytes.
pub fn compact_json(input: &str, options: &str) -> Result<String> {
    let config = options::from_json_text(options)?;
    let parsed = engine::text::read_str(input, "history")?;
    let outcome = engine::text::run(&parsed, &config, None, engine::text::Answer::Result)?;
    Ok(outcome.text.unwrap_or_default())
}
