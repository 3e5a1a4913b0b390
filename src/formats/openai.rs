//! OpenAI Chat Completions messages.

use std::borrow::Cow;

use crate::json::{Map, Value};

use super::{expect_object, not_content, opt_str, req_str, role_named, unique_call, PartsOf};
use crate::error::{Error, Result};
use crate::json::{Kind, Node};
use crate::message::{Args, Call, Message, Role, ToolOutput};
use crate::names::Names;
use crate::plan::{Edit, Stub};

/// Fields where OpenAI-compatible APIs keep an assistant's reasoning.
const REASONING_KEYS: &[&str] = &["reasoning_content", "reasoning"];

const ROLES: &[(&str, Role)] = &[
    ("system", Role::System),
    ("developer", Role::System),
    ("user", Role::User),
    ("assistant", Role::Assistant),
    ("tool", Role::Tool),
];

/// Whether a content part is text: Chat Completions `text`, and the Responses
/// API's `input_text` / `output_text` (its message items share this reader).
pub(super) fn is_text_part(type_name: Option<&str>) -> bool {
    matches!(type_name, Some("text" | "input_text" | "output_text"))
}

/// Reads one OpenAI message.
pub(super) fn read<'a, N: Node<'a>>(obj: N, i: usize) -> Result<Message<'a>> {
    let path = || format!("messages[{i}]");
    let role = role_named(req_str(obj, "role", &path)?, i, ROLES)?;
    read_common(obj, role, i)
}

/// Reads the parts every OpenAI-like role shares (also used by the Moltis adapter).
pub(super) fn read_common<'a, N: Node<'a>>(obj: N, role: Role, i: usize) -> Result<Message<'a>> {
    let path = || format!("messages[{i}]");
    let mut msg = Message::new(role);
    read_content(obj, role, &mut msg, i)?;
    for key in REASONING_KEYS.iter().chain(&["refusal"]) {
        if let Some(s) = obj.get(key).and_then(Node::as_str) {
            msg.reasoning.push(s);
        }
    }
    if role == Role::Assistant {
        read_calls(obj, &mut msg, i)?;
    }
    if role == Role::Tool {
        let id = req_str(obj, "tool_call_id", &path)?;
        let name = opt_str(obj, "name", &path)?;
        let text: Cow<str> = match msg.texts.len() {
            0 => Cow::Borrowed(""),
            1 => Cow::Borrowed(msg.texts[0]),
            _ => Cow::Owned(msg.texts.join("\n")),
        };
        msg.texts.clear();
        let mut output = ToolOutput::new(id, name, text, false);
        output.images = std::mem::take(&mut msg.images);
        output.image_sizes = std::mem::take(&mut msg.image_sizes);
        output.opaque_bytes = std::mem::take(&mut msg.opaque_bytes);
        msg.results.push(output);
    }
    Ok(msg)
}

/// Reads a message's `content`: a string, or parts (absent only for assistants).
pub(super) fn read_content<'a, N: Node<'a>>(
    obj: N,
    role: Role,
    msg: &mut Message<'a>,
    i: usize,
) -> Result<()> {
    let content = obj.get("content");
    match content.map(Node::kind) {
        Some(Kind::String) => msg.texts.extend(content.and_then(Node::as_str)),
        None | Some(Kind::Null) if role == Role::Assistant => {}
        Some(Kind::Array) => {
            for (k, part) in content.into_iter().flat_map(Node::items).enumerate() {
                let path = || format!("messages[{i}].content[{k}]");
                expect_object(part, &path, "a content part")?;
                match req_str(part, "type", &path)? {
                    t if is_text_part(Some(t)) => msg.texts.push(req_str(part, "text", &path)?),
                    "refusal" => msg.reasoning.push(req_str(part, "refusal", &path)?),
                    "image_url" | "image" | "input_image" => msg.add_image(part),
                    _ => msg.opaque_bytes += part.json_len(),
                }
            }
        }
        other => {
            return Err(not_content(
                format!("messages[{i}].content"),
                "content parts",
                other,
            ))
        }
    }
    Ok(())
}

fn read_calls<'a, N: Node<'a>>(obj: N, msg: &mut Message<'a>, i: usize) -> Result<()> {
    let calls = match obj.get("tool_calls") {
        None => return Ok(()),
        Some(c) => match c.kind() {
            Kind::Null => return Ok(()),
            Kind::Array => c,
            other => {
                return Err(Error::input(
                    format!("messages[{i}].tool_calls"),
                    format!("expected an array of tool calls, got {}", other.name()),
                ))
            }
        },
    };
    let mut seen = Names::new();
    for (k, call) in calls.items().enumerate() {
        let path = || format!("messages[{i}].tool_calls[{k}]");
        expect_object(call, &path, "a tool call")?;
        let id = req_str(call, "id", &path)?;
        unique_call(&mut seen, id, &path, "id")?;
        let fpath = || format!("messages[{i}].tool_calls[{k}].function");
        let function = match call.get("function") {
            Some(f) if f.kind() == Kind::Object => f,
            other => {
                return Err(Error::input(
                    fpath(),
                    format!(
                        "expected an object {{name, arguments}}, got {}",
                        other.map_or("nothing", |o| o.kind().name())
                    ),
                ))
            }
        };
        let name = req_str(function, "name", &fpath)?;
        let args = function.get("arguments");
        let Some(args) = args.and_then(Node::as_str) else {
            return Err(Error::input(
                format!("{}.arguments", fpath()),
                format!(
                    "expected the arguments as a JSON-encoded string, got {}",
                    args.map_or("nothing", |a| a.kind().name())
                ),
            ));
        };
        msg.calls.push(Call {
            sealed: false,
            id: Cow::Borrowed(id),
            name,
            args: Args::Text(args),
        });
    }
    Ok(())
}

/// Applies an edit to a copy of an OpenAI message.
pub(super) fn edit(obj: &mut Map, edit: &Edit) {
    match edit {
        Edit::ReplaceOutput { text, .. } => {
            obj.insert("content".into(), Value::String(text.clone()));
        }
        Edit::ReplaceText { part, text } => match obj.get_mut("content") {
            Some(Value::String(s)) if *part == 0 => *s = text.clone(),
            Some(Value::Array(parts)) => {
                let texts = PartsOf::new(parts, |p| {
                    is_text_part(p.get("type").and_then(Value::as_str))
                });
                if let Some(p) = texts.nth(parts, *part) {
                    p.insert("text".into(), Value::String(text.clone()));
                }
            }
            _ => {}
        },
        Edit::DropReasoning => {
            for key in REASONING_KEYS {
                obj.remove(key);
            }
        }
        Edit::ShortenArgs { call, args } => {
            if let Some(f) = obj
                .get_mut("tool_calls")
                .and_then(Value::as_array_mut)
                .and_then(|c| c.get_mut(*call))
                .and_then(|c| c.get_mut("function"))
                .and_then(Value::as_object_mut)
            {
                f.insert("arguments".into(), Value::String(args.to_string()));
            }
        }
        // An OpenAI message carries at most one result: the plan drops the whole
        // message instead, and stubs are separate messages.
        Edit::DropResults(_) | Edit::AddStubs(_) | Edit::ResultsFirst | Edit::DropText { .. } => {}
    }
}

/// A `tool` message standing in for a result that was compacted away.
pub(super) fn stub(stub: &Stub) -> Map {
    let mut m = Map::new();
    m.insert("role".into(), "tool".into());
    m.insert("tool_call_id".into(), stub.id.as_str().into());
    m.insert("content".into(), stub.text.into());
    m
}
