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
//! let config = options::from_json(&serde_json::json!({"mode": "deterministic"})).unwrap();
//! let result = compact(&history, &config).unwrap();
//! assert_eq!(result.messages.len(), 2); // system prompt + one summary
//! assert!(result.notice.text.starts_with("🧹 Conversation compacted"));
//! ```
//!
//! The input is untrusted: every malformed message gets an [`Error`] with a
//! stable code and a message naming the location; nothing derived from input is
//! unwrapped, so the wasm build never panics on bad data. The input is never
//! mutated and the same input and options always give byte-identical output.
//!
//! Pipeline: [`formats`] reads the messages once into light [`message`] views,
//! a mode in [`modes`] turns the views into a [`plan`], and the format adapter
//! renders the plan, copying kept messages verbatim.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![warn(unreachable_pub)]

mod error;
mod formats;
mod json;
mod memo;
mod message;
mod meter;
mod modes;
mod notice;
pub mod options;
mod plan;
mod request;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod session;
pub mod summarizer;
mod summary;
mod tape;
mod text;
pub mod tokens;
mod validate;

#[cfg(target_arch = "wasm32")]
mod wasm;

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

pub use error::{Error, ErrorKind, Result};
pub use options::{Mode, Options, ParsedOptions, Warning};

pub use formats::{Format, OutputMessage};
pub use meter::Meter;
pub use notice::{Fallback, Notice};
pub use request::WindowSource;
pub use validate::{validate, ValidateOptions, Validation, Violation};

use formats::{Document, Stamp};
use json::Node;
use memo::Memo;
use message::Message;
use request::Spend;
pub use summarizer::{compact_with_summarizer, Reply, Summarizer, SummaryRequest, Usage};
use summary::{Done, Turn};
use tokens::{Capped, Estimator, TokenCounter};

/// The result of a compaction (SPEC §7).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compaction {
    /// The compacted messages, in the input's format.
    pub messages: Vec<Value>,
    /// The input request object with its messages replaced (when the input was one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
    /// What happened.
    pub notice: Notice,
    /// The summary text, for modes that write one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Clamped options, unknown keys and the like.
    pub warnings: Vec<Warning>,
}

/// A random seed from the standard library's per-process hash keys (the JS layer
/// passes `random_seed` from `crypto.getRandomValues` instead: wasm has no entropy).
fn entropy() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

/// Reads `doc`'s messages and estimates each one's tokens (or takes the
/// estimate `memo` holds from an earlier call).
fn views<'a, N: Node<'a>>(
    doc: &Document<'a, N>,
    counter: &dyn TokenCounter,
    memo: &Memo<'_>,
) -> Result<Vec<Message<'a>>> {
    let mut views = doc.read_known(memo)?;
    memo.estimate(doc, &mut views, 0, counter);
    uncount_behind_boundary(&mut views);
    Ok(views)
}

/// Behind a provider's compaction the provider reads nothing: those messages
/// stay in the caller's history but cost no tokens. Whether there is one.
pub(crate) fn uncount_behind_boundary(views: &mut [Message<'_>]) -> bool {
    let boundary = views.iter().rposition(|m| m.boundary);
    if let Some(b) = boundary {
        views[..b].iter_mut().for_each(|v| v.tokens = 0);
    }
    boundary.is_some()
}

/// A history read for planning: its document, its views with their estimates
/// (its own, or the session's: [`session`]), what the request spends besides
/// them, and the options in effect for it.
pub(crate) struct Opened<'v, 'a, N: Node<'a>> {
    doc: Document<'a, N>,
    views: Cow<'v, [Message<'a>]>,
    spend: Spend,
    config: ParsedOptions,
    window: WindowSource,
}

