//! OpenAI Responses API input items: `message` items (or `{role, content}`),
//! `function_call` ↔ `function_call_output` by `call_id` (and the other
//! client-run calls: `custom_tool_call`, `computer_call`, `local_shell_call` …),
//! `reasoning` items with `encrypted_content`, server-run tool items,
//! `item_reference` and the provider's `compaction` item.
//!
//! Every item is one view. The items of one assistant turn (reasoning, text,
//! calls) continue one another, so a reasoning item is never parted from the
//! calls that follow it, and outputs answer the turn before them by `call_id`.

use std::borrow::Cow;

use crate::json::{Map, Value};

use super::{openai, opt_str, req_str, role_named};
use crate::error::{Error, Result};
use crate::json::{Kind, Node};
use crate::message::{Args, Call, Message, Role, ToolOutput};
use crate::names::Names;
use crate::plan::{Edit, Stub};
use crate::text::Quoted;
use crate::tokens::{image_of, Image};

const ROLES: &[(&str, Role)] = &[
    ("user", Role::User),
    ("assistant", Role::Assistant),
    ("system", Role::System),
    ("developer", Role::System),
];

/// Whether `t` is a Responses item type (and so marks the format).
pub(super) fn is_item_type(t: &str) -> bool {
    matches!(
        t,
        "message"
            | "reasoning"
            | "item_reference"
            | "compaction"
            | "mcp_approval_request"
            | "mcp_approval_response"
            | "mcp_list_tools"
    ) || t.ends_with("_call")
        || t.ends_with("_call_output")
}

/// Whether an item is a call's output.
pub(super) fn is_output<'a, N: Node<'a>>(item: N) -> bool {
    item.get("type")
        .and_then(Node::as_str)
        .is_some_and(|t| t.ends_with("_call_output") || t == "mcp_approval_response")
}

/// Reads one item.
pub(super) fn read<'a, N: Node<'a>>(item: N, i: usize) -> Result<Message<'a>> {
    if let Some(text) = item.as_str() {
        // a request's `input` given as one string
        let mut msg = Message::new(Role::User);
        msg.texts.push(text);
        return Ok(msg);
    }
    let path = || format!("messages[{i}]");
    let kind = opt_str(item, "type", &path)?.unwrap_or("message");
    let opaque = || item.json_len();
    let mut msg;
    match kind {
        "message" => {
            let role = role_named(req_str(item, "role", &path)?, i, ROLES)?;
            msg = Message::new(role);
            // content strings and parts as in Chat Completions (input_text and the like)
            openai::read_content(item, role, &mut msg, i)?;
        }
        "reasoning" => {
            msg = Message::new(Role::Assistant);
            for part in item.get("summary").into_iter().flat_map(Node::items) {
                msg.reasoning
                    .extend(part.get("text").and_then(Node::as_str));
            }
            // the encrypted reasoning is sent back as it is: it counts, and is never read
            msg.opaque_bytes += item
                .get("encrypted_content")
                .and_then(Node::as_str)
                .map_or(0, str::len);
        }
        "compaction" => {
            msg = Message::new(Role::User);
            msg.opaque_bytes += opaque();
            msg.boundary = true;
        }
        t if is_output(item) => {
            let id = call_ref(item, t, &path)?;
            let output = item.get("output");
            let (text, images, opaque_bytes) = match output.map(Node::kind) {
                Some(Kind::String) => (
                    Cow::Borrowed(output.and_then(Node::as_str).unwrap_or("")),
                    Vec::new(),
                    0,
                ),
                None | Some(Kind::Null) => (Cow::Borrowed(""), Vec::new(), 0),
                Some(_) => output_parts(output),
            };
            msg = Message::new(Role::Tool);
            let mut r = ToolOutput::new(id, None, text, false);
            r.images = images.len();
            r.image_sizes = images;
            r.opaque_bytes = opaque_bytes;
            msg.results.push(r);
        }
        // (a call the server runs itself, `execution: "server"` as a
        // tool_search_call, is answered by the server: opaque, as below)
        t if t.ends_with("_call")
            && item.get("call_id").is_some()
            && item.get("execution").and_then(Node::as_str) != Some("server")
            || t == "mcp_approval_request" =>
        {
            let id = call_ref(item, t, &path)?;
            let name = opt_str(item, "name", &path)?.unwrap_or(t);
            let args = match (item.get("arguments"), item.get("input")) {
                (Some(a), _) if a.kind() == Kind::String => Args::Text(a.as_str().unwrap_or("")),
                (_, Some(a)) if a.kind() == Kind::String => Args::Text(a.as_str().unwrap_or("")),
                _ => Args::Json(item.get("action").map_or(Value::Null, Node::to_value)),
            };
            msg = Message::new(Role::Assistant);
            msg.calls.push(Call {
                sealed: false,
                id: Cow::Borrowed(id),
                name,
                args,
            });
        }
        // server-run tools, references to stored items, anything newer: sent as they are
        _ => {
            msg = Message::new(Role::Assistant);
            msg.opaque_bytes += opaque();
        }
    }
    Ok(msg)
}

