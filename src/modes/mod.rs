//! The compaction modes. Each plans on message views and returns a [`Decision`];
//! none of them sees format-specific JSON.

pub(crate) mod deterministic;
pub(crate) mod llm_replace;
pub(crate) mod recency;
pub(crate) mod structured;

use crate::error::{Error, ErrorKind};
use crate::formats::ResultsPlacement;
use crate::message::{Message, Role};
use crate::modes::deterministic::PREAMBLE;
use crate::names::Names;
use crate::options::Warning;
use crate::plan::pairs::pending_calls;
use crate::plan::{Edit, Plan, Step, Synthetic};
use crate::text::{MARKER_PREFIX, SUMMARY_PREFIX};

/// What a mode decided.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decision {
    /// The output history as steps.
    pub plan: Plan,
    /// The summary text, for modes that write one.
    pub summary: Option<String>,
    /// Remarks about the input (dropped empty messages).
    pub warnings: Vec<Warning>,
}

/// Removes kept messages that are empty (providers reject them), with a warning each.
pub(crate) fn drop_empty(plan: Plan, views: &[Message<'_>], warnings: &mut Vec<Warning>) -> Plan {
    plan.into_iter()
        .filter(|step| match step {
            Step::Keep { index, .. } if views[*index].is_empty() => {
                warnings.push(Warning {
                    code: "EMPTY_MESSAGE_DROPPED",
                    message: format!(
                        "messages[{index}] has no content; providers reject empty messages, so it was left out"
                    ),
                });
                false
            }
            _ => true,
        })
        .collect()
}

/// Where the compaction brought two messages together that a provider does
/// not take in that order, the summary or marker it adds (a user message) goes
/// between them instead, if that is no later than where the mode put it:
/// - Anthropic and Gemini take a user turn first, and a Gemini call turn only
///   after a user turn: so it goes before the first kept assistant that opens
///   the messages or follows another assistant it was not next to in the input
///   (an earlier summary that opened the head was replaced; pins lead);
/// - in every format, it never goes into or after the [`closing_turn`] (a turn
///   whose calls are still running, or the request the history ends with), but
///   before it.
pub(crate) fn place_added(steps: &mut Plan, views: &[Message<'_>], placement: ResultsPlacement) {
    let Some(at) = steps.iter().position(|s| {
        matches!(
            s,
            Step::Insert(Synthetic::Summary(_) | Synthetic::Marker(_))
        )
    }) else {
        return;
    };
    let kept = |s: &Step| match s {
        Step::Keep { index, .. } => Some(*index),
        Step::Insert(_) => None,
    };
    let role = |i: usize| views[i].role;
    let running = closing_turn(views);
    let mut to = at;
    if placement == ResultsPlacement::NextUserMessage {
        let mut before: Option<usize> = None;
        for (p, step) in steps[..at].iter().enumerate() {
            let Some(i) = kept(step) else { break };
            if role(i) == Role::System {
                continue;
            }
            let apart = before.is_none_or(|b| b + 1 != i);
            let after_other = before.is_none_or(|b| role(b) == Role::Assistant);
            if role(i) == Role::Assistant && after_other && apart {
                to = p;
                break;
            }
            before = Some(i);
        }
    }
    if let (true, Some(start)) = (to == at, running) {
        if let Some(p) = steps[..at]
            .iter()
            .position(|s| kept(s).is_some_and(|i| i >= start))
        {
            to = p;
        }
    }
    if to != at {
        let added = steps.remove(at);
        steps.insert(to, added);
    }
}

/// The newest user message at or after `from` that holds the summary of an
/// earlier compaction, from any mode (markers do not count), as a message of its
/// own or merged into the caller's (see [`summary_part`]).
pub(crate) fn newest_summary(views: &[Message<'_>], from: usize) -> Option<usize> {
    (from..views.len())
        .rev()
        .find(|&i| summary_part(&views[i]).is_some())
}

/// The text part of a user message that holds an earlier compaction's summary:
/// the whole message, or (alternation "merge") a part of the caller's message
/// beside its own content — its last such part. Older summaries open with the
/// preamble, without the `[Conversation Summary]` prefix.
pub(crate) fn summary_part(m: &Message<'_>) -> Option<usize> {
    if m.role != Role::User {
        return None;
    }
    m.texts.iter().rposition(|t| is_summary(t))
}

/// Where the turn whose calls are still running at the end starts (its first
/// item: a Responses reasoning item before its calls): the last turn, with a
/// call no result after it answers yet. It and what follows it (the results so
/// far) stay as they are: the rest of its results are about to be appended.
pub(crate) fn running_turn(views: &[Message<'_>]) -> Option<usize> {
    let mut start = pending_calls(views)?;
    while start > 0 && views[start].continues {
        start -= 1;
    }
    let turn = &views[start..];
    // (by table: a turn may make thousands of calls)
    let mut answered = Names::new();
    turn.iter()
        .flat_map(|m| &m.results)
        .for_each(|r| answered.add(&r.id));
    turn.iter()
        .flat_map(|m| &m.calls)
        .any(|c| answered.get(&c.id).is_none())
        .then_some(start)
}

/// Where the messages start that every mode keeps verbatim after its summary or
/// marker: the turn whose tools are still running, else the person's request
/// the history ends with (the question about to be answered; UI-only notices
/// after it stay too). A difference from Moltis, whose whole-history modes fold
/// that question into the summary.
pub(crate) fn closing_turn(views: &[Message<'_>]) -> Option<usize> {
    if let Some(start) = running_turn(views) {
        return Some(start);
    }
    let last = views.iter().rposition(|m| m.role != Role::Notice)?;
    let m = &views[last];
    let own = m.role == Role::User && !m.has_results() && !m.is_empty() && !m.is_written();
    own.then_some(last)
}

/// What a whole-history mode keeps besides the leading system messages and its
/// summary: pins, the [`closing_turn`] (after the summary), and the requests
/// [`closing_requests`] finds. Whether each message stays, and the kept
/// requests of the person (for [`carry`]).
pub(crate) fn staying(
    views: &[Message<'_>],
    lead: usize,
    pinned: &[bool],
    placement: ResultsPlacement,
) -> (Vec<bool>, Vec<usize>) {
    let end = closing_turn(views).unwrap_or(views.len());
    let mut requests = closing_requests(views, lead, pinned, end, placement);
    requests.extend((end..views.len()).filter(|&i| views[i].role == Role::User));
    let stays = (0..views.len())
        .map(|i| pinned[i] || i >= end || requests.contains(&i))
        .collect();
    (stays, requests)
}

/// The requests a whole-history mode keeps besides the summary, pins and a
/// running turn (from `end` on): the [`bridges`] of the layout of the pins, the
/// running turn and the summary alone, so they apply only where that layout
/// needs them.
fn closing_requests(
    views: &[Message<'_>],
    lead: usize,
    pinned: &[bool],
    end: usize,
    placement: ResultsPlacement,
) -> Vec<usize> {
    if placement != ResultsPlacement::NextUserMessage {
        return Vec::new();
    }
    let mut steps: Plan = (0..views.len())
        .filter(|&i| i < lead || pinned[i] || i >= end)
        .map(Step::keep)
        .collect();
    steps.push(Step::Insert(Synthetic::Summary(String::new())));
    place_added(&mut steps, views, placement);
    bridges(views, &steps, end)
}

/// Where a user turn must come first (Anthropic, Gemini), the added summary or
/// marker goes before the first kept assistant that follows another, which can
/// leave an old assistant turn last (Gemini refuses it, Anthropic reads it as a
/// prefill to continue; `end`: where the history goes on after it) or right
/// before a call turn (Gemini wants a user turn there: pins leave such gaps).
/// For each such place in `steps`, the newest message of the person's own
/// between the two, so the turns alternate and the model answers the question;
/// never a message only a compaction wrote, but an earlier marker where no
/// request of the person's is there.
pub(crate) fn bridges(views: &[Message<'_>], steps: &Plan, end: usize) -> Vec<usize> {
    // What is sent, in order (`None`: the summary or marker).
    let sent: Vec<Option<usize>> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Keep { index, .. } if views[*index].role == Role::Notice => None,
            Step::Keep { index, .. } => Some(Some(*index)),
            Step::Insert(_) => Some(None),
        })
        .collect();
    let assistant = |at: Option<usize>| at.filter(|&i| views[i].role == Role::Assistant);
    let mut gaps = Vec::new();
    for pair in sent.windows(2) {
        if let (Some(a), Some(c)) = (assistant(pair[0]), assistant(pair[1])) {
            if !views[c].calls.is_empty() && a + 1 < c {
                gaps.push((a, c));
            }
        }
    }
    if let Some(a) = sent
        .last()
        .copied()
        .and_then(assistant)
        .filter(|&a| a < end)
    {
        gaps.push((a, end));
    }
    let user = |i: usize| views[i].role == Role::User && !views[i].has_results();
    let own = |i: usize| user(i) && !views[i].is_empty() && !views[i].is_written();
    // Without a request of the person's there, an earlier marker of its own
    // fills the gap (it stays as it is and stands for what it elided; a summary
    // would not, the new one replaces it).
    let marker = |i: usize| {
        user(i)
            && views[i].is_only_text(0)
            && views[i].texts[0]
                .trim_start()
                .starts_with(MARKER_PREFIX.trim_end())
    };
    gaps.into_iter()
        .filter_map(|(a, c)| {
            let mut gap = (a + 1..c).rev();
            gap.clone()
                .find(|&i| own(i))
                .or_else(|| gap.find(|&i| marker(i)))
        })
        .collect()
}

/// The error of a whole-history mode with nothing to summarize: only an earlier
/// summary (`after_summary`), or messages that all stay.
pub(crate) fn nothing_to_summarize(after_summary: bool) -> Error {
    Error::new(
        ErrorKind::TooSmallToCompact,
        if after_summary {
            "nothing was added since the last summary: there is nothing new to summarize"
        } else {
            "everything after the system messages stays as it is (pinned, a turn whose tools are still running, or the request the history ends with): there is nothing to summarize"
        },
    )
}

/// The step that keeps message `i` in a whole-history mode: a kept request
/// (`requests`) leaves out what an earlier compaction merged into it, which the
/// new summary stands for.
pub(crate) fn carry(views: &[Message<'_>], i: usize, requests: &[usize]) -> Step {
    let edits = if requests.contains(&i) {
        superseded(&views[i], false, true)
            .map(|part| Edit::DropText { part })
            .collect()
    } else {
        Vec::new()
    };
    Step::Keep { index: i, edits }
}

/// The text parts of a kept message that a new marker or summary stands for,
/// from the first part an earlier compaction merged into it (a marker; for a
/// new summary, `keep_summary` false, a summary too) to its end: those parts,
/// and the caller's texts merged in after them (they came from what followed,
/// now the oldest of the middle: a marker counts them, the summarizer reads
/// them first) — never an earlier summary recency keeps, nor the caller's texts
/// of a `pinned` message, which stays as it is.
pub(crate) fn superseded<'m>(
    m: &'m Message<'_>,
    keep_summary: bool,
    pinned: bool,
) -> impl Iterator<Item = usize> + 'm {
    let written = move |t: &str| t.starts_with(MARKER_PREFIX) || !keep_summary && is_summary(t);
    let from = (m.role == Role::User)
        .then(|| m.texts.iter().position(|t| written(t)))
        .flatten()
        .filter(|&k| !m.is_only_text(k))
        .unwrap_or(m.texts.len());
    (from..m.texts.len()).filter(move |&k| {
        let t = m.texts[k];
        written(t) || !pinned && !is_summary(t)
    })
}

/// Whether a text is an earlier compaction's summary.
pub(crate) fn is_summary(text: &str) -> bool {
    text.starts_with(SUMMARY_PREFIX) || text.starts_with(PREAMBLE)
}

/// Whether a text is what an earlier compaction wrote: a summary or a marker.
pub(crate) fn is_written(text: &str) -> bool {
    is_summary(text) || text.starts_with(MARKER_PREFIX)
}

/// Whether `m` is nothing but an earlier compaction's summary (a message the
/// library wrote): a compaction that replaces the summary leaves it out, where
/// it leaves out only the summary part of a caller's message it was merged into.
pub(crate) fn summary_alone(m: &Message<'_>) -> bool {
    summary_part(m).is_some_and(|k| m.is_only_text(k))
}

/// Whether message `i` is the earlier summary a compaction replaces (`replaced`,
/// the newest) or one older than it, as a message of its own: it is left out of
/// what is summarized and of the result (the newest stands for the older ones,
/// and a result holds one summary), where a caller's message a summary was
/// merged into is summarized like the rest.
pub(crate) fn replaced_whole(views: &[Message<'_>], replaced: Option<usize>, i: usize) -> bool {
    replaced.is_some_and(|r| i <= r) && summary_alone(&views[i])
}
