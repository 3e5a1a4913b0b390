//! Writing a summary with the caller's LLM, shared by `structured` and
//! `llm_replace`: finding the summary an earlier compaction left, building the
//! request (`input`: the bounded conversation, `prompts`: the instructions), the
//! check a structured summary passes (`quality`), and the turn a mode takes given
//! the replies so far.

pub(crate) mod input;
pub(crate) mod prompts;
pub(crate) mod quality;

use std::borrow::Cow;

use crate::formats::ResultsPlacement;
use crate::message::Message;
use crate::modes::deterministic::{DIRECTIVE, PREAMBLE};
use crate::modes::{newest_summary, summary_part, Decision};
use crate::notice::Fallback;
use crate::options::{Mode, Options, Warning};
use crate::plan::{Step, Synthetic};
use crate::summarizer::Reply;
use crate::summary::input::{self as summary_input, SummaryInput};
use crate::text::{cut_middle, SUMMARY_PREFIX};
use crate::tokens::TokenCounter;
use prompts::SUMMARY_PREAMBLE;

/// What an LLM mode does next.
#[derive(Debug)]
pub(crate) enum Turn {
    /// Ask the summarizer.
    Ask(Ask),
    /// Finished (a summary, a fallback, or nothing to summarize).
    Done(Done),
}

/// A summary request, before rendering.
#[derive(Debug)]
pub(crate) struct Ask {
    pub mode: Mode,
    pub system: &'static str,
    pub instruction: String,
    pub previous: Option<String>,
    pub input: SummaryInput,
    /// 1, or 2 for the retry after a failed quality check.
    pub attempt: u32,
    /// Estimated tokens of the whole request (system, messages, instruction).
    pub tokens: u64,
}

/// A finished LLM-mode compaction.
#[derive(Debug)]
pub(crate) struct Done {
    pub outcome: Decision,
    /// The mode whose output this is (`recency_preserving` after a fallback).
    pub mode: Mode,
    pub fallback: Option<Fallback>,
    /// Estimated tokens of a request, for replies that report no usage.
    pub request_tokens: u64,
}

/// The newest summary an earlier compaction left in the history.
#[derive(Debug)]
pub(crate) struct Previous<'a> {
    /// Its message.
    pub index: usize,
    /// Its text without prefix, preamble and directive, bounded to twice
    /// `max_summary_tokens` so that summaries never snowball.
    pub body: Cow<'a, str>,
}

/// The newest summary at or after `from`, from any mode.
pub(crate) fn previous_summary<'a>(
    views: &[Message<'a>],
    from: usize,
    options: &Options,
    counter: &dyn TokenCounter,
) -> Option<Previous<'a>> {
    let index = newest_summary(views, from)?;
    let text = views[index].texts.get(summary_part(&views[index])?)?;
    let mut body = text.strip_prefix(SUMMARY_PREFIX).unwrap_or(text).trim();
    for wrapper in [SUMMARY_PREAMBLE, PREAMBLE] {
        body = body.strip_prefix(wrapper).unwrap_or(body).trim_start();
    }
    body = body.strip_suffix(DIRECTIVE).unwrap_or(body).trim_end();
    if let Some(inner) = body
        .strip_prefix("<summary>")
        .and_then(|b| b.strip_suffix("</summary>"))
    {
        body = inner.trim();
    }
    let max = options.max_summary_tokens.saturating_mul(2);
    let tokens = counter.count(body);
    let body = if tokens > max {
        let bytes = (body.len() as u64 * max / tokens.max(1)) as usize;
        Cow::Owned(cut_middle(body, bytes))
    } else {
        Cow::Borrowed(body)
    };
    Some(Previous { index, body })
}

/// The full text of a summary message (a summary that already opens with the
/// prefix, or the prefix and preamble, does not get them twice).
pub(crate) fn summary_message(summary: &str) -> String {
    let prefix = SUMMARY_PREFIX.trim_end();
    let body = summary.strip_prefix(prefix).unwrap_or(summary).trim_start();
    let body = body
        .strip_prefix(SUMMARY_PREAMBLE)
        .unwrap_or(body)
        .trim_start();
    format!("{SUMMARY_PREFIX}{SUMMARY_PREAMBLE}\n\n{body}")
}

/// How many summaries the replies hold (attempts that got an answer).
pub(crate) fn answered(replies: &[Reply]) -> u32 {
    replies
        .iter()
        .filter(|r| matches!(r, Reply::Summary { .. }))
        .count() as u32
}

/// Builds the request for input messages `picked`, after `joined`: the caller's
/// texts merged into kept messages after an earlier summary or marker (they
/// come first: they are older than the middle).
#[allow(clippy::too_many_arguments)]
pub(crate) fn ask(
    mode: Mode,
    views: &[Message<'_>],
    joined: &[&str],
    picked: &[usize],
    previous: Option<&Previous<'_>>,
    problems: &[String],
    options: &Options,
    counter: &dyn TokenCounter,
    placement: ResultsPlacement,
) -> Ask {
    let system = prompts::system(mode);
    let body = previous.map(|p| &*p.body);
    let instruction = prompts::instruction(mode, body, problems);
    let framing = 2 * counter.profile().message_overhead();
    let fixed = counter.count(system) + counter.count(&instruction) + framing;
    let (budget, warning) = summary_input::budget(options, fixed);
    let replaced = previous.map(|p| p.index);
    let mut input =
        summary_input::build(views, picked, replaced, options, counter, budget, placement);
    input.warnings.extend::<Option<Warning>>(warning);
    let overhead = counter.profile().message_overhead();
    input.tokens += joined
        .iter()
        .map(|t| counter.count(t) + overhead)
        .sum::<u64>();
    if !joined.is_empty() {
        let mut plan: Vec<Step> = joined
            .iter()
            .map(|t| Step::Insert(Synthetic::Note(t.to_string())))
            .collect();
        plan.append(&mut input.plan);
        input.plan = plan;
    }
    Ask {
        mode,
        system,
        tokens: fixed + input.tokens,
        instruction,
        previous: body.map(str::to_string),
        input,
        attempt: u32::from(!problems.is_empty()) + 1,
    }
}
