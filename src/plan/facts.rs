//! What a run of messages is about — user requests, tools, files, pending work —
//! gathered once for the deterministic summary and the recency marker's digest.

use std::borrow::Cow;

use crate::message::{Args, Mention, Mentions, Message, Role, ToolOutput};
use crate::text::{mentions_pending_work, paths, MARKER_PREFIX};

/// The digest line that carries the newest user request forward.
pub(crate) const LATEST_REQUEST: &str = "- Latest user request: ";
/// The digest line that lists the tools of the elided messages.
pub(crate) const TOOLS_USED: &str = "- Tools used: ";

/// Facts about `views[range]`.
#[derive(Debug, Default)]
pub(crate) struct Facts<'a> {
    /// User requests, oldest first (including one an earlier marker carried forward).
    pub requests: Vec<&'a str>,
    /// Tools called or answered, sorted and deduplicated (by [`Facts::settle`];
    /// of the files' type, so that one sort serves both).
    pub tools: Vec<Cow<'a, str>>,
    /// Path-like tokens with a source extension, sorted and deduplicated
    /// (borrowed from the texts; owned only from arguments stored as JSON values).
    /// Collected in a `Vec` and sorted once: a set's insert per mention cost more.
    pub files: Vec<Cow<'a, str>>,
    /// Up to the three newest user/assistant texts that mention pending work, oldest first.
    pub pending: Vec<&'a str>,
    /// Messages that earlier markers in the run stood for: user, assistant, tool.
    pub earlier: [usize; 3],
    /// Earlier markers in the run that are messages of their own.
    pub markers: usize,
}

impl<'a> Facts<'a> {
    /// Adds the facts of a later run of messages.
    pub(crate) fn add(&mut self, later: Facts<'a>) {
        self.requests.extend(later.requests);
        self.tools.extend(later.tools);
        self.files.extend(later.files);
        self.settle();
        self.pending = later.pending;
        for (mine, theirs) in self.earlier.iter_mut().zip(later.earlier) {
            *mine += theirs;
        }
        self.markers += later.markers;
    }

    /// Sorts and deduplicates the tools and files.
    fn settle(&mut self) {
        self.tools.sort_unstable();
        self.tools.dedup();
        self.files.sort_unstable();
        self.files.dedup();
    }
}

/// What an earlier marker says it stood for: its counts by role, and the tools
/// its digest listed. `alone`: the marker is a message of its own (not merged
/// into a caller's message), which it stands for instead of one user message.
pub(crate) fn read_marker<'a>(text: &'a str, f: &mut Facts<'a>, alone: bool) {
    f.markers += usize::from(alone);
    let first = text.lines().find(|l| l.contains(" elided ")).unwrap_or("");
    if let Some(open) = first.rfind('(') {
        for part in first[open + 1..].split(',') {
            let mut words = part.split_whitespace();
            let n = words.next().and_then(|w| w.parse::<usize>().ok());
            let slot = match words.next().map(|w| w.trim_end_matches([')', '.'])) {
                Some("user") => 0,
                Some("assistant") => 1,
                Some("tool") => 2,
                _ => continue,
            };
            f.earlier[slot] += n.unwrap_or(0);
        }
    }
    for line in text.lines() {
        if let Some(latest) = line.strip_prefix(LATEST_REQUEST) {
            f.requests.push(latest);
        } else if let Some(tools) = line.strip_prefix(TOOLS_USED) {
            let tools = tools.trim_end_matches('.');
            let tools = tools.rsplit_once(" (+").map_or(tools, |(t, _)| t);
            f.tools.extend(
                tools
                    .split(", ")
                    .filter(|t| !t.is_empty())
                    .map(Cow::Borrowed),
            );
        }
    }
}

