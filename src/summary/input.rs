//! The summarizer's input (SPEC §6): the messages to summarize, role-separated in
//! the input's format, never inlined as one text blob.
//!
//! Tool outputs are capped at `max_tool_result_bytes` (the prune threshold does not
//! apply here), with data URIs and long hex or base64 runs replaced by a note.
//! When that does not fit the summarizer's window, the largest tool outputs are
//! shortened first, then the transcript is sampled with explicit gap markers, and
//! only then are the largest remaining texts shortened in their middle.

use std::borrow::Cow;

use crate::formats::ResultsPlacement;
use crate::message::{Message, Role};
use crate::modes::summary_part;
use crate::options::{Options, Warning};
use crate::plan::fit::{shrink, Entry, Piece, Target};
use crate::plan::pairs::repair;
use crate::plan::prune::shorten_strings;
use crate::plan::{Edit, Plan, Step, Synthetic};
use crate::text::{count, cut_middle};
use crate::tokens::TokenCounter;

/// Data runs shorter than this stay (a hash or a short id is information).
const DATA_RUN: usize = 200;
/// Shortening a tool output stops here (tokens) before the transcript is sampled.
const OUTPUT_FLOOR: u64 = 100;
/// The last resort shortens texts and outputs down to this (tokens).
const HARD_FLOOR: u64 = 24;
/// The input never gets less room than this, however small the window.
const MIN_BUDGET: u64 = 1_000;
/// Of the sampling budget, the newest messages get this share first, then the
/// oldest up to `OLDEST_UNTIL`; evenly spaced messages fill the rest.
const NEWEST_SHARE: f64 = 0.5;
const OLDEST_UNTIL: f64 = 0.7;

/// A summarizer input: the plan of its messages and their estimated tokens.
#[derive(Debug)]
pub(crate) struct SummaryInput {
    /// The messages to summarize (kept input messages, edited, plus gap notes).
    pub plan: Plan,
    /// Their estimated tokens.
    pub tokens: u64,
    /// What had to be left out or shortened to fit.
    pub warnings: Vec<Warning>,
}

/// Tokens the summarizer's input may take: the summary model's window
/// ([`Options::summary_window`]) minus the answer
/// (`max_summary_tokens`) minus `fixed` (system text, final instruction), less 5%
/// for the estimator's error; never below [`MIN_BUDGET`] (with a warning).
pub(crate) fn budget(options: &Options, fixed: u64) -> (u64, Option<Warning>) {
    let window = options.summary_window();
    let room = window
        .saturating_sub(options.max_summary_tokens)
        .saturating_sub(fixed);
    let budget = room - room / 20;
    if budget >= MIN_BUDGET {
        return (budget, None);
    }
    let warning = Warning {
        code: "SUMMARY_WINDOW_TOO_SMALL",
        message: format!(
            "the summary model's window ({window} tokens) minus maxSummaryTokens {} and the instructions ({fixed} tokens) leaves the summarizer {budget} tokens for the conversation; it gets {MIN_BUDGET}, so the request may exceed the window: lower maxSummaryTokens, or set summaryContextWindow to the summary model's window",
            options.max_summary_tokens
        ),
    };
    (MIN_BUDGET, Some(warning))
}

/// Reads message `i` into an entry: reasoning dropped, tool outputs cleaned and
/// capped, oversized call arguments shortened, text part `summary` (an earlier
/// summary sent apart) left out. `None` when nothing is left to send.
fn entry<'a>(
    views: &[Message<'a>],
    i: usize,
    summary: Option<usize>,
    options: &Options,
    counter: &dyn TokenCounter,
) -> Option<Entry<'a>> {
    let m = &views[i];
    if m.role == Role::Notice || m.is_empty() {
        return None;
    }
    let mut edits = Vec::new();
    let mut fixed = m.tokens;
    if !m.reasoning.is_empty() {
        if m.texts.iter().all(|t| t.trim().is_empty())
            && m.calls.is_empty()
            && m.results.is_empty()
            && m.images == 0
        {
            return None; // nothing but reasoning
        }
        edits.push(Edit::DropReasoning);
        fixed = fixed.saturating_sub(m.reasoning.iter().map(|r| counter.count(r)).sum());
    }
    for (k, c) in m.calls.iter().enumerate() {
        let text = c.args.text();
        if text.len() <= options.max_tool_result_bytes || c.sealed {
            continue;
        }
        if let Some(parsed) = c.args.parsed() {
            let args = shorten_strings(&parsed);
            fixed = fixed.saturating_sub(counter.count(&text)) + counter.count(&args.to_string());
            edits.push(Edit::ShortenArgs { call: k, args });
        }
    }
    let mut pieces = Vec::new();
    for (k, t) in m.texts.iter().enumerate() {
        let tokens = counter.count(t);
        fixed = fixed.saturating_sub(tokens);
        if Some(k) == summary {
            edits.push(Edit::DropText { part: k });
            continue;
        }
        pieces.push(Piece {
            target: Target::Text(k),
            full: Cow::Borrowed(*t),
            sent: None,
            tokens,
            shortened: false,
        });
    }
    for (k, r) in m.results.iter().enumerate() {
        let original = r.tokens;
        fixed = fixed.saturating_sub(original);
        let clean = without_data_runs(&r.text);
        let capped = cut_middle(&clean, options.max_tool_result_bytes);
        let piece = if capped.len() == r.text.len() && clean.len() == r.text.len() {
            Piece {
                target: Target::Output(k),
                full: r.text.clone(),
                sent: None,
                tokens: original,
                shortened: false,
            }
        } else {
            Piece {
                target: Target::Output(k),
                tokens: counter.count(&capped),
                full: Cow::Owned(clean.into_owned()),
                sent: Some(capped),
                shortened: false,
            }
        };
        pieces.push(piece);
    }
    Some(Entry {
        index: i,
        fixed,
        edits,
        pieces,
        starts_group: !m.has_results(),
    })
}

