//! Anthropic Messages API messages: content blocks, `tool_use` in assistant
//! messages, `tool_result` blocks in the user message that follows.

use std::borrow::Cow;
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::req_str;
use crate::error::{Error, Result};
use crate::json::{Kind, Node};
use crate::message::{Args, Call, Message, Role, ToolOutput};
use crate::plan::{Edit, STUB_TEXT};

/// Reads one Anthropic message.
pub(super) fn read<'a, N: Node<'a>>(obj: N, i: usize) -> Result<Message<'a>> {
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
    let content = obj.get("content");
    match content.map(Node::kind) {
        Some(Kind::String) => msg.texts.extend(content.and_then(Node::as_str)),
        Some(Kind::Array) => {
            let mut seen = HashSet::new();
            for (k, block) in content.into_iter().flat_map(Node::items).enumerate() {
                read_block(block, role, &mut msg, &mut seen, i, k)?;
            }
        }
        other => {
            return Err(Error::input(
                format!("{}.content", path()),
                format!(
                    "expected a string or an array of content blocks, got {}",
                    other.map_or("nothing", Kind::name)
                ),
            ))
        }
    }
    if role == Role::User && msg.has_results() && msg.texts.is_empty() && msg.images == 0 {
        msg.role = Role::Tool;
    }
    Ok(msg)
}

fn read_block<'a, N: Node<'a>>(
    block: N,
    role: Role,
    msg: &mut Message<'a>,
    seen: &mut HashSet<&'a str>,
    i: usize,
    k: usize,
) -> Result<()> {
    let path = || format!("messages[{i}].content[{k}]");
    if block.kind() != Kind::Object {
        return Err(Error::input(
            path(),
            format!(
                "expected a content block object, got {}",
                block.kind().name()
            ),
        ));
    }
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
    match req_str(block, "type", &path)? {
        "text" => msg.texts.push(req_str(block, "text", &path)?),
        "thinking" => msg
            .reasoning
            .extend(block.get("thinking").and_then(Node::as_str)),
        "image" => msg.images += 1,
        "tool_use" => {
            if role != Role::Assistant {
                return Err(misplaced("tool_use", "an assistant"));
            }
            let id = req_str(block, "id", &path)?;
            if !seen.insert(id) {
                return Err(Error::input(
                    format!("{}.id", path()),
                    format!("duplicate tool_use id {id:?} in the same message; every call needs its own id"),
                ));
            }
            let name = req_str(block, "name", &path)?;
            let input = block.get("input").ok_or_else(|| {
                Error::input(format!("{}.input", path()), "missing; expected an object")
            })?;
            msg.calls.push(Call {
                id,
                name,
                args: Args::Json(input.to_value()),
            });
        }
        "tool_result" => {
            if role != Role::User {
                return Err(misplaced("tool_result", "a user"));
            }
            let id = req_str(block, "tool_use_id", &path)?;
            let is_error = block.get("is_error").and_then(Node::as_bool) == Some(true);
            let content = block.get("content");
            let (mut images, mut opaque_bytes) = (0, 0);
            let text: Cow<str> = match content.map(Node::kind) {
                None | Some(Kind::Null) => Cow::Borrowed(""),
                Some(Kind::String) => Cow::Borrowed(content.and_then(Node::as_str).unwrap_or("")),
                Some(Kind::Array) => {
                    let mut texts = Vec::new();
                    for part in content.into_iter().flat_map(Node::items) {
                        match part.get("type").and_then(Node::as_str) {
                            Some("text") => {
                                texts.push(part.get("text").and_then(Node::as_str).unwrap_or(""))
                            }
                            Some("image") => images += 1,
                            _ => opaque_bytes += part.json_len(),
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
                            other.name()
                        ),
                    ))
                }
            };
            let mut output = ToolOutput::new(id, None, text, is_error);
            output.images = images;
            output.opaque_bytes = opaque_bytes;
            msg.results.push(output);
        }
        _ => msg.opaque_bytes += block.json_len(),
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
    if let (Edit::ReplaceText { part: 0, text }, Some(Value::String(s))) =
        (edit, obj.get_mut("content"))
    {
        *s = text.clone();
        return;
    }
    let Some(Value::Array(blocks)) = obj.get_mut("content") else {
        return;
    };
    match edit {
        Edit::ReplaceOutput { result, text } => {
            if let Some(p) = nth_block(blocks, "tool_result", *result) {
                if let Some(b) = blocks[p].as_object_mut() {
                    b.insert("content".into(), Value::String(text.clone()));
                }
            }
        }
        Edit::ReplaceText { part, text } => {
            if let Some(p) = nth_block(blocks, "text", *part) {
                if let Some(b) = blocks[p].as_object_mut() {
                    b.insert("text".into(), Value::String(text.clone()));
                }
            }
        }
        Edit::DropReasoning => blocks.retain(|b| {
            !matches!(
                b.get("type").and_then(Value::as_str),
                Some("thinking" | "redacted_thinking")
            )
        }),
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
