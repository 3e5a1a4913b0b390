//! Vercel AI SDK `ModelMessage`s: `system`/`user`/`assistant`/`tool` roles,
//! content as a string or parts (`text`, `image`, `file`, `reasoning`,
//! `tool-call`, `tool-result`), results in `tool` messages matched by
//! `toolCallId`.

use std::borrow::Cow;

use crate::json::{Map, Value};

use super::{
    drop_parts, expect_object, json_text, not_content, req_str, role_named, unique_call, PartsOf,
};
use crate::error::{Error, Result};
use crate::json::{Kind, Node};
use crate::message::{Args, Call, Message, Role, ToolOutput};
use crate::names::Names;
use crate::plan::{Edit, Stub};

const ROLES: &[(&str, Role)] = &[
    ("system", Role::System),
    ("user", Role::User),
    ("assistant", Role::Assistant),
    ("tool", Role::Tool),
];

/// Reads one message.
pub(super) fn read<'a, N: Node<'a>>(obj: N, i: usize) -> Result<Message<'a>> {
    let path = || format!("messages[{i}]");
    let role = role_named(req_str(obj, "role", &path)?, i, ROLES)?;
    let mut msg = Message::new(role);
    let content = obj.get("content");
    match content.map(Node::kind) {
        Some(Kind::String) => msg.texts.extend(content.and_then(Node::as_str)),
        Some(Kind::Array) => {
            let mut seen = Names::new();
            for (k, part) in content.into_iter().flat_map(Node::items).enumerate() {
                read_part(part, role, &mut msg, &mut seen, i, k)?;
            }
        }
        other => return Err(not_content(format!("{}.content", path()), "parts", other)),
    }
    if role == Role::Assistant {
        // results of tools the provider ran itself answer in the same message
        msg.inline_results = !msg.results.is_empty();
    }
    // A tool message without results (AI SDK 6's tool-approval-response parts)
    // belongs to the tool round in progress: its call's result comes after it.
    if role == Role::Tool && msg.results.is_empty() {
        msg.continues = true;
    }
    Ok(msg)
}

fn read_part<'a, N: Node<'a>>(
    part: N,
    role: Role,
    msg: &mut Message<'a>,
    seen: &mut Names,
    i: usize,
    k: usize,
) -> Result<()> {
    let path = || format!("messages[{i}].content[{k}]");
    expect_object(part, &path, "a content part")?;
    match req_str(part, "type", &path)? {
        "text" => msg.texts.push(req_str(part, "text", &path)?),
        "reasoning" => msg
            .reasoning
            .extend(part.get("text").and_then(Node::as_str)),
        "image" => msg.add_image(part),
        "file" if media_type(part).is_some_and(|t| t.starts_with("image/")) => msg.add_image(part),
        "tool-call" => {
            let id = req_str(part, "toolCallId", &path)?;
            unique_call(seen, id, &path, "toolCallId")?;
            let input = part.get("input").or_else(|| part.get("args"));
            msg.calls.push(Call {
                sealed: false,
                id: Cow::Borrowed(id),
                name: req_str(part, "toolName", &path)?,
                args: Args::Json(input.map_or(Value::Null, Node::to_value)),
            });
        }
        "tool-result" => {
            let id = req_str(part, "toolCallId", &path)?;
            let name = part.get("toolName").and_then(Node::as_str);
            let (text, is_error) = result_text(part);
            if role == Role::User {
                return Err(Error::input(
                    format!("{}.type", path()),
                    "a tool-result part belongs in a tool message, not in a user message",
                ));
            }
            let mut output = ToolOutput::new(id, name, text, is_error);
            // a `content` output's media parts: images by their size, the rest
            // by their bytes (their base64 is not in the text)
            for media in content_parts(part)
                .into_iter()
                .flat_map(Node::items)
                .filter(|p| p.get("type").and_then(Node::as_str) != Some("text"))
            {
                if media_type(media).is_some_and(|t| t.starts_with("image/")) {
                    output.images += 1;
                    output.image_sizes.push(crate::tokens::image_of(media));
                } else {
                    output.opaque_bytes += media.json_len();
                }
            }
            msg.results.push(output);
        }
        _ => msg.opaque_bytes += part.json_len(),
    }
    Ok(())
}

