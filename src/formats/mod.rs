//! Message formats: detection, reading messages into views, and rendering a plan
//! back into the input's format. One adapter module per format.

mod ai_sdk;
mod ai_sdk_ui;
mod anthropic;
mod gemini;
mod moltis;
mod openai;
mod responses;

use crate::json::{Map, Value, WriteJson, Writer};

use std::borrow::Cow;
use std::marker::PhantomData;

use crate::error::{Error, Result};
use crate::json::{Kind, Node};
use crate::memo::{Known, Memo};
use crate::message::{Message, Role};
use crate::names::Names;
use crate::plan::{Edit, Plan, Step, Synthetic};
use crate::text::Quoted;

/// A supported message format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenAI Chat Completions messages.
    Openai,
    /// Anthropic Messages API messages.
    Anthropic,
    /// Moltis session messages (OpenAI-like, plus `notice`, `tool_result`, `created_at`).
    Moltis,
    /// OpenAI Responses API input items.
    OpenaiResponses,
    /// Vercel AI SDK `ModelMessage`s.
    AiSdk,
    /// Vercel AI SDK `UIMessage`s (call and result in one part).
    AiSdkUi,
    /// Google Gemini `contents`.
    Gemini,
}

/// Every format, with its name.
pub(crate) const FORMATS: [(&str, Format); 7] = [
    ("openai", Format::Openai),
    ("anthropic", Format::Anthropic),
    ("moltis", Format::Moltis),
    ("openai-responses", Format::OpenaiResponses),
    ("ai-sdk", Format::AiSdk),
    ("ai-sdk-ui", Format::AiSdkUi),
    ("gemini", Format::Gemini),
];

impl Format {
    /// Parses a format name.
    pub fn from_name(name: &str) -> Option<Format> {
        FORMATS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }

    /// The format's name (`openai-responses`).
    pub fn name(self) -> &'static str {
        FORMATS
            .iter()
            .find(|(_, f)| *f == self)
            .map_or("", |(n, _)| n)
    }

    /// Where results of an assistant's tool calls live.
    pub fn results_placement(self) -> ResultsPlacement {
        match self {
            Format::Anthropic | Format::Gemini => ResultsPlacement::NextUserMessage,
            Format::AiSdkUi => ResultsPlacement::SameMessage,
            Format::Openai | Format::Moltis | Format::OpenaiResponses | Format::AiSdk => {
                ResultsPlacement::FollowingMessages
            }
        }
    }

    /// Whether the system prompt travels outside the messages in a request
    /// (Anthropic `system`, Gemini `systemInstruction`).
    pub(crate) fn system_apart(self) -> bool {
        matches!(self, Format::Anthropic | Format::Gemini)
    }
}

impl WriteJson for Format {
    fn write_json(&self, w: &mut Writer) {
        w.string(self.name());
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

/// A parsed input: where the messages are and in which format. `N` is the node
/// of the value tape the input was written into.
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
    /// What each message's shape says about its format (kept for the cache).
    pub evidence: Vec<Evidence>,
    /// What the cache knows of each message a stub stands for (see [`crate::memo`]).
    pub stubs: Vec<Option<Known>>,
    _json: PhantomData<&'a ()>,
}

/// One message of the output: an input message copied verbatim, or a new or
/// edited one. Keeping the distinction lets the JS layer return the caller's own
/// objects for kept messages instead of copies.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OutputMessage {
    /// Input message `i`, unchanged.
    Kept(usize),
    /// A message the library wrote or edited.
    New(Value),
}

impl WriteJson for OutputMessage {
    /// A kept message as its input index, the others as they are.
    fn write_json(&self, w: &mut Writer) {
        match self {
            OutputMessage::Kept(i) => i.write_json(w),
            OutputMessage::New(v) => w.value(v),
        }
    }
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

/// Where the parts of one kind are, in order. Edits name a part by its number
/// among the parts of its kind, as the adapter read them; found once per
/// message (a turn may hold thousands of parts), not once per edit.
struct PartsOf(Vec<usize>);

impl PartsOf {
    fn new(parts: &[Value], is: impl Fn(&Value) -> bool) -> Self {
        PartsOf((0..parts.len()).filter(|&p| is(&parts[p])).collect())
    }

