//! Head, tail and tool groups (SPEC §5): which messages stay verbatim.
//!
//! A tool group is an assistant message with tool calls plus the messages right
//! after it that carry the results. Neither the head nor the tail may cut one.

use crate::message::{Message, Role};
use crate::options::Options;

/// The verbatim head `[0, head_end)` and tail `[tail_start, n)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// End (exclusive) of the head.
    pub head_end: usize,
    /// Start of the tail; `head_end >= tail_start` means nothing is left between them.
    pub tail_start: usize,
    /// `protect_tail_min` clamped to the messages after the head.
    pub tail_min: usize,
}

/// Number of system messages at the start of the history.
pub(crate) fn leading_system(views: &[Message<'_>]) -> usize {
    views.iter().take_while(|m| m.role == Role::System).count()
}

/// Whether a boundary right before `m` would split a tool group: `m` carries
/// results, or is a UI-only notice that may sit between a call and its results.
fn inside_group(m: &Message<'_>) -> bool {
    m.has_results() || m.role == Role::Notice || m.continues
}

/// Moves `start` back until it does not split a tool group, but never below `floor`.
pub(crate) fn align_back(views: &[Message<'_>], mut start: usize, floor: usize) -> usize {
    while start > floor && start < views.len() && inside_group(&views[start]) {
        start -= 1;
    }
    start
}

/// Walks back from the end keeping messages while they fit `budget` tokens;
/// returns the start of that contiguous suffix (at least the last message).
pub(crate) fn suffix_within(
    views: &[Message<'_>],
    floor: usize,
    budget: u64,
    min_count: usize,
) -> usize {
    let n = views.len();
    let mut acc = 0u64;
    let mut start = n;
    for idx in (floor..n).rev() {
        let t = views[idx].tokens;
        if acc.saturating_add(t) <= budget || n - idx <= min_count || start == n {
            acc = acc.saturating_add(t);
            start = idx;
        } else {
            break;
        }
    }
    start
}

/// The messages every mode keeps verbatim wherever they are: system (and
/// developer) messages — standing instructions —, the messages the caller pins by
/// index or role, and everything up to a provider's compaction; each together
/// with its whole tool group, so pairs stay whole. Markers and summaries are
/// never pinned by role.
pub(crate) fn pinned(views: &[Message<'_>], options: &Options) -> Vec<bool> {
    let by_role = |m: &Message<'_>| {
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Notice => return false,
        };
        // The role first: most histories pin no role, and then no text is read.
        options
            .pin_roles
            .iter()
            .any(|r| r == role || (r == "developer" && role == "system"))
            && !m.is_written()
    };
    let mut pinned: Vec<bool> = views
        .iter()
        .map(|m| m.role == Role::System || by_role(m))
        .collect();
    // A message only a compaction wrote is not pinned (by role or index): the
    // new summary or marker stands for it (kept, it piled up round after round).
    for &i in &options.pin {
        if let Some(p) = pinned.get_mut(i).filter(|_| !views[i].is_written()) {
            *p = true;
        }
    }
    // A provider's compaction is a boundary: it and all before it stay as they are.
    if let Some(b) = views.iter().rposition(|m| m.boundary) {
        pinned[..=b].iter_mut().for_each(|p| *p = true);
    }
    // A group is pinned whole when any of its messages is.
    let mut start = 0;
    for i in 1..=views.len() {
        if i == views.len() || !inside_group(&views[i]) {
            if pinned[start..i].iter().any(|p| *p) && i - start > 1 {
                pinned[start..i].iter_mut().for_each(|p| *p = true);
            }
            start = i;
        }
    }
    pinned
}

/// The newest request of the person: the last user message that is not a
/// summary or a marker.
pub(crate) fn newest_request(views: &[Message<'_>]) -> Option<usize> {
    views
        .iter()
        .rposition(|m| m.role == Role::User && !m.is_written())
}

/// Where the newest tool group starts (the work in progress).
pub(crate) fn newest_group(views: &[Message<'_>]) -> usize {
    align_back(views, views.len().saturating_sub(1), 0)
}

/// The indices in `from..to` where a tool group starts (a boundary there cuts none).
pub(crate) fn group_starts(views: &[Message<'_>], from: usize, to: usize) -> Vec<usize> {
    (from..to.min(views.len()))
        .filter(|&i| !inside_group(&views[i]))
        .collect()
}

/// Computes head and tail for `views` under `options`.
pub(crate) fn window(views: &[Message<'_>], options: &Options) -> Window {
    let n = views.len();
    let mut head_end = options.protect_head.min(n).max(leading_system(views));
    // Extend the head over the results of its last assistant's calls.
    while head_end > 0 && head_end < n && inside_group(&views[head_end]) {
        head_end += 1;
    }
    let tail_min = options.protect_tail_min.min(n - head_end);
    let start = suffix_within(views, head_end, options.tail_budget(), tail_min);
    let tail_start = align_back(views, start, head_end);
    Window {
        head_end,
        tail_start,
        tail_min,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Args, Call, ToolOutput};
    use std::borrow::Cow;

    fn msg(role: Role, tokens: u64) -> Message<'static> {
        let mut m = Message::new(role);
        m.tokens = tokens;
        m
    }

    fn with_call(mut m: Message<'static>) -> Message<'static> {
        m.calls.push(Call {
            sealed: false,
            id: "c".into(),
            name: "t",
            args: Args::Text("{}"),
        });
        m
    }

    fn with_result(mut m: Message<'static>) -> Message<'static> {
        m.results
            .push(ToolOutput::new("c", None, Cow::Borrowed("out"), false));
        m
    }

    #[test]
    fn head_extends_over_results_of_its_last_call() {
        let views = vec![
            msg(Role::User, 1),
            with_call(msg(Role::Assistant, 1)),
            with_result(msg(Role::Tool, 1)),
            msg(Role::User, 1),
            msg(Role::Assistant, 1),
        ];
        let o = Options {
            protect_head: 2,
            protect_tail_min: 1,
            context_window: 1,
            ..Options::default()
        };
        let w = window(&views, &o);
        assert_eq!(w.head_end, 3);
        assert_eq!(w.tail_start, 4);
    }

    #[test]
    fn tail_moves_back_to_the_group_start_and_is_never_empty() {
        let views = vec![
            msg(Role::User, 1),
            msg(Role::Assistant, 1),
            msg(Role::User, 1),
            with_call(msg(Role::Assistant, 1000)),
            with_result(msg(Role::Tool, 1000)),
        ];
        let o = Options {
            protect_head: 1,
            protect_tail_min: 0,
            context_window: 10,
            ..Options::default()
        };
        let w = window(&views, &o);
        assert_eq!(
            w.tail_start, 3,
            "tail starts at the assistant that owns the result"
        );
    }
}
