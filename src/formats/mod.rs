//! Message formats: detection, reading messages into views, and rendering a plan
//! back into the input's format. One adapter module per format.

mod anthropic;
mod moltis;
mod openai;

use serde::Serialize;
use serde_json::{Map, Value};

use std::marker::PhantomData;

use crate::error::{Error, Result};
use crate::json::{Kind, Node};
use crate::message::{Message, Role};
use crate::plan::{Plan, Step, Synthetic};

/// A supported message format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// OpenAI Chat Completions messages.
    Openai,
    /// Anthropic Messages API messages.
    Anthropic,
    /// Moltis session messages (OpenAI-like, plus `notice`, `tool_result`, `created_at`).
    Moltis,
}

impl Format {
    /// Parses a format name.
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "openai" => Some(Format::Openai),
            "anthropic" => Some(Format::Anthropic),
            "moltis" => Some(Format::Moltis),
            _ => None,
        }
    }

    /// Where results of an assistant's tool calls live.
    pub fn results_placement(self) -> ResultsPlacement {
        match self {
            Format::Anthropic => ResultsPlacement::NextUserMessage,
            Format::Openai | Format::Moltis => ResultsPlacement::FollowingMessages,
        }
    }
}

/// How a format places tool results after the assistant message that made the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultsPlacement {
    /// One message per result, right after the assistant (OpenAI `tool` messages).
    FollowingMessages,
    /// Blocks in the single user message right after the assistant (Anthropic,
    /// Gemini).
    NextUserMessage,
    /// In the very message that made the call (AI SDK UI messages).
    SameMessage,
}

/// A parsed input: where the messages are and in which format. `N` is how the
/// JSON is held: `&serde_json::Value`, or a node of the JS layer's value tape.
#[derive(Debug)]
pub(crate) struct Document<'a, N: Node<'a>> {
    /// The detected or forced format.
    pub format: Format,
    /// The whole input (array or request object).
    pub root: N,
    /// The messages.
    pub messages: Vec<N>,
    /// Whether the input was a request object holding the messages.
    pub is_request: bool,
    _json: PhantomData<&'a ()>,
}

/// One message of the output: an input message copied verbatim, or a new or
/// edited one. Keeping the distinction lets the JS layer return the caller's own
/// objects for kept messages instead of copies.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum OutputMessage {
    /// Input message `i`, unchanged.
    Kept(usize),
    /// A message the library wrote or edited.
    New(Value),
}

/// How synthesized messages are stamped.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stamp {
    /// Give synthesized messages an `id` (the input's messages carry ids).
    pub ids: bool,
    /// `created_at` for synthesized Moltis messages; when absent they take the
    /// `created_at` of the newest message they stand for.
    pub now: Option<i64>,
    /// A random seed: ids are random instead of derived from the content.
    pub random: Option<u64>,
}

/// The JSON type name of `v`, for error messages.
pub(crate) fn type_name(v: &Value) -> &'static str {
    v.kind().name()
}

const EXPECTED_INPUT: &str =
    "expected an array of messages or a request object with a \"messages\" array";

/// Locates the messages in `root` and settles the format.
pub(crate) fn open<'a, N: Node<'a>>(root: N, forced: Option<Format>) -> Result<Document<'a, N>> {
    let (messages, is_request) = match root.kind() {
        Kind::Array => (root.items().collect::<Vec<N>>(), false),
        Kind::Object => match root.get("messages") {
            Some(m) if m.kind() == Kind::Array => (m.items().collect(), true),
            Some(other) => {
                return Err(Error::input(
                    "messages",
                    format!("expected an array of messages, got {}", other.kind().name()),
                ))
            }
            None => {
                return Err(Error::input(
                    "input",
                    format!("{EXPECTED_INPUT}, got an object without \"messages\""),
                ))
            }
        },
        other => {
            return Err(Error::input(
                "input",
                format!("{EXPECTED_INPUT}, got {}", other.name()),
            ))
        }
    };
    let format = forced.unwrap_or_else(|| detect(root, &messages));
    Ok(Document {
        format,
        root,
        messages,
        is_request,
        _json: PhantomData,
    })
}

