//! Measuring a plan in tokens and making it smaller by cutting texts in their
//! middle: shared by the fitting of a result to the window and by the
//! summarizer's input.

use std::borrow::Cow;

use crate::message::{Message, Role};
use crate::plan::window::{group_starts, Window};
use crate::plan::{Edit, Plan, Step, Synthetic};
use crate::text::cut_middle;
use crate::tokens::TokenCounter;

/// What a shrinkable piece of a message is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Target {
    /// The message's `k`-th tool output.
    Output(usize),
    /// The message's `k`-th text part.
    Text(usize),
}

/// A tool output or text of a message, as it will be sent.
#[derive(Debug)]
pub(crate) struct Piece<'a> {
    pub target: Target,
    /// The text to shorten from (a tool output already cleaned of data runs).
    pub full: Cow<'a, str>,
    /// What is sent; `None`: the message's own text, unchanged.
    pub sent: Option<String>,
    /// Tokens of what is sent.
    pub tokens: u64,
    /// Whether it was shortened to fit the window (beyond the cap).
    pub shortened: bool,
}

impl Piece<'_> {
    pub(crate) fn text(&self) -> &str {
        self.sent.as_deref().unwrap_or(&self.full)
    }

    /// Shortens the piece to about `tokens`, proportionally in bytes.
    fn shorten_to(&mut self, tokens: u64, counter: &dyn TokenCounter) {
        if self.tokens <= tokens {
            return;
        }
        let bytes = self.text().len() as u64 * tokens / self.tokens.max(1);
        let short = cut_middle(&self.full, bytes as usize);
        self.tokens = counter.count(&short);
        self.sent = Some(short);
        self.shortened = true;
    }
}

/// One message of the input.
#[derive(Debug)]
pub(crate) struct Entry<'a> {
    pub index: usize,
    /// Tokens outside the pieces (framing, calls, images).
    pub fixed: u64,
    pub edits: Vec<Edit>,
    pub pieces: Vec<Piece<'a>>,
    /// Whether a tool group starts here (the message carries no results).
    pub starts_group: bool,
}

impl Entry<'_> {
    pub(crate) fn tokens(&self) -> u64 {
        self.fixed + self.pieces.iter().map(|p| p.tokens).sum::<u64>()
    }

    pub(crate) fn step(self) -> Step {
        let mut edits = self.edits;
        for p in self.pieces {
            let Some(text) = p.sent else { continue };
            edits.push(match p.target {
                Target::Output(result) => Edit::ReplaceOutput { result, text },
                Target::Text(part) => Edit::ReplaceText { part, text },
            });
        }
        Step::Keep {
            index: self.index,
            edits,
        }
    }
}