/// Whether `item` is the call (not the output) that `id` names.
pub(super) fn is_call<'a, N: Node<'a>>(item: N, id: &str) -> bool {
    let kind = item.get("type").and_then(Node::as_str).unwrap_or("message");
    !is_output(item) && call_ref(item, kind, &String::new).ok() == Some(id)
}

/// The id that ties a call and its output together.
fn call_ref<'a, N: Node<'a>>(item: N, kind: &str, path: &dyn Fn() -> String) -> Result<&'a str> {
    let key = match kind {
        "mcp_approval_request" => "id",
        "mcp_approval_response" => "approval_request_id",
        // documented with the call's id as `id`, written by many with `call_id`
        "local_shell_call_output" if item.get("call_id").is_none() => "id",
        _ => "call_id",
    };
    req_str(item, key, path)
}

/// The text of an output given as content parts, its images and other bytes.
fn output_parts<'a, N: Node<'a>>(output: Option<N>) -> (Cow<'a, str>, Vec<Image>, usize) {
    let (mut texts, mut images, mut opaque) = (Vec::new(), Vec::new(), 0);
    let Some(o) = output else {
        return (Cow::Borrowed(""), images, 0);
    };
    if o.kind() == Kind::Object {
        // a computer screenshot and the like
        return (Cow::Borrowed(""), vec![image_of(o)], 0);
    }
    for part in o.items() {
        match part.get("type").and_then(Node::as_str) {
            t if openai::is_text_part(t) => texts.extend(part.get("text").and_then(Node::as_str)),
            Some("input_image") => images.push(image_of(part)),
            _ => opaque += part.json_len(),
        }
    }
    let text = match texts.as_slice() {
        [one] => Cow::Borrowed(*one),
        many => Cow::Owned(many.join("\n")),
    };
    (text, images, opaque)
}

