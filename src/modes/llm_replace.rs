//! `llm_replace`: the leading system messages + one user message holding an LLM
//! summary of everything else. Any failure is an error; the input is untouched.

use crate::error::{Error, ErrorKind, Result};
use crate::formats::ResultsPlacement;
use crate::message::{Message, Role};
use crate::modes::{
    carry, drop_empty, nothing_to_summarize, place_added, replaced_whole, staying, Decision,
};
use crate::options::{Mode, Options};
use crate::plan::pairs::repair;
use crate::plan::window::{leading_system, pinned};
use crate::plan::{Step, Synthetic};
use crate::summarizer::Reply;
use crate::summary::{self, Done, Turn};
use crate::tokens::TokenCounter;

/// The llm_replace compaction's next turn, given the summarizer's `replies` so far.
pub(crate) fn step(
    views: &[Message<'_>],
    options: &Options,
    placement: ResultsPlacement,
    counter: &dyn TokenCounter,
    replies: &[Reply],
) -> Result<Turn> {
    let lead = leading_system(views);
    let previous = summary::previous_summary(views, lead, options, counter);
    let replaced = previous.as_ref().map(|p| p.index);
    // Mid-history system messages and pins stay verbatim, before the summary,
    // and a turn whose tools are still running at the end after it.
    let pinned = pinned(views, options);
    let (stays, requests) = staying(views, lead, &pinned, placement);
    let picked: Vec<usize> = (lead..views.len())
        .filter(|&i| !replaced_whole(views, replaced, i) && !stays[i])
        .filter(|&i| views[i].role != Role::Notice && !views[i].is_empty())
        .collect();
    if picked.is_empty() {
        return Err(nothing_to_summarize(replaced.is_some()));
    }
    let ask = summary::ask(
        Mode::LlmReplace,
        views,
        &[],
        &picked,
        previous.as_ref(),
        &[],
        options,
        counter,
        placement,
    );
    let summary_tokens = match replies.last() {
        Some(Reply::Summary { text, .. }) => counter.count(text.trim()),
        _ => 0,
    };
    match replies.last() {
        None => Ok(Turn::Ask(ask)),
        Some(Reply::Failed { reason, .. }) => Err(Error::new(
            ErrorKind::LlmFailed,
            format!("{reason}; the history was not changed"),
        )),
        Some(Reply::Summary { text, .. }) if text.trim().is_empty() => Err(Error::new(
            ErrorKind::EmptySummary,
            "the summarizer returned an empty summary; the history was not changed",
        )),
        // `max_summary_tokens` bounds an acceptable summary here too (SPEC §3):
        // one larger than the history would make nothing smaller.
        Some(Reply::Summary { .. })
            if summary_tokens > options.max_summary_tokens.saturating_mul(2) =>
        {
            Err(Error::new(
                ErrorKind::LlmFailed,
                format!(
                    "the summary is about {summary_tokens} tokens, more than twice the {} asked for (max_summary_tokens); the history was not changed",
                    options.max_summary_tokens
                ),
            ))
        }
        Some(Reply::Summary { text, .. }) => {
            let text = text.trim();
            let mut warnings = ask.input.warnings;
            let kept = (0..lead).chain((lead..views.len()).filter(|&i| stays[i]));
            let kept = kept.map(|i| carry(views, i, &requests)).collect();
            let mut plan = drop_empty(kept, views, &mut warnings);
            plan.push(Step::Insert(Synthetic::Summary(summary::summary_message(
                text,
            ))));
            // Pinned calls keep their answers (or stubs); a pinned assistant
            // does not open the messages where a user turn must.
            place_added(&mut plan, views, placement);
            let plan = repair(plan, views, placement, true);
            Ok(Turn::Done(Done {
                outcome: Decision {
                    plan,
                    summary: Some(text.to_string()),
                    warnings,
                },
                mode: Mode::LlmReplace,
                fallback: None,
                request_tokens: ask.tokens,
            }))
        }
    }
}