/// Gathers the facts of the messages `picked` (input indices, in order; tool
/// names of results are looked up in the calls they answer, wherever those are).
pub(crate) fn gather<'a>(views: &[Message<'a>], picked: &[usize]) -> Facts<'a> {
    let mut f = Facts::default();
    // What was inserted last: a call and its result name the same tool, so most
    // inserts repeat the one before.
    let mut last_tool = None;
    // (an unnamed call stands for a Responses item_reference: no tool to name)
    let mut tool = |f: &mut Facts<'a>, name: &'a str| {
        if last_tool != Some(name) && !name.is_empty() {
            f.tools.push(Cow::Borrowed(name));
            last_tool = Some(name);
        }
    };
    for &i in picked {
        let m = &views[i];
        for c in &m.calls {
            tool(&mut f, c.name);
        }
        for r in &m.results {
            if let Some(name) = result_tool_name(views, r).or(r.name) {
                tool(&mut f, name);
            }
        }
        // (a view the session holds reads them once; another, as it goes; a
        // path that repeats the one before is left out before the sort)
        let mut file = |path: Cow<'a, str>| {
            if f.files.last() != Some(&path) {
                f.files.push(path);
            }
        };
        if m.held {
            mentions(m).files.iter().for_each(|p| file(m.mentioned(p)));
        } else {
            each_path(m, |p| file(m.mentioned(&p)));
        }
        if m.role == Role::User {
            // Markers, alone or merged into the caller's message (alternation
            // "merge"), and the caller's own first text as the request.
            for (k, t) in m.texts.iter().map(|t| t.trim()).enumerate() {
                if t.starts_with(MARKER_PREFIX.trim_end()) {
                    read_marker(t, &mut f, m.is_only_text(k));
                }
            }
            f.requests.extend(m.own_text());
        }
    }
    f.pending = picked
        .iter()
        .rev()
        .map(|&i| &views[i])
        .filter(|m| {
            if m.held {
                mentions(m).pending
            } else {
                pending_in(m)
            }
        })
        .filter_map(|m| m.own_text())
        .take(3)
        .collect();
    f.pending.reverse();
    f.settle();
    f
}

/// The paths `m` mentions and whether its own text mentions pending work,
/// read once per view.
fn mentions<'v>(m: &'v Message<'_>) -> &'v Mentions {
    m.mentions.get_or_init(|| {
        let mut files = Vec::new();
        each_path(m, |p| files.push(p));
        Mentions {
            files,
            pending: pending_in(m),
        }
    })
}

/// Finds the paths `m` mentions: in its calls' arguments, then its first text.
fn each_path(m: &Message<'_>, mut found: impl FnMut(Mention)) {
    // The byte range of `path` inside `text` (a slice of it).
    let span = |text: &str, path: &str| {
        let a = path.as_ptr() as usize - text.as_ptr() as usize;
        (a, a + path.len())
    };
    for (k, c) in m.calls.iter().enumerate() {
        match &c.args {
            Args::Text(text) => paths(text).for_each(|p| found(Mention::Args(k, span(text, p)))),
            Args::Json(value) => {
                let text = value.to_string();
                paths(&text).for_each(|p| found(Mention::Owned(p.to_string())));
            }
        }
    }
    if let Some(k) = m.texts.iter().position(|t| !t.trim().is_empty()) {
        let text = m.texts[k];
        paths(text).for_each(|p| found(Mention::Text(k, span(text, p))));
    }
}

/// Whether the own text of a user or assistant message mentions pending work.
fn pending_in(m: &Message<'_>) -> bool {
    matches!(m.role, Role::User | Role::Assistant)
        && m.own_text().is_some_and(mentions_pending_work)
}

/// The name of the tool whose call the result `r` answers.
pub(crate) fn result_tool_name<'a>(views: &[Message<'a>], r: &ToolOutput<'_>) -> Option<&'a str> {
    let (o, k) = r.call?;
    Some(views[o].calls[k].name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::serde::from_serde;
    use crate::message::Call;
    use serde_json::json;

    fn call<'a>(name: &'a str, args: Args<'a>) -> Call<'a> {
        Call {
            id: Cow::Borrowed("c"),
            name,
            args,
            sealed: false,
        }
    }

    #[test]
    fn files_are_sorted_and_counted_once_from_texts_and_both_kinds_of_arguments() {
        let mut user = Message::new(Role::User);
        user.texts
            .push("fix src/z.rs and src/a.rs, then src/z.rs:12 again");
        let mut assistant = Message::new(Role::Assistant);
        assistant.calls = vec![
            call("read", Args::Text(r#"{"path":"src/a.rs"}"#)),
            call("read", Args::Json(from_serde(&json!({"path": "lib/m.py"})))),
            call("edit", Args::Json(from_serde(&json!({"path": "src/z.rs"})))),
        ];
        let views = [user, assistant];
        let f = gather(&views, &[0, 1]);
        let files: Vec<&str> = f.files.iter().map(|p| p.as_ref()).collect();
        assert_eq!(files, ["lib/m.py", "src/a.rs", "src/z.rs"]);
        assert_eq!(f.tools.into_iter().collect::<Vec<_>>(), ["edit", "read"]);
    }
}
