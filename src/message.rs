//! Light, format-independent views of messages: what the modes plan on.
//!
//! A format adapter reads each message's JSON once into a [`Message`]; the views
//! borrow the text from the parsed JSON, so building them copies almost nothing.

use std::borrow::Cow;
use std::cell::OnceCell;

use crate::json::Value;

use crate::names::{pair, unpair, Names};
use crate::plan::{PLACEHOLDER, STUB_TEXT, STUB_TEXT_MARKED};
use crate::tokens::Image;

/// The role of a message as the modes see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Role {
    /// A system prompt.
    System,
    /// A user turn (including synthesized summaries and markers).
    User,
    /// An assistant turn, possibly with tool calls.
    Assistant,
    /// A message that only carries tool results (OpenAI `tool`, Moltis `tool_result`,
    /// an Anthropic user message made only of `tool_result` blocks).
    Tool,
    /// A UI-only message that is never sent to a model (Moltis `notice`).
    Notice,
}

impl Role {
    /// Lowercase label used in summaries and timelines.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::Notice => "notice",
        }
    }
}

/// The arguments of a tool call as the format stores them.
#[derive(Debug, Clone)]
pub(crate) enum Args<'a> {
    /// A JSON-encoded string (OpenAI, Moltis); may not be valid JSON.
    Text(&'a str),
    /// A JSON value (Anthropic `input`).
    Json(Value),
}

impl Args<'_> {
    /// The arguments as JSON text.
    pub(crate) fn text(&self) -> Cow<'_, str> {
        match self {
            Args::Text(s) => Cow::Borrowed(s),
            Args::Json(v) => Cow::Owned(v.to_string()),
        }
    }

    /// The arguments parsed as a JSON value, if they are valid JSON.
    pub(crate) fn parsed(&self) -> Option<Cow<'_, Value>> {
        match self {
            Args::Text(s) => {
                let parsed = crate::json::parse::parse_str(s).ok()?;
                Some(Cow::Owned(crate::json::Node::to_value(
                    parsed.tape().root(),
                )))
            }
            Args::Json(v) => Some(Cow::Borrowed(v)),
        }
    }
}

/// One tool call of an assistant message.
#[derive(Debug, Clone)]
pub(crate) struct Call<'a> {
    /// The call id the result refers to (formats without ids get one made up
    /// from the tool's name and its place in the turn).
    pub id: Cow<'a, str>,
    /// The tool's name; empty for the call a Responses `item_reference` stands
    /// for (the stored call it names is not in the request).
    pub name: &'a str,
    /// The call's arguments.
    pub args: Args<'a>,
    /// The call travels with a provider's signature (a Gemini `thoughtSignature`
    /// on its part), so it is sent back exactly as it is: never shortened.
    pub sealed: bool,
}

/// One tool result (a whole OpenAI `tool` message, or one Anthropic `tool_result` block).
#[derive(Debug, Clone)]
pub(crate) struct ToolOutput<'a> {
    /// The id of the call this answers.
    pub id: Cow<'a, str>,
    /// The tool name when the message names it (Moltis `tool_name`, OpenAI `name`).
    pub name: Option<&'a str>,
    /// The output as text (error text included).
    pub text: Cow<'a, str>,
    /// Whether the tool reported an error.
    pub is_error: bool,
    /// Size of the stored output in UTF-8 bytes (what pruning compares against).
    pub bytes: usize,
    /// Whether the output already is a placeholder of an earlier compaction.
    pub is_placeholder: bool,
    /// Images inside the output.
    pub images: usize,
    /// What is known of those images (their size), as far as they were read;
    /// the rest count a fixed amount of tokens.
    pub image_sizes: Vec<Image>,
    /// Bytes of parts of the output the library does not interpret.
    pub opaque_bytes: usize,
    /// Tokens of `text`, noted when the message is counted.
    pub tokens: u64,
    /// The call this answers, as (message, call number); `None` for an orphan.
    /// Set once when the history is read.
    pub call: Option<(usize, usize)>,
}

impl<'a> ToolOutput<'a> {
    /// A tool output view; size and placeholder state are derived from `text`.
    pub(crate) fn new(
        id: impl Into<Cow<'a, str>>,
        name: Option<&'a str>,
        text: Cow<'a, str>,
        is_error: bool,
    ) -> Self {
        ToolOutput {
            id: id.into(),
            name,
            bytes: text.len(),
            is_placeholder: text.starts_with(PLACEHOLDER)
                || text == STUB_TEXT
                || text == STUB_TEXT_MARKED,
            text,
            is_error,
            images: 0,
            image_sizes: Vec::new(),
            opaque_bytes: 0,
            tokens: 0,
            call: None,
        }
    }
}