/// A document of one message (to read a message the library wrote).
pub(crate) fn single<'a, N: Node<'a>>(format: Format, message: N) -> Document<'a, N> {
    Document {
        format,
        root: message,
        messages: vec![message],
        is_request: false,
        _json: PhantomData,
    }
}

/// Guesses the format from what only one format has: Anthropic content blocks
/// first (a history of them may carry timestamps too), then Moltis roles or
/// `created_at`, else OpenAI.
fn detect<'a, N: Node<'a>>(root: N, messages: &[N]) -> Format {
    let kind_of = |b: N| b.get("type").and_then(Node::as_str);
    let anthropic_block = |b: N| {
        matches!(
            kind_of(b),
            Some("tool_use" | "tool_result" | "thinking" | "redacted_thinking")
        ) || (kind_of(b) == Some("image") && b.get("source").is_some())
    };
    let anthropic = root.get("system").is_some()
        || messages.iter().any(|m| {
            m.get("content")
                .is_some_and(|c| c.items().any(anthropic_block))
        });
    if anthropic {
        return Format::Anthropic;
    }
    let moltis = messages.iter().any(|m| {
        matches!(
            m.get("role").and_then(Node::as_str),
            Some("notice" | "tool_result")
        ) || m.get("created_at").is_some()
    });
    if moltis {
        Format::Moltis
    } else {
        Format::Openai
    }
}

