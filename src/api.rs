//! The Rust API: histories and requests as `serde_json` values, in and out.
//! Each call writes its input as a value tape (what every adapter reads) and
//! runs the [`crate::engine`]; kept messages come back as clones of the
//! caller's values.

use std::borrow::Cow;

use serde_json::Value;

use crate::engine::{self, IndexedCompaction, Opened, Step};
use crate::error::Result;
use crate::formats::{self, OutputMessage};
use crate::json::serde::{tape_of, to_serde};
use crate::json::tape::TapeNode;
use crate::json::{WriteJson, Writer};
use crate::memo::Memo;
use crate::meter::Meter;
use crate::notice::Notice;
use crate::options::{ParsedOptions, Warning};
use crate::request;
use crate::summarizer::{Reply, SummaryRequest};
use crate::tokens::{Capped, Estimator, TokenCounter};
use crate::validate::{ValidateOptions, Validation};

/// The result of a compaction (SPEC §7).
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    /// The compacted messages, in the input's format.
    pub messages: Vec<Value>,
    /// The input request object with its messages replaced (when the input was one).
    pub request: Option<Value>,
    /// What happened.
    pub notice: Notice,
    /// The summary text, for modes that write one.
    pub summary: Option<String>,
    /// Clamped options, unknown keys and the like.
    pub warnings: Vec<Warning>,
}

impl WriteJson for Value {
    fn write_json(&self, w: &mut Writer) {
        w.raw(&self.to_string());
    }
}

impl WriteJson for Compaction {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        // (the order of the package's result, as `compact_json` writes it)
        w.field("messages", &self.messages);
        w.field("notice", &self.notice);
        w.field("warnings", &self.warnings);
        w.field_some("summary", self.summary.as_ref());
        w.field_some("request", self.request.as_ref());
        w.close();
    }
}

/// The next step of an LLM-mode compaction driven by hand (see [`compact_step`]).
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // one a step, never stored in bulk
pub enum Next {
    /// Call the summarizer with this request, then step again with its reply added.
    Summarize(SummaryRequest<Value>),
    /// The compaction is done.
    Done(Compaction),
}

/// The messages of `input` (an array, or a request object's message array).
fn source_messages(input: &Value) -> &[Value] {
    match input {
        Value::Array(a) => a.as_slice(),
        other => formats::MESSAGE_KEYS
            .iter()
            .find_map(|k| other.get(k))
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice),
    }
}

/// `output` as values: kept messages cloned from `input`.
fn messages_of(input: &Value, output: Vec<OutputMessage>) -> Vec<Value> {
    let source = source_messages(input);
    output
        .into_iter()
        .map(|o| match o {
            OutputMessage::Kept(i) => source.get(i).cloned().unwrap_or_default(),
            OutputMessage::New(v) => to_serde(&v),
        })
        .collect()
}

/// Turns a plan into messages (and the request) by copying kept input messages.
fn assemble(input: &Value, planned: IndexedCompaction) -> Compaction {
    let messages = messages_of(input, planned.output);
    let request = input.as_object().map(|obj| {
        let mut r = obj.clone();
        let key = formats::MESSAGE_KEYS
            .into_iter()
            .find(|k| obj.contains_key(*k))
            .unwrap_or("messages");
        r.insert(key.into(), Value::Array(messages.clone()));
        Value::Object(r)
    });
    Compaction {
        messages,
        request,
        notice: planned.notice,
        summary: planned.summary,
        warnings: planned.warnings,
    }
}