/// A light, read-only view of one message.
#[derive(Debug, Clone)]
pub(crate) struct Message<'a> {
    /// The role as the modes see it.
    pub role: Role,
    /// Text parts in order (string content or text blocks).
    pub texts: Vec<&'a str>,
    /// Which of `texts` travel with a provider's signature (a Gemini
    /// `thoughtSignature` on the part): sent back exactly as they are, never cut.
    pub sealed_texts: Vec<usize>,
    /// Reasoning / thinking text that is sent back to the model but is not part
    /// of the conversation's visible text (counts tokens, never summarized).
    pub reasoning: Vec<&'a str>,
    /// Number of images.
    pub images: usize,
    /// What is known of those images (their size), as far as they were read;
    /// the rest count a fixed amount of tokens.
    pub image_sizes: Vec<Image>,
    /// Bytes of content parts the library does not interpret (audio, documents …).
    pub opaque_bytes: usize,
    /// Tool calls (assistant messages).
    pub calls: Vec<Call<'a>>,
    /// Tool results this message carries.
    pub results: Vec<ToolOutput<'a>>,
    /// Provider-reported input tokens of the request that produced this turn, when known.
    pub reported_input_tokens: Option<u64>,
    /// Whether a tool result follows another part of the message (Anthropic wants
    /// `tool_result` blocks first).
    pub results_out_of_order: bool,
    /// The message continues the assistant turn of the one before it (OpenAI
    /// Responses items: a call after a reasoning item or another call), so no
    /// boundary may fall between them.
    pub continues: bool,
    /// Its tool results answer its own calls (AI SDK UI messages hold call and
    /// result in one part), not those of an earlier message.
    pub inline_results: bool,
    /// A provider's compaction (an Anthropic `compaction` block, an OpenAI
    /// `compaction` item): what comes before it is the provider's business, so
    /// everything up to it stays as it is and compaction starts after it.
    pub boundary: bool,
    /// A stub's view (which has no texts to look at) of a message whose record
    /// says it holds text a compaction wrote; see [`Message::holds_written`].
    pub written: bool,
    /// Estimated tokens of the message, filled in by the estimator.
    pub tokens: u64,
    /// The session holds this view: what is read from it for planning is kept
    /// with it (`mentions`), as later calls ask again.
    pub held: bool,
    /// What the facts of a run read from its texts and arguments, once asked
    /// (for a view the session holds).
    pub mentions: OnceCell<Mentions>,
}

/// What the facts of a run ([`crate::plan::facts`]) read from one message's
/// texts and arguments: the paths it mentions, and whether its own text
/// mentions pending work. Paths are kept as places in the message (no
/// borrow: a view stays covariant, as the session needs).
#[derive(Debug, Clone, Default)]
pub(crate) struct Mentions {
    /// The paths, in order.
    pub files: Vec<Mention>,
    /// Its own text (a user's or assistant's) mentions pending work.
    pub pending: bool,
}

/// Where a path lies: a byte range of text part `k` or of call `k`'s
/// arguments, or the path itself (found in arguments stored as a JSON value).
#[derive(Debug, Clone)]
pub(crate) enum Mention {
    Text(usize, (usize, usize)),
    Args(usize, (usize, usize)),
    Owned(String),
}

impl<'a> Message<'a> {
    /// An empty view with `role`.
    pub(crate) fn new(role: Role) -> Self {
        Message {
            role,
            texts: Vec::new(),
            sealed_texts: Vec::new(),
            reasoning: Vec::new(),
            images: 0,
            image_sizes: Vec::new(),
            opaque_bytes: 0,
            calls: Vec::new(),
            results: Vec::new(),
            reported_input_tokens: None,
            results_out_of_order: false,
            continues: false,
            inline_results: false,
            boundary: false,
            written: false,
            tokens: 0,
            held: false,
            mentions: OnceCell::new(),
        }
    }

