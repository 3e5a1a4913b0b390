//! `recency_preserving`: head verbatim + one marker with a digest of the elided
//! middle + tail verbatim by token budget; bulky old tool outputs pruned; tool
//! pairs repaired. Zero LLM calls.

use crate::error::{Error, ErrorKind, Result};
use crate::formats::ResultsPlacement;
use crate::message::{Message, Role};
use crate::modes::{
    bridges, drop_empty, is_written, newest_summary, place_added, replaced_whole, superseded,
    Decision,
};
use crate::options::{Options, Warning};
use crate::plan::facts::{gather, read_marker, Facts, LATEST_REQUEST, TOOLS_USED};
use crate::plan::fit::{cut_texts, layout, plan_tokens, Layout, ALL};
use crate::plan::pairs::repair;
use crate::plan::prune::{cuts, Cut};
use crate::plan::window::{
    align_back, group_starts, newest_group, newest_request, pinned, suffix_within, window, Window,
};
use crate::plan::{Edit, Plan, Step, Synthetic};
use crate::text::{count, list, one_line, MARKER_PREFIX};
use crate::tokens::TokenCounter;

use std::cell::RefCell;
use std::ops::Range;

/// What a marker depends on: the middle's bounds and the messages carried out of it.
type MarkerKey = (usize, usize, Vec<usize>);

/// Plans the recency-preserving compaction of `views`, fitted to the window.
pub(crate) fn plan(
    views: &[Message<'_>],
    options: &Options,
    placement: ResultsPlacement,
    counter: &dyn TokenCounter,
    fixed: u64,
) -> Result<Decision> {
    let shape = Shape::new(views, options, placement, true, fixed, counter);
    let target = shape.target;
    let w = match shape.in_place(counter) {
        Ok(w) => w,
        Err(done) => return done,
    };
    // The fitting and the final plan ask for the same middle's marker: its facts
    // are read once (they scan every elided text).
    let markers: RefCell<Vec<(MarkerKey, String)>> = RefCell::default();
    let build = |l: &Layout| {
        let carried = shape.carried(l);
        // Pins may hold the whole middle: then nothing is elided, and no marker
        // says "0 earlier messages were elided".
        if !shape.elides(l, &carried) {
            return shape.splice(l, None, None, &carried);
        }
        let key = (l.w.head_end, l.w.tail_start, carried.clone());
        let known = markers
            .borrow()
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, m)| m.clone());
        let text = known.unwrap_or_else(|| {
            let text = marker(views, &l.w, &carried, &shape.pinned, options);
            markers.borrow_mut().push((key, text.clone()));
            text
        });
        shape.splice(l, Some(Synthetic::Marker(text)), None, &carried)
    };
    let (layout, _) = layout(views, w, shape.newest, target, |l| {
        plan_tokens(&build(l).plan, views, counter)
    });
    let mut decision = build(&layout);
    if !decision.fit(&shape, layout, target, counter) {
        // Nothing makes it fit: keep the window as configured, give nothing up
        // for nothing (the notice says it does not fit).
        decision = build(&Layout {
            w,
            prune_tail: 0,
            shortened: false,
        });
    }
    Ok(decision)
}

/// What the head + middle + tail modes need to know about a history to lay it
/// out: which messages stay wherever they are, where the newest turn starts.
pub(crate) struct Shape<'v, 'a> {
    views: &'v [Message<'a>],
    options: &'v Options,
    placement: ResultsPlacement,
    /// Messages kept verbatim wherever they are (system messages, pins).
    pinned: Vec<bool>,
    /// The newest summary of an earlier compaction: the condensed past.
    pub summary: Option<usize>,
    /// The newest request of the person: it stays, and is never cut.
    pub request: Option<usize>,
    /// Where the newest tool group (the work in progress) starts: it is never
    /// pruned or elided.
    pub newest: usize,
    /// Tokens the messages may take: the trigger less what the request spends
    /// besides them (system prompt held apart, tool definitions).
    pub target: u64,
    /// The newest earlier summary stays (recency); a new one replaces it (structured).
    keep_summary: bool,
    /// What pruning inside the tail weighs its cuts with.
    counter: &'v dyn TokenCounter,
}

