//! `deterministic`: leading system messages + one user message holding a bounded,
//! structured index of everything else. Zero LLM calls.

use crate::error::Result;
use crate::formats::ResultsPlacement;
use crate::message::{Message, Role};
use crate::modes::{
    carry, drop_empty, is_summary, newest_summary, nothing_to_summarize, place_added,
    replaced_whole, staying, summary_part, Decision,
};
use crate::options::Options;
use crate::plan::bound::{bound, SUMMARY_BUDGET};
use crate::plan::facts::{gather, result_tool_name};
use crate::plan::pairs::repair;
use crate::plan::prune::describe_call;
use crate::plan::window::{leading_system, pinned};
use crate::plan::{Step, Synthetic};
use crate::summary::prompts::SUMMARY_PREAMBLE;
use crate::text::{count, one_line, truncate, SUMMARY_PREFIX};

/// Opens the summary message.
pub(crate) const PREAMBLE: &str = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.";
/// Closes the summary message; never cut.
pub(crate) const DIRECTIVE: &str = "Continue the conversation from where it left off without asking the user any further questions. Resume directly — do not acknowledge the summary, do not recap what was happening, and do not preface with continuation text.";

const PREVIEW_BYTES: usize = 160;
const MAX_KEY_FILES: usize = 8;

/// Plans the deterministic compaction of `views`: the leading system messages,
/// the messages that stay wherever they are (mid-history system messages, pins,
/// a turn whose tools are still running at the end), then the summary of
/// everything else.
pub(crate) fn plan(
    views: &[Message<'_>],
    options: &Options,
    placement: ResultsPlacement,
) -> Result<Decision> {
    let lead = leading_system(views);
    let pinned = pinned(views, options);
    // The newest earlier summary (from any mode) is merged, never repeated.
    let prior_at = newest_summary(views, lead);
    let prior = prior_at
        .and_then(|i| views[i].texts.get(summary_part(&views[i])?))
        .map(|t| prior_highlights(t));
    let (stays, requests) = staying(views, lead, &pinned, placement);
    let (mut picked, mut carried) = (Vec::new(), Vec::new());
    for (i, &stay) in stays.iter().enumerate().skip(lead) {
        if stay {
            carried.push(i);
        } else if !replaced_whole(views, prior_at, i) {
            picked.push(i);
        }
    }
    if picked
        .iter()
        .all(|&i| views[i].role == Role::Notice || views[i].is_empty())
    {
        return Err(nothing_to_summarize(prior_at.is_some()));
    }

    let mut budget = SUMMARY_BUDGET;
    budget.lines -= 2; // the <summary> tags
    budget.bytes -= "<summary>\n".len() + "\n</summary>".len();
    let size = |lines: &[String]| lines.iter().map(|l| l.len() + 1).sum::<usize>();
    // The new context comes first; what it leaves goes to the earlier context,
    // which is condensed, oldest first.
    let prior_min = prior
        .as_deref()
        .map_or(0, |p| size(&condense(p, PRIOR_MIN_LINES, PRIOR_MIN_BYTES)));
    // The timeline gives way (fewer entries) before the earlier context does.
    let room = |highlights: &[String], timeline: &[String]| {
        let lines = 4 + highlights.len() + timeline.len();
        let bytes = size(highlights) + 2 * highlights.len() + size(timeline) + 100;
        (
            budget.lines.saturating_sub(lines),
            budget.bytes.saturating_sub(bytes),
        )
    };
    let mut shape = TIMELINE_SHAPES.iter();
    let (highlights, timeline) = loop {
        let entries = shape.next().copied().unwrap_or((0, 0));
        let (h, t) = summarize(views, &picked, prior_min, entries);
        let (lines, bytes) = room(&h, &t);
        let enough = lines >= PRIOR_MIN_LINES && bytes >= prior_min;
        if prior.is_none() || enough || entries == (0, 0) {
            break (h, t);
        }
    };
    let mut lines = vec!["Conversation summary:".to_string()];
    match prior {
        Some(prior) => {
            let (room_lines, room_bytes) = room(&highlights, &timeline);
            let prior = condense(&prior, room_lines.max(1), room_bytes);
            lines.push("- Previously compacted context:".into());
            for l in &prior {
                lines.push(format!("  {l}"));
            }
            if !highlights.is_empty() {
                lines.push("- Newly compacted context:".into());
                for l in &highlights {
                    lines.push(format!("  {l}"));
                }
            }
        }
        None => lines.extend(highlights),
    }
    if !timeline.is_empty() {
        lines.push("- Key timeline:".into());
        lines.extend(timeline);
    }
    let summary = format!(
        "<summary>\n{}\n</summary>",
        bound(&lines, budget).join("\n")
    );
    let text = format!("{SUMMARY_PREFIX}{PREAMBLE}\n\n{summary}\n\n{DIRECTIVE}");
    let mut warnings = Vec::new();
    let mut steps = Vec::with_capacity(lead + carried.len() + 1);
    for i in 0..lead {
        steps.push(Step::keep(i));
    }
    let mut steps = drop_empty(steps, views, &mut warnings);
    let mut kept = Vec::with_capacity(carried.len());
    for &i in &carried {
        kept.push(carry(views, i, &requests));
    }
    let carried = drop_empty(kept, views, &mut warnings);
    steps.extend(carried);
    steps.push(Step::Insert(Synthetic::Summary(text)));
    // Pinned calls keep their answers (or stubs); a pinned assistant does not
    // open the messages where a user turn must.
    place_added(&mut steps, views, placement);
    let steps = repair(steps, views, placement, true);
    Ok(Decision {
        plan: steps,
        summary: Some(summary),
        warnings,
    })
}

/// Timeline entries (oldest, newest) to try, fewer each time the earlier context
/// needs the room.
const TIMELINE_SHAPES: [(usize, usize); 4] = [(3, 5), (1, 3), (0, 2), (0, 0)];

/// Lines and bytes the earlier context keeps at least.
const PRIOR_MIN_LINES: usize = 4;
const PRIOR_MIN_BYTES: usize = 320;

/// The earlier context in at most `lines` lines and about `bytes` bytes: its scope
/// lines summed into one, then its oldest lines left out, with a count.
fn condense(prior: &[String], lines: usize, bytes: usize) -> Vec<String> {
    let fits =
        |l: &[String]| l.len() <= lines && l.iter().map(|l| l.len() + 1).sum::<usize>() <= bytes;
    if fits(prior) {
        return prior.to_vec();
    }
    // Scope lines of earlier rounds become one running total.
    let mut total = None;
    let mut rest = Vec::new();
    for line in prior {
        match line
            .strip_prefix("- Scope: ")
            .and_then(|s| s.split_whitespace().next())
            .and_then(|n| n.parse::<usize>().ok())
        {
            Some(n) => *total.get_or_insert(0) += n,
            None => rest.push(line.clone()),
        }
    }
    let scope = total.map(|n| {
        format!(
            "- Scope: {} compacted in earlier rounds.",
            count(n as u64, "message")
        )
    });
    // Keep the newest lines that fit after the scope and the count line.
    let mut kept: Vec<String> = Vec::new();
    let mut used = scope.as_ref().map_or(0, |s| s.len() + 1) + 40;
    for line in rest.iter().rev() {
        if kept.len() + 2 >= lines || used + line.len() + 1 > bytes {
            break;
        }
        used += line.len() + 1;
        kept.push(line.clone());
    }
    kept.reverse();
    let left_out = rest.len() - kept.len();
    let mut out: Vec<String> = scope.into_iter().collect();
    if left_out > 0 {
        out.push(format!(
            "[... {} condensed]",
            count(left_out as u64, "older line")
        ));
    }
    out.extend(kept);
    out
}

/// The highlight lines of an earlier summary (its timeline is dropped; nested
/// previous/new sections are flattened so indentation never accumulates; the
/// sections of an LLM summary become `- Section: line` bullets, `(none)` left out).
fn prior_highlights(text: &str) -> Vec<String> {
    let mut body = text.strip_prefix(SUMMARY_PREFIX).unwrap_or(text).trim();
    for preamble in [PREAMBLE, SUMMARY_PREAMBLE] {
        body = body.strip_prefix(preamble).unwrap_or(body).trim();
    }
    let body = body.strip_suffix(DIRECTIVE).unwrap_or(body).trim();
    // An `<analysis>` block is the writer's scratch work, not the summary.
    // (its closing tag searched after its opening one: a stray one before it
    // does not count)
    let analysis = body.find("<analysis>").and_then(|a| {
        let b = a + body[a..].find("</analysis>")?;
        Some((a, b + "</analysis>".len()))
    });
    let stripped;
    let body = match analysis {
        Some((a, b)) => {
            stripped = format!("{}{}", &body[..a], &body[b..]);
            stripped.trim()
        }
        None => body,
    };
    let body = match (body.find("<summary>"), body.rfind("</summary>")) {
        (Some(a), Some(b)) if a < b => &body[a + "<summary>".len()..b],
        _ => body,
    };
    let mut out = Vec::new();
    let mut nested = false;
    let mut section: Option<&str> = None;
    for line in body.lines() {
        let trimmed = line.trim_end();
        match trimmed.trim() {
            "" | "Conversation summary:" | "Summary:" | "(none)" => continue,
            // the closing line of older summaries, not context
            "Recent messages are preserved verbatim." => continue,
            t if t.starts_with("[... ") && t.ends_with(" condensed]") => continue,
            t if t.starts_with('#') => {
                section = Some(t.trim_start_matches('#').trim());
                continue;
            }
            t if section.is_some() => {
                let item = t.trim_start_matches(['-', '*', '•', ' ']);
                out.push(format!("- {}: {item}", section.unwrap_or_default()));
                continue;
            }
            "- Key timeline:" => break,
            "- Previously compacted context:" | "- Newly compacted context:" => {
                nested = true;
                continue;
            }
            t if t.starts_with("[... ") && t.ends_with("omitted for brevity]") => continue,
            _ => {}
        }
        let line = if nested {
            trimmed.strip_prefix("  ").unwrap_or(trimmed)
        } else {
            trimmed
        };
        out.push(line.to_string());
    }
    out
}

/// Highlights and timeline of the messages `picked`; `reserved` bytes of the
/// budget are kept for other lines.
fn summarize(
    views: &[Message<'_>],
    picked: &[usize],
    reserved: usize,
    (oldest, newest): (usize, usize),
) -> (Vec<String>, Vec<String>) {
    let msgs: Vec<&Message> = picked.iter().map(|&i| &views[i]).collect();
    let of_role = |r: Role| msgs.iter().filter(|m| m.role == r).count();
    let mut out = vec![format!(
        "- Scope: {} compacted (user={}, assistant={}, tool={}).",
        count(msgs.len() as u64, "earlier message"),
        of_role(Role::User),
        of_role(Role::Assistant),
        of_role(Role::Tool)
    )];

    let facts = gather(views, picked);
    if !facts.tools.is_empty() {
        out.push(fitting_list("- Tools mentioned: ", facts.tools.iter()));
    }
    if !facts.requests.is_empty() {
        out.push("- Recent user requests:".into());
        let from = facts.requests.len().saturating_sub(3);
        out.extend(
            facts.requests[from..]
                .iter()
                .map(|t| format!("  - {}", one_line(t, 120))),
        );
    }
    if !facts.pending.is_empty() {
        out.push("- Pending work:".into());
        out.extend(
            facts
                .pending
                .iter()
                .map(|t| format!("  - {}", one_line(t, 120))),
        );
    }
    if !facts.files.is_empty() {
        out.push(fitting_list(
            "- Key files referenced: ",
            facts.files.iter().take(MAX_KEY_FILES),
        ));
    }

    if let Some(t) = msgs
        .iter()
        .rev()
        .filter(|m| m.role == Role::Assistant)
        .find_map(|m| m.first_text())
    {
        out.push(format!("- Current work: {}", one_line(t, 140)));
    }

    // Share what the highlights leave of the budget among the timeline entries,
    // so the newest entries are shortened rather than dropped.
    let entries = msgs.len().min(oldest + newest);
    let left = SUMMARY_BUDGET
        .bytes
        .saturating_sub(out.iter().map(|l| l.len() + 1).sum::<usize>() + 120 + reserved);
    let width = (left / entries.max(1)).clamp(64, PREVIEW_BYTES);
    let mut timeline = Vec::new();
    let entry = |i: usize| {
        let line = format!(
            "  - {}: {}",
            msgs[i].role.label(),
            preview(views, picked[i])
        );
        truncate(&line, width)
    };
    if msgs.len() <= oldest + newest {
        timeline.extend((0..msgs.len()).map(entry));
    } else if oldest + newest > 0 {
        timeline.extend((0..oldest).map(entry));
        timeline.push(format!(
            "  - ... ({} omitted) ...",
            count((msgs.len() - oldest - newest) as u64, "message")
        ));
        timeline.extend((msgs.len() - newest..msgs.len()).map(entry));
    }
    (out, timeline)
}

/// `prefix` + as many `items` as fit one summary line, then `(+N more)`.
fn fitting_list<'a>(prefix: &str, items: impl Iterator<Item = impl AsRef<str> + 'a>) -> String {
    let items: Vec<_> = items.collect();
    let mut line = prefix.to_string();
    for (k, item) in items.iter().enumerate() {
        let more = items.len() - k;
        let sep = if k == 0 { "" } else { ", " };
        let reserve = if more > 1 { 12 } else { 1 };
        if line.len() + sep.len() + item.as_ref().len() + reserve > SUMMARY_BUDGET.line_bytes {
            line.push_str(&format!(" (+{more} more)."));
            return line;
        }
        line.push_str(sep);
        line.push_str(item.as_ref());
    }
    line.push('.');
    line
}

/// One timeline line: texts, tool calls and tool results (with their output).
fn preview(views: &[Message<'_>], i: usize) -> String {
    let m = &views[i];
    let mut parts = Vec::new();
    // An earlier summary merged into the caller's message is merged as the
    // earlier context, not repeated here.
    let merged = |t: &str| is_summary(t.trim()) && m.own_text().is_some();
    for t in m
        .texts
        .iter()
        .filter(|t| !t.trim().is_empty() && !merged(t))
    {
        parts.push(one_line(t, PREVIEW_BYTES));
    }
    for c in &m.calls {
        parts.push(format!("tool_use {}", describe_call(c)));
    }
    for r in &m.results {
        let name = result_tool_name(views, r).or(r.name).unwrap_or("unknown");
        let error = if r.is_error { "error " } else { "" };
        parts.push(format!(
            "tool_result {name}: {error}{}",
            one_line(&r.text, PREVIEW_BYTES)
        ));
    }
    if parts.is_empty() {
        "(empty)".into()
    } else {
        one_line(&parts.join(" | "), PREVIEW_BYTES)
    }
}