fn media_type<'a, N: Node<'a>>(part: N) -> Option<&'a str> {
    part.get("mediaType")
        .or_else(|| part.get("mimeType"))
        .and_then(Node::as_str)
}

/// A tool result's text: `output` `{type, value}` (AI SDK 5) or `result` (4).
fn result_text<'a, N: Node<'a>>(part: N) -> (Cow<'a, str>, bool) {
    let Some(output) = part.get("output") else {
        return (json_text(part.get("result")), false);
    };
    let kind = output.get("type").and_then(Node::as_str).unwrap_or("");
    let is_error = kind.starts_with("error");
    if kind == "content" {
        // the text parts; media parts count apart (see `content_parts`)
        let texts: Vec<&str> = content_parts(part)
            .into_iter()
            .flat_map(Node::items)
            .filter(|p| p.get("type").and_then(Node::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Node::as_str))
            .collect();
        return (Cow::Owned(texts.join("\n")), is_error);
    }
    (json_text(output.get("value")), is_error)
}

/// The parts of a tool result's `content` output (`{type: "content", value: [...]}`).
fn content_parts<'a, N: Node<'a>>(part: N) -> Option<N> {
    part.get("output")
        .filter(|o| o.get("type").and_then(Node::as_str) == Some("content"))
        .and_then(|o| o.get("value"))
}

/// Applies the edits of a kept message to a copy of it.
pub(super) fn apply(obj: &mut Map, edits: &[Edit]) {
    if let Some(Value::String(s)) = obj.get_mut("content") {
        for e in edits {
            if let Edit::ReplaceText { part: 0, text } = e {
                *s = text.clone();
            }
        }
        return;
    }
    let Some(Value::Array(parts)) = obj.get_mut("content") else {
        return;
    };
    let of = |kind: &str| {
        PartsOf::new(parts, |p| {
            p.get("type").and_then(Value::as_str) == Some(kind)
        })
    };
    let (outputs, texts, calls) = (of("tool-result"), of("text"), of("tool-call"));
    for e in edits {
        match e {
            Edit::ReplaceOutput { result, text } => {
                if let Some(p) = outputs.nth(parts, *result) {
                    if p.contains_key("output") {
                        let mut o = Map::new();
                        o.insert("type".into(), "text".into());
                        o.insert("value".into(), text.clone().into());
                        p.insert("output".into(), Value::Object(o));
                    } else {
                        p.insert("result".into(), text.clone().into());
                    }
                }
            }
            Edit::ReplaceText { part, text } => {
                if let Some(p) = texts.nth(parts, *part) {
                    p.insert("text".into(), text.clone().into());
                }
            }
            Edit::ShortenArgs { call, args } => {
                if let Some(p) = calls.nth(parts, *call) {
                    let key = if p.contains_key("args") {
                        "args"
                    } else {
                        "input"
                    };
                    p.insert(key.into(), args.clone());
                }
            }
            _ => {}
        }
    }
    for e in edits {
        match e {
            Edit::DropReasoning => {
                parts.retain(|p| p.get("type").and_then(Value::as_str) != Some("reasoning"))
            }
            Edit::DropResults(which) => drop_parts(
                parts,
                |p| p.get("type").and_then(Value::as_str) == Some("tool-result"),
                which,
            ),
            _ => {}
        }
    }
}

/// A `tool` message of stub results for calls `stubs`.
pub(super) fn stub_message(stubs: &[Stub]) -> Map {
    let parts = stubs
        .iter()
        .map(|s| {
            let mut output = Map::new();
            output.insert("type".into(), "text".into());
            output.insert("value".into(), s.text.into());
            let mut p = Map::new();
            p.insert("type".into(), "tool-result".into());
            p.insert("toolCallId".into(), s.id.clone().into());
            p.insert("toolName".into(), s.name.clone().into());
            p.insert("output".into(), Value::Object(output));
            Value::Object(p)
        })
        .collect();
    let mut m = Map::new();
    m.insert("role".into(), "tool".into());
    m.insert("content".into(), Value::Array(parts));
    m
}