/// The result when pruning in place settles it, else the window to lay out.
type InPlace = std::result::Result<Window, Result<Decision>>;

impl<'v, 'a> Shape<'v, 'a> {
    /// `keep_summary`: the newest earlier summary stays where it is (recency);
    /// `structured` replaces it instead. `fixed`: tokens the request spends
    /// besides its messages.
    pub(crate) fn new(
        views: &'v [Message<'a>],
        options: &'v Options,
        placement: ResultsPlacement,
        keep_summary: bool,
        fixed: u64,
        counter: &'v dyn TokenCounter,
    ) -> Self {
        Shape {
            views,
            options,
            placement,
            pinned: pinned(views, options),
            summary: newest_summary(views, 0).filter(|_| keep_summary),
            request: newest_request(views),
            newest: newest_group(views),
            target: options.trigger_tokens().saturating_sub(fixed).max(1),
            keep_summary,
            counter,
        }
    }

    /// When nothing lies between head and tail to elide, pruning in place is all
    /// there is: its result, or TOO_SMALL_TO_COMPACT — unless the history does
    /// not fit the window; then the window to lay out, its tail to give way.
    pub(crate) fn in_place(&self, counter: &dyn TokenCounter) -> InPlace {
        let (views, options) = (self.views, self.options);
        let w = window(views, options);
        let configured = Layout {
            w,
            prune_tail: 0,
            shortened: false,
        };
        if self.elides(&configured, &self.carried(&configured)) {
            return Ok(w);
        }
        let target = self.target;
        let all: Plan = (0..views.len()).map(Step::keep).collect();
        let in_place = prune_in_place(self);
        let tail_start = w.tail_start.max(w.head_end);
        // Only a tail that can give way (a tool group starts after the head, up to
        // the newest round) makes eliding worth it.
        let can_elide = !group_starts(views, tail_start + 1, self.newest + 1).is_empty();
        match in_place {
            Ok(d) if plan_tokens(&d.plan, views, counter) <= target => return Err(Ok(d)),
            Ok(mut d) if !can_elide => {
                // Over the window with nothing to elide: cutting texts may still fit it.
                if let Some((plan, warning)) = self.cut_to_fit(d.plan.clone(), counter) {
                    d.plan = plan;
                    d.warnings.push(warning);
                }
                return Err(Ok(d));
            }
            Err(e) if plan_tokens(&all, views, counter) <= target => return Err(Err(e)),
            Err(_) if !can_elide => {
                let tokens = plan_tokens(&all, views, counter);
                return Err(match self.cut_to_fit(all, counter) {
                    Some((plan, warning)) => Ok(Decision {
                        plan: repair(plan, views, self.placement, true),
                        summary: None,
                        warnings: vec![warning],
                    }),
                    None => Err(Error::new(
                        ErrorKind::TooSmallToCompact,
                        format!(
                            "history has {} and protect_head={} plus the tail already cover all of it, yet it takes about {}, over the {} it should stay under, and cutting its long texts would not get there: it does not fit this window; give a larger contextWindow, shorten its largest messages, or use mode \"deterministic\"",
                            count(views.len() as u64, "message"),
                            options.protect_head,
                            count(tokens, "token"),
                            count(target, "token"),
                        ),
                    )),
                });
            }
            _ => {}
        }
        Ok(Window {
            tail_start,
            tail_min: views.len() - tail_start,
            ..w
        })
    }

    /// `plan` with its long texts cut in the middle (never a pin's or the newest
    /// request's) when that makes it fit the target, and the warning saying so.
    fn cut_to_fit(&self, plan: Plan, counter: &dyn TokenCounter) -> Option<(Plan, Warning)> {
        let (plan, cut) = cut_texts(plan, self.views, counter, self.target, |i| {
            Some(i) == self.request || self.pinned[i]
        });
        (plan_tokens(&plan, self.views, counter) <= self.target).then(|| {
            let warning = Warning {
                code: "TEXTS_SHORTENED",
                message: format!(
                    "cut {} in the middle (marked […]) so that the result fits {}",
                    count(cut as u64, "long text"),
                    count(self.target, "token")
                ),
            };
            (plan, warning)
        })
    }

    /// Whether message `i` stays even when it lies between head and tail: pins,
    /// the earlier summary recency keeps, and the newest request of the person
    /// (never elided, whatever the tail).
    pub(crate) fn stays(&self, i: usize) -> bool {
        self.pinned[i] || Some(i) == self.summary || Some(i) == self.request
    }

    /// The messages between head and tail that stay (in order): those that
    /// stay wherever they are, and where turns must alternate, the requests
    /// that bridge the gaps they leave (a pinned call turn after a pinned
    /// assistant: see [`bridges`]).
    pub(crate) fn carried(&self, l: &Layout) -> Vec<usize> {
        let (w, n) = (&l.w, self.views.len());
        let mut carried: Vec<usize> = (w.head_end..w.tail_start)
            .filter(|&i| self.stays(i))
            .collect();
        if self.placement == ResultsPlacement::NextUserMessage && !carried.is_empty() {
            let mut steps: Plan = Vec::with_capacity(w.head_end + carried.len() + 1 + n);
            for i in (0..w.head_end).chain(carried.iter().copied()) {
                steps.push(Step::keep(i));
            }
            steps.push(Step::Insert(Synthetic::Marker(String::new())));
            for i in w.tail_start..n {
                steps.push(Step::keep(i));
            }
            place_added(&mut steps, self.views, self.placement);
            let middle = w.head_end..w.tail_start;
            for b in bridges(self.views, &steps, n) {
                match carried.binary_search(&b) {
                    Err(at) if middle.contains(&b) => carried.insert(at, b),
                    _ => {}
                }
            }
        }
        carried
    }

    /// Whether anything between head and tail would be elided: anything but
    /// what is `carried` there and UI-only notices.
    pub(crate) fn elides(&self, l: &Layout, carried: &[usize]) -> bool {
        (l.w.head_end..l.w.tail_start)
            .any(|i| carried.binary_search(&i).is_err() && self.views[i].role != Role::Notice)
    }

    /// The caller's texts that layout `l`'s kept messages hold after a part an
    /// earlier compaction merged into them: a new summary stands for them (see
    /// `splice`), so the summarizer reads them, before the middle (they are older).
    pub(crate) fn joined_texts(&self, l: &Layout) -> Vec<&'a str> {
        let kept = (0..l.w.head_end)
            .chain(self.carried(l))
            .chain(l.w.tail_start..self.views.len());
        let mut texts = Vec::new();
        for i in kept {
            let m = &self.views[i];
            for k in superseded(m, self.keep_summary, self.pinned[i]) {
                let t = m.texts[k].trim();
                if !t.is_empty() && !is_written(t) {
                    texts.push(t);
                }
            }
        }
        texts
    }

    /// Head + `carried` (messages of the middle that stay, in order) + `middle`
    /// (the marker, or a summary; none when nothing is elided) + tail; old tool
    /// outputs pruned (outside the last `tail_min × 3` messages, and inside
    /// them as many as save `prune_tail` tokens, never the newest turn's),
    /// empty messages dropped, tool pairs repaired. `replaced` is the earlier summary the new one replaces:
    /// it and older summaries of their own in head or tail are left out.
    pub(crate) fn splice(
        &self,
        l: &Layout,
        middle: Option<Synthetic>,
        replaced: Option<usize>,
        carried: &[usize],
    ) -> Decision {
        let (views, w) = (self.views, &l.w);
        let adds = middle.is_some();
        // The earlier summary this one replaces goes: as a message of its own, or
        // as the part of a caller's message it was merged into. So do the parts
        // of kept messages a new marker or summary stands for (`superseded`).
        let keep = |i: usize| -> Option<Step> {
            let m = &views[i];
            if replaced_whole(views, replaced, i) {
                return None;
            }
            let mut edits = Vec::new();
            if adds {
                let dropped = superseded(m, self.keep_summary, self.pinned[i]);
                edits.extend(dropped.map(|part| Edit::DropText { part }));
            }
            Some(Step::Keep { index: i, edits })
        };
        let mut steps: Plan = (0..w.head_end).filter_map(keep).collect();
        steps.extend(carried.iter().filter_map(|&i| keep(i)));
        let first = steps.len() + usize::from(adds);
        steps.extend(middle.map(Step::Insert));
        steps.extend((w.tail_start..views.len()).filter_map(keep));
        // Old tool outputs are pruned up to the last `tail_min × 3` messages;
        // those of the protected tail (never the newest turn's) only as far as
        // the layout says (`choose`).
        let newest = steps
            .iter()
            .position(|s| matches!(s, Step::Keep { index, .. } if *index >= self.newest))
            .unwrap_or(steps.len());
        let protected = steps.len().saturating_sub(w.tail_min * 3);
        let (steps, _) = prune(steps, first..protected, ALL, self);
        let (steps, pruned) = prune(steps, protected.max(first)..newest, l.prune_tail, self);
        let mut warnings = Vec::new();
        if pruned > 0 && !l.shortened {
            warnings.push(Warning {
                code: "TAIL_PRUNED",
                message: format!(
                    "pruned {} inside the protected tail (as few as it takes, never the newest tool round's) so that the result fits {}",
                    count(pruned as u64, "old tool output or argument"),
                    count(self.target, "token")
                ),
            });
        }
        let mut steps = drop_empty(steps, views, &mut warnings);
        place_added(&mut steps, views, self.placement);
        Decision {
            plan: repair(steps, views, self.placement, true),
            summary: None,
            warnings,
        }
    }
}