/// A gap marker's text.
fn gap_note(left_out: usize) -> String {
    format!(
        "[… {left_out} message{} left out here: the conversation is longer than the summarizer's context window …]",
        if left_out == 1 { "" } else { "s" }
    )
}

/// Which groups of messages to send when not all fit `budget`: the newest first,
/// then the oldest, then evenly spaced ones in between; always the newest group.
/// Each kept group is charged a gap marker (one may open before it).
fn sample(groups: &[u64], budget: u64, gap_tokens: u64) -> Vec<bool> {
    struct Picker<'g> {
        groups: &'g [u64],
        keep: Vec<bool>,
        used: u64,
        gap: u64,
    }
    impl Picker<'_> {
        fn take(&mut self, g: usize, limit: u64) -> bool {
            let cost = self.groups[g] + self.gap;
            let fits = !self.keep[g] && self.used + cost <= limit;
            if fits {
                self.keep[g] = true;
                self.used += cost;
            }
            fits
        }
    }
    let n = groups.len();
    let mut p = Picker {
        groups,
        keep: vec![false; n],
        used: 0,
        gap: gap_tokens,
    };
    let share = |f: f64| (budget as f64 * f) as u64;
    if let Some(last) = n.checked_sub(1) {
        p.take(last, u64::MAX);
    }
    for g in (0..n).rev() {
        if !p.take(g, share(NEWEST_SHARE)) {
            break;
        }
    }
    for g in 0..n {
        if !p.take(g, share(OLDEST_UNTIL)) {
            break;
        }
    }
    // Fill the rest with groups spread evenly over what is still left out.
    let left: Vec<usize> = (0..n).filter(|g| !p.keep[*g]).collect();
    let average = (left.iter().map(|g| groups[*g]).sum::<u64>() / left.len().max(1) as u64).max(1);
    let slots = (budget.saturating_sub(p.used) / (average + gap_tokens)).max(1) as usize;
    let stride = (left.len() / slots).max(1);
    for g in left.iter().skip(stride / 2).step_by(stride) {
        p.take(*g, budget);
    }
    p.keep
}

