//! The pipeline: a history read once into views ([`Opened`]), a mode's plan on
//! them, the plan rendered through the format's adapter, and the notice; the
//! meter and the seam check on the same views. Every entry point (the Rust API
//! in lib.rs, the wasm exports, JSON text in [`text`]) comes through here.

pub(crate) mod text;

use std::borrow::Cow;

use crate::error::{Error, ErrorKind, Result};
use crate::formats::{self, Document, OutputMessage, Stamp};
use crate::json::{self, Node, WriteJson, Writer};
use crate::memo::Memo;
use crate::message::{self, Message};
use crate::meter::{self, Meter};
use crate::modes;
use crate::notice::{self, Notice};
use crate::options::{Mode, ParsedOptions, Warning};
use crate::plan;
use crate::request::{Spend, WindowSource};
use crate::summarizer::{self, Reply, SummaryRequest, Usage};
use crate::summary::{Done, Turn};
use crate::text as words;
use crate::tokens::TokenCounter;

/// A compaction whose kept messages are referred to by their input index, so a
/// caller holding the input (the JS layer, a JSON text) can reuse its own
/// messages.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct IndexedCompaction {
    /// The output messages: input indices for verbatim copies, values for the rest.
    pub output: Vec<OutputMessage>,
    /// What happened.
    pub notice: Notice,
    /// The summary text, for modes that write one.
    pub summary: Option<String>,
    /// Clamped options, dropped empty messages and the like.
    pub warnings: Vec<Warning>,
}

impl WriteJson for IndexedCompaction {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("plan", &self.output);
        w.field("notice", &self.notice);
        w.field_some("summary", self.summary.as_ref());
        w.field("warnings", &self.warnings);
        w.close();
    }
}

/// One step of a compaction in any mode: the request for the next summary, or
/// the finished compaction (the LLM modes' sans-IO loop; offline modes are
/// done at once).
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // one a step, never stored in bulk
pub(crate) enum Step {
    /// Call the summarizer with this request, then step again with its reply added.
    Ask(SummaryRequest<OutputMessage>),
    /// The compaction is done.
    Done(IndexedCompaction),
}

impl WriteJson for Step {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        match self {
            Step::Ask(request) => w.field("ask", request),
            Step::Done(done) => w.field("done", done),
        }
        w.close();
    }
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
/// (its own, or the session's: [`crate::session`]), what the request spends
/// besides them, and the options in effect for it.
pub(crate) struct Opened<'v, 'a, N: Node<'a>> {
    pub(crate) doc: Document<'a, N>,
    views: Cow<'v, [Message<'a>]>,
    spend: Spend,
    pub(crate) config: ParsedOptions,
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
                    words::count(o.reserve_output_tokens, "token"),
                    words::count(o.context_window, "token")
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

    /// The meter of the history plus the `pending` new text (`counter` capped).
    pub(crate) fn meter(&self, pending: &str, counter: &dyn TokenCounter) -> Meter {
        let mut meter = meter::read(
            self.doc.format,
            &self.views,
            &self.spend,
            (&self.config.options, self.window),
            pending,
            counter,
        );
        meter.warnings = self.config.warnings.clone();
        meter
    }

    /// One step of a compaction in any mode, given the summarizer's `replies`
    /// so far (`counter` capped).
    pub(crate) fn step(&self, counter: &dyn TokenCounter, replies: &[Reply]) -> Result<Step> {
        let (doc, views, o) = (&self.doc, &self.views, &self.config.options);
        let fixed = self.spend.fixed();
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
            Mode::Structured => {
                modes::structured::step(views, o, placement, counter, replies, fixed)?
            }
            Mode::LlmReplace => modes::llm_replace::step(views, o, placement, counter, replies)?,
        };
        match turn {
            Turn::Ask(ask) => Ok(Step::Ask(SummaryRequest {
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
            Turn::Done(done) => self.finish(counter, done, replies).map(Step::Done),
        }
    }

    /// The compaction of an offline mode (`counter` capped).
    pub(crate) fn compact(&self, counter: &dyn TokenCounter) -> Result<IndexedCompaction> {
        offline_only(&self.config)?;
        match self.step(counter, &[])? {
            Step::Done(planned) => Ok(planned),
            Step::Ask(_) => Err(Error::new(
                ErrorKind::SummarizerRequired,
                "an offline mode asked for a summary",
            )),
        }
    }

    /// Renders a finished compaction and writes its notice.
    fn finish(
        &self,
        counter: &dyn TokenCounter,
        done: Done,
        replies: &[Reply],
    ) -> Result<IndexedCompaction> {
        let (doc, views, config) = (&self.doc, &self.views[..], &self.config);
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
        let system = self.spend.fixed();
        let tokens_before = self.tokens();
        // Kept messages reuse their estimate; only new and edited ones are read again.
        let mut tokens_after = system;
        for out in &output {
            tokens_after += match out {
                OutputMessage::Kept(i) => views[*i].tokens,
                OutputMessage::New(v) => {
                    let tape = json::tape::encode(v);
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
        if done.mode == Mode::RecencyPreserving
            && replies.is_empty()
            && tokens_after >= tokens_before
        {
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
                    words::count(tokens_after, "token"),
                    words::count(target, "token"),
                    words::count(fixed, "token")
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
                compaction_total_tokens: usage.input_tokens.saturating_add(usage.output_tokens),
                usage_estimated: estimated,
                settings_hint: hint.then(|| notice::SETTINGS_HINT.to_string()),
                options: o.clone(),
            },
            output,
            summary: done.outcome.summary,
            warnings,
        })
    }
}

/// `SUMMARIZER_REQUIRED` for an LLM mode (a synchronous compaction cannot run one).
pub(crate) fn offline_only(config: &ParsedOptions) -> Result<()> {
    let mode = config.options.mode;
    if matches!(mode, Mode::Structured | Mode::LlmReplace) {
        return Err(Error::new(
            ErrorKind::SummarizerRequired,
            format!(
                "mode \"{}\" writes its summary with an LLM, so it needs a summarizer and cannot run synchronously: in JS use `await compact(history, {{ mode: \"{}\", summarize }})`; in Rust use compact_with_summarizer",
                mode.key(),
                mode.key()
            ),
        ));
    }
    Ok(())
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
                "messages[{i}] answers tool call {}, which the compacted history no longer holds: the tools of a call that was compacted away finished while the summary was written; compact the current history again",
                words::Quoted(id)
            ),
        )),
    }
}