    /// The `n`-th part of the kind, as an object.
    fn nth<'p>(&self, parts: &'p mut [Value], n: usize) -> Option<&'p mut Map> {
        let at = *self.0.get(n)?;
        parts.get_mut(at).and_then(Value::as_object_mut)
    }
}

const EXPECTED_INPUT: &str =
    "expected an array of messages or a request object with a \"messages\" (\"input\", \"contents\") array";

/// Where a request object keeps its messages: Chat Completions, Anthropic and
/// the AI SDK `messages`, OpenAI Responses `input`, Gemini `contents`.
pub(crate) const MESSAGE_KEYS: [&str; 3] = ["messages", "input", "contents"];

/// The key under which a request object holds its messages.
pub(crate) fn messages_key<'a, N: Node<'a>>(root: N) -> Option<&'static str> {
    MESSAGE_KEYS.into_iter().find(|k| root.get(k).is_some())
}

/// Locates the messages in `root` and settles the format.
pub(crate) fn open<'a, N: Node<'a>>(root: N, forced: Option<Format>) -> Result<Document<'a, N>> {
    open_known(root, forced, &Memo::default())
}

/// [`open`], taking each message's format evidence from its record in `memo`
/// where there is one, and noting which messages are stubs (see [`crate::memo`]).
pub(crate) fn open_known<'a, N: Node<'a>>(
    root: N,
    forced: Option<Format>,
    memo: &Memo<'_>,
) -> Result<Document<'a, N>> {
    let (messages, is_request) = locate(root)?;
    let stubs: Vec<Option<Known>> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| memo.stub(i, *m))
        .collect();
    // A message the cache knows has its evidence in its record.
    let evidence: Vec<Evidence> = messages
        .iter()
        .enumerate()
        .map(|(i, m)| memo.evidence(i).unwrap_or_else(|| Evidence::of(*m)))
        .collect();
    let format = settle(root, &messages, &evidence, forced)?;
    Ok(Document::new(
        format, root, messages, is_request, evidence, stubs,
    ))
}

/// The messages of `root` (an array, or a request object's message array),
/// and whether `root` is a request object.
pub(crate) fn locate<'a, N: Node<'a>>(root: N) -> Result<(Vec<N>, bool)> {
    match root.kind() {
        Kind::Array => Ok((root.items().collect::<Vec<N>>(), false)),
        Kind::Object => match messages_key(root).and_then(|k| Some((k, root.get(k)?))) {
            Some((_, m)) if m.kind() == Kind::Array => Ok((m.items().collect(), true)),
            // A Responses request may give its input as one string: one user message.
            Some(("input", m)) if m.kind() == Kind::String => Ok((vec![m], true)),
            Some((key, other)) => Err(Error::input(
                key,
                format!("expected an array of messages, got {}", other.kind().name()),
            )),
            None => Err(Error::input(
                "input",
                format!("{EXPECTED_INPUT}, got an object without any of them"),
            )),
        },
        other => Err(Error::input(
            "input",
            format!("{EXPECTED_INPUT}, got {}", other.name()),
        )),
    }
}

/// The format: the `forced` one, checked against each message's evidence, or
/// the one detected.
pub(crate) fn settle<'a, N: Node<'a>>(
    root: N,
    messages: &[N],
    evidence: &[Evidence],
    forced: Option<Format>,
) -> Result<Format> {
    let format = forced.unwrap_or_else(|| detect(root, messages, evidence));
    fits(format, forced.is_some(), evidence)?;
    Ok(format)
}

impl<'a, N: Node<'a>> Document<'a, N> {
    /// A document of `messages` read from `root`.
    pub(crate) fn new(
        format: Format,
        root: N,
        messages: Vec<N>,
        is_request: bool,
        evidence: Vec<Evidence>,
        stubs: Vec<Option<Known>>,
    ) -> Self {
        Document {
            format,
            root,
            messages,
            is_request,
            evidence,
            stubs,
            _json: PhantomData,
        }
    }
}

/// A document of one message (to read a message the library wrote).
pub(crate) fn single<'a, N: Node<'a>>(format: Format, message: N) -> Document<'a, N> {
    Document::new(
        format,
        message,
        vec![message],
        false,
        vec![Evidence::of(message)],
        vec![None],
    )
}