impl<'v, 'a, N: Node<'a>> Opened<'v, 'a, N> {
    /// Opens and reads `input`.
    pub(crate) fn read(
        input: N,
        config: &ParsedOptions,
        counter: &dyn TokenCounter,
        memo: &Memo<'_>,
    ) -> Result<Self> {
        let doc = formats::open_known(input, config.options.format, memo)?;
        let views = views(&doc, counter, memo)?;
        Ok(Opened::of(doc, Cow::Owned(views), config, counter))
    }

    /// The opened history of `doc` read into `views`: the request's spending
    /// and the options in effect for it.
    pub(crate) fn of(
        doc: Document<'a, N>,
        views: Cow<'v, [Message<'a>]>,
        config: &ParsedOptions,
        counter: &dyn TokenCounter,
    ) -> Self {
        let spend = Spend::read(&doc, counter);
        let (options, window) = spend.apply(config);
        let mut config = ParsedOptions {
            options,
            ..config.clone()
        };
        let o = &config.options;
        if o.reserve_output_tokens >= o.context_window {
            config.warnings.push(Warning {
                code: "NO_ROOM_FOR_INPUT",
                message: format!(
                    "the answer's room ({}) takes the whole context window ({}): nothing fits; lower max_tokens or give contextWindow",
                    text::count(o.reserve_output_tokens, "token"),
                    text::count(o.context_window, "token")
                ),
            });
        }
        Opened {
            doc,
            views,
            spend,
            config,
            window,
        }
    }

    /// The document, for the session to take its nodes back.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn into_doc(self) -> Document<'a, N> {
        self.doc
    }

    /// The whole request's tokens: messages plus what travels besides them.
    pub(crate) fn tokens(&self) -> u64 {
        self.views
            .iter()
            .map(|v| v.tokens)
            .fold(self.spend.fixed(), u64::saturating_add)
    }
}

/// Compacts `input` (a message array or a request object) with the offline modes,
/// using the built-in token estimator (without a `tokenizer` given, a request's
/// well-known model picks its profile).
pub fn compact(input: &Value, config: &ParsedOptions) -> Result<Compaction> {
    let config = &request::for_input(config, input);
    compact_with(input, config, &Estimator(config.options.tokenizer))
}

/// Like [`compact`], counting tokens with `counter` (whose profile sets the
/// framing: a request's model is not consulted).
pub fn compact_with(
    input: &Value,
    config: &ParsedOptions,
    counter: &dyn TokenCounter,
) -> Result<Compaction> {
    let planned = compact_planned(input, config, counter, &Memo::default())?;
    Ok(assemble(input, planned))
}

/// The messages of `input` (an array, or a request object's message array).
fn source_messages(input: &Value) -> &[Value] {
    match input {
        Value::Array(a) => a.as_slice(),
        other => formats::messages_key(other)
            .and_then(|k| other[k].as_array())
            .map_or(&[][..], Vec::as_slice),
    }
}

