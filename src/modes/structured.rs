//! `structured`: head verbatim + one LLM summary in a fixed template + tail
//! verbatim; falls back to `recency_preserving` when no usable summary comes back.

use crate::error::Result;
use crate::formats::ResultsPlacement;
use crate::message::Message;
use crate::modes::recency;
use crate::notice::Fallback;
use crate::options::{Mode, Options};
use crate::plan::window::window;
use crate::plan::Synthetic;
use crate::summarizer::{Failure, Reply};
use crate::summary::quality;
use crate::summary::{self, Done, Turn};
use crate::tokens::TokenCounter;

/// The structured compaction's next turn, given the summarizer's `replies` so far.
pub(crate) fn step(
    views: &[Message<'_>],
    options: &Options,
    placement: ResultsPlacement,
    counter: &dyn TokenCounter,
    replies: &[Reply],
) -> Result<Turn> {
    let w = window(views, options);
    if w.covers_all() {
        // Nothing lies between head and tail: pruning in place is all there is to do.
        return Ok(Turn::Done(Done {
            outcome: recency::plan(views, options, placement)?,
            mode: Mode::Structured,
            fallback: None,
            request_tokens: 0,
        }));
    }
    let previous = summary::previous_summary(views, 0, options, counter);
    let replaced = previous.as_ref().map(|p| p.index);
    let picked: Vec<usize> = (w.head_end..w.tail_start)
        .filter(|i| Some(*i) != replaced)
        .collect();
    let answer = match replies.last() {
        Some(Reply::Summary { text, .. }) => Some(text.trim()),
        _ => None,
    };
    let problems = answer
        .filter(|t| !t.is_empty())
        .map(|t| quality::check(t, options.max_summary_tokens, counter))
        .unwrap_or_default();
    let retry = !problems.is_empty() && summary::answered(replies) < 2;
    let ask = summary::ask(
        Mode::Structured,
        views,
        &picked,
        previous.as_ref().map(|p| &*p.body),
        if retry { &problems } else { &[] },
        options,
        counter,
        placement,
    );
    let fall_back = |code: &'static str, reason: String| -> Result<Turn> {
        let mut outcome = recency::plan(views, options, placement)?;
        outcome.warnings.extend(ask.input.warnings.iter().cloned());
        Ok(Turn::Done(Done {
            outcome,
            mode: Mode::RecencyPreserving,
            fallback: Some(Fallback {
                from: Mode::Structured,
                code,
                reason,
            }),
            request_tokens: ask.tokens,
        }))
    };
    match (replies.last(), answer) {
        (None, _) => Ok(Turn::Ask(ask)),
        (Some(Reply::Failed { failure, reason }), _) => {
            let code = match failure {
                Failure::Failed => "LLM_FAILED",
                Failure::TimedOut => "TIMEOUT",
            };
            fall_back(code, reason.clone())
        }
        (_, Some("")) => fall_back(
            "EMPTY_SUMMARY",
            "the summarizer returned an empty summary".into(),
        ),
        _ if retry => Ok(Turn::Ask(ask)),
        _ if !problems.is_empty() => fall_back(
            "QUALITY_CHECK",
            format!(
                "the summary failed the quality check twice: {}",
                problems.join("; ")
            ),
        ),
        (_, text) => {
            let text = text.unwrap_or_default();
            let summary = Synthetic::Summary(summary::summary_message(text));
            let mut outcome =
                recency::splice(views, &w, options, placement, summary, replaced, &[]);
            outcome.summary = Some(text.to_string());
            outcome.warnings.extend(ask.input.warnings);
            Ok(Turn::Done(Done {
                outcome,
                mode: Mode::Structured,
                fallback: None,
                request_tokens: ask.tokens,
            }))
        }
    }
}