/// The largest cap `level ≥ floor` such that cutting every size above it to it
/// saves at least `need`; `floor` when even that is not enough. (A binary search:
/// the saving only grows as the cap falls.)
fn level(sizes: &[u64], floor: u64, need: u64) -> u64 {
    let saving = |cap: u64| sizes.iter().map(|s| s.saturating_sub(cap)).sum::<u64>();
    let (mut lo, mut hi) = (
        floor,
        sizes.iter().copied().max().unwrap_or(floor).max(floor),
    );
    if saving(lo) < need {
        return floor;
    }
    // saving(lo) >= need; find the largest such cap
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if saving(mid) >= need {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// Shortens the pieces `pick` selects, largest first, until `entries` fit
/// `budget` or every such piece is down to `floor`.
pub(crate) fn shrink(
    entries: &mut [Entry<'_>],
    budget: u64,
    floor: u64,
    pick: impl Fn(Target) -> bool,
    counter: &dyn TokenCounter,
) {
    // The estimate of a cut text is not exactly proportional: a few rounds settle it.
    for _ in 0..3 {
        let total: u64 = entries.iter().map(Entry::tokens).sum();
        if total <= budget {
            return;
        }
        let sizes: Vec<u64> = entries
            .iter()
            .flat_map(|e| &e.pieces)
            .filter(|p| pick(p.target))
            .map(|p| p.tokens)
            .collect();
        let cap = level(&sizes, floor, total - budget);
        for p in entries.iter_mut().flat_map(|e| &mut e.pieces) {
            if pick(p.target) {
                p.shorten_to(cap, counter);
            }
        }
    }
}

/// Estimated tokens of one step of a plan, from the views' counts: an edit
/// changes a message's count by what it takes out and puts in.
pub(crate) fn step_tokens(step: &Step, views: &[Message<'_>], counter: &dyn TokenCounter) -> u64 {
    let overhead = counter.profile().message_overhead();
    match step {
        Step::Insert(Synthetic::Stubs(ids)) => {
            ids.iter().map(|s| overhead + counter.count(s.text)).sum()
        }
        Step::Insert(
            Synthetic::Summary(text) | Synthetic::Marker(text) | Synthetic::Note(text),
        ) => overhead + counter.count(text),
        Step::Keep { index, edits } => {
            let m = &views[*index];
            let mut t = m.tokens;
            for e in edits {
                let (out, put) = match e {
                    Edit::ReplaceOutput { result, text } => (
                        m.results.get(*result).map_or(0, |r| r.tokens),
                        counter.count(text),
                    ),
                    Edit::ReplaceText { part, text } => (
                        m.texts.get(*part).map_or(0, |t| counter.count(t)),
                        counter.count(text),
                    ),
                    Edit::DropText { part } => {
                        (m.texts.get(*part).map_or(0, |t| counter.count(t)), 0)
                    }
                    Edit::ShortenArgs { call, args } => (
                        m.calls
                            .get(*call)
                            .map_or(0, |c| counter.count(&c.args.text())),
                        counter.count(&args.to_string()),
                    ),
                    Edit::DropResults(which) => (
                        which
                            .iter()
                            .filter_map(|k| m.results.get(*k))
                            .map(|r| r.tokens)
                            .sum(),
                        0,
                    ),
                    Edit::AddStubs(ids) => (0, ids.iter().map(|s| counter.count(s.text)).sum()),
                    Edit::DropReasoning => (m.reasoning.iter().map(|r| counter.count(r)).sum(), 0),
                    Edit::ResultsFirst => (0, 0),
                };
                t = t.saturating_sub(out).saturating_add(put);
            }
            t
        }
    }
}

/// Estimated tokens of a plan.
pub(crate) fn plan_tokens(plan: &Plan, views: &[Message<'_>], counter: &dyn TokenCounter) -> u64 {
    plan.iter()
        .map(|s| step_tokens(s, views, counter))
        .fold(0, u64::saturating_add)
}

/// A kept step as an entry whose texts and tool outputs can be cut (their
/// current text, edits included, is what gets cut). `frozen` messages (system
/// prompts, the newest request) get no pieces.
fn entry_of<'a>(
    step: &Step,
    views: &[Message<'a>],
    counter: &dyn TokenCounter,
    frozen: bool,
) -> Option<Entry<'a>> {
    let Step::Keep { index, edits } = step else {
        return None;
    };
    let m = &views[*index];
    let total = step_tokens(step, views, counter);
    let mut pieces: Vec<Piece> = Vec::new();
    let mut kept = Vec::new();
    if !frozen {
        // A signed text goes back as it is (the adapter would not apply a cut).
        let dropped = |k: usize| edits.contains(&Edit::DropText { part: k });
        for (k, t) in m.texts.iter().enumerate() {
            if !m.sealed_texts.contains(&k) && !dropped(k) {
                pieces.push(piece(Target::Text(k), Cow::Borrowed(*t), false, counter));
            }
        }
        for (k, r) in m.results.iter().enumerate() {
            pieces.push(piece(Target::Output(k), r.text.clone(), false, counter));
        }
    }
    for e in edits {
        let target = match e {
            Edit::ReplaceOutput { result, .. } => Target::Output(*result),
            Edit::ReplaceText { part, .. } => Target::Text(*part),
            _ => {
                kept.push(e.clone());
                continue;
            }
        };
        let text = match e {
            Edit::ReplaceOutput { text, .. } | Edit::ReplaceText { text, .. } => text,
            _ => continue,
        };
        match pieces.iter_mut().find(|p| p.target == target) {
            Some(p) => *p = piece(target, Cow::Owned(text.clone()), true, counter),
            None => kept.push(e.clone()), // frozen: the edit stays as it is
        }
    }
    // Results a repair drops are not sent; neither are their pieces.
    pieces.retain(|p| {
        !kept.iter().any(|e| matches!((e, p.target), (Edit::DropResults(w), Target::Output(k)) if w.contains(&k)))
    });
    let in_pieces: u64 = pieces.iter().map(|p| p.tokens).sum();
    Some(Entry {
        index: *index,
        fixed: total.saturating_sub(in_pieces),
        edits: kept,
        pieces,
        starts_group: !m.has_results(),
    })
}

/// A piece whose text is `full`; `edited`: it comes from an earlier edit, so it is
/// written back as an edit even when not cut further.
fn piece<'a>(
    target: Target,
    full: Cow<'a, str>,
    edited: bool,
    counter: &dyn TokenCounter,
) -> Piece<'a> {
    Piece {
        target,
        tokens: counter.count(&full),
        sent: edited.then(|| full.to_string()),
        full,
        shortened: false,
    }
}

/// Cuts the largest texts and tool outputs of `plan` in their middle, with a
/// visible marker, until it fits `target` tokens or everything is down to a
/// floor. System messages and the messages `frozen` names are never cut;
/// neither are tool-call arguments or ids. Returns the plan and how many texts
/// were cut.
pub(crate) fn cut_texts(
    plan: Plan,
    views: &[Message<'_>],
    counter: &dyn TokenCounter,
    target: u64,
    frozen: impl Fn(usize) -> bool,
) -> (Plan, usize) {
    const FLOOR: u64 = 64;
    let entries: Vec<Option<Entry>> = plan
        .iter()
        .map(|s| match s {
            Step::Keep { index, .. } => {
                let frozen = views[*index].role == Role::System || frozen(*index);
                entry_of(s, views, counter, frozen)
            }
            Step::Insert(_) => None,
        })
        .collect();
    let others: u64 = plan
        .iter()
        .zip(&entries)
        .filter(|(_, e)| e.is_none())
        .map(|(s, _)| step_tokens(s, views, counter))
        .sum();
    let mut cuttable: Vec<Entry> = entries.into_iter().flatten().collect();
    shrink(
        &mut cuttable,
        target.saturating_sub(others),
        FLOOR,
        |_| true,
        counter,
    );
    let cut = cuttable
        .iter()
        .flat_map(|e| &e.pieces)
        .filter(|p| p.shortened)
        .count();
    if cut == 0 {
        return (plan, 0);
    }
    // Every kept step became an entry, in order.
    let mut cuttable = cuttable.into_iter();
    let plan = plan
        .into_iter()
        .map(|s| match s {
            Step::Keep { .. } => cuttable.next().map_or(s, Entry::step),
            insert => insert,
        })
        .collect();
    (plan, cut)
}

/// Which messages a head + middle + tail result keeps verbatim, as fitting chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Head and tail.
    pub w: Window,
    /// Tokens that pruning tool outputs and arguments inside the protected tail
    /// saves at least (never those of the newest tool group): 0 none, [`ALL`]
    /// every one.
    pub prune_tail: u64,
    /// Whether the tail gave way past where the window put it.
    pub shortened: bool,
}

/// Every tool output and argument inside the protected tail (see [`Layout`]).
pub(crate) const ALL: u64 = u64::MAX;

/// Chooses head and tail so that the result fits `target` tokens, as cheaply as
/// possible, in this order: the window as configured; then old tool outputs
/// inside the protected tail pruned too, only as many as it takes (the newest
/// turn's stay); then fewer tail messages, a tool group at
/// a time, but never fewer than the newest group. `measure` gives the result's
/// tokens for a layout. When nothing fits, the answer is the smallest layout,
/// and `false`.
pub(crate) fn layout(
    views: &[Message<'_>],
    w: Window,
    newest: usize,
    target: u64,
    measure: impl Fn(&Layout) -> u64,
) -> (Layout, bool) {
    let plain = Layout {
        w,
        prune_tail: 0,
        shortened: false,
    };
    let pruned = Layout {
        prune_tail: ALL,
        ..plain
    };
    // A window with nothing between head and tail goes straight to a shorter tail.
    if w.tail_start > w.head_end {
        if measure(&plain) <= target {
            return (plain, true);
        }
        if measure(&pruned) <= target {
            return (fewest_cuts(pruned, &measure, target), true);
        }
    }
    // Later tail starts give smaller results: find the earliest that fits.
    let n = views.len();
    let starts = group_starts(views, w.tail_start.max(w.head_end) + 1, newest + 1);
    let at = |s: usize| Layout {
        w: Window {
            tail_start: s,
            tail_min: n - s,
            ..w
        },
        prune_tail: ALL,
        shortened: true,
    };
    let Some(&last) = starts.last() else {
        return (pruned, false);
    };
    let first_fit = starts.partition_point(|&s| measure(&at(s)) > target);
    match starts.get(first_fit) {
        Some(&s) => (fewest_cuts(at(s), &measure, target), true),
        None => (at(last), false),
    }
}

/// `fits` (a layout that fits `target` with every tail cut) with only the cuts
/// it takes: asked to save what the layout without them is over `target` by,
/// and more by what each try still misses (pruning's own count of a cut can
/// differ from the plan's: a repair, an emptied message).
fn fewest_cuts(fits: Layout, measure: impl Fn(&Layout) -> u64, target: u64) -> Layout {
    let with = |save: u64| Layout {
        prune_tail: save,
        ..fits
    };
    let mut save = measure(&with(0)).saturating_sub(target);
    for _ in 0..4 {
        let tokens = measure(&with(save));
        if tokens <= target {
            return with(save);
        }
        save += tokens - target;
    }
    fits
}
