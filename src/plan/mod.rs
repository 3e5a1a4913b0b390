//! The plan a mode produces: which input messages to keep (possibly edited) and
//! what to insert. Format adapters render it; the modes never touch JSON. The
//! submodules are the planning steps the modes share: head and tail (`window`),
//! tool-output pruning, tool-pair repair, the summary bound, facts of a run of
//! messages.

pub(crate) mod bound;
pub(crate) mod facts;
pub(crate) mod fit;
pub(crate) mod pairs;
pub(crate) mod prune;
pub(crate) mod window;

use crate::json::Value;

/// First line of a placeholder that replaces a bulky old tool output.
pub(crate) const PLACEHOLDER: &str = "[Old tool output cleared to save context space]";

/// Text of a stub result for a call whose real result was compacted away, with
/// a summary above it (SPEC §5, Moltis's words).
pub(crate) const STUB_TEXT: &str = "[Result from earlier conversation — see context summary above]";
/// The same where a recency marker, not a summary, stands for what was left out
/// (before or after the stub: a call of the head has its stub above the marker).
pub(crate) const STUB_TEXT_MARKED: &str =
    "[Result from earlier conversation — elided to save context space]";

/// One step of the output history.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Copy input message `index`, applying `edits` (none: verbatim).
    Keep {
        /// Index into the input messages.
        index: usize,
        /// Changes to apply to the copy, in order.
        edits: Vec<Edit>,
    },
    /// A message the library writes.
    Insert(Synthetic),
}

impl Step {
    /// A verbatim copy of input message `index`.
    pub(crate) fn keep(index: usize) -> Step {
        Step::Keep {
            index,
            edits: Vec::new(),
        }
    }
}

/// A change to a kept message, addressed through its view (result / call number).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Edit {
    /// Replace the output of the message's `result`-th tool result with `text`
    /// (a placeholder, or a shortened copy for the summarizer).
    ReplaceOutput {
        /// Which tool result of the message.
        result: usize,
        /// The text that replaces the output.
        text: String,
    },
    /// Replace the message's `part`-th text part (in the order of
    /// [`crate::message::Message::texts`]) with `text`.
    ReplaceText {
        /// Which text part of the message.
        part: usize,
        /// The new text.
        text: String,
    },
    /// Remove the message's `part`-th text part: an earlier compaction's summary
    /// or marker that alternation merged into the caller's message, now
    /// superseded by what this compaction adds.
    DropText {
        /// Which text part of the message.
        part: usize,
    },
    /// Remove reasoning the provider keeps with the message (OpenAI
    /// `reasoning_content` / `reasoning`, Anthropic `thinking` and `redacted_thinking`
    /// blocks): a summarizer does not need it, and signed thinking blocks may not be
    /// accepted by another model.
    DropReasoning,
    /// Replace the arguments of the message's `call`-th tool call (still valid JSON).
    ShortenArgs {
        /// Which tool call of the message.
        call: usize,
        /// The shortened arguments.
        args: Value,
    },
    /// Remove these tool results (orphans) from the message (ascending).
    DropResults(Vec<usize>),
    /// Add stub results for these call ids to the message (Anthropic: the user
    /// message after the `tool_use` already carrying other results).
    AddStubs(Vec<Stub>),
    /// Move the tool results before the other parts of the message (Anthropic
    /// rejects a `tool_result` block after a text block).
    ResultsFirst,
}

/// A message the library synthesizes, built in the input's format.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Synthetic {
    /// A `[Conversation Summary]` user message (full text).
    Summary(String),
    /// A `[Conversation Compacted]` user message (full text).
    Marker(String),
    /// Stub results for these call ids (OpenAI: one `tool` message each; Anthropic:
    /// one user message of `tool_result` blocks).
    Stubs(Vec<Stub>),
    /// A plain user message of the summarizer's input (a gap marker, the final
    /// instruction).
    Note(String),
}

/// A call whose result is gone, to be answered by a stub result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stub {
    /// The call's id.
    pub id: String,
    /// The tool's name (results name their tool in the AI SDK and Gemini).
    pub name: String,
    /// What the stub says ([`STUB_TEXT`] or [`STUB_TEXT_MARKED`]).
    pub text: &'static str,
}

/// The output history as steps, in order.
pub(crate) type Plan = Vec<Step>;