impl Decision {
    /// The last steps of fitting a laid-out result to `target` tokens: say that the
    /// tail gave way, and cut the largest texts in their middle when that was not
    /// enough (never system messages or the newest request) — but only when the
    /// cuts make it fit. Returns whether the result fits.
    pub(crate) fn fit(
        &mut self,
        shape: &Shape<'_, '_>,
        layout: Layout,
        target: u64,
        counter: &dyn TokenCounter,
    ) -> bool {
        let (views, options) = (shape.views, shape.options);
        let tail = views.len() - layout.w.tail_start;
        if layout.shortened && tail < options.protect_tail_min {
            self.warnings.push(Warning {
                code: "TAIL_SHORTENED",
                message: format!(
                    "kept only the newest {} verbatim (protect_tail_min is {}) so that the result fits {}",
                    count(tail as u64, "message"),
                    options.protect_tail_min,
                    count(target, "token")
                ),
            });
        }
        if plan_tokens(&self.plan, views, counter) <= target {
            return true;
        }
        // Pinned messages stay verbatim: never cut. When cutting would not get
        // there, the texts stay whole.
        let Some((plan, warning)) = shape.cut_to_fit(self.plan.clone(), counter) else {
            return false;
        };
        self.plan = plan;
        self.warnings.push(warning);
        true
    }
}

