//! `recency_preserving`: head verbatim + one marker with a digest of the elided
//! middle + tail verbatim by token budget; bulky old tool outputs pruned; tool
//! pairs repaired. Zero LLM calls.

use crate::error::{Error, ErrorKind, Result};
use crate::formats::ResultsPlacement;
use crate::message::{Message, Role};
use crate::modes::{drop_empty, newest_summary, Decision};
use crate::options::Options;
use crate::plan::facts::{gather, Facts, LATEST_REQUEST};
use crate::plan::pairs::repair;
use crate::plan::prune::edits_for;
use crate::plan::window::{align_back, suffix_within, window, Window};
use crate::plan::{Plan, Step, Synthetic};
use crate::text::{list, one_line, MARKER_PREFIX};

use std::ops::Range;

/// Plans the recency-preserving compaction of `views`.
pub(crate) fn plan(
    views: &[Message<'_>],
    options: &Options,
    placement: ResultsPlacement,
) -> Result<Decision> {
    let w = window(views, options);
    if w.covers_all() {
        return prune_in_place(views, options, placement);
    }
    // The newest summary of an earlier compaction is the condensed past: it stays.
    let carried: Vec<usize> = newest_summary(views, 0)
        .filter(|i| (w.head_end..w.tail_start).contains(i))
        .into_iter()
        .collect();
    let marker = Synthetic::Marker(marker(views, &w, &carried, options));
    Ok(splice(
        views, &w, options, placement, marker, None, &carried,
    ))
}

/// Head + `carried` (messages of the middle kept verbatim) + `middle` (the marker,
/// or a summary) + tail, old tool outputs outside the last `tail_min × 3` messages
/// pruned, empty messages dropped, tool pairs repaired. `replaced` is a message of
/// head or tail left out (an earlier summary the new one replaces).
pub(crate) fn splice(
    views: &[Message<'_>],
    w: &Window,
    options: &Options,
    placement: ResultsPlacement,
    middle: Synthetic,
    replaced: Option<usize>,
    carried: &[usize],
) -> Decision {
    let kept = |i: &usize| Some(*i) != replaced;
    let mut steps: Plan = (0..w.head_end).filter(kept).map(Step::keep).collect();
    steps.extend(carried.iter().map(|&i| Step::keep(i)));
    let first = steps.len() + 1;
    steps.push(Step::Insert(middle));
    steps.extend((w.tail_start..views.len()).filter(kept).map(Step::keep));
    let end = steps.len().saturating_sub(w.tail_min * 3);
    let (steps, _) = prune(steps, first..end, views, options);
    let mut warnings = Vec::new();
    let steps = drop_empty(steps, views, &mut warnings);
    Decision {
        plan: repair(steps, views, placement, true),
        summary: None,
        warnings,
    }
}

/// When head and tail cover everything, only pruning can help, in place: the last
/// `protect_tail_min × 3` messages are protected, or only what fits the tail
/// budget when that is less (at least the newest tool group stays).
fn prune_in_place(
    views: &[Message<'_>],
    options: &Options,
    placement: ResultsPlacement,
) -> Result<Decision> {
    let n = views.len();
    let fits = align_back(views, suffix_within(views, 0, options.tail_budget(), 0), 0);
    let spec = n.saturating_sub(options.protect_tail_min.saturating_mul(3));
    let (steps, pruned) = prune(
        (0..n).map(Step::keep).collect(),
        0..fits.max(spec),
        views,
        options,
    );
    if pruned == 0 {
        return Err(Error::new(
            ErrorKind::TooSmallToCompact,
            format!(
                "history has {n} message{} and protect_head={} plus the tail (protect_tail_min={}, tail budget {} tokens) already cover all of it, and no older tool output exceeds tool_prune_char_threshold={} bytes; lower protect_head, protect_tail_min, tail_budget_ratio or context_window, or use mode \"deterministic\"",
                if n == 1 { "" } else { "s" },
                options.protect_head,
                options.protect_tail_min,
                options.tail_budget(),
                options.tool_prune_char_threshold
            ),
        ));
    }
    let mut warnings = Vec::new();
    let steps = drop_empty(steps, views, &mut warnings);
    Ok(Decision {
        plan: repair(steps, views, placement, true),
        summary: None,
        warnings,
    })
}

/// Prunes the kept messages at output positions `positions`; returns the steps
/// and how many edits that made.
fn prune(
    steps: Plan,
    positions: Range<usize>,
    views: &[Message<'_>],
    options: &Options,
) -> (Plan, usize) {
    let mut pruned = 0;
    let steps = steps
        .into_iter()
        .enumerate()
        .map(|(pos, step)| match step {
            Step::Keep { index, .. } if positions.contains(&pos) => {
                let edits = edits_for(views, index, options.tool_prune_char_threshold);
                pruned += edits.len();
                Step::Keep { index, edits }
            }
            other => other,
        })
        .collect();
    (steps, pruned)
}

/// The marker: a correct count line plus a bounded digest of the elided middle
/// (the middle without the `carried` messages).
fn marker(views: &[Message<'_>], w: &Window, carried: &[usize], options: &Options) -> String {
    let picked: Vec<usize> = (w.head_end..w.tail_start)
        .filter(|i| !carried.contains(i))
        .collect();
    let middle: Vec<&Message> = picked.iter().map(|&i| &views[i]).collect();
    let count = |r: Role| middle.iter().filter(|m| m.role == r).count();
    let others = middle.len() - count(Role::User) - count(Role::Assistant) - count(Role::Tool);
    let total = middle.len();
    let mut text = format!(
        "{MARKER_PREFIX}{total} earlier message{} {} elided to save context space ({} user, {} assistant, {} tool{}). Recent messages are preserved verbatim below.",
        if total == 1 { "" } else { "s" },
        if total == 1 { "was" } else { "were" },
        count(Role::User),
        count(Role::Assistant),
        count(Role::Tool),
        if others > 0 { format!(", {others} other") } else { String::new() },
    );
    // Never let the digest outweigh what it replaces (about 2 bytes a token of the middle).
    let middle_tokens: u64 = middle.iter().map(|m| m.tokens).sum();
    let max_bytes =
        digest_bytes(options).min(usize::try_from(middle_tokens * 2).unwrap_or(usize::MAX));
    let digest = digest(gather(views, &picked), max_bytes);
    if !digest.is_empty() {
        text.push_str("\n\nDigest of the elided messages:\n");
        text.push_str(&digest.join("\n"));
    }
    text
}

/// Digest size: about 5% of the tail budget (4 bytes a token), within [600, 6000] bytes.
fn digest_bytes(options: &Options) -> usize {
    let five_percent = options.tail_budget() / 20 * 4;
    five_percent.clamp(600, 6000) as usize
}

/// Digest lines in priority order, cut to `max_bytes`: the latest user request is
/// always there (shortened if need be), then tools, files, pending work, earlier requests.
fn digest(facts: Facts<'_>, max_bytes: usize) -> Vec<String> {
    let Facts {
        requests,
        tools,
        files,
        pending,
    } = facts;
    let mut lines = Vec::new();
    let mut used = 0;
    if let Some(latest) = requests.last() {
        let line = format!("{LATEST_REQUEST}{}", one_line(latest, max_bytes / 2));
        used += line.len() + 1;
        lines.push(line);
    }
    let mut candidates = Vec::new();
    if !tools.is_empty() {
        candidates.push(format!("- Tools used: {}.", list(&tools, 20)));
    }
    if !files.is_empty() {
        candidates.push(format!("- Key files: {}.", list(&files, 12)));
    }
    candidates.extend(
        pending
            .iter()
            .rev()
            .map(|t| format!("- Pending work: {}", one_line(t, 200))),
    );
    let earlier = requests.len().saturating_sub(1);
    candidates.extend(
        requests[earlier.saturating_sub(3)..earlier]
            .iter()
            .rev()
            .map(|t| format!("- Earlier user request: {}", one_line(t, 200))),
    );
    for line in candidates {
        if used + line.len() + 1 > max_bytes {
            continue;
        }
        used += line.len() + 1;
        lines.push(line);
    }
    lines
}
