//! Anthropic Messages API messages: content blocks, `tool_use` in assistant
//! messages, `tool_result` blocks in the user message that follows.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{req_str, type_name};
use crate::error::{Error, Result};
use crate::message::{Args, Call, Message, Role, ToolOutput};
use crate::plan::{Edit, STUB_TEXT};

/// Reads one Anthropic message.
pub(super) fn read(obj: &Map<String, Value>, i: usize) -> Result<Message<'_>> {
    let path = || format!("messages[{i}]");
    let role = match req_str(obj, "role", &path)? {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "system" => {
            return Err(Error::input(
                format!("{}.role", path()),
                "\"system\" is not a message role in the Anthropic format; pass the system prompt as the request's \"system\" field (or force format \"openai\")",
            ))
        }
        other => {
            return Err(Error::input(
                format!("{}.role", path()),
                format!("unknown role {other:?}; expected \"user\" or \"assistant\""),
            ))
        }
    };
    let mut msg = Message::new(role);
    match obj.get("content") {
        Some(Value::String(s)) => msg.texts.push(s),
        Some(Value::Array(blocks)) => {
            let mut seen = HashSet::new();
            for (k, block) in blocks.iter().enumerate() {
                read_block(block, role, &mut msg, &mut seen, i, k)?;
            }
        }
        other => {
            return Err(Error::input(
                format!("{}.content", path()),
                format!(
                    "expected a string or an array of content blocks, got {}",
                    other.map_or("nothing", type_name)
                ),
            ))
        }
    }
    if role == Role::User && msg.has_results() && msg.texts.is_empty() && msg.images == 0 {
        msg.role = Role::Tool;
    }
    Ok(msg)
}

fn read_block<'a>(
    block: &'a Value,
    role: Role,
    msg: &mut Message<'a>,
    seen: &mut HashSet<&'a str>,
    i: usize,
    k: usize,
) -> Result<()> {
    let path = || format!("messages[{i}].content[{k}]");
    let Value::Object(b) = block else {
        return Err(Error::input(
            path(),
            format!("expected a content block object, got {}", type_name(block)),
        ));
    };
    let misplaced = |what: &str, belongs: &str| {
        Error::input(
            format!("{}.type", path()),
            format!(
                "a {what} block belongs in {belongs} message, not in {} message",
                match role {
                    Role::Assistant => "an assistant",
                    _ => "a user",
                }
            ),
        )
    };
    match req_str(b, "type", &path)? {
        "text" => msg.texts.push(req_str(b, "text", &path)?),
        "thinking" => {
            if let Some(Value::String(t)) = b.get("thinking") {
                msg.reasoning.push(t);
            }
        }
        "image" => msg.images += 1,
        "tool_use" => {
            if role != Role::Assistant {
                return Err(misplaced("tool_use", "an assistant"));
            }
            let id = req_str(b, "id", &path)?;
            if !seen.insert(id) {
                return Err(Error::input(
                    format!("{}.id", path()),
                    format!("duplicate tool_use id {id:?} in the same message; every call needs its own id"),
                ));
            }
            let name = req_str(b, "name", &path)?;
            let input = b.get("input").ok_or_else(|| {
                Error::input(format!("{}.input", path()), "missing; expected an object")
            })?;
            msg.calls.push(Call {
                id,
                name,
                args: Args::Json(input),
            });
        }
        "tool_result" => {
            if role != Role::User {
                return Err(misplaced("tool_result", "a user"));
            }
            let id = req_str(b, "tool_use_id", &path)?;
            let is_error = matches!(b.get("is_error"), Some(Value::Bool(true)));
            let text: Cow<str> = match b.get("content") {
                None | Some(Value::Null) => Cow::Borrowed(""),
                Some(Value::String(s)) => Cow::Borrowed(s),
                Some(Value::Array(parts)) => {
                    let mut texts = Vec::new();
                    for part in parts {
                        match part.get("type").and_then(Value::as_str) {
                            Some("text") => {
                                texts.push(part.get("text").and_then(Value::as_str).unwrap_or(""))
                            }
                            Some("image") => msg.images += 1,
                            _ => msg.opaque_bytes += part.to_string().len(),
                        }
                    }
                    if texts.len() == 1 {
                        Cow::Borrowed(texts[0])
                    } else {
                        Cow::Owned(texts.join("\n"))
                    }
                }
                Some(other) => {
                    return Err(Error::input(
                        format!("{}.content", path()),
                        format!(
                            "expected a string or an array of blocks, got {}",
                            type_name(other)
                        ),
                    ))
                }
            };
            msg.results.push(ToolOutput::new(id, None, text, is_error));
        }
        _ => msg.opaque_bytes += block.to_string().len(),
    }
    Ok(())
}

/// Position in `blocks` of the `nth` block of `kind`.
fn nth_block(blocks: &[Value], kind: &str, nth: usize) -> Option<usize> {
    blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.get("type").and_then(Value::as_str) == Some(kind))
        .nth(nth)
        .map(|(p, _)| p)
}

fn stub_block(id: &str) -> Value {
    let mut b = Map::new();
    b.insert("type".into(), "tool_result".into());
    b.insert("tool_use_id".into(), id.into());
    b.insert("content".into(), STUB_TEXT.into());
    Value::Object(b)
}

/// Applies an edit to a copy of an Anthropic message.
pub(super) fn edit(obj: &mut Map<String, Value>, edit: &Edit) {
    if let (Edit::AddStubs(_), Some(Value::String(text))) = (edit, obj.get("content")) {
        let mut t = Map::new();
        t.insert("type".into(), "text".into());
        t.insert("text".into(), text.clone().into());
        obj.insert("content".into(), Value::Array(vec![Value::Object(t)]));
    }
    let Some(Value::Array(blocks)) = obj.get_mut("content") else {
        return;
    };
    match edit {
        Edit::ClearOutput {
            result,
            placeholder,
        } => {
            if let Some(p) = nth_block(blocks, "tool_result", *result) {
                if let Some(b) = blocks[p].as_object_mut() {
                    b.insert("content".into(), Value::String(placeholder.clone()));
                }
            }
        }
        Edit::ShortenArgs { call, args } => {
            if let Some(p) = nth_block(blocks, "tool_use", *call) {
                if let Some(b) = blocks[p].as_object_mut() {
                    b.insert("input".into(), args.clone());
                }
            }
        }
        Edit::DropResults(which) => {
            let positions: Vec<usize> = which
                .iter()
                .filter_map(|r| nth_block(blocks, "tool_result", *r))
                .collect();
            let mut p = 0;
            blocks.retain(|_| {
                p += 1;
                !positions.contains(&(p - 1))
            });
        }
        Edit::AddStubs(ids) => {
            let at = blocks
                .iter()
                .rposition(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                .map_or(0, |p| p + 1);
            blocks.splice(at..at, ids.iter().map(|id| stub_block(id)));
        }
    }
}

/// A user message of stub `tool_result` blocks.
pub(super) fn stub_message(ids: &[String]) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("role".into(), "user".into());
    m.insert(
        "content".into(),
        Value::Array(ids.iter().map(|id| stub_block(id)).collect()),
    );
    m
}