/// When head and tail cover everything, only pruning can help, in place: the last
/// `protect_tail_min × 3` messages are protected, or only what fits the tail
/// budget when that is less (at least the newest tool group stays).
fn prune_in_place(shape: &Shape<'_, '_>) -> Result<Decision> {
    let (views, options, placement) = (shape.views, shape.options, shape.placement);
    let pinned = &shape.pinned;
    let n = views.len();
    let fits = align_back(views, suffix_within(views, 0, options.tail_budget(), 0), 0);
    let spec = n.saturating_sub(options.protect_tail_min.saturating_mul(3));
    let all = (0..n).map(Step::keep).collect();
    let (steps, pruned) = prune(all, 0..fits.max(spec), ALL, shape);
    if pruned == 0 {
        let pins = (0..n)
            .filter(|&i| pinned[i] && views[i].role != Role::System)
            .count();
        let (held, fewer) = if pins > 0 {
            (
                format!(" and {}", count(pins as u64, "pinned message")),
                ", pin fewer",
            )
        } else {
            (String::new(), "")
        };
        return Err(Error::new(
            ErrorKind::TooSmallToCompact,
            format!(
                "history has {} and protect_head={} plus the tail (protect_tail_min={}, tail budget {}){held} already cover all of it, and no older tool output exceeds tool_prune_char_threshold={} bytes: there is nothing to leave out yet, so sending it as it is works; to shrink it anyway, lower protect_head, protect_tail_min or tail_budget_ratio{fewer}, or use mode \"deterministic\"",
                count(n as u64, "message"),
                options.protect_head,
                options.protect_tail_min,
                count(options.tail_budget(), "token"),
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

/// Prunes the kept messages at output positions `positions` (never a pinned
/// one: pins stay verbatim), as far as it takes to save `save` tokens (`ALL`:
/// every cut). See [`choose`] for which cuts. Returns the steps and how many
/// cuts were made.
fn prune(
    mut steps: Plan,
    positions: Range<usize>,
    save: u64,
    shape: &Shape<'_, '_>,
) -> (Plan, usize) {
    let (views, threshold) = (shape.views, shape.options.tool_prune_char_threshold);
    let mut found: Vec<(usize, Cut)> = Vec::new();
    let end = positions.end.min(steps.len());
    for (pos, step) in steps.iter().enumerate().take(end).skip(positions.start) {
        if let Step::Keep { index, .. } = *step {
            if !shape.pinned[index] {
                cuts(views, index, threshold, shape.counter, pos, &mut found);
            }
        }
    }
    if save != ALL {
        let mut chosen = choose(&found, save).into_iter();
        found.retain(|_| chosen.next() == Some(true));
    }
    let made = found.len();
    for (pos, cut) in found {
        if let Step::Keep { edits, .. } = &mut steps[pos] {
            edits.push(cut.edit);
        }
    }
    (steps, made)
}

/// Which of `found` (in history order) to make to save `save` tokens: tool
/// outputs before arguments, the oldest first, until the next one would save
/// the rest alone (then, instead, the smallest cut left that does); then each cut
/// taken but the last, newest first, is undone while the others still save
/// enough. So no single pruned output could come back and still fit, and the
/// window is used about as fully as whole cuts allow. All of them when even
/// that does not save enough.
fn choose(found: &[(usize, Cut)], save: u64) -> Vec<bool> {
    let args = |j: &usize| found[*j].1.is_args();
    let order = (0..found.len())
        .filter(|j| !args(j))
        .chain((0..found.len()).filter(args));
    let saving = |j: usize| found[j].1.saving;
    let (mut taken, mut saved) = (Vec::new(), 0u64);
    let mut left = vec![true; found.len()];
    for j in order {
        if saved >= save {
            break;
        }
        let need = save - saved;
        if saving(j) >= need {
            // The smallest cut left that saves the rest (there is one: `j`).
            let last = (0..found.len())
                .filter(|&k| left[k] && saving(k) >= need)
                .min_by_key(|&k| saving(k))
                .unwrap_or(j);
            saved += saving(last);
            taken.push(last);
            break;
        }
        left[j] = false;
        saved += saving(j);
        taken.push(j);
    }
    let mut chosen = vec![false; found.len()];
    if saved < save {
        chosen.fill(true);
        return chosen;
    }
    let Some((&last, rest)) = taken.split_last() else {
        return chosen;
    };
    chosen[last] = true;
    for &j in rest.iter().rev() {
        let saving = found[j].1.saving;
        if saved - saving >= save {
            saved -= saving;
        } else {
            chosen[j] = true;
        }
    }
    chosen
}

/// The marker: the count line of SPEC §6 (with the totals of any earlier marker
/// it replaces) plus a bounded digest of the elided messages (the middle without
/// the `carried` ones).
fn marker(
    views: &[Message<'_>],
    w: &Window,
    carried: &[usize],
    pinned: &[bool],
    options: &Options,
) -> String {
    let picked: Vec<usize> = (w.head_end..w.tail_start)
        .filter(|i| !carried.contains(i) && views[*i].role != Role::Notice)
        .collect();
    // Markers merged into the messages that stay, and the texts merged in after
    // them, are replaced by this one (see `Shape::splice`): what they stood for
    // is counted here, before the middle (it is older).
    let mut facts = Facts::default();
    let mut joined = 0;
    let kept = (0..w.head_end)
        .chain(carried.iter().copied())
        .chain(w.tail_start..views.len());
    for i in kept {
        let m = &views[i];
        let mut own = false;
        for t in superseded(m, true, pinned[i]).map(|k| m.texts[k].trim()) {
            if t.starts_with(MARKER_PREFIX.trim_end()) {
                read_marker(t, &mut facts, false);
            } else if !t.is_empty() {
                // (`superseded` yields no summary for a marker to replace)
                facts.requests.push(t);
                own = true;
            }
        }
        joined += usize::from(own);
    }
    facts.add(gather(views, &picked));
    let of_role = |r: Role| picked.iter().filter(|&&i| views[i].role == r).count();
    // Earlier markers stand for what they elided, not for one user message.
    let user = of_role(Role::User) - facts.markers + facts.earlier[0] + joined;
    let assistant = of_role(Role::Assistant) + facts.earlier[1];
    let tool = of_role(Role::Tool) + facts.earlier[2];
    let total = user + assistant + tool;
    let mut text = format!(
        "{MARKER_PREFIX}{} {} elided to save context space ({user} user, {assistant} assistant, {tool} tool). Recent messages are preserved verbatim below.",
        count(total as u64, "earlier message"),
        if total == 1 { "was" } else { "were" },
    );
    // Never let the digest outweigh what it replaces (about 2 bytes a token of the middle).
    let middle_tokens: u64 = picked.iter().map(|&i| views[i].tokens).sum();
    let max_bytes =
        digest_bytes(options).min(usize::try_from(middle_tokens * 2).unwrap_or(usize::MAX));
    let digest = digest(facts, max_bytes);
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
        ..
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
        candidates.push(format!("{TOOLS_USED}{}.", list(&tools, 20)));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn outputs(savings: &[u64]) -> Vec<(usize, Cut)> {
        let cut = |(pos, &saving): (usize, &u64)| {
            let edit = Edit::ReplaceOutput {
                result: 0,
                text: String::new(),
            };
            (pos, Cut { edit, saving })
        };
        savings.iter().enumerate().map(cut).collect()
    }

    fn saved(found: &[(usize, Cut)], chosen: &[bool]) -> u64 {
        found
            .iter()
            .zip(chosen)
            .filter(|(_, &c)| c)
            .map(|(f, _)| f.1.saving)
            .sum()
    }

    #[test]
    fn only_the_cuts_it_takes_and_none_could_come_back() {
        // (a small xorshift: many shapes, the same every run)
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..5_000 {
            let n = next(12) as usize;
            let savings: Vec<u64> = (0..n).map(|_| 1 + next(5_000)).collect();
            let found = outputs(&savings);
            let save = 1 + next(savings.iter().sum::<u64>() + 2_000);
            let chosen = choose(&found, save);
            let total = saved(&found, &chosen);
            if savings.iter().sum::<u64>() < save {
                assert!(chosen.iter().all(|&c| c), "{savings:?} {save}");
                continue;
            }
            assert!(total >= save, "{savings:?} {save}: {chosen:?}");
            for (k, _) in chosen.iter().enumerate().filter(|(_, &c)| c) {
                let back = total - found[k].1.saving;
                assert!(back < save, "{savings:?} {save}: cut {k} could come back");
            }
        }
    }

    #[test]
    fn the_oldest_go_first_and_one_large_output_saves_the_rest() {
        // The session: 4,849 and 1,383 tokens among small outputs, about
        // 4,500 over; the large one alone fits it, the small ones stay.
        let found = outputs(&[300, 4_849, 250, 1_383, 400]);
        assert_eq!(choose(&found, 4_500), [false, true, false, false, false]);
        // Older outputs go before newer ones of the same weight.
        let found = outputs(&[500, 500, 500, 500]);
        assert_eq!(choose(&found, 900), [true, true, false, false]);
        // The last cut is the smallest that saves the rest, not the next oldest.
        let found = outputs(&[200, 3_000, 900]);
        assert_eq!(choose(&found, 1_000), [true, false, true]);
        // Older small ones a large cut makes needless stay.
        let found = outputs(&[300, 400, 5_000]);
        assert_eq!(choose(&found, 1_000), [false, false, true]);
        // Arguments are shortened only after every output.
        let mut found = outputs(&[100, 100]);
        found.insert(
            0,
            (
                0,
                Cut {
                    edit: Edit::ShortenArgs {
                        call: 0,
                        args: crate::json::Value::Null,
                    },
                    saving: 1_000,
                },
            ),
        );
        assert_eq!(choose(&found, 150), [false, true, true]);
    }
}
