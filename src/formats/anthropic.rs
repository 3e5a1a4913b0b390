//! Anthropic Messages API messages: content blocks, `tool_use` in assistant
//! messages, `tool_result` blocks in the user message that follows.

use std::borrow::Cow;

use crate::json::{Map, Value};

use super::{expect_object, not_content, req_str, role_named, unique_call};
use crate::error::{Error, Result};
use crate::json::{Kind, Node};
use crate::message::{Args, Call, Message, Role, ToolOutput};
use crate::names::Names;
use crate::plan::{Edit, Stub};

/// Reads one Anthropic message.
pub(super) fn read<'a, N: Node<'a>>(obj: N, i: usize) -> Result<Message<'a>> {
    let path = || format!("messages[{i}]");
    let role = match req_str(obj, "role", &path)? {
        "system" => {
            return Err(Error::input(
                format!("{}.role", path()),
                "\"system\" is not a message role in the Anthropic format; pass the system prompt as the request's \"system\" field (or force format \"openai\")",
            ))
        }
        name => role_named(name, i, &[("user", Role::User), ("assistant", Role::Assistant)])?,
    };
    let mut msg = Message::new(role);
    let content = obj.get("content");
    match content.map(Node::kind) {
        Some(Kind::String) => msg.texts.extend(content.and_then(Node::as_str)),
        Some(Kind::Array) => {
            let mut seen = Names::new();
            let mut other_before = false;
            for (k, block) in content.into_iter().flat_map(Node::items).enumerate() {
                let results = msg.results.len();
                read_block(block, role, &mut msg, &mut seen, i, k)?;
                if msg.results.len() > results {
                    msg.results_out_of_order |= other_before;
                } else {
                    other_before = true;
                }
            }
        }
        other => {
            return Err(not_content(
                format!("{}.content", path()),
                "content blocks",
                other,
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
    seen: &mut Names,
    i: usize,
    k: usize,
) -> Result<()> {
    let path = || format!("messages[{i}].content[{k}]");
    expect_object(block, &path, "a content block")?;
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
        "image" => msg.add_image(block),
        "tool_use" => {
            if role != Role::Assistant {
                return Err(misplaced("tool_use", "an assistant"));
            }
            let id = req_str(block, "id", &path)?;
            unique_call(seen, id, &path, "id")?;
            let name = req_str(block, "name", &path)?;
            let input = block.get("input").ok_or_else(|| {
                Error::input(format!("{}.input", path()), "missing; expected an object")
            })?;
            msg.calls.push(Call {
                sealed: false,
                id: Cow::Borrowed(id),
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
            let (mut images, mut opaque_bytes) = (Vec::new(), 0);
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
                            Some("image") => images.push(crate::tokens::image_of(part)),
                            _ => opaque_bytes += part.json_len(),
                        }
                    }
                    if texts.len() == 1 {
                        Cow::Borrowed(texts[0])
                    } else {
                        Cow::Owned(texts.join("\n"))
                    }
                }
                other => return Err(not_content(format!("{}.content", path()), "blocks", other)),
            };
            let mut output = ToolOutput::new(id, None, text, is_error);
            output.images = images.len();
            output.image_sizes = images;
            output.opaque_bytes = opaque_bytes;
            msg.results.push(output);
        }
        // The provider's compaction: the API drops what came before it.
        "compaction" => {
            msg.boundary = true;
            msg.opaque_bytes += block.json_len();
        }
        _ => msg.opaque_bytes += block.json_len(),
    }
    Ok(())
}

fn stub_block(stub: &Stub) -> Value {
    let mut b = Map::new();
    b.insert("type".into(), "tool_result".into());
    b.insert("tool_use_id".into(), stub.id.as_str().into());
    b.insert("content".into(), stub.text.into());
    Value::Object(b)
}

fn block_type(b: &Value) -> Option<&str> {
    b.get("type").and_then(Value::as_str)
}

/// Applies a kept message's edits to a copy of it. Edits address blocks by their
/// number among the blocks of one type in the original message, so the blocks are
/// located once, the contents changed first and the structure (dropped and added
/// blocks, their order) last.
pub(super) fn apply(obj: &mut Map, edits: &[Edit]) {
    if let Some(Value::String(text)) = obj.get("content") {
        // A string content is one text block: edit it in place, or turn it into a
        // block when blocks join it.
        let text = text.clone();
        if !edits.iter().any(|e| matches!(e, Edit::AddStubs(_))) {
            for e in edits {
                if let Edit::ReplaceText { part: 0, text } = e {
                    obj.insert("content".into(), text.clone().into());
                }
            }
            return;
        }
        let mut t = Map::new();
        t.insert("type".into(), "text".into());
        t.insert("text".into(), text.into());
        obj.insert("content".into(), Value::Array(vec![Value::Object(t)]));
    }
    let Some(Value::Array(blocks)) = obj.get_mut("content") else {
        return;
    };
    let positions = |kind: &str| -> Vec<usize> {
        (0..blocks.len())
            .filter(|&p| block_type(&blocks[p]) == Some(kind))
            .collect()
    };
    let (results, texts, calls) = (
        positions("tool_result"),
        positions("text"),
        positions("tool_use"),
    );
    let set = |blocks: &mut Vec<Value>, at: Option<&usize>, key: &str, value: Value| {
        if let Some(b) = at.and_then(|&p| blocks[p].as_object_mut()) {
            b.insert(key.into(), value);
        }
    };
    let mut dropped = vec![false; blocks.len()];
    for e in edits {
        match e {
            Edit::ReplaceOutput { result, text } => {
                set(blocks, results.get(*result), "content", text.clone().into())
            }
            Edit::ReplaceText { part, text } => {
                set(blocks, texts.get(*part), "text", text.clone().into())
            }
            Edit::ShortenArgs { call, args } => {
                set(blocks, calls.get(*call), "input", args.clone())
            }
            Edit::DropResults(which) => {
                for r in which {
                    if let Some(&p) = results.get(*r) {
                        dropped[p] = true;
                    }
                }
            }
            Edit::DropReasoning => {
                for (p, b) in blocks.iter().enumerate() {
                    if matches!(block_type(b), Some("thinking" | "redacted_thinking")) {
                        dropped[p] = true;
                    }
                }
            }
            Edit::AddStubs(_) | Edit::ResultsFirst | Edit::DropText { .. } => {}
        }
    }
    let mut p = 0;
    blocks.retain(|_| {
        p += 1;
        !dropped[p - 1]
    });
    for e in edits {
        match e {
            Edit::AddStubs(ids) => {
                let at = blocks
                    .iter()
                    .rposition(|b| block_type(b) == Some("tool_result"))
                    .map_or(0, |p| p + 1);
                blocks.splice(at..at, ids.iter().map(stub_block));
            }
            Edit::ResultsFirst => {
                let (mut first, rest): (Vec<Value>, Vec<Value>) = std::mem::take(blocks)
                    .into_iter()
                    .partition(|b| block_type(b) == Some("tool_result"));
                first.extend(rest);
                *blocks = first;
            }
            _ => {}
        }
    }
}

/// A user message of stub `tool_result` blocks.
pub(super) fn stub_message(ids: &[Stub]) -> Map {
    let mut m = Map::new();
    m.insert("role".into(), "user".into());
    m.insert(
        "content".into(),
        Value::Array(ids.iter().map(stub_block).collect()),
    );
    m
}
