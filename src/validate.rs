//! The pre-flight check: the pairing and ordering rules providers enforce with a
//! 400, per format, each violation with the message index, a stable code and a
//! sentence in the format's own words. It reads the history with the same
//! adapters as compaction, so a history that validates is one the modes see as
//! it is meant.
//!
//! What lies behind a provider's compaction (an Anthropic `compaction` block,
//! an OpenAI `compaction` item) is not read by the provider and not checked.
//!
//! A request object is about to be sent: its newest calls must be answered and
//! (Gemini) it must not end on a model turn. A bare array is a stored history:
//! the calls of its last turn may still be running.

use crate::error::{Error, Result};
use crate::formats::{self, Format, ResultsPlacement, FORMATS};
use crate::json::{Kind, Node, WriteJson, Writer};
use crate::message::Role;
use crate::text::Quoted;

/// The backend a history is sent to, when it adds rules of its own to the format's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Provider {
    /// OpenAI and the OpenAI-compatible servers.
    Openai,
    /// Anthropic: the first message is a user message; system prompts only first.
    Anthropic,
    /// Google Gemini: system prompts only first.
    Gemini,
    /// AWS Bedrock Converse: Anthropic's rules and strict alternation.
    Bedrock,
}

const PROVIDERS: [(&str, Provider); 4] = [
    ("openai", Provider::Openai),
    ("anthropic", Provider::Anthropic),
    ("gemini", Provider::Gemini),
    ("bedrock", Provider::Bedrock),
];

/// What to check a history against.
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    format: Option<Format>,
    provider: Option<Provider>,
    strict_alternation: bool,
}

impl ValidateOptions {
    /// Reads `{format?, provider?, strictAlternation?}` (snake_case accepted);
    /// `null` gives the defaults.
    pub(crate) fn from_node<'a, N: Node<'a>>(v: N) -> Result<ValidateOptions> {
        let mut o = ValidateOptions::default();
        match v.kind() {
            Kind::Null => return Ok(o),
            Kind::Object => {}
            other => {
                return Err(Error::config(format!(
                    "validate options: expected an object, got {}",
                    other.name()
                )))
            }
        }
        for (key, value) in v.members() {
            let unknown = |what: &str, names: &[&str]| {
                let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                Error::config(format!(
                    "{key}: unknown {what} {}; expected one of {}",
                    value.to_json(),
                    quoted.join(", ")
                ))
            };
            let name = value.as_str();
            // `null` (and `"auto"` for the format) leaves the default
            if value.kind() == Kind::Null || (key == "format" && name == Some("auto")) {
                continue;
            }
            match key {
                "format" => {
                    o.format = Some(
                        name.and_then(Format::from_name)
                            .ok_or_else(|| unknown("format", &FORMATS.map(|(n, _)| n)))?,
                    )
                }
                "provider" => {
                    o.provider = Some(
                        PROVIDERS
                            .iter()
                            .find(|(p, _)| Some(*p) == name)
                            .map(|(_, p)| *p)
                            .ok_or_else(|| unknown("provider", &PROVIDERS.map(|(n, _)| n)))?,
                    )
                }
                "strictAlternation" | "strict_alternation" => {
                    o.strict_alternation = value.as_bool().ok_or_else(|| {
                        Error::config(format!(
                            "{key}: expected true or false, got {}",
                            value.to_json()
                        ))
                    })?
                }
                // The options a compaction of the same history takes are left aside,
                // so one options object serves both calls.
                other if crate::options::is_option(other) => {}
                other => {
                    return Err(Error::config(format!(
                        "validate options: unknown key {}; expected format, provider, strictAlternation or cache (or an option of compaction, left aside)",
                        Quoted(other)
                    )))
                }
            }
        }
        Ok(o)
    }

    /// [`ValidateOptions::from_node`] of a `serde_json` value.
    #[cfg(feature = "serde_json")]
    pub fn from_json(v: &serde_json::Value) -> Result<ValidateOptions> {
        let tape = crate::json::serde::tape_of(v);
        Self::from_node(tape.open()?.root())
    }
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The message (item, content) where the rule breaks.
    pub index: usize,
    /// A stable code (`MISSING_RESULT`, `ORPHAN_RESULT` …).
    pub code: &'static str,
    /// A sentence naming the message, e.g. "messages[14]: tool_use toolu_01 has
    /// no tool_result in the next user message".
    pub message: String,
}