/// What a message's own shape says about its format, kept so that a message
/// the JS layer's cache already knows (a stub, see [`crate::memo`]) still
/// counts towards detection and the forced-format check without being read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Evidence {
    /// The [`Signal`] bits [`detect`] combines over all messages.
    pub signals: u8,
    /// The [`MARKERS`] entry the message has, plus one (0: none).
    pub marker: u8,
}

/// The signals of formats [`detect`] weighs, the most specific first.
struct Signal;

impl Signal {
    const RESPONSES: u8 = 1;
    const AI_SDK_UI: u8 = 2;
    const GEMINI: u8 = 4;
    const AI_SDK: u8 = 8;
    const ANTHROPIC: u8 = 16;
    const MOLTIS: u8 = 32;
}

/// What only one format (or family) has, as the forced-format check names it.
const MARKERS: [(Format, &str); 7] = [
    (Format::OpenaiResponses, "a Responses item type"),
    (Format::AiSdkUi, "typed `parts`"),
    (Format::Gemini, "Gemini `parts`"),
    (Format::Gemini, "the role \"model\""),
    (Format::AiSdk, "AI SDK tool-call / tool-result parts"),
    (
        Format::Anthropic,
        "tool_use / tool_result / thinking blocks",
    ),
    (Format::Openai, "`tool_calls` / `tool_call_id`"),
];

impl Evidence {
    /// Reads the evidence of message `m`.
    pub(crate) fn of<'a, N: Node<'a>>(m: N) -> Evidence {
        let kind_of = |b: N| b.get("type").and_then(Node::as_str);
        let role = m.get("role").and_then(Node::as_str);
        let item_type = kind_of(m).is_some_and(responses::is_item_type);
        let gemini_parts = m.get("parts");
        let typed_parts = gemini_parts.is_some_and(|p| p.items().any(|x| kind_of(x).is_some()));
        // One pass over the content parts for what the AI SDK and Anthropic write.
        let (mut ai_sdk_tools, mut ai_sdk, mut anthropic_blocks, mut anthropic) =
            (false, false, false, false);
        for b in m.get("content").into_iter().flat_map(Node::items) {
            match kind_of(b) {
                Some("tool-call" | "tool-result") => ai_sdk_tools = true,
                // OpenAI's `file` parts carry a `file` object; the AI SDK's carry the data at the top.
                Some("file") => ai_sdk_tools |= b.get("file").is_none(),
                Some("reasoning") => ai_sdk = true,
                Some("image") => {
                    ai_sdk |= b.get("image").is_some();
                    anthropic |= b.get("source").is_some();
                }
                Some("tool_use" | "tool_result" | "thinking" | "redacted_thinking") => {
                    anthropic_blocks = true;
                }
                Some("compaction") => anthropic = true,
                _ => {}
            }
        }
        let ai_sdk = ai_sdk || ai_sdk_tools;
        let anthropic = anthropic || anthropic_blocks;
        let moltis =
            matches!(role, Some("notice" | "tool_result")) || m.get("created_at").is_some();
        let flags = [
            (item_type, Signal::RESPONSES),
            (typed_parts, Signal::AI_SDK_UI),
            (
                role == Some("model") || gemini_parts.is_some(),
                Signal::GEMINI,
            ),
            (ai_sdk, Signal::AI_SDK),
            (anthropic, Signal::ANTHROPIC),
            (moltis, Signal::MOLTIS),
        ];
        let signals = flags
            .iter()
            .filter(|(on, _)| *on)
            .fold(0, |acc, (_, bit)| acc | bit);
        let openai_tools = m.get("tool_calls").is_some() || m.get("tool_call_id").is_some();
        let marker = [
            item_type,
            typed_parts,
            gemini_parts.is_some(),
            role == Some("model"),
            ai_sdk_tools,
            anthropic_blocks,
            openai_tools,
        ]
        .iter()
        .position(|on| *on)
        .map_or(0, |k| k as u8 + 1);
        Evidence { signals, marker }
    }

    /// The format (or family) this message's shape belongs to, and what shows it.
    fn marker(self) -> Option<(Format, &'static str)> {
        MARKERS
            .get(usize::from(self.marker).checked_sub(1)?)
            .copied()
    }
}