/// Builds the summarizer's input from input messages `picked` (in order) so that
/// it fits `budget` tokens. `replaced`: the message holding the earlier summary
/// the summarizer gets as `previousSummary` (not sent twice when it was merged
/// into a caller's message that is summarized).
pub(crate) fn build(
    views: &[Message<'_>],
    picked: &[usize],
    replaced: Option<usize>,
    options: &Options,
    counter: &dyn TokenCounter,
    budget: u64,
    placement: ResultsPlacement,
) -> SummaryInput {
    let mut entries: Vec<Entry> = picked
        .iter()
        .filter_map(|&i| {
            let summary = (Some(i) == replaced)
                .then(|| summary_part(&views[i]))
                .flatten();
            entry(views, i, summary, options, counter)
        })
        .collect();
    let before: u64 = entries.iter().map(Entry::tokens).sum();
    let gap_tokens = counter.count(&gap_note(1000)) + counter.profile().message_overhead();
    let is_output = |t: Target| matches!(t, Target::Output(_));
    shrink(&mut entries, budget, OUTPUT_FLOOR, is_output, counter);

    // Sample whole tool groups when shortening outputs was not enough.
    let total: u64 = entries.iter().map(Entry::tokens).sum();
    let mut left_out = 0;
    let mut kept: Vec<Option<Entry>> = Vec::with_capacity(entries.len());
    if total > budget {
        let mut group_of = Vec::with_capacity(entries.len());
        let mut groups: Vec<u64> = Vec::new();
        for e in &entries {
            if e.starts_group || groups.is_empty() {
                groups.push(0);
            }
            if let Some(g) = groups.last_mut() {
                *g += e.tokens();
            }
            group_of.push(groups.len() - 1);
        }
        let keep = sample(&groups, budget, gap_tokens);
        for (e, g) in entries.into_iter().zip(group_of) {
            if keep[g] {
                kept.push(Some(e));
            } else {
                left_out += 1;
                kept.push(None);
            }
        }
    } else {
        kept.extend(entries.into_iter().map(Some));
    }

    // A single group larger than the budget: shorten everything that is left.
    let mut sent: Vec<Entry> = Vec::new();
    let mut gaps = Vec::new(); // (position in `sent`, messages left out before it)
    let mut run = 0;
    for e in kept {
        match e {
            Some(e) => {
                if run > 0 {
                    gaps.push((sent.len(), run));
                    run = 0;
                }
                sent.push(e);
            }
            None => run += 1,
        }
    }
    if run > 0 {
        gaps.push((sent.len(), run));
    }
    let room = budget.saturating_sub(gaps.len() as u64 * gap_tokens);
    shrink(&mut sent, room, HARD_FLOOR, |_| true, counter);
    let shortened = |output: bool| {
        sent.iter()
            .flat_map(|e| &e.pieces)
            .filter(|p| p.shortened && is_output(p.target) == output)
            .count()
    };
    let (outputs, texts) = (shortened(true), shortened(false));

    let tokens = sent.iter().map(Entry::tokens).sum::<u64>() + gaps.len() as u64 * gap_tokens;
    let mut plan: Plan = Vec::with_capacity(sent.len() + gaps.len() + 1);
    let mut gaps = gaps.into_iter().peekable();
    for (pos, e) in sent.into_iter().enumerate() {
        if let Some((_, n)) = gaps.next_if(|(at, _)| *at == pos) {
            plan.push(Step::Insert(Synthetic::Note(gap_note(n))));
        }
        plan.push(e.step());
    }
    if let Some((_, n)) = gaps.next() {
        plan.push(Step::Insert(Synthetic::Note(gap_note(n))));
    }
    // Providers want a user message first (the summarizer sees no head).
    let first_is_user = match plan.first() {
        Some(Step::Keep { index, .. }) => views[*index].role == Role::User,
        _ => true,
    };
    if !first_is_user {
        plan.insert(
            0,
            Step::Insert(Synthetic::Note(
                "[The part of the conversation to summarize starts here.]".into(),
            )),
        );
    }

    let mut warnings = Vec::new();
    if outputs + left_out + texts > 0 {
        warnings.push(Warning {
            code: "SUMMARY_INPUT_SHRUNK",
            message: format!(
                "the conversation to summarize (about {}) did not fit the {} the summarizer's window leaves for it, so {} shortened, {} left out at gap markers and {} shortened",
                count(before, "token"),
                count(budget, "token"),
                count(outputs as u64, "tool output"),
                count(left_out as u64, "message"),
                count(texts as u64, "text")
            ),
        });
    }
    SummaryInput {
        plan: repair(plan, views, placement, false),
        tokens,
        warnings,
    }
}

/// Whether `b` may be part of a base64 (or base64url) run.
fn is_base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'-' | b'_')
}

/// `text` with data URIs and runs of at least [`DATA_RUN`] hex or base64
/// characters replaced by a note saying what was there: the summarizer cannot
/// read them and they cost many tokens.
pub(crate) fn without_data_runs(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if !is_base64(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_base64(b[i]) {
            i += 1;
        }
        let run = &b[start..i];
        // `data:<media type>,<payload>`: the run ends at the colon after "data".
        let (from, note) = if run.ends_with(b"data") && b.get(i) == Some(&b':') {
            match data_uri(text, i + 1) {
                Some((end, note)) => {
                    let from = i - 4;
                    i = end;
                    (from, note)
                }
                None => continue,
            }
        } else {
            match run_note(run) {
                Some(note) => (start, note),
                None => continue,
            }
        };
        out.push_str(&text[copied..from]);
        out.push_str(&note);
        copied = i;
    }
    if out.is_empty() {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// A note for a data run, if `run` is one: all hex, or base64, whose upper-case
/// letters, lower-case letters and digits each make up at least a twentieth of it
/// (encoded bytes look random; a long identifier or `xxxx…` does not).
fn run_note(run: &[u8]) -> Option<String> {
    if run.len() < DATA_RUN {
        return None;
    }
    if run.iter().all(u8::is_ascii_hexdigit) {
        return Some(format!("[hex data removed — {} chars]", run.len()));
    }
    let share = |f: fn(&u8) -> bool| run.iter().filter(|b| f(b)).count() * 20 >= run.len();
    (share(u8::is_ascii_uppercase) && share(u8::is_ascii_lowercase) && share(u8::is_ascii_digit))
        .then(|| format!("[base64 data removed — {} chars]", run.len()))
}

/// The end of a `data:` URI whose media type starts at `at`, and its note, when
/// its payload is long enough to remove.
fn data_uri(text: &str, at: usize) -> Option<(usize, String)> {
    let b = text.as_bytes();
    let comma = at + b.get(at..)?.iter().take(100).position(|c| *c == b',')?;
    let mime = text.get(at..comma)?.split(';').next()?;
    let mut end = comma + 1;
    while end < b.len() && is_base64(b[end]) {
        end += 1;
    }
    let payload = end - comma - 1;
    (payload >= DATA_RUN).then(|| {
        let what = if mime.is_empty() { "data" } else { mime };
        (end, format!("[{what} data removed — {payload} bytes]"))
    })
}