/// The outcome of [`validate`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    /// The detected or forced format.
    pub format: Format,
    /// Every broken rule, in message order; empty when the history is valid.
    pub violations: Vec<Violation>,
}

/// How a format names a call and its result, and where the result must be.
struct Words {
    call: &'static str,
    result: &'static str,
    result_place: &'static str,
}

fn words(format: Format) -> Words {
    let (call, result, result_place) = match format {
        Format::Openai | Format::Moltis => (
            "tool call",
            "tool message",
            "right after the assistant message",
        ),
        Format::Anthropic => ("tool_use", "tool_result", "in the next user message"),
        Format::OpenaiResponses => ("function_call", "function_call_output", "after it"),
        Format::AiSdk => ("tool-call", "tool-result", "in the tool message after it"),
        Format::AiSdkUi => ("tool part", "output", "in its own part"),
        Format::Gemini => ("functionCall", "functionResponse", "in the next user turn"),
    };
    Words {
        call,
        result,
        result_place,
    }
}

impl WriteJson for Violation {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("index", &self.index);
        w.field("code", &self.code);
        w.field("message", &self.message);
        w.close();
    }
}

impl WriteJson for Validation {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("format", &self.format);
        w.field("violations", &self.violations);
        w.close();
    }
}

/// Checks `input` (a message array or a request object) against the rules of
/// its format and of `options.provider`.
pub(crate) fn check<'a, N: Node<'a>>(input: N, options: &ValidateOptions) -> Result<Validation> {
    let doc = formats::open(input, options.format)?;
    let views = doc.read()?;
    let format = doc.format;
    let provider = options.provider.unwrap_or(match format {
        Format::Anthropic => Provider::Anthropic,
        Format::Gemini => Provider::Gemini,
        _ => Provider::Openai,
    });
    let mut out = Vec::new();
    let w = words(format);
    let mut add = |index: usize, code: &'static str, what: String| {
        out.push(Violation {
            index,
            code,
            message: format!("messages[{index}]: {what}"),
        })
    };
    // Moltis notices never reach a model.
    let sent: Vec<usize> = (0..views.len())
        .filter(|&i| views[i].role != Role::Notice)
        .collect();
    // the newest turn's calls may still be running in a stored history
    let running_from = crate::plan::pairs::pending_calls(&views).unwrap_or(usize::MAX);
    // Which calls are answered, one slot per call in message order (`first[i]`:
    // message i's first slot).
    let (mut first, mut calls) = (Vec::with_capacity(views.len()), 0);
    for m in &views {
        first.push(calls);
        calls += m.calls.len();
    }
    let mut answered = vec![false; calls];
    let slot = |(c, k): (usize, usize)| first.get(c).map(|f| f + k);
    for (i, m) in views.iter().enumerate() {
        for r in &m.results {
            match r.call {
                None => add(
                    i,
                    "ORPHAN_RESULT",
                    format!(
                        "{} {} answers no {} {}",
                        w.result,
                        r.id,
                        w.call,
                        match format.results_placement() {
                            ResultsPlacement::SameMessage => "of this message",
                            ResultsPlacement::NextUserMessage => "in the message right before it",
                            ResultsPlacement::FollowingMessages =>
                                "of the assistant turn before it",
                        }
                    ),
                ),
                // (Anthropic merges consecutive user turns: results split over
                // two user messages in a row still answer the call before them)
                Some((c, _))
                    if format.results_placement() == ResultsPlacement::NextUserMessage
                        && c + 1 != i
                        && !(format == Format::Anthropic
                            && views[c + 1..i].iter().all(|m| m.role != Role::Assistant)) =>
                {
                    add(
                        i,
                        "ORPHAN_RESULT",
                        format!(
                            "{} {} is not in the message right after its {} (messages[{c}])",
                            w.result, r.id, w.call
                        ),
                    )
                }
                Some(call) => {
                    let seen = slot(call).and_then(|s| answered.get_mut(s));
                    if seen.is_some_and(|a| std::mem::replace(a, true)) {
                        add(
                            i,
                            "DUPLICATE_RESULT",
                            format!("{} {} answers its {} a second time", w.result, r.id, w.call),
                        )
                    }
                }
            }
        }
        if m.results_out_of_order {
            add(
                i,
                "RESULT_AFTER_TEXT",
                format!(
                    "a {} block follows other content; they must come first",
                    w.result
                ),
            );
        }
    }
    for (i, m) in views.iter().enumerate() {
        let still_running = !doc.is_request && i >= running_from;
        for (k, c) in m.calls.iter().enumerate() {
            if slot((i, k)).is_some_and(|s| answered.get(s) == Some(&true)) || still_running {
                continue;
            }
            let (code, what) = if format == Format::AiSdkUi {
                (
                    "INCOMPLETE_TOOL_PART",
                    format!(
                        "tool part {} ({}) has no output; only the newest message may hold a call still running",
                        c.id, c.name
                    ),
                )
            } else {
                (
                    "MISSING_RESULT",
                    format!(
                        "{} {} ({}) has no {} {}",
                        w.call, c.id, c.name, w.result, w.result_place
                    ),
                )
            };
            add(i, code, what);
        }
    }
    let role_of = |i: usize| match (views[i].role, format.results_placement()) {
        (Role::Tool, ResultsPlacement::NextUserMessage) => Role::User,
        (r, _) => r,
    };
    let first = sent
        .iter()
        .copied()
        .find(|&i| views[i].role != Role::System);
    if matches!(provider, Provider::Anthropic | Provider::Bedrock) {
        if let Some(i) = first.filter(|&i| role_of(i) != Role::User) {
            add(
                i,
                "FIRST_NOT_USER",
                "the first message after the system prompt must be a user message".into(),
            );
        }
    }
    if provider != Provider::Openai {
        let mut seen_other = false;
        for &i in &sent {
            if views[i].role != Role::System {
                seen_other = true;
            } else if seen_other {
                add(
                    i,
                    "SYSTEM_IN_MIDDLE",
                    "a system message after the conversation started; this provider takes system prompts only at the start".into(),
                );
            }
        }
    }
    if format == Format::Gemini {
        for (n, &i) in sent.iter().enumerate() {
            let after_model = n == 0 || role_of(sent[n - 1]) == Role::Assistant;
            if !views[i].calls.is_empty() && after_model {
                add(
                    i,
                    "CALL_TURN_POSITION",
                    "a model turn with functionCall parts must follow a user turn or a functionResponse turn".into(),
                );
            }
        }
        if let Some(&i) = sent
            .last()
            .filter(|&&i| doc.is_request && role_of(i) == Role::Assistant)
        {
            add(
                i,
                "ENDS_ON_MODEL",
                "the request ends on a model turn; Gemini answers a user turn".into(),
            );
        }
    }
    if format == Format::OpenaiResponses {
        for (i, item) in doc.messages.iter().enumerate() {
            let reasoning = item.get("type").and_then(Node::as_str) == Some("reasoning");
            if reasoning && !views.get(i + 1).is_some_and(|v| v.continues) {
                add(
                    i,
                    "REASONING_WITHOUT_FOLLOWER",
                    "a reasoning item must be followed by the item it produced (a message or a call) of the same turn".into(),
                );
            }
        }
    }
    if format != Format::OpenaiResponses {
        for &i in &sent {
            let empty_array = doc.messages[i]
                .get("content")
                .is_some_and(|c| c.kind() == Kind::Array && c.items().next().is_none());
            if views[i].is_empty() && (empty_array || format != Format::Openai) {
                add(i, "EMPTY_MESSAGE", "the message has no content".into());
            }
        }
    }
    if options.strict_alternation || provider == Provider::Bedrock {
        let mut before: Option<Role> = None;
        for &i in &sent {
            let role = role_of(i);
            if role == Role::System {
                continue;
            }
            if before == Some(role) && matches!(role, Role::User | Role::Assistant) {
                add(
                    i,
                    "ROLES_NOT_ALTERNATING",
                    format!("a second {} message in a row", role.label()),
                );
            }
            before = Some(role);
        }
    }
    // Behind a provider's compaction the provider reads nothing, so nothing there breaks.
    if let Some(b) = views.iter().rposition(|m| m.boundary) {
        out.retain(|v| v.index >= b);
    }
    // In message order, each message's in the order found (buckets, not a
    // sort: one sort instantiation fewer in the `.wasm`).
    let mut by_message: Vec<Vec<Violation>> = vec![Vec::new(); views.len() + 1];
    for v in out {
        by_message[v.index.min(views.len())].push(v);
    }
    Ok(Validation {
        format,
        violations: by_message.into_iter().flatten().collect(),
    })
}