/// The format, forced or detected, must fit every message: one with what only
/// another format has (an Anthropic `tool_result` block read as OpenAI would be
/// left orphaned, an Anthropic `tool_use` block in an AI SDK history) is
/// `INVALID_INPUT` naming it, whether the format was given or guessed from the
/// other messages. OpenAI and Moltis messages fit each other.
fn fits(format: Format, forced: bool, evidence: &[Evidence]) -> Result<()> {
    let family = |f: Format| match f {
        Format::Moltis => Format::Openai,
        f => f,
    };
    for (i, e) in evidence.iter().enumerate() {
        if let Some((found, what)) = e.marker() {
            if family(found) != family(format) {
                let how = if forced {
                    "the `format` option makes"
                } else {
                    "the other messages show to be"
                };
                let why = format!(
                    "holds {what}, a \"{}\" message in a history {how} \"{}\": one history is in one format; convert the message, or pass the history in the format it is in",
                    found.name(),
                    format.name()
                );
                return Err(Error::input(format!("messages[{i}]"), why));
            }
        }
    }
    Ok(())
}

/// Guesses the format from what only one format has, the most specific first:
/// a request's key (`input`, `contents`), Responses item types, parts that carry
/// a `type` (AI SDK UI) or do not (Gemini), AI SDK part types, Anthropic blocks,
/// Moltis roles or `created_at`; else OpenAI Chat Completions.
fn detect<'a, N: Node<'a>>(root: N, messages: &[N], evidence: &[Evidence]) -> Format {
    if root.get("contents").is_some() {
        return Format::Gemini;
    }
    if root.get("input").is_some() && root.get("messages").is_none() {
        return Format::OpenaiResponses;
    }
    let seen = evidence.iter().fold(0, |acc, e| acc | e.signals);
    let has = |bit: u8| seen & bit != 0;
    if has(Signal::RESPONSES) {
        Format::OpenaiResponses
    } else if has(Signal::AI_SDK_UI) {
        Format::AiSdkUi
    } else if has(Signal::GEMINI) {
        Format::Gemini
    } else if has(Signal::AI_SDK) {
        Format::AiSdk
    } else if has(Signal::ANTHROPIC) {
        Format::Anthropic
    } else if root.get("system").is_some() {
        // A request's own `system`: Anthropic's, unless a message is a system
        // message too, which Anthropic never takes and the AI SDK does (such as
        // an AI SDK request that llm_replace left as system + summary), and the
        // request lacks the `max_tokens` every Anthropic request has (where such
        // a message is the caller's mistake, said as such by the reader).
        let system_message = root.get("messages").is_some()
            && messages
                .iter()
                .any(|m| m.get("role").and_then(Node::as_str) == Some("system"));
        if system_message && root.get("max_tokens").is_none() {
            Format::AiSdk
        } else {
            Format::Anthropic
        }
    } else if has(Signal::MOLTIS) {
        Format::Moltis
    } else {
        Format::Openai
    }
}

