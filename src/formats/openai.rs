//! OpenAI Chat Completions messages.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{opt_str, req_str, type_name};
use crate::error::{Error, Result};
use crate::message::{Args, Call, Message, Role, ToolOutput};
use crate::plan::{Edit, STUB_TEXT};

/// Reads one OpenAI message.
pub(super) fn read(obj: &Map<String, Value>, i: usize) -> Result<Message<'_>> {
    let path = || format!("messages[{i}]");
    let role = match req_str(obj, "role", &path)? {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        other => {
            return Err(Error::input(
                format!("{}.role", path()),
                format!(
                    "unknown role {other:?}; expected one of \"system\", \"developer\", \"user\", \"assistant\", \"tool\""
                ),
            ))
        }
    };
    read_common(obj, role, i)
}

/// Reads the parts every OpenAI-like role shares (also used by the Moltis adapter).
pub(super) fn read_common(obj: &Map<String, Value>, role: Role, i: usize) -> Result<Message<'_>> {
    let path = || format!("messages[{i}]");
    let mut msg = Message::new(role);
    read_content(obj, role, &mut msg, i)?;
    for key in ["reasoning_content", "reasoning", "refusal"] {
        if let Some(Value::String(s)) = obj.get(key) {
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
        msg.results.push(ToolOutput::new(id, name, text, false));
    }
    Ok(msg)
}

fn read_content<'a>(
    obj: &'a Map<String, Value>,
    role: Role,
    msg: &mut Message<'a>,
    i: usize,
) -> Result<()> {
    match obj.get("content") {
        Some(Value::String(s)) => msg.texts.push(s),
        None | Some(Value::Null) if role == Role::Assistant => {}
        Some(Value::Array(parts)) => {
            for (k, part) in parts.iter().enumerate() {
                let path = || format!("messages[{i}].content[{k}]");
                let Value::Object(p) = part else {
                    return Err(Error::input(
                        path(),
                        format!("expected a content part object, got {}", type_name(part)),
                    ));
                };
                match req_str(p, "type", &path)? {
                    "text" => msg.texts.push(req_str(p, "text", &path)?),
                    "refusal" => msg.reasoning.push(req_str(p, "refusal", &path)?),
                    "image_url" | "image" => msg.images += 1,
                    _ => msg.opaque_bytes += part.to_string().len(),
                }
            }
        }
        other => {
            return Err(Error::input(
                format!("messages[{i}].content"),
                format!(
                    "expected a string or an array of content parts, got {}",
                    other.map_or("nothing", type_name)
                ),
            ))
        }
    }
    Ok(())
}

fn read_calls<'a>(obj: &'a Map<String, Value>, msg: &mut Message<'a>, i: usize) -> Result<()> {
    let calls = match obj.get("tool_calls") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(a)) => a,
        Some(other) => {
            return Err(Error::input(
                format!("messages[{i}].tool_calls"),
                format!("expected an array of tool calls, got {}", type_name(other)),
            ))
        }
    };
    let mut seen = HashSet::new();
    for (k, call) in calls.iter().enumerate() {
        let path = || format!("messages[{i}].tool_calls[{k}]");
        let Value::Object(c) = call else {
            return Err(Error::input(
                path(),
                format!("expected a tool call object, got {}", type_name(call)),
            ));
        };
        let id = req_str(c, "id", &path)?;
        if !seen.insert(id) {
            return Err(Error::input(
                format!("{}.id", path()),
                format!("duplicate tool call id {id:?} in the same message; every call needs its own id"),
            ));
        }
        let fpath = || format!("messages[{i}].tool_calls[{k}].function");
        let function = match c.get("function") {
            Some(Value::Object(f)) => f,
            other => {
                return Err(Error::input(
                    fpath(),
                    format!(
                        "expected an object {{name, arguments}}, got {}",
                        other.map_or("nothing", type_name)
                    ),
                ))
            }
        };
        let name = req_str(function, "name", &fpath)?;
        let args = match function.get("arguments") {
            Some(Value::String(s)) => s.as_str(),
            other => {
                return Err(Error::input(
                    format!("{}.arguments", fpath()),
                    format!(
                        "expected the arguments as a JSON-encoded string, got {}",
                        other.map_or("nothing", type_name)
                    ),
                ))
            }
        };
        msg.calls.push(Call {
            id,
            name,
            args: Args::Text(args),
        });
    }
    Ok(())
}

/// Applies an edit to a copy of an OpenAI message.
pub(super) fn edit(obj: &mut Map<String, Value>, edit: &Edit) {
    match edit {
        Edit::ClearOutput { placeholder, .. } => {
            obj.insert("content".into(), Value::String(placeholder.clone()));
        }
        Edit::ShortenArgs { call, args } => {
            if let Some(f) = obj
                .get_mut("tool_calls")
                .and_then(|c| c.get_mut(*call))
                .and_then(|c| c.get_mut("function"))
                .and_then(Value::as_object_mut)
            {
                f.insert("arguments".into(), Value::String(args.to_string()));
            }
        }
        // An OpenAI message carries at most one result: the plan drops the whole
        // message instead, and stubs are separate messages.
        Edit::DropResults(_) | Edit::AddStubs(_) => {}
    }
}

/// A `tool` message standing in for a result that was compacted away.
pub(super) fn stub(id: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("role".into(), "tool".into());
    m.insert("tool_call_id".into(), id.into());
    m.insert("content".into(), STUB_TEXT.into());
    m
}