/// Marks the items of one assistant turn: an assistant-side item right after
/// another continues its turn. A call id made twice in one turn is an error, as
/// it is within one message of the other formats: its outputs could not be told apart.
pub(super) fn link_turns<'a, N: Node<'a>>(views: &mut [Message<'a>], items: &[N]) -> Result<()> {
    let mut turn = Names::new();
    // The turn's last `item_reference`: a stored item the request only names,
    // perhaps the call an output answers, which is then nowhere to be seen.
    let mut reference = None;
    for i in 0..views.len() {
        if i > 0 {
            let before = &views[i - 1];
            views[i].continues = views[i].role == Role::Assistant
                && before.role == Role::Assistant
                && !before.has_results();
        }
        let output = views[i].has_results();
        if !views[i].continues && !output {
            turn.clear();
            reference = None;
        }
        if items
            .get(i)
            .and_then(|m| m.get("type"))
            .and_then(Node::as_str)
            == Some("item_reference")
        {
            reference = Some(i);
        }
        for c in &views[i].calls {
            if !turn.insert(&c.id, 0) {
                return Err(Error::input(
                    format!("messages[{i}].call_id"),
                    format!("call id {} was already made earlier in the same turn; every call needs its own id", Quoted(&c.id)),
                ));
            }
        }
        // An output no visible call of its turn made answers the referenced
        // item: it stands for the call (unnamed, never edited), so the output
        // is not taken for an orphan and dropped.
        let Some(k) = reference.filter(|_| output) else {
            continue;
        };
        let unknown: Vec<Cow<'a, str>> = views[i]
            .results
            .iter()
            .filter(|r| turn.get(&r.id).is_none())
            .map(|r| r.id.clone())
            .collect();
        for id in unknown {
            turn.insert(&id, 0);
            views[k].calls.push(Call {
                id,
                name: "",
                args: Args::Text(""),
                sealed: true,
            });
        }
    }
    Ok(())
}

/// Applies the edits of a kept item to a copy of it.
pub(super) fn apply(obj: &mut Map, edits: &[Edit]) {
    for e in edits {
        match e {
            Edit::ReplaceOutput { text, .. } => {
                obj.insert("output".into(), text.clone().into());
            }
            Edit::ReplaceText { .. } => openai::edit(obj, e),
            Edit::ShortenArgs { args, .. } => {
                if obj.get("arguments").is_some_and(Value::is_string) {
                    obj.insert("arguments".into(), args.to_string().into());
                }
            }
            // One output an item; reasoning items travel whole with their calls;
            // texts are dropped after the other edits (`Document::render`).
            Edit::DropResults(_)
            | Edit::AddStubs(_)
            | Edit::DropReasoning
            | Edit::ResultsFirst
            | Edit::DropText { .. } => {}
        }
    }
}

/// A user (or system) message item of one text.
pub(super) fn text_message(role: &str, text: &str) -> Map {
    let mut part = Map::new();
    part.insert("type".into(), "input_text".into());
    part.insert("text".into(), text.into());
    let mut m = Map::new();
    m.insert("type".into(), "message".into());
    m.insert("role".into(), role.into());
    m.insert("content".into(), Value::Array(vec![Value::Object(part)]));
    m
}

/// The output item standing in for call `id`'s lost output, of the kind the
/// call was (`function_call` → `function_call_output`); a `function_call_output`
/// for other kinds (Codex answers its `local_shell_call`s so, where the
/// documented `local_shell_call_output` names the call by `id`). A computer call's
/// output must be a screenshot, so its stub is a blank one (a 1×1 PNG); an MCP
/// approval request that was never answered is declined, never approved.
pub(super) fn stub<'a, N: Node<'a>>(stub: &Stub, call: Option<N>) -> Map {
    let id = stub.id.as_str();
    let kind = call
        .and_then(|c| c.get("type").and_then(Node::as_str))
        .filter(|t| {
            matches!(
                *t,
                "function_call" | "custom_tool_call" | "computer_call" | "mcp_approval_request"
            )
        })
        .unwrap_or("function_call");
    let mut m = Map::new();
    if kind == "mcp_approval_request" {
        m.insert("type".into(), "mcp_approval_response".into());
        m.insert("approval_request_id".into(), id.into());
        m.insert("approve".into(), false.into());
        return m;
    }
    m.insert("type".into(), format!("{kind}_output").into());
    m.insert("call_id".into(), id.into());
    let output = if kind == "computer_call" {
        let mut shot = Map::new();
        shot.insert("type".into(), "computer_screenshot".into());
        shot.insert("image_url".into(), BLANK_SCREENSHOT.into());
        Value::Object(shot)
    } else {
        stub.text.into()
    };
    m.insert("output".into(), output);
    m
}

/// A 1×1 black PNG: the screenshot a lost computer call's output stands in with.
const BLANK_SCREENSHOT: &str = "data:image/png;base64,\
    iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR42mNgAAAAAgAB5Sfe/AAAAABJRU5ErkJggg==";
