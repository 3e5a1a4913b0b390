//! Google Gemini `contents`: roles `user` and `model`, `parts` of `text`
//! (`thought: true` for reasoning), `functionCall`, `functionResponse`,
//! `inlineData` and others; any part may carry a `thoughtSignature`, kept as it
//! is with its part. A model turn's calls are answered by `functionResponse`
//! parts in the next user turn, one per call, matched by `id` or, without ids,
//! by name and order (`name#k` stands for the k-th call of `name` in a turn).

use std::borrow::Cow;

use crate::json::{Map, Value};

use super::{
    array_at, drop_parts, expect_object, opt_str, req_str, role_named, unique_call, PartsOf,
};
use crate::error::{Error, Result};
use crate::json::Node;
use crate::message::{Args, Call, Message, Role, ToolOutput};
use crate::names::Names;
use crate::plan::{Edit, Stub};

/// The id of a call or response: its `id`, else `name#k` for the k-th of that
/// name in its turn.
fn id_of<'a, N: Node<'a>>(body: N, name: &'a str, counts: &mut Names) -> Cow<'a, str> {
    let k = counts.count(name);
    match body.get("id").and_then(Node::as_str) {
        Some(id) => Cow::Borrowed(id),
        None => Cow::Owned(format!("{name}#{k}")),
    }
}

/// Reads one content.
pub(super) fn read<'a, N: Node<'a>>(obj: N, i: usize) -> Result<Message<'a>> {
    let path = || format!("messages[{i}]");
    // a content without a role is a user turn; `function` is the older name of a
    // response turn, `system` what some stores keep in contents
    let roles = [
        ("user", Role::User),
        ("model", Role::Assistant),
        ("function", Role::Tool),
        ("system", Role::System),
    ];
    let role = role_named(opt_str(obj, "role", &path)?.unwrap_or("user"), i, &roles)?;
    let mut msg = Message::new(role);
    let (mut calls, mut responses) = (Names::new(), Names::new());
    let mut seen = Names::new();
    for (k, part) in array_at(obj, "parts", i, "parts")?.enumerate() {
        let path = || format!("messages[{i}].parts[{k}]");
        expect_object(part, &path, "a part")?;
        if let Some(call) = part.get("functionCall") {
            if role != Role::Assistant {
                return Err(Error::input(
                    format!("{}.functionCall", path()),
                    "a functionCall part belongs in a model turn",
                ));
            }
            let fpath = || format!("messages[{i}].parts[{k}].functionCall");
            let name = req_str(call, "name", &fpath)?;
            if let Some(id) = opt_str(call, "id", &fpath)? {
                unique_call(&mut seen, id, &fpath, "id")?;
            }
            msg.calls.push(Call {
                sealed: part.get("thoughtSignature").is_some(),
                id: id_of(call, name, &mut calls),
                name,
                args: Args::Json(call.get("args").map_or(Value::Null, Node::to_value)),
            });
        } else if let Some(response) = part.get("functionResponse") {
            let fpath = || format!("messages[{i}].parts[{k}].functionResponse");
            let name = req_str(response, "name", &fpath)?;
            let id = id_of(response, name, &mut responses);
            let text = match response.get("response") {
                Some(r) => Cow::Owned(r.to_value().to_string()),
                None => Cow::Borrowed(""),
            };
            let mut output = ToolOutput::new(id, Some(name), text, false);
            // images in the response's parts count as images, not as their base64
            for p in response.get("parts").into_iter().flat_map(Node::items) {
                if p.get("inlineData").is_some() || p.get("fileData").is_some() {
                    output.images += 1;
                    output.image_sizes.push(crate::tokens::image_of(p));
                } else {
                    output.opaque_bytes += p.json_len();
                }
            }
            msg.results.push(output);
        } else if let Some(text) = part.get("text").and_then(Node::as_str) {
            if part.get("thought").and_then(Node::as_bool) == Some(true) {
                msg.reasoning.push(text);
            } else {
                if part.get("thoughtSignature").is_some() {
                    msg.sealed_texts.push(msg.texts.len());
                }
                msg.texts.push(text);
            }
        } else if part.get("inlineData").is_some() || part.get("fileData").is_some() {
            msg.add_image(part);
        } else {
            msg.opaque_bytes += part.json_len();
        }
    }
    if role == Role::User && msg.has_results() && msg.texts.is_empty() && msg.images == 0 {
        msg.role = Role::Tool;
    }
    Ok(msg)
}

pub(super) fn is_text(p: &Value) -> bool {
    p.get("text").is_some() && p.get("thought").and_then(Value::as_bool) != Some(true)
}

