//! Vercel AI SDK `UIMessage`s: `{id, role, parts}` with `text`, `reasoning`,
//! `file` parts and tool parts (`tool-<name>`, `dynamic-tool`) whose `state`
//! carries the call and its result together (`input-streaming`,
//! `input-available`, `approval-requested`, `approval-responded`,
//! `output-available`, `output-error`, `output-denied`). Results are inline, so
//! no pair can be split; a call without a result in an older message gets a
//! stub result in its own part.

use std::borrow::Cow;

use crate::json::{Map, Value};

use super::{array_at, expect_object, json_text, req_str, role_named, unique_call, PartsOf};
use crate::error::Result;
use crate::json::Node;
use crate::message::{Args, Call, Message, Role, ToolOutput};
use crate::names::Names;
use crate::plan::Edit;

/// The tool name of a tool part, if `part` is one.
fn tool_name<'a, N: Node<'a>>(part: N) -> Option<&'a str> {
    match part.get("type").and_then(Node::as_str)? {
        "dynamic-tool" => part.get("toolName").and_then(Node::as_str),
        t => t.strip_prefix("tool-"),
    }
}

/// Reads one message.
pub(super) fn read<'a, N: Node<'a>>(obj: N, i: usize) -> Result<Message<'a>> {
    let path = || format!("messages[{i}]");
    let roles = [
        ("system", Role::System),
        ("user", Role::User),
        ("assistant", Role::Assistant),
    ];
    let mut msg = Message::new(role_named(req_str(obj, "role", &path)?, i, &roles)?);
    msg.inline_results = true;
    let mut seen = Names::new();
    for (k, part) in array_at(obj, "parts", i, "parts")?.enumerate() {
        let path = || format!("messages[{i}].parts[{k}]");
        expect_object(part, &path, "a part")?;
        let kind = req_str(part, "type", &path)?;
        if let Some(name) = tool_name(part) {
            let id = req_str(part, "toolCallId", &path)?;
            unique_call(&mut seen, id, &path, "toolCallId")?;
            msg.calls.push(Call {
                sealed: false,
                id: Cow::Borrowed(id),
                name,
                args: Args::Json(part.get("input").map_or(Value::Null, Node::to_value)),
            });
            let state = part.get("state").and_then(Node::as_str).unwrap_or("");
            let result = match state {
                "output-available" => Some((json_text(part.get("output")), false)),
                "output-error" => Some((json_text(part.get("errorText")), true)),
                "output-denied" => Some((Cow::Borrowed("denied"), true)),
                _ => None,
            };
            if let Some((text, is_error)) = result {
                msg.results
                    .push(ToolOutput::new(id, Some(name), text, is_error));
            }
            continue;
        }
        match kind {
            "text" => msg.texts.push(req_str(part, "text", &path)?),
            "reasoning" => msg
                .reasoning
                .extend(part.get("text").and_then(Node::as_str)),
            "file"
                if part
                    .get("mediaType")
                    .and_then(Node::as_str)
                    .is_some_and(|t| t.starts_with("image/")) =>
            {
                msg.add_image(part)
            }
            "step-start" => {}
            _ => msg.opaque_bytes += part.json_len(),
        }
    }
    Ok(msg)
}

fn is_tool_part(p: &Value) -> bool {
    p.get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| t == "dynamic-tool" || t.starts_with("tool-"))
}

fn has_output(p: &Value) -> bool {
    matches!(
        p.get("state").and_then(Value::as_str),
        Some("output-available" | "output-error" | "output-denied")
    )
}

/// Applies the edits of a kept message to a copy of it.
pub(super) fn apply(obj: &mut Map, edits: &[Edit]) {
    let Some(Value::Array(parts)) = obj.get_mut("parts") else {
        return;
    };
    let outputs = PartsOf::new(parts, |p| is_tool_part(p) && has_output(p));
    let texts = PartsOf::new(parts, |p| {
        p.get("type").and_then(Value::as_str) == Some("text")
    });
    let calls = PartsOf::new(parts, is_tool_part);
    for e in edits {
        match e {
            Edit::ReplaceOutput { result, text } => {
                if let Some(p) = outputs.nth(parts, *result) {
                    let key = match p.get("state").and_then(Value::as_str) {
                        Some("output-error") => "errorText",
                        _ => "output",
                    };
                    p.insert(key.into(), text.clone().into());
                }
            }
            Edit::ReplaceText { part, text } => {
                if let Some(p) = texts.nth(parts, *part) {
                    p.insert("text".into(), text.clone().into());
                }
            }
            Edit::ShortenArgs { call, args } => {
                if let Some(p) = calls.nth(parts, *call) {
                    p.insert("input".into(), args.clone());
                }
            }
            Edit::AddStubs(ids) => {
                let mut stubbed = Names::new();
                for (k, s) in ids.iter().enumerate() {
                    stubbed.insert(&s.id, k as u64);
                }
                for p in parts.iter_mut().filter_map(Value::as_object_mut) {
                    let id = p.get("toolCallId").and_then(Value::as_str);
                    let stub = id.and_then(|id| stubbed.get(id)).map(|k| &ids[k as usize]);
                    if let Some(stub) = stub {
                        p.insert("state".into(), "output-available".into());
                        p.insert("output".into(), stub.text.into());
                        p.remove("errorText");
                    }
                }
            }
            Edit::DropReasoning => {
                parts.retain(|p| p.get("type").and_then(Value::as_str) != Some("reasoning"))
            }
            // texts are dropped after the other edits (`Document::render`)
            Edit::DropResults(_) | Edit::ResultsFirst | Edit::DropText { .. } => {}
        }
    }
}

/// A message of one text part (UI messages need an id; the renderer stamps one).
pub(super) fn text_message(role: &str, text: &str) -> Map {
    let mut part = Map::new();
    part.insert("type".into(), "text".into());
    part.insert("text".into(), text.into());
    let mut m = Map::new();
    m.insert("role".into(), role.into());
    m.insert("parts".into(), Value::Array(vec![Value::Object(part)]));
    m
}