/// Runs `then` on `input` (written as a tape and read), counting with
/// `counter` (capped) or, without one, the built-in estimator of the profile
/// the options name (without a `tokenizer` given, a request's well-known model
/// picks it).
fn with_opened<T>(
    input: &Value,
    config: &ParsedOptions,
    counter: Option<&dyn TokenCounter>,
    then: impl for<'v, 'a> FnOnce(&Opened<'v, 'a, TapeNode<'a>>, &dyn TokenCounter) -> Result<T>,
) -> Result<T> {
    let tape = tape_of(input);
    let root = tape.open()?.root();
    let config = match counter {
        Some(_) => Cow::Borrowed(config),
        None => request::for_input(config, root),
    };
    let estimator = Estimator(config.options.tokenizer);
    let counter = &Capped(counter.unwrap_or(&estimator));
    then(
        &Opened::read(root, &config, counter, &Memo::default())?,
        counter,
    )
}

/// Compacts `input` (a message array or a request object) with the offline modes,
/// using the built-in token estimator (without a `tokenizer` given, a request's
/// well-known model picks its profile).
pub fn compact(input: &Value, config: &ParsedOptions) -> Result<Compaction> {
    with_opened(input, config, None, |o, counter| o.compact(counter))
        .map(|planned| assemble(input, planned))
}

/// Like [`compact`], counting tokens with `counter` (whose profile sets the
/// framing: a request's model is not consulted).
pub fn compact_with(
    input: &Value,
    config: &ParsedOptions,
    counter: &dyn TokenCounter,
) -> Result<Compaction> {
    engine::offline_only(config)?;
    with_opened(input, config, Some(counter), |o, counter| {
        o.compact(counter)
    })
    .map(|planned| assemble(input, planned))
}

/// One step of a compaction in any mode (the sans-IO core of the LLM modes):
/// given the summarizer's `replies` so far, either the request for the next
/// summary or the finished compaction. Offline modes are done at once.
/// [`crate::compact_with_summarizer`] drives this loop.
pub fn compact_step(
    input: &Value,
    config: &ParsedOptions,
    counter: &dyn TokenCounter,
    replies: &[Reply],
) -> Result<Next> {
    Ok(
        match with_opened(input, config, Some(counter), |o, c| o.step(c, replies))? {
            Step::Done(planned) => Next::Done(assemble(input, planned)),
            Step::Ask(request) => Next::Summarize(SummaryRequest {
                messages: messages_of(input, request.messages),
                mode: request.mode,
                system: request.system,
                instruction: request.instruction,
                previous_summary: request.previous_summary,
                model: request.model,
                max_tokens: request.max_tokens,
                estimated_input_tokens: request.estimated_input_tokens,
                attempt: request.attempt,
            }),
        },
    )
}

/// Estimated tokens of a text (a JSON string) or of a whole history (array or
/// request object), framing included.
pub fn estimate_tokens(input: &Value, config: &ParsedOptions) -> Result<u64> {
    estimate(input, config, None)
}

/// Like [`estimate_tokens`], counting with `counter`.
pub fn estimate_tokens_with(
    input: &Value,
    config: &ParsedOptions,
    counter: &dyn TokenCounter,
) -> Result<u64> {
    estimate(input, config, Some(counter))
}

fn estimate(
    input: &Value,
    config: &ParsedOptions,
    counter: Option<&dyn TokenCounter>,
) -> Result<u64> {
    if let Some(text) = input.as_str() {
        let estimator = Estimator(config.options.tokenizer);
        return Ok(Capped(counter.unwrap_or(&estimator)).count(text));
    }
    with_opened(input, config, counter, |o, _| Ok(o.tokens()))
}

/// The context meter for `input` (array or request object) plus the `pending`
/// new text: tokens per message and in all, the window, the threshold, and
/// whether to compact before sending (SPEC §3).
pub fn measure(input: &Value, config: &ParsedOptions, pending: &str) -> Result<Meter> {
    with_opened(input, config, None, |o, counter| {
        Ok(o.meter(pending, counter))
    })
}

/// Like [`measure`], counting with `counter`.
pub fn measure_with(
    input: &Value,
    config: &ParsedOptions,
    pending: &str,
    counter: &dyn TokenCounter,
) -> Result<Meter> {
    with_opened(input, config, Some(counter), |o, c| Ok(o.meter(pending, c)))
}

/// Checks `input` (a message array or a request object) against the rules of
/// its format and of `options.provider`.
pub fn validate(input: &Value, options: &ValidateOptions) -> Result<Validation> {
    let tape = tape_of(input);
    crate::validate::check(tape.open()?.root(), options)
}

/// The JSON text of the public results, as the package's JS API returns them.
macro_rules! json_text {
    ($($t:ty),*) => {$(
        impl $t {
            /// The JSON text (camelCase keys), as the npm package returns it.
            pub fn to_json(&self) -> String {
                crate::json::to_json(self)
            }
        }
    )*};
}

json_text!(
    Compaction,
    Notice,
    Meter,
    Validation,
    ParsedOptions,
    crate::Options
);

impl SummaryRequest<Value> {
    /// The JSON text (camelCase keys), as the package hands it to a summarizer.
    pub fn to_json(&self) -> String {
        crate::json::to_json(self)
    }
}
