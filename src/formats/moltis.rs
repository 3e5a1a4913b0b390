//! Moltis session messages: OpenAI-like, plus `notice`, structured `tool_result`
//! messages, `created_at` and provider-reported token usage on assistant turns.

use std::borrow::Cow;

use crate::json::{Map, Value};

use super::{openai, opt_str, req_str};
use crate::error::{Error, Result};
use crate::json::{Kind, Node};
use crate::message::{Message, Role, ToolOutput};
use crate::plan::Edit;
use crate::text::Quoted;

/// Reads one Moltis message.
pub(super) fn read<'a, N: Node<'a>>(obj: N, i: usize) -> Result<Message<'a>> {
    let path = || format!("messages[{i}]");
    let role = req_str(obj, "role", &path)?;
    match role {
        "system" | "developer" => openai::read_common(obj, Role::System, i),
        "user" => openai::read_common(obj, Role::User, i),
        "assistant" => openai::read_common(obj, Role::Assistant, i),
        "tool" => openai::read_common(obj, Role::Tool, i),
        "notice" => openai::read_common(obj, Role::Notice, i),
        "tool_result" => read_tool_result(obj, i),
        other => Err(Error::input(
            format!("{}.role", path()),
            format!(
                "unknown role {}; expected one of \"system\", \"developer\", \"notice\", \"user\", \"assistant\", \"tool\", \"tool_result\"",
                Quoted(other)
            ),
        )),
    }
}

fn read_tool_result<'a, N: Node<'a>>(obj: N, i: usize) -> Result<Message<'a>> {
    let path = || format!("messages[{i}]");
    let id = req_str(obj, "tool_call_id", &path)?;
    let name = opt_str(obj, "tool_name", &path)?;
    let error = opt_str(obj, "error", &path)?;
    let success = match obj.get("success") {
        None => None,
        Some(v) => match v.kind() {
            Kind::Null => None,
            Kind::Bool => v.as_bool(),
            other => {
                return Err(Error::input(
                    format!("{}.success", path()),
                    format!("expected a boolean, got {}", other.name()),
                ))
            }
        },
    };
    let result = obj.get("result");
    let text: Cow<str> = match (error, result) {
        (Some(e), _) => Cow::Owned(format!("Error: {e}")),
        (None, None) => Cow::Borrowed(""),
        (None, Some(r)) => match r.kind() {
            Kind::String => Cow::Borrowed(r.as_str().unwrap_or("")),
            Kind::Null => Cow::Borrowed(""),
            _ => Cow::Owned(r.to_value().to_string()),
        },
    };
    let is_error = error.is_some() || success == Some(false);
    let mut msg = Message::new(Role::Tool);
    msg.results.push(ToolOutput::new(id, name, text, is_error));
    Ok(msg)
}

/// Applies an edit to a copy of a Moltis message.
pub(super) fn edit(obj: &mut Map, edit: &Edit) {
    let is_tool_result = obj.get("role").and_then(Value::as_str) == Some("tool_result");
    match edit {
        Edit::ReplaceOutput { text, .. } if is_tool_result => {
            if matches!(obj.get("error"), Some(Value::String(_))) {
                obj.insert("error".into(), Value::String(text.clone()));
            }
            if obj.contains_key("result") || !obj.contains_key("error") {
                obj.insert("result".into(), Value::String(text.clone()));
            }
        }
        _ => openai::edit(obj, edit),
    }
}

/// A Moltis message as a plain OpenAI Chat Completions message, for a summarizer
/// that speaks the OpenAI API: `tool_result` becomes `tool` (an error as
/// `Error: …`), and Moltis's own fields (`created_at`, token counts) are left out.
pub(super) fn as_openai(message: Value) -> Value {
    let Value::Object(mut m) = message else {
        return message;
    };
    if m.get("role").and_then(Value::as_str) == Some("tool_result") {
        let content = match (m.get("error"), m.get("result")) {
            (Some(Value::String(e)), _) => format!("Error: {e}"),
            (_, Some(Value::String(r))) => r.clone(),
            (_, None | Some(Value::Null)) => String::new(),
            (_, Some(other)) => other.to_string(),
        };
        m.insert("role".into(), "tool".into());
        m.insert("content".into(), content.into());
    }
    m.retain(|k, _| OPENAI_FIELDS.contains(&k));
    Value::Object(m)
}

/// The message fields the OpenAI Chat Completions API knows.
const OPENAI_FIELDS: &[&str] = &[
    "role",
    "content",
    "name",
    "tool_calls",
    "tool_call_id",
    "refusal",
];