/// Turns a plan into messages (and the request) by copying kept input messages.
fn assemble(input: &Value, planned: IndexedCompaction) -> Compaction {
    let source = source_messages(input);
    let messages: Vec<Value> = planned
        .output
        .into_iter()
        .map(|o| match o {
            OutputMessage::Kept(i) => source.get(i).cloned().unwrap_or_default(),
            OutputMessage::New(v) => v,
        })
        .collect();
    let request = input.as_object().map(|obj| {
        let mut r = obj.clone();
        let key = formats::messages_key(input).unwrap_or("messages");
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

/// A compaction whose kept messages are referred to by their input index, so a
/// caller holding the input (the JS layer) can reuse its own objects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IndexedCompaction {
    /// The output messages: input indices for verbatim copies, values for the rest.
    #[serde(rename = "plan")]
    pub output: Vec<OutputMessage>,
    /// What happened.
    pub notice: Notice,
    /// The summary text, for modes that write one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Clamped options, dropped empty messages and the like.
    pub warnings: Vec<Warning>,
}

/// Plans the compaction of `input` with an offline mode and renders only what is
/// new or edited. The LLM modes go through [`compact_step`].
pub(crate) fn compact_planned<'a, N: Node<'a>>(
    input: N,
    config: &ParsedOptions,
    counter: &dyn TokenCounter,
    memo: &Memo<'_>,
) -> Result<IndexedCompaction> {
    offline_only(config)?;
    let counter = &Capped(counter);
    planned(step_opened(
        &Opened::read(input, config, counter, memo)?,
        counter,
        &[],
    )?)
}

/// `SUMMARIZER_REQUIRED` for an LLM mode (a synchronous compaction cannot run one).
pub(crate) fn offline_only(config: &ParsedOptions) -> Result<()> {
    let mode = config.options.mode;
    if matches!(mode, Mode::Structured | Mode::LlmReplace) {
        return Err(Error::new(
            ErrorKind::SummarizerRequired,
            format!(
                "mode {:?} writes its summary with an LLM, so it needs a summarizer and cannot run synchronously: in JS use `await compact(history, {{ mode: {:?}, summarize }})`; in Rust use compact_with_summarizer",
                mode.key(),
                mode.key()
            ),
        ));
    }
    Ok(())
}

/// The compaction an offline mode finished.
pub(crate) fn planned(next: summarizer::Next) -> Result<IndexedCompaction> {
    match next {
        summarizer::Next::Done(planned) => Ok(planned),
        summarizer::Next::Summarize(_) => Err(Error::new(
            ErrorKind::SummarizerRequired,
            "an offline mode asked for a summary",
        )),
    }
}

/// One step of a compaction in any mode (the sans-IO core of the LLM modes):
/// given the summarizer's `replies` so far, either the request for the next
/// summary or the finished compaction (kept messages as input indices). Offline
/// modes are done at once. [`compact_with_summarizer`] drives this loop.
pub fn compact_step(
    input: &Value,
    config: &ParsedOptions,
    counter: &dyn TokenCounter,
    replies: &[Reply],
) -> Result<summarizer::Next> {
    step(input, config, counter, replies, &Memo::default())
}

/// [`compact_step`] on any JSON reader (the wasm build reads the value tape).
pub(crate) fn step<'a, N: Node<'a>>(
    input: N,
    config: &ParsedOptions,
    counter: &dyn TokenCounter,
    replies: &[Reply],
    memo: &Memo<'_>,
) -> Result<summarizer::Next> {
    let counter = &Capped(counter);
    step_opened(
        &Opened::read(input, config, counter, memo)?,
        counter,
        replies,
    )
}

/// [`step`] on an opened history (`counter` capped).
pub(crate) fn step_opened<'a, N: Node<'a>>(
    opened: &Opened<'_, 'a, N>,
    counter: &dyn TokenCounter,
    replies: &[Reply],
) -> Result<summarizer::Next> {
    let (doc, views, o) = (&opened.doc, &opened.views, &opened.config.options);
    let fixed = opened.spend.fixed();
    if views.is_empty() {
        return Err(Error::new(
            ErrorKind::EmptyHistory,
            "the history has no messages; there is nothing to compact",
        ));
    }
    // In every mode alike (system messages always stay).
    if plan::window::leading_system(views) == views.len() {
        return Err(Error::new(
            ErrorKind::EmptyHistory,
            "the history holds only system messages; there is nothing to compact",
        ));
    }
    if doc.string_input() {
        return Err(Error::new(
            ErrorKind::TooSmallToCompact,
            "the request's input is one string, one user message: there is nothing to compact",
        ));
    }
    let placement = doc.format.results_placement();
    let offline = |outcome| Done {
        outcome,
        mode: o.mode,
        fallback: None,
        request_tokens: 0,
    };
    let turn = match o.mode {
        Mode::Deterministic => {
            Turn::Done(offline(modes::deterministic::plan(views, o, placement)?))
        }
        Mode::RecencyPreserving => Turn::Done(offline(modes::recency::plan(
            views, o, placement, counter, fixed,
        )?)),
        Mode::Structured => modes::structured::step(views, o, placement, counter, replies, fixed)?,
        Mode::LlmReplace => modes::llm_replace::step(views, o, placement, counter, replies)?,
    };
    match turn {
        Turn::Ask(ask) => Ok(summarizer::Next::Summarize(SummaryRequest {
            messages: doc.render_request(
                views,
                &ask.input.plan,
                ask.system,
                &ask.instruction,
                o.merges_turns(doc.format),
            ),
            mode: ask.mode,
            system: ask.system.to_string(),
            instruction: ask.instruction,
            previous_summary: ask.previous,
            model: o.summary_model.clone(),
            max_tokens: o.max_summary_tokens,
            estimated_input_tokens: ask.tokens,
            attempt: ask.attempt,
        })),
        Turn::Done(done) => finish(opened, counter, done, replies).map(summarizer::Next::Done),
    }
}

/// Renders a finished compaction and writes its notice.
fn finish<'a, N: Node<'a>>(
    opened: &Opened<'_, 'a, N>,
    counter: &dyn TokenCounter,
    done: Done,
    replies: &[Reply],
) -> Result<IndexedCompaction> {
    let (doc, views, config) = (&opened.doc, &opened.views[..], &opened.config);
    let o = &config.options;
    let stamp = Stamp {
        ids: doc.messages.iter().any(|m| {
            m.get("id")
                .is_some_and(|id| id.kind() == json::Kind::String)
        }),
        now: o.now,
        random: o.random_ids.then(|| o.random_seed.unwrap_or_else(entropy)),
    };
    let mut output = doc.render(views, &done.outcome.plan, &stamp);
    // (results of one turn split over two user messages join in any case)
    let all = o.merges_turns(doc.format);
    if all || doc.format.results_placement() == formats::ResultsPlacement::NextUserMessage {
        output = doc.merge_turns(
            views,
            &done.outcome.plan,
            output,
            &plan::window::pinned(views, o),
            all,
        );
    }
    let system = opened.spend.fixed();
    let tokens_before = opened.tokens();
    // Kept messages reuse their estimate; only new and edited ones are read again.
    let mut tokens_after = system;
    for out in &output {
        tokens_after += match out {
            OutputMessage::Kept(i) => views[*i].tokens,
            OutputMessage::New(v) => {
                // read through a tape, so the wasm build needs no `&Value` adapters
                let tape = tape::encode(v);
                let one = formats::single(doc.format, tape.open()?.root());
                self::views(&one, counter, &Memo::default())?
                    .iter()
                    .map(|v| v.tokens)
                    .sum()
            }
        };
    }
    // A recency_preserving result that is no smaller is refused, unless an LLM
    // mode fell back to it after its call: that call is spent, and must not end
    // in a refusal.
    if done.mode == Mode::RecencyPreserving && replies.is_empty() && tokens_after >= tokens_before {
        let pins = !o.pin.is_empty() || !o.pin_roles.is_empty();
        let nothing_new = done
            .fallback
            .as_ref()
            .is_some_and(|f| f.code == "NOTHING_TO_SUMMARIZE");
        return Err(Error::new(
            ErrorKind::TooSmallToCompact,
            format!(
                "{}recency_preserving would not make this history smaller ({tokens_before} → {tokens_after} estimated tokens): head (protect_head={}){} and tail (protect_tail_min={}) keep nearly everything; lower them{}, or use mode \"deterministic\"",
                if nothing_new {
                    "nothing new lies between head and tail to summarize (only pinned messages, UI notices or the earlier summary), and "
                } else {
                    ""
                },
                o.protect_head,
                if pins { ", pinned messages" } else { "" },
                o.protect_tail_min,
                if pins { ", pin fewer" } else { "" },
            ),
        ));
    }
    let target = o.trigger_tokens();
    let fits = tokens_after <= target;
    let mut warnings: Vec<Warning> = config.warnings.clone();
    warnings.extend(done.outcome.warnings);
    if !fits {
        // What no mode may shrink: the system prompt, the tool definitions and
        // the newest request.
        let newest = plan::window::newest_request(views);
        let fixed = system
            + views
                .iter()
                .filter(|m| m.role == message::Role::System)
                .map(|m| m.tokens)
                .sum::<u64>()
            + newest.map_or(0, |i| views[i].tokens);
        warnings.push(Warning {
            code: "DOES_NOT_FIT",
            message: format!(
                "the result is about {} but should stay under {} ((contextWindow − reserveOutputTokens) × thresholdPercent); the system prompt, tool definitions and the newest request alone take {}",
                text::count(tokens_after, "token"),
                text::count(target, "token"),
                text::count(fixed, "token")
            ),
        });
    }
    let mut usage = Usage::default();
    let mut estimated = false;
    for reply in replies {
        let u = match reply {
            Reply::Summary { text, usage: u } => u.unwrap_or_else(|| {
                estimated = true;
                Usage {
                    input_tokens: done.request_tokens,
                    output_tokens: counter.count(text),
                }
            }),
            // A request that timed out was read by the provider all the same.
            Reply::Failed {
                failure: summarizer::Failure::TimedOut,
                ..
            } => {
                estimated = true;
                Usage {
                    input_tokens: done.request_tokens,
                    output_tokens: 0,
                }
            }
            Reply::Failed { .. } => continue,
        };
        usage.input_tokens = usage.input_tokens.saturating_add(u.input_tokens);
        usage.output_tokens = usage.output_tokens.saturating_add(u.output_tokens);
    }
    let hint = o.show_settings_hint;
    Ok(IndexedCompaction {
        notice: Notice {
            format: doc.format,
            mode: done.mode,
            requested_mode: o.mode,
            text: notice::text(done.mode, usage, estimated, done.fallback.as_ref(), hint),
            fallback: done.fallback,
            messages_before: views.len(),
            messages_after: output.len(),
            tokens_before,
            tokens_after,
            fits,
            compaction_input_tokens: usage.input_tokens,
            compaction_output_tokens: usage.output_tokens,
            compaction_total_tokens: usage.input_tokens + usage.output_tokens,
            usage_estimated: estimated,
            settings_hint: hint.then(|| notice::SETTINGS_HINT.to_string()),
            options: o.clone(),
        },
        output,
        summary: done.outcome.summary,
        warnings,
    })
}

/// Where a history breaks the pairing of tool calls and results from message
/// `from` on: the first result there whose call is not in the group it follows
/// (`Err(STALE_HISTORY)` naming it). Used to check the seam when messages that
/// arrived during a compaction are appended to its result (the JS `rebase`).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn check_seam<'a, N: Node<'a>>(
    input: N,
    config: &ParsedOptions,
    from: usize,
) -> Result<()> {
    let doc = formats::open(input, config.options.format)?;
    let views = doc.read()?;
    match plan::pairs::first_orphan(&views, from) {
        None => Ok(()),
        Some((i, id)) => Err(Error::new(
            ErrorKind::StaleHistory,
            format!(
                "messages[{i}] answers tool call {id:?}, which the compacted history no longer holds: the tools of a call that was compacted away finished while the summary was written; compact the current history again"
            ),
        )),
    }
}

/// Estimated tokens of a text (a JSON string) or of a whole history (array or
/// request object), framing included.
pub fn estimate_tokens(input: &Value, config: &ParsedOptions) -> Result<u64> {
    let config = &request::for_input(config, input);
    estimate(
        input,
        config,
        &Estimator(config.options.tokenizer),
        &Memo::default(),
    )
}

/// Like [`estimate_tokens`], counting with `counter`.
pub fn estimate_tokens_with(
    input: &Value,
    config: &ParsedOptions,
    counter: &dyn TokenCounter,
) -> Result<u64> {
    estimate(input, config, counter, &Memo::default())
}

/// [`estimate_tokens_with`] on any JSON reader.
pub(crate) fn estimate<'a, N: Node<'a>>(
    input: N,
    config: &ParsedOptions,
    counter: &dyn TokenCounter,
    memo: &Memo<'_>,
) -> Result<u64> {
    let counter = &Capped(counter);
    if let Some(s) = input.as_str() {
        return Ok(counter.count(s));
    }
    Ok(Opened::read(input, config, counter, memo)?.tokens())
}

/// The context meter for `input` (array or request object) plus the `pending`
/// new text: tokens per message and in all, the window, the threshold, and
/// whether to compact before sending (SPEC §3).
pub fn measure(input: &Value, config: &ParsedOptions, pending: &str) -> Result<Meter> {
    let config = &request::for_input(config, input);
    measure_with(input, config, pending, &Estimator(config.options.tokenizer))
}

/// Like [`measure`], counting with `counter`.
pub fn measure_with(
    input: &Value,
    config: &ParsedOptions,
    pending: &str,
    counter: &dyn TokenCounter,
) -> Result<Meter> {
    meter(input, config, pending, counter, &Memo::default())
}

/// [`measure_with`] on any JSON reader.
pub(crate) fn meter<'a, N: Node<'a>>(
    input: N,
    config: &ParsedOptions,
    pending: &str,
    counter: &dyn TokenCounter,
    memo: &Memo<'_>,
) -> Result<Meter> {
    let counter = &Capped(counter);
    Ok(meter_opened(
        &Opened::read(input, config, counter, memo)?,
        pending,
        counter,
    ))
}

/// [`meter`] on an opened history (`counter` capped).
pub(crate) fn meter_opened<'a, N: Node<'a>>(
    o: &Opened<'_, 'a, N>,
    pending: &str,
    counter: &dyn TokenCounter,
) -> Meter {
    let mut meter = meter::read(
        o.doc.format,
        &o.views,
        &o.spend,
        (&o.config.options, o.window),
        pending,
        counter,
    );
    meter.warnings = o.config.warnings.clone();
    meter
}

/// Parses JSON text; a syntax error is `INVALID_INPUT` naming `what`.
fn parse_json(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::InvalidInput,
            format!("{what} is not valid JSON: {e}"),
        )
    })
}