impl<'a, N: Node<'a>> Document<'a, N> {
    /// Reads every message into a view, validating what the library relies on.
    pub(crate) fn read(&self) -> Result<Vec<Message<'a>>> {
        let read = match self.format {
            Format::Openai => openai::read::<N>,
            Format::Anthropic => anthropic::read::<N>,
            Format::Moltis => moltis::read::<N>,
        };
        self.messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                if m.kind() != Kind::Object {
                    return Err(Error::input(
                        format!("messages[{i}]"),
                        format!("expected a message object, got {}", m.kind().name()),
                    ));
                }
                let mut view = read(*m, i)?;
                // Provider-reported usage of the request that produced this turn,
                // as Moltis and chat UIs store it, in whatever format.
                if view.role == Role::Assistant {
                    view.reported_input_tokens = ["requestInputTokens", "inputTokens"]
                        .iter()
                        .find_map(|k| m.get(k).and_then(Node::as_u64));
                }
                Ok(view)
            })
            .collect::<Result<Vec<_>>>()
            .map(|mut views| {
                crate::message::link_results(&mut views);
                views
            })
    }

    /// The system prompt held outside the messages (Anthropic `system`), as text parts.
    pub(crate) fn system_texts(&self) -> Vec<&'a str> {
        if !self.is_request {
            return Vec::new();
        }
        match self.root.get("system") {
            Some(s) if s.kind() == Kind::String => s.as_str().into_iter().collect(),
            Some(blocks) => blocks
                .items()
                .filter_map(|b| b.get("text").and_then(Node::as_str))
                .collect(),
            None => Vec::new(),
        }
    }

    /// Renders `plan` into messages of this document's format.
    pub(crate) fn render(
        &self,
        views: &[Message<'_>],
        plan: &Plan,
        stamp: &Stamp,
    ) -> Vec<OutputMessage> {
        let mut out = Vec::with_capacity(plan.len());
        for (pos, step) in plan.iter().enumerate() {
            match step {
                Step::Keep { index, edits } => {
                    if edits.is_empty() {
                        out.push(OutputMessage::Kept(*index));
                        continue;
                    }
                    let mut copy = self.messages[*index].to_value();
                    if let Value::Object(obj) = &mut copy {
                        match self.format {
                            Format::Anthropic => anthropic::apply(obj, edits),
                            Format::Openai => edits.iter().for_each(|e| openai::edit(obj, e)),
                            Format::Moltis => edits.iter().for_each(|e| moltis::edit(obj, e)),
                        }
                    }
                    out.push(OutputMessage::New(copy));
                }
                Step::Insert(synthetic) => {
                    let time = self.time_for(plan, pos, views.len());
                    for mut msg in self.synthesize(synthetic) {
                        if self.format == Format::Moltis {
                            if let Some(t) = stamp.now.map(Value::from).or_else(|| time.clone()) {
                                msg.insert("created_at".into(), t);
                            }
                        }
                        if stamp.ids {
                            let id = match stamp.random {
                                Some(seed) => random_id(seed, out.len()),
                                None => derived_id(&format!(
                                    "{}:{}",
                                    out.len(),
                                    Value::Object(msg.clone())
                                )),
                            };
                            msg.insert("id".into(), Value::String(id));
                        }
                        out.push(OutputMessage::New(Value::Object(msg)));
                    }
                }
            }
        }
        out
    }

    /// Renders a summarizer's input `plan` as a request for the input's provider:
    /// the OpenAI-like formats open with the `system` message (Anthropic keeps it
    /// apart), Moltis messages become plain OpenAI messages, and the final
    /// `instruction` closes it.
    pub(crate) fn render_request(
        &self,
        views: &[Message<'_>],
        plan: &Plan,
        system: &str,
        instruction: &str,
    ) -> Vec<OutputMessage> {
        let mut out = Vec::with_capacity(plan.len() + 2);
        if self.format != Format::Anthropic {
            let mut m = user_text(system);
            m.insert("role".into(), "system".into());
            out.push(OutputMessage::New(Value::Object(m)));
        }
        for o in self.render(views, plan, &Stamp::default()) {
            out.push(match (self.format, o) {
                (Format::Moltis, OutputMessage::Kept(i)) => {
                    OutputMessage::New(moltis::as_openai(self.messages[i].to_value()))
                }
                (Format::Moltis, OutputMessage::New(v)) => OutputMessage::New(moltis::as_openai(v)),
                (_, o) => o,
            });
        }
        out.push(OutputMessage::New(Value::Object(user_text(instruction))));
        out
    }

    /// The `created_at` a synthesized message at `pos` stands for: that of the
    /// newest input message before the next kept one.
    fn time_for(&self, plan: &Plan, pos: usize, n: usize) -> Option<Value> {
        let next_kept = plan[pos..]
            .iter()
            .find_map(|s| match s {
                Step::Keep { index, .. } => Some(*index),
                Step::Insert(_) => None,
            })
            .unwrap_or(n);
        self.messages[..next_kept.min(self.messages.len())]
            .iter()
            .rev()
            .find_map(|m| m.get("created_at").map(Node::to_value))
    }

    fn synthesize(&self, s: &Synthetic) -> Vec<Map<String, Value>> {
        match s {
            Synthetic::Summary(text) | Synthetic::Marker(text) | Synthetic::Note(text) => {
                vec![user_text(text)]
            }
            Synthetic::Stubs(ids) => match self.format {
                Format::Anthropic => vec![anthropic::stub_message(ids)],
                Format::Openai | Format::Moltis => ids.iter().map(|id| openai::stub(id)).collect(),
            },
        }
    }
}

/// A plain `{role: "user", content}` message.
fn user_text(text: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("role".into(), "user".into());
    m.insert("content".into(), text.into());
    m
}

/// A deterministic id derived from a message's position and content (FNV-1a, 64 bits).
fn derived_id(content: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in content.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("cc_{h:016x}")
}

/// The id at output position `pos` for a random `seed` (splitmix64).
fn random_id(seed: u64, pos: usize) -> String {
    let mut z = seed.wrapping_add((pos as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    format!("cc_{:016x}", z ^ (z >> 31))
}

/// Reads an optional string field; a present non-string is an error at `path.key`.
pub(crate) fn opt_str<'a, N: Node<'a>>(
    obj: N,
    key: &str,
    path: &dyn Fn() -> String,
) -> Result<Option<&'a str>> {
    match obj.get(key) {
        None => Ok(None),
        Some(v) if v.kind() == Kind::Null => Ok(None),
        Some(v) => v.as_str().map(Some).ok_or_else(|| {
            Error::input(
                format!("{}.{key}", path()),
                format!("expected a string, got {}", v.kind().name()),
            )
        }),
    }
}

/// Reads a required string field.
pub(crate) fn req_str<'a, N: Node<'a>>(
    obj: N,
    key: &str,
    path: &dyn Fn() -> String,
) -> Result<&'a str> {
    opt_str(obj, key, path)?.ok_or_else(|| {
        Error::input(
            format!("{}.{key}", path()),
            "missing; expected a string".to_string(),
        )
    })
}