impl<'a, N: Node<'a>> Document<'a, N> {
    /// Reads every message into a view, validating what the library relies on.
    pub(crate) fn read(&self) -> Result<Vec<Message<'a>>> {
        self.read_known(&Memo::default())
    }

    /// [`Document::read`], taking the views of the messages sent as stubs from
    /// what `memo` knows of them (enough to meter, nothing to plan on).
    pub(crate) fn read_known(&self, memo: &Memo<'_>) -> Result<Vec<Message<'a>>> {
        // Sized up front: a collect through `Result` cannot know the length, and
        // growing moves every (large) view again.
        let mut views = Vec::with_capacity(self.messages.len());
        self.read_from(&mut views, memo)?;
        self.link(&mut views, 0)?;
        Ok(views)
    }

    /// Reads the messages after those `views` holds (the session's, see
    /// [`crate::session`]) into it, unlinked.
    pub(crate) fn read_from(&self, views: &mut Vec<Message<'a>>, memo: &Memo<'_>) -> Result<()> {
        let read = match self.format {
            Format::Openai => openai::read::<N>,
            Format::Anthropic => anthropic::read::<N>,
            Format::Moltis => moltis::read::<N>,
            Format::OpenaiResponses => responses::read::<N>,
            Format::AiSdk => ai_sdk::read::<N>,
            Format::AiSdkUi => ai_sdk_ui::read::<N>,
            Format::Gemini => gemini::read::<N>,
        };
        for (i, m) in self.messages.iter().enumerate().skip(views.len()) {
            if let Some(known) = self.stubs.get(i).copied().flatten() {
                views.push(known.view(self.format, memo));
                continue;
            }
            if !self.string_input() {
                expect_object(*m, &|| format!("messages[{i}]"), "a message")?;
            }
            let mut view = read(*m, i)?;
            // Provider-reported usage of the request that produced this turn,
            // as Moltis and chat UIs store it, in whatever format (0: not known,
            // as some UIs store it).
            if view.role == Role::Assistant {
                view.reported_input_tokens = ["requestInputTokens", "inputTokens"]
                    .iter()
                    .find_map(|k| m.get(k).and_then(Node::as_u64))
                    .filter(|&t| t > 0);
            }
            views.push(view);
        }
        Ok(())
    }

    /// Links the tool results of `views` to the calls they answer, from the
    /// turn that holds message `from` on (results answer earlier messages only,
    /// so what was linked before stays as it is: not so Responses item
    /// references, which are linked from the start).
    pub(crate) fn link(&self, views: &mut [Message<'a>], from: usize) -> Result<()> {
        match self.format {
            Format::OpenaiResponses => responses::link_turns(views, &self.messages)?,
            Format::Gemini => gemini::link_ids(views),
            _ => {}
        }
        crate::message::link_results(views, from);
        Ok(())
    }

    /// Whether the request is a Responses request whose `input` is one string
    /// (one user message: nothing to compact).
    pub(crate) fn string_input(&self) -> bool {
        self.format == Format::OpenaiResponses
            && self
                .root
                .get("input")
                .is_some_and(|i| i.kind() == Kind::String)
    }

    /// The system prompt a request holds outside the messages (Anthropic and AI SDK
    /// `system`, Responses `instructions`, Gemini `systemInstruction`, at the top
    /// (REST) or in `config` (@google/genai)), as text parts.
    pub(crate) fn system_texts(&self) -> Vec<&'a str> {
        if !self.is_request {
            return Vec::new();
        }
        let key = match self.format {
            Format::OpenaiResponses => "instructions",
            Format::Gemini => "systemInstruction",
            _ => "system",
        };
        let Some(v) = self.root.get(key).or_else(|| self.config()?.get(key)) else {
            return Vec::new();
        };
        // a string, a content of parts, one part, or a list of parts and strings
        let v = v.get("parts").unwrap_or(v);
        match v.kind() {
            Kind::Array => v
                .items()
                .filter_map(|b| b.as_str().or_else(|| b.get("text")?.as_str()))
                .collect(),
            Kind::Object => v.get("text").and_then(Node::as_str).into_iter().collect(),
            _ => v.as_str().into_iter().collect(),
        }
    }

    /// A Gemini request's `config` (@google/genai: the system prompt, tools and
    /// output limit of the REST request's top level go there).
    pub(crate) fn config(&self) -> Option<N> {
        (self.format == Format::Gemini)
            .then(|| self.root.get("config"))
            .flatten()
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
                            Format::OpenaiResponses => responses::apply(obj, edits),
                            Format::AiSdk => ai_sdk::apply(obj, edits),
                            Format::AiSdkUi => ai_sdk_ui::apply(obj, edits),
                            Format::Gemini => gemini::apply(obj, edits),
                        }
                        self.drop_texts(obj, edits);
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
                        // Responses items carry server ids: a made-up one would not resolve.
                        if stamp.ids && self.format != Format::OpenaiResponses
                            || self.format == Format::AiSdkUi
                        {
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

    /// Removes the text parts `edits` drop (numbered as the message was read),
    /// after the other edits, which name parts by that number too.
    fn drop_texts(&self, obj: &mut Map, edits: &[Edit]) {
        let drops: Vec<usize> = edits
            .iter()
            .filter_map(|e| match e {
                Edit::DropText { part } => Some(*part),
                _ => None,
            })
            .collect();
        if drops.is_empty() {
            return;
        }
        fn kind(p: &Value) -> Option<&str> {
            p.get("type").and_then(Value::as_str)
        }
        let (key, is_text): (&str, fn(&Value) -> bool) = match self.format {
            Format::Gemini => ("parts", gemini::is_text),
            Format::AiSdkUi => ("parts", |p| kind(p) == Some("text")),
            Format::Anthropic | Format::AiSdk => ("content", |p| kind(p) == Some("text")),
            Format::Openai | Format::Moltis | Format::OpenaiResponses => {
                ("content", |p| openai::is_text_part(kind(p)))
            }
        };
        if let Some(Value::Array(parts)) = obj.get_mut(key) {
            drop_parts(parts, is_text, &drops);
        }
    }

    /// Merges each message the compaction added into a user message next to it
    /// (and two kept user messages the compaction brought together), so that
    /// user and assistant turns alternate. Results stay first in the merged
    /// message (Anthropic `tool_result`, Gemini `functionResponse`). Responses
    /// items have no turns to alternate and are left as they are.
    /// A `pinned` message (pinned by the caller, a system message, anything up to
    /// a provider's compaction) is never merged with another. Without `all`,
    /// only the halves of one turn of results split over two user messages are
    /// joined (as they are with it, pinned or not): the provider wants them in one.
    pub(crate) fn merge_turns(
        &self,
        views: &[Message<'_>],
        plan: &Plan,
        out: Vec<OutputMessage>,
        pinned: &[bool],
        all: bool,
    ) -> Vec<OutputMessage> {
        if self.format == Format::OpenaiResponses {
            return out;
        }
        // The input message each output message comes from (edited or not).
        let origin: Vec<Option<usize>> = plan
            .iter()
            .flat_map(|step| match step {
                Step::Keep { index, .. } => vec![Some(*index)],
                Step::Insert(s) => vec![None; self.synthesize(s).len()],
            })
            .collect();
        let key = match self.format {
            Format::Gemini | Format::AiSdkUi => "parts",
            _ => "content",
        };
        let role = |o: &OutputMessage| match o {
            OutputMessage::Kept(i) => self.messages[*i]
                .get("role")
                .and_then(Node::as_str)
                .map(str::to_string),
            OutputMessage::New(v) => v.get("role").and_then(Value::as_str).map(str::to_string),
        };
        let is_user = |o: &OutputMessage| match role(o) {
            Some(r) => r == "user",
            None => self.format == Format::Gemini,
        };
        let free = |at: Option<usize>| at.is_none_or(|i| !pinned.get(i).copied().unwrap_or(false));
        let results = |i: usize| views.get(i).is_some_and(Message::has_results);
        // (the input message it ends with, the message)
        let mut merged: Vec<(Option<usize>, OutputMessage)> = Vec::with_capacity(out.len());
        for (o, from) in out.into_iter().zip(origin) {
            // Moltis notices are never sent: the user message before one is the neighbour
            let host = merged
                .iter()
                .rposition(|(_, m)| role(m).as_deref() != Some("notice"))
                .filter(|&j| {
                    let (before, prev) = &merged[j];
                    // two user messages the input already had in a row are the
                    // caller's own, unless they split one turn of results
                    let (adjacent, split) = match (before, from) {
                        (Some(a), Some(b)) if a + 1 == b => (true, results(*a) && results(b)),
                        _ => (false, false),
                    };
                    is_user(prev)
                        && is_user(&o)
                        && (split || all && !adjacent && free(*before) && free(from))
                });
            let Some(j) = host else {
                merged.push((from, o));
                continue;
            };
            let value = |o: OutputMessage| match o {
                OutputMessage::Kept(i) => self.messages[i].to_value(),
                OutputMessage::New(v) => v,
            };
            let (before, prev) = merged.remove(j);
            // What a compaction wrote (now, or an earlier one: a kept summary)
            // stays a part of its own, so that a later compaction finds it (and
            // replaces it) in the caller's message.
            let written = |o: &OutputMessage| {
                let text = match o {
                    OutputMessage::Kept(i) => self.messages[*i].get(key).and_then(Node::as_str),
                    OutputMessage::New(v) => v.get(key).and_then(Value::as_str),
                };
                text.is_some_and(crate::modes::is_written)
            };
            let apart = before.is_none() || from.is_none() || written(&prev) || written(&o);
            let joined = self.join(value(prev), value(o), key, apart);
            merged.insert(j, (from, OutputMessage::New(joined)));
        }
        merged.into_iter().map(|(_, m)| m).collect()
    }

    /// `a` with the content of `b` appended (texts joined by a blank line when
    /// both are strings, unless `apart`), results first.
    fn join(&self, mut a: Value, b: Value, key: &str, apart: bool) -> Value {
        let as_parts = |v: Value| match v {
            Value::String(text) => {
                let mut part = Map::new();
                part.insert("type".into(), "text".into());
                part.insert("text".into(), text.into());
                vec![Value::Object(part)]
            }
            Value::Array(parts) => parts,
            _ => Vec::new(),
        };
        let (Value::Object(host), Value::Object(mut other)) = (&mut a, b) else {
            return a;
        };
        let theirs = other.remove(key).unwrap_or(Value::Null);
        let content = match (host.remove(key), theirs) {
            (Some(Value::String(x)), Value::String(y)) if !apart => {
                Value::String(format!("{x}\n\n{y}"))
            }
            (mine, theirs) => {
                let mut parts = as_parts(mine.unwrap_or(Value::Null));
                parts.extend(as_parts(theirs));
                let is_result = |p: &Value| {
                    p.get("type").and_then(Value::as_str) == Some("tool_result")
                        || p.get("functionResponse").is_some()
                };
                let (mut results, rest): (Vec<Value>, Vec<Value>) =
                    parts.into_iter().partition(is_result);
                results.extend(rest);
                Value::Array(results)
            }
        };
        host.insert(key.into(), content);
        // what only the other message has (a kept message's `created_at`, `id`) stays
        for (k, v) in other {
            host.insert_absent(k, v);
        }
        a
    }

    /// Renders a summarizer's input `plan` as a request for the input's provider:
    /// the OpenAI-like formats open with the `system` message (Anthropic keeps it
    /// apart), Moltis messages become plain OpenAI messages, and the final
    /// `instruction` closes it (`merge`: joined to a user message right before it).
    pub(crate) fn render_request(
        &self,
        views: &[Message<'_>],
        plan: &Plan,
        system: &str,
        instruction: &str,
        merge: bool,
    ) -> Vec<OutputMessage> {
        let mut plan = plan.clone();
        plan.push(Step::Insert(Synthetic::Note(instruction.to_string())));
        let mut body = self.render(views, &plan, &Stamp::default());
        // As the compacted history does: strict backends want turns to alternate,
        // so the instruction joins a user message right before it.
        if merge || self.format.results_placement() == ResultsPlacement::NextUserMessage {
            body = self.merge_turns(views, &plan, body, &[], merge);
        }
        let mut out = Vec::with_capacity(body.len() + 1);
        if !self.format.system_apart() {
            out.push(OutputMessage::New(Value::Object(
                self.text_message("system", system),
            )));
        }
        for o in body {
            out.push(match (self.format, o) {
                (Format::Moltis, OutputMessage::Kept(i)) => {
                    OutputMessage::New(moltis::as_openai(self.messages[i].to_value()))
                }
                (Format::Moltis, OutputMessage::New(v)) => OutputMessage::New(moltis::as_openai(v)),
                (_, o) => o,
            });
        }
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

    fn synthesize(&self, s: &Synthetic) -> Vec<Map> {
        match s {
            Synthetic::Summary(text) | Synthetic::Marker(text) | Synthetic::Note(text) => {
                vec![self.text_message("user", text)]
            }
            Synthetic::Stubs(ids) => match self.format {
                Format::Anthropic => vec![anthropic::stub_message(ids)],
                Format::Openai | Format::Moltis => ids.iter().map(openai::stub).collect(),
                Format::OpenaiResponses => ids
                    .iter()
                    .map(|s| responses::stub(s, self.call_item(&s.id)))
                    .collect(),
                Format::AiSdk => vec![ai_sdk::stub_message(ids)],
                Format::Gemini => vec![gemini::stub_message(ids)],
                // stubs go into the calling message itself (an edit), never apart
                Format::AiSdkUi => Vec::new(),
            },
        }
    }

    /// A message of one text in this format, with `role`.
    fn text_message(&self, role: &str, text: &str) -> Map {
        let mut m = Map::new();
        match self.format {
            Format::OpenaiResponses => return responses::text_message(role, text),
            Format::AiSdkUi => {
                let mut m = ai_sdk_ui::text_message(role, text);
                m.insert("id".into(), derived_id(&format!("{role}:{text}")).into());
                return m;
            }
            Format::Gemini => return gemini::text_message(text),
            _ => {}
        }
        m.insert("role".into(), role.into());
        m.insert("content".into(), text.into());
        m
    }

    /// The item that made call `id` (OpenAI Responses stubs answer in kind).
    fn call_item(&self, id: &str) -> Option<N> {
        self.messages
            .iter()
            .find(|m| responses::is_call(**m, id))
            .copied()
    }
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

/// The role named `name`, one of `roles` (name → role); anything else is an
/// error at `messages[i].role` that lists them.
pub(crate) fn role_named(name: &str, i: usize, roles: &[(&str, Role)]) -> Result<Role> {
    roles
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, r)| *r)
        .ok_or_else(|| {
            let names: Vec<String> = roles.iter().map(|(n, _)| format!("\"{n}\"")).collect();
            Error::input(
                format!("messages[{i}].role"),
                format!(
                    "unknown role {}; expected one of {}",
                    Quoted(name),
                    names.join(", ")
                ),
            )
        })
}

/// The error for a `content` at `at` that is neither a string nor an array of
/// `items` (`got`: its kind, `None` when it is missing).
pub(crate) fn not_content(at: String, items: &str, got: Option<Kind>) -> Error {
    Error::input(
        at,
        format!(
            "expected a string or an array of {items}, got {}",
            got.map_or("nothing", Kind::name)
        ),
    )
}

/// `Ok` when `node` is an object; else an error at `path` naming `what` it should be.
pub(crate) fn expect_object<'a, N: Node<'a>>(
    node: N,
    path: &dyn Fn() -> String,
    what: &str,
) -> Result<()> {
    match node.kind() {
        Kind::Object => Ok(()),
        other => Err(Error::input(
            path(),
            format!("expected {what} object, got {}", other.name()),
        )),
    }
}

/// The items of `obj.key`, which must be an array (of `what`).
pub(crate) fn array_at<'a, N: Node<'a>>(
    obj: N,
    key: &str,
    i: usize,
    what: &str,
) -> Result<impl Iterator<Item = N> + 'a> {
    match obj.get(key) {
        Some(a) if a.kind() == Kind::Array => Ok(a.items()),
        other => Err(Error::input(
            format!("messages[{i}].{key}"),
            format!(
                "expected an array of {what}, got {}",
                other.map_or("nothing", |v| v.kind().name())
            ),
        )),
    }
}

/// Notes call `id` as made in this message; a second call with the same id is an
/// error at `path.key` (its results could not be told apart).
pub(crate) fn unique_call(
    seen: &mut Names,
    id: &str,
    path: &dyn Fn() -> String,
    key: &str,
) -> Result<()> {
    if seen.insert(id, 0) {
        return Ok(());
    }
    Err(Error::input(
        format!("{}.{key}", path()),
        format!(
            "duplicate tool call id {} in the same message; every call needs its own id",
            Quoted(id)
        ),
    ))
}

/// Removes the parts of a kind (`is_kind`: tool results, texts) whose number
/// among the parts of that kind is in `which` (ascending).
pub(crate) fn drop_parts(
    parts: &mut Vec<Value>,
    is_kind: impl Fn(&Value) -> bool,
    which: &[usize],
) {
    let mut k = 0;
    parts.retain(|p| {
        if !is_kind(p) {
            return true;
        }
        k += 1;
        which.binary_search(&(k - 1)).is_err()
    });
}

/// A JSON value as text: a string as it is, anything else serialized.
pub(crate) fn json_text<'a, N: Node<'a>>(v: Option<N>) -> Cow<'a, str> {
    match v {
        None => Cow::Borrowed(""),
        Some(v) => match v.as_str() {
            Some(s) => Cow::Borrowed(s),
            None => Cow::Owned(v.to_json()),
        },
    }
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