/// Applies the edits of a kept content to a copy of it.
pub(super) fn apply(obj: &mut Map, edits: &[Edit]) {
    let Some(Value::Array(parts)) = obj.get_mut("parts") else {
        return;
    };
    let outputs = PartsOf::new(parts, |p| p.get("functionResponse").is_some());
    let texts = PartsOf::new(parts, is_text);
    let calls = PartsOf::new(parts, |p| p.get("functionCall").is_some());
    for e in edits {
        match e {
            Edit::ReplaceOutput { result, text } => {
                if let Some(r) = outputs
                    .nth(parts, *result)
                    .and_then(|p| p.get_mut("functionResponse"))
                    .and_then(Value::as_object_mut)
                {
                    r.insert("response".into(), response(text));
                }
            }
            Edit::ReplaceText { part, text } => {
                if let Some(p) = texts
                    .nth(parts, *part)
                    // a signed part goes back as it is
                    .filter(|p| !p.contains_key("thoughtSignature"))
                {
                    p.insert("text".into(), text.clone().into());
                }
            }
            Edit::ShortenArgs { call, args } => {
                if let Some(c) = calls
                    .nth(parts, *call)
                    .and_then(|p| p.get_mut("functionCall"))
                    .and_then(Value::as_object_mut)
                {
                    c.insert("args".into(), args.clone());
                }
            }
            _ => {}
        }
    }
    for e in edits {
        match e {
            // Thought parts go; a signature on a call part stays with its call.
            Edit::DropReasoning => {
                parts.retain(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
            }
            Edit::DropResults(which) => {
                drop_parts(parts, |p| p.get("functionResponse").is_some(), which)
            }
            Edit::AddStubs(stubs) => parts.extend(stubs.iter().map(stub_part)),
            _ => {}
        }
    }
}

fn response(text: &str) -> Value {
    let mut r = Map::new();
    r.insert("result".into(), text.into());
    Value::Object(r)
}

/// A `functionResponse` part for a call (made-up `name#k` ids are not written).
/// Whether `id` is one [`id_of`] made up for a part of tool `name` without an id.
fn made_up(id: &str, name: &str) -> bool {
    id.strip_prefix(name)
        .and_then(|k| k.strip_prefix('#'))
        .is_some_and(|k| k.chars().all(|c| c.is_ascii_digit()))
}

/// Gemini pairs a response with its call by `id`, or else by name and order, so
/// a call with an id may be answered by a response without one (the API
/// reference's own pattern), or the other way round: such a response takes its
/// call's id, so that pairing by id holds.
pub(super) fn link_ids(views: &mut [Message<'_>]) {
    let mut turn = None;
    for i in 0..views.len() {
        if !views[i].calls.is_empty() {
            turn = Some(i);
            continue;
        }
        let (Some(t), false) = (turn, views[i].results.is_empty()) else {
            turn = None;
            continue;
        };
        let (before, rest) = views.split_at_mut(i);
        let calls = &before[t].calls;
        // The calls of each name, in order (by table: a turn may make thousands).
        let (mut names, mut of_name) = (Names::new(), Vec::<Vec<usize>>::new());
        for (k, c) in calls.iter().enumerate() {
            if names.insert(c.name, of_name.len() as u64) {
                of_name.push(Vec::new());
            }
            if let Some(list) = names.get(c.name).and_then(|n| of_name.get_mut(n as usize)) {
                list.push(k);
            }
        }
        let mut counts = Names::new();
        for r in &mut rest[0].results {
            let Some(name) = r.name else { continue };
            let nth = counts.count(name) as usize;
            let list = names.get(name).and_then(|n| of_name.get(n as usize));
            let call = list.and_then(|l| l.get(nth)).map(|&k| &calls[k]);
            if let Some(c) = call.filter(|c| c.id != r.id) {
                if made_up(&c.id, name) || made_up(&r.id, name) {
                    r.id = c.id.clone();
                }
            }
        }
    }
}

fn stub_part(stub: &Stub) -> Value {
    let mut r = Map::new();
    r.insert("name".into(), stub.name.clone().into());
    if !made_up(&stub.id, &stub.name) {
        r.insert("id".into(), stub.id.clone().into());
    }
    r.insert("response".into(), response(stub.text));
    let mut p = Map::new();
    p.insert("functionResponse".into(), Value::Object(r));
    Value::Object(p)
}

/// A user turn of stub responses for calls `ids`.
pub(super) fn stub_message(stubs: &[Stub]) -> Map {
    let mut m = Map::new();
    m.insert("role".into(), "user".into());
    m.insert(
        "parts".into(),
        Value::Array(stubs.iter().map(stub_part).collect()),
    );
    m
}

/// A user turn of one text.
pub(super) fn text_message(text: &str) -> Map {
    let mut p = Map::new();
    p.insert("text".into(), text.into());
    let mut m = Map::new();
    m.insert("role".into(), "user".into());
    m.insert("parts".into(), Value::Array(vec![Value::Object(p)]));
    m
}