    /// Counts an image part, reading its size when its data says.
    pub(crate) fn add_image<N: crate::json::Node<'a>>(&mut self, part: N) {
        self.images += 1;
        self.image_sizes.push(crate::tokens::image_of(part));
    }

    /// The path a [`Mention`] of this message names.
    pub(crate) fn mentioned(&self, m: &Mention) -> Cow<'a, str> {
        let at =
            |text: &'a str, (a, b): (usize, usize)| Cow::Borrowed(text.get(a..b).unwrap_or(""));
        match m {
            Mention::Text(k, range) => at(self.texts.get(*k).copied().unwrap_or(""), *range),
            Mention::Args(k, range) => match self.calls.get(*k).map(|c| &c.args) {
                Some(Args::Text(text)) => at(text, *range),
                _ => Cow::Borrowed(""),
            },
            Mention::Owned(path) => Cow::Owned(path.clone()),
        }
    }

    /// The first non-blank text part, trimmed.
    pub(crate) fn first_text(&self) -> Option<&'a str> {
        self.texts.iter().map(|t| t.trim()).find(|t| !t.is_empty())
    }

    /// The first non-blank text that is the caller's own, not a summary or
    /// marker an earlier compaction wrote (as a message of its own, or merged
    /// into this one), trimmed.
    pub(crate) fn own_text(&self) -> Option<&'a str> {
        self.texts
            .iter()
            .map(|t| t.trim())
            .find(|t| !t.is_empty() && !crate::text::is_synthetic(t))
    }

    /// Whether the message is only what an earlier compaction wrote: text, none
    /// of it the caller's.
    pub(crate) fn is_written(&self) -> bool {
        self.first_text().is_some() && self.own_text().is_none()
    }

    /// Whether any of the message's texts is a summary or marker a compaction
    /// wrote (a message of its own, or merged into the caller's).
    pub(crate) fn holds_written(&self) -> bool {
        self.written || self.texts.iter().any(|t| crate::modes::is_written(t))
    }

    /// Whether the message holds nothing but its text part `k` (a summary or
    /// marker the library wrote as a message of its own, not one merged into
    /// the caller's message).
    pub(crate) fn is_only_text(&self, k: usize) -> bool {
        k == 0
            && self.texts.len() == 1
            && self.results.is_empty()
            && self.calls.is_empty()
            && self.reasoning.is_empty()
            && self.images == 0
            && self.opaque_bytes == 0
    }

    /// Whether the message has nothing a provider would accept (no text, calls,
    /// results, images or other parts): providers reject such messages.
    pub(crate) fn is_empty(&self) -> bool {
        self.is_empty_without_results() && self.results.is_empty()
    }

    /// Whether nothing but tool results is in the message (so dropping them all
    /// would leave it empty).
    pub(crate) fn is_empty_without_results(&self) -> bool {
        self.texts
            .iter()
            .chain(&self.reasoning)
            .all(|t| t.trim().is_empty())
            && self.images == 0
            && self.opaque_bytes == 0
            && self.calls.is_empty()
    }

    /// Whether this message carries tool results that answer an earlier message's
    /// calls (and so must follow them).
    pub(crate) fn has_results(&self) -> bool {
        !self.results.is_empty() && !self.inline_results
    }
}

/// Links every tool result to the call it answers, in one pass, as providers
/// pair them: within the assistant turn right before (the nearest earlier
/// messages without results, those that continue one another), or, for inline
/// results, within the message itself. Sets [`ToolOutput::call`] from the
/// turn that holds message `from` on (those before it were linked already:
/// linking only looks back).
pub(crate) fn link_results(views: &mut [Message<'_>], from: usize) {
    // Where the turn of `from` starts, the calls looked up start afresh.
    let starts_turn = |m: &Message<'_>| {
        !m.continues && (m.inline_results || !m.has_results() && m.role != Role::Notice)
    };
    let start = views[..from.min(views.len())]
        .iter()
        .rposition(starts_turn)
        .unwrap_or(0);
    let mut ids = Names::new();
    for (i, m) in views.iter_mut().enumerate().skip(start) {
        if m.inline_results {
            // (by id, in tables: a UI message may hold thousands of calls)
            let mut own = Names::new();
            for (k, c) in m.calls.iter().enumerate() {
                own.insert(&c.id, k as u64);
            }
            let mut answered = Names::new();
            for r in &mut m.results {
                r.call = own.get(&r.id).map(|k| (i, k as usize));
                answered.add(&r.id);
            }
            // Its calls not answered in it are answered after it (AI SDK: a
            // provider-executed tool's result inline, the caller's tools' later).
            if !m.continues {
                ids.clear();
            }
            for (k, c) in m.calls.iter().enumerate() {
                if answered.get(&c.id).is_none() {
                    ids.insert(&c.id, pair(i, k));
                }
            }
            continue;
        }
        if m.has_results() || m.role == Role::Notice {
            for r in &mut m.results {
                r.call = ids.get(&r.id).map(unpair);
            }
            continue;
        }
        if !m.continues {
            ids.clear();
        }
        if m.role == Role::Assistant {
            for (k, c) in m.calls.iter().enumerate() {
                // the first of duplicate ids wins
                ids.insert(&c.id, pair(i, k));
            }
        }
    }
}
