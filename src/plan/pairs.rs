//! Tool-pair repair (SPEC §5): after head and tail are chosen, every kept tool
//! result must directly follow its call, and every kept call must have a result.
//!
//! Pairing is positional, as providers check it: a result belongs to the nearest
//! earlier assistant message with calls, with only result-carrying messages in
//! between (Anthropic: only the user turn right after — one message, or a turn
//! of results split over several in a row, which the rendering merges). Ids may repeat
//! across turns (real histories reuse them), so matching by id alone would be wrong.

use crate::formats::ResultsPlacement;
use crate::message::{Message, Role};
use crate::names::Names;
use crate::plan::{Edit, Plan, Step, Stub, Synthetic, STUB_TEXT, STUB_TEXT_MARKED};

/// The assistant whose calls are waiting for results.
struct OpenGroup<'a> {
    /// Input index of the assistant message.
    index: usize,
    /// Its output position.
    position: usize,
    /// Its calls (id, tool name), in order (for the stubs), and the ids as a set
    /// (to look results up).
    calls: Vec<(&'a str, &'a str)>,
    ids: Names,
    answered: Names,
    /// Output position of the first kept message that carries its results.
    first_results: Option<usize>,
    /// Input index of the last message that carried its results.
    last_results: usize,
}

/// The assistant at the end of the input whose calls are still being answered
/// (only results and notices follow it; a user's words end the turn, even next
/// to results): its tools are running, so its missing results are not stubbed.
pub(crate) fn pending_calls(views: &[Message<'_>]) -> Option<usize> {
    let last = views
        .iter()
        .rposition(|m| !matches!(m.role, Role::Tool | Role::Notice))?;
    // The turn may span several messages (Responses items): its first call opens it.
    let mut start = last;
    while start > 0 && views[start].continues {
        start -= 1;
    }
    (start..=last).find(|&i| !views[i].calls.is_empty())
}

/// Drops orphan results and adds stubs for unanswered calls. With `keep_pending`,
/// the calls of an assistant at the very end of the input whose tools are still
/// running stay unanswered (their results are about to be appended); a
/// summarizer's input needs every call answered, so it passes `false`.
pub(crate) fn repair(
    plan: Plan,
    views: &[Message<'_>],
    placement: ResultsPlacement,
    keep_pending: bool,
) -> Plan {
    let mut out: Plan = Vec::with_capacity(plan.len() + 4);
    let mut group: Option<OpenGroup> = None;
    let pending = pending_calls(views).filter(|_| keep_pending);
    // A stub points at what stands for the result: a summary, else a marker.
    let summarized = plan
        .iter()
        .any(|s| matches!(s, Step::Insert(Synthetic::Summary(_))));
    let marked = plan
        .iter()
        .any(|s| matches!(s, Step::Insert(Synthetic::Marker(_))));
    let text = if marked && !summarized {
        STUB_TEXT_MARKED
    } else {
        STUB_TEXT
    };
    let close = |group: Option<OpenGroup<'_>>, out: &mut Plan| {
        if group.as_ref().is_some_and(|g| Some(g.index) != pending) {
            close(group, out, placement, text);
        }
    };
    for step in plan {
        let Step::Keep { index, mut edits } = step else {
            close(group.take(), &mut out);
            out.push(step);
            continue;
        };
        let m = &views[index];
        if m.role == Role::Notice {
            // UI-only: never sent to a model, so it does not split a tool group.
            out.push(Step::Keep { index, edits });
            continue;
        }
        if !m.has_results() {
            let inline = m
                .results
                .iter()
                .filter(|_| m.inline_results)
                .map(|r| r.id.as_ref());
            match group.as_mut().filter(|_| m.continues) {
                // The same assistant turn goes on (Responses items): its calls join.
                Some(g) => {
                    g.calls
                        .extend(m.calls.iter().map(|c| (c.id.as_ref(), c.name)));
                    m.calls.iter().for_each(|c| g.ids.add(&c.id));
                    inline.for_each(|id| g.answered.add(id));
                }
                None => {
                    close(group.take(), &mut out);
                    if !m.calls.is_empty() {
                        let (mut ids, mut answered) = (Names::new(), Names::new());
                        m.calls.iter().for_each(|c| ids.add(&c.id));
                        inline.for_each(|id| answered.add(id));
                        group = Some(OpenGroup {
                            index,
                            position: out.len(),
                            calls: m.calls.iter().map(|c| (c.id.as_ref(), c.name)).collect(),
                            ids,
                            answered,
                            first_results: None,
                            last_results: index,
                        });
                    }
                }
            }
            out.push(Step::Keep { index, edits });
            continue;
        }
        // Anthropic: only the one user turn right after the calls may answer them:
        // a user message of results, or several in a row (one turn split in two,
        // as some adapters write it: the turns are merged when rendered, not stubbed).
        let open = group.as_mut().filter(|g| {
            placement == ResultsPlacement::FollowingMessages
                || g.first_results.is_none()
                || g.last_results + 1 == index
        });
        let mut orphans = Vec::new();
        match open {
            Some(g) => {
                for (k, r) in m.results.iter().enumerate() {
                    if !(g.ids.get(&r.id).is_some() && g.answered.insert(&r.id, 0)) {
                        orphans.push(k);
                    }
                }
            }
            None => orphans.extend(0..m.results.len()),
        }
        if orphans.len() == m.results.len() && m.is_empty_without_results() {
            continue; // the whole message was an orphan result
        }
        if !orphans.is_empty() {
            edits.push(Edit::DropResults(orphans));
        }
        if m.results_out_of_order {
            edits.push(Edit::ResultsFirst);
        }
        if let Some(g) = group.as_mut() {
            g.first_results.get_or_insert(out.len());
            g.last_results = index;
        }
        out.push(Step::Keep { index, edits });
    }
    close(group, &mut out);
    out
}

/// The first tool result at or after message `from` whose call is not in the
/// assistant message its group follows: its message index and id.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn first_orphan<'v>(views: &'v [Message<'_>], from: usize) -> Option<(usize, &'v str)> {
    (from..views.len()).find_map(|i| {
        let r = views[i].results.iter().find(|r| r.call.is_none())?;
        Some((i, r.id.as_ref()))
    })
}

/// Adds stubs saying `text` for the calls of `group` that got no result.
fn close(
    group: Option<OpenGroup<'_>>,
    out: &mut Plan,
    placement: ResultsPlacement,
    text: &'static str,
) {
    let Some(g) = group else { return };
    let mut seen = Names::new();
    let missing: Vec<Stub> = g
        .calls
        .iter()
        .filter(|(id, _)| g.answered.get(id).is_none() && seen.insert(id, 0))
        .map(|(id, name)| Stub {
            id: id.to_string(),
            name: name.to_string(),
            text,
        })
        .collect();
    if missing.is_empty() {
        return;
    }
    let into = match (placement, g.first_results) {
        (ResultsPlacement::NextUserMessage, Some(p)) => Some(p),
        (ResultsPlacement::SameMessage, _) => Some(g.position),
        _ => None,
    };
    match into.and_then(|p| out.get_mut(p)) {
        Some(Step::Keep { edits, .. }) => edits.push(Edit::AddStubs(missing)),
        _ => out.push(Step::Insert(Synthetic::Stubs(missing))),
    }
}