/// Parses a history from JSON text. Lone UTF-16 surrogate escapes (what
/// `JSON.stringify` writes for half an emoji) become U+FFFD with a warning
/// instead of rejecting the whole history.
pub(crate) fn parse_history(text: &str) -> Result<(Value, Option<Warning>)> {
    match parse_json(text, "history") {
        Ok(v) => Ok((v, None)),
        Err(e) => match text::replace_lone_surrogates(text) {
            Some(fixed) => Ok((
                parse_json(&fixed, "history")?,
                Some(Warning {
                    code: "LONE_SURROGATE_REPLACED",
                    message: "the history held lone UTF-16 surrogates (half of a character); each was replaced with U+FFFD".into(),
                }),
            )),
            None => Err(e),
        },
    }
}

/// [`compact`] over JSON text: history and options in, the result as JSON out
/// (`{messages, request?, notice, summary?, warnings}`).
pub fn compact_json(input: &str, options: &str) -> Result<String> {
    let config = options::from_json_text(options)?;
    let (value, warning) = parse_history(input)?;
    let config = request::for_input(&config, &value);
    // IndexedCompaction over the value tape, the path JS callers take: tests that compare
    // this with `compact` (which reads `serde_json` values) cover both readers.
    let tape = tape::encode(&value);
    let planned = compact_planned(
        tape.open()?.root(),
        &config,
        &Estimator(config.options.tokenizer),
        &Memo::default(),
    )?;
    let mut result = assemble(&value, planned);
    result.warnings.extend(warning);
    serde_json::to_string(&result).map_err(|e| Error::input("output", e.to_string()))
}
