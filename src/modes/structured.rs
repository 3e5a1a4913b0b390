//! `structured`: head verbatim + one LLM summary in a fixed template + tail
//! verbatim; falls back to `recency_preserving` when no usable summary comes back.

use crate::error::Result;
use crate::formats::ResultsPlacement;
use crate::message::{Message, Role};
use crate::modes::recency::{self, Shape};
use crate::modes::replaced_whole;
use crate::notice::Fallback;
use crate::options::{Mode, Options};
use crate::plan::fit::{layout, plan_tokens, Layout};
use crate::plan::Synthetic;
use crate::summarizer::{Failure, Reply};
use crate::summary::quality;
use crate::summary::{self, Done, Turn};
use crate::tokens::TokenCounter;

/// Tokens set aside for the summary when choosing head and tail.
const SUMMARY_ROOM: u64 = 1_000;

/// The structured compaction's next turn, given the summarizer's `replies` so far.
pub(crate) fn step(
    views: &[Message<'_>],
    options: &Options,
    placement: ResultsPlacement,
    counter: &dyn TokenCounter,
    replies: &[Reply],
    fixed: u64,
) -> Result<Turn> {
    let shape = Shape::new(views, options, placement, false, fixed, counter);
    let target = shape.target;
    let w = match shape.in_place(counter) {
        Ok(w) => w,
        // Nothing to summarize: pruning in place is all there is, and the
        // notice says so rather than naming a summary that was never made.
        Err(done) => {
            return Ok(Turn::Done(Done {
                outcome: done?,
                mode: Mode::RecencyPreserving,
                fallback: Some(Fallback {
                    from: Mode::Structured,
                    code: "NOTHING_TO_SUMMARIZE",
                    reason: "head and tail cover the whole history: old tool outputs were pruned in place, and nothing was left to summarize".into(),
                }),
                request_tokens: 0,
            }))
        }
    };
    let previous = summary::previous_summary(views, 0, options, counter);
    let replaced = previous.as_ref().map(|p| p.index);
    // Laid out with room for a summary between head and tail (the prompt asks for
    // about 800 tokens; a longer one may still make the texts give way).
    let build =
        |l: &Layout, middle: Synthetic| shape.splice(l, Some(middle), replaced, &shape.carried(l));
    let (smallest, fits) = layout(views, w, shape.newest, target, |l| {
        let placeholder = Synthetic::Summary(String::new());
        plan_tokens(&build(l, placeholder).plan, views, counter)
            + options.max_summary_tokens.min(SUMMARY_ROOM)
    });
    // When no layout leaves room for a summary, give up nothing: the configured window.
    let layout = if fits {
        smallest
    } else {
        Layout {
            w,
            prune_tail: 0,
            shortened: false,
        }
    };
    let carried = shape.carried(&layout);
    let picked: Vec<usize> = (layout.w.head_end..layout.w.tail_start)
        .filter(|&i| !replaced_whole(views, replaced, i) && carried.binary_search(&i).is_err())
        .collect();
    // Pins, UI-only notices or the earlier summary itself may be all there is
    // between head and tail: then nothing is new, there is nothing to summarize
    // and no call to make. The same layout, without a new summary (an earlier
    // one stays).
    if picked.iter().all(|&i| views[i].role == Role::Notice) {
        let mut carried = carried;
        let middle = layout.w.head_end..layout.w.tail_start;
        if let Some(r) = replaced.filter(|r| middle.contains(r)) {
            let at = carried.partition_point(|&c| c < r);
            if carried.get(at) != Some(&r) {
                carried.insert(at, r);
            }
        }
        let mut outcome = shape.splice(&layout, None, None, &carried);
        outcome.fit(&shape, layout, target, counter);
        return Ok(Turn::Done(Done {
            outcome,
            mode: Mode::RecencyPreserving,
            fallback: Some(Fallback {
                from: Mode::Structured,
                code: "NOTHING_TO_SUMMARIZE",
                reason: "nothing new lies between head and tail (only pinned messages, UI notices or the earlier summary): there is nothing to summarize".into(),
            }),
            request_tokens: 0,
        }));
    }
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
        &shape.joined_texts(&layout),
        &picked,
        previous.as_ref(),
        if retry { &problems } else { &[] },
        options,
        counter,
        placement,
    );
    let fall_back = |code: &'static str, reason: String| -> Result<Turn> {
        let mut outcome = recency::plan(views, options, placement, counter, fixed)?;
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
            let mut outcome = build(&layout, Synthetic::Summary(summary::summary_message(text)));
            outcome.fit(&shape, layout, target, counter); // when it cannot, the notice says so
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
