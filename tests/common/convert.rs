//! Converts OpenAI Chat Completions conversations of the corpus into the other
//! formats chat apps hold (OpenAI Responses items, AI SDK model and UI messages,
//! Gemini contents), the way those SDKs would have stored the same turns, with
//! what only they carry: Responses reasoning items with `encrypted_content` and a
//! provider `compaction` item, AI SDK reasoning parts and tool parts in every
//! final state, Gemini `thoughtSignature`s and calls with and without ids. The
//! `seed` varies the shapes (request object or array, merged steps, ids).
#![allow(dead_code)]

use serde_json::{json, Map, Value};

/// The formats a conversation is converted to.
pub const FORMATS: [&str; 4] = ["openai-responses", "ai-sdk", "ai-sdk-ui", "gemini"];

/// One OpenAI message, flattened.
struct Turn {
    role: String,
    text: String,
    /// (id, name, arguments text)
    calls: Vec<(String, String, String)>,
    /// the call id a tool message answers
    answers: Option<String>,
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn turns(openai: &Value) -> Vec<Turn> {
    let messages = match openai {
        Value::Array(a) => a.as_slice(),
        other => other["messages"].as_array().map_or(&[][..], Vec::as_slice),
    };
    messages
        .iter()
        .map(|m| Turn {
            role: match m["role"].as_str().unwrap_or("user") {
                "developer" => "system".into(),
                r => r.into(),
            },
            text: text_of(&m["content"]),
            calls: m["tool_calls"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|c| {
                            (
                                c["id"].as_str().unwrap_or("").to_string(),
                                c["function"]["name"].as_str().unwrap_or("tool").to_string(),
                                c["function"]["arguments"]
                                    .as_str()
                                    .unwrap_or("{}")
                                    .to_string(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
            answers: m["tool_call_id"].as_str().map(String::from),
        })
        // an assistant message with nothing in it has no counterpart elsewhere
        .filter(|t| !(t.role == "assistant" && t.text.trim().is_empty() && t.calls.is_empty()))
        .filter(|t| t.role != "user" || !t.text.trim().is_empty())
        .collect()
}

/// Pseudo-random opaque bytes (base64-like), as a provider would sign or encrypt.
fn opaque(seed: usize, len: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x = (seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ALPHABET[(x % 64) as usize] as char
        })
        .collect()
}

fn args_value(args: &str) -> Value {
    match serde_json::from_str::<Value>(args) {
        Ok(v @ Value::Object(_)) => v,
        Ok(v) => json!({ "value": v }),
        Err(_) => json!({ "raw": args }),
    }
}

/// `openai` (an array or `{messages}`) in `format`.
pub fn convert(openai: &Value, format: &str, seed: usize) -> Value {
    let turns = turns(openai);
    match format {
        "openai-responses" => responses(&turns, seed),
        "ai-sdk" => ai_sdk(&turns, seed),
        "ai-sdk-ui" => ai_sdk_ui(&turns, seed),
        "gemini" => gemini(&turns, seed),
        other => panic!("no converter to {other}"),
    }
}

fn responses(turns: &[Turn], seed: usize) -> Value {
    let mut items = Vec::new();
    let mut instructions = None;
    // a provider compaction before the first user turn past a third of the way
    let compaction_at = (seed % 3 == 0)
        .then(|| (turns.len() / 3..turns.len()).find(|&i| i > 0 && turns[i].role == "user"))
        .flatten();
    for (i, t) in turns.iter().enumerate() {
        if compaction_at == Some(i) {
            items.push(json!({"type": "compaction", "id": format!("cmp_{i}"), "encrypted_content": opaque(seed + i, 400)}));
        }
        match t.role.as_str() {
            "system" if i == 0 && seed % 2 == 1 => instructions = Some(t.text.clone()),
            "system" | "user" => items.push(json!({
                "type": "message",
                "role": if t.role == "system" { "developer" } else { "user" },
                "content": [{"type": "input_text", "text": t.text}],
            })),
            "assistant" => {
                if !t.calls.is_empty() && (i + seed) % 3 != 1 {
                    items.push(json!({
                        "type": "reasoning",
                        "id": format!("rs_{i}"),
                        "summary": [{"type": "summary_text", "text": format!("Deciding which tool to run for step {i}.")}],
                        "encrypted_content": opaque(seed * 1000 + i, 120 + i % 200),
                    }));
                }
                if !t.text.trim().is_empty() {
                    items.push(json!({
                        "type": "message",
                        "id": format!("msg_{i}"),
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": t.text, "annotations": []}],
                    }));
                }
                for (k, (id, name, args)) in t.calls.iter().enumerate() {
                    items.push(json!({
                        "type": "function_call",
                        "id": format!("fc_{i}_{k}"),
                        "call_id": id,
                        "name": name,
                        "arguments": args,
                        "status": "completed",
                    }));
                }
            }
            _ => items.push(json!({
                "type": "function_call_output",
                "call_id": t.answers.clone().unwrap_or_default(),
                "output": t.text,
            })),
        }
    }
    if seed % 2 == 1 {
        let mut req = json!({"model": "gpt-5", "input": items, "store": false});
        if let Some(s) = instructions {
            req["instructions"] = s.into();
        }
        req
    } else {
        Value::Array(items)
    }
}

/// The name of the call `id` answers, for the tool message `at` (the nearest
/// call before it: some sessions reuse ids).
fn name_of<'t>(turns: &'t [Turn], at: usize, id: &str) -> &'t str {
    turns[..at]
        .iter()
        .rev()
        .flat_map(|t| &t.calls)
        .find(|c| c.0 == id)
        .map_or("tool", |c| c.1.as_str())
}

fn ai_sdk(turns: &[Turn], seed: usize) -> Value {
    let mut out: Vec<Value> = Vec::new();
    for (i, t) in turns.iter().enumerate() {
        match t.role.as_str() {
            "system" => out.push(json!({"role": "system", "content": t.text})),
            "user" if i % 2 == 0 => out.push(json!({"role": "user", "content": t.text})),
            "user" => {
                out.push(json!({"role": "user", "content": [{"type": "text", "text": t.text}]}))
            }
            "assistant" => {
                let mut parts = Vec::new();
                if (i + seed) % 4 == 0 {
                    parts.push(json!({"type": "reasoning", "text": format!("Step {i}: what next?"), "providerOptions": {"anthropic": {"signature": opaque(seed + i, 80)}}}));
                }
                if !t.text.trim().is_empty() {
                    parts.push(json!({"type": "text", "text": t.text}));
                }
                for (id, name, args) in &t.calls {
                    parts.push(json!({"type": "tool-call", "toolCallId": id, "toolName": name, "input": args_value(args)}));
                }
                out.push(json!({"role": "assistant", "content": parts}));
            }
            _ => {
                let id = t.answers.clone().unwrap_or_default();
                let part = json!({"type": "tool-result", "toolCallId": id, "toolName": name_of(turns, i, &id), "output": {"type": "text", "value": t.text}});
                match out.last_mut() {
                    Some(last) if last["role"] == "tool" => {
                        last["content"].as_array_mut().unwrap().push(part)
                    }
                    _ => out.push(json!({"role": "tool", "content": [part]})),
                }
            }
        }
    }
    if seed % 2 == 1 {
        json!({"model": "anthropic/claude-sonnet-4.5", "messages": out})
    } else {
        Value::Array(out)
    }
}

fn ai_sdk_ui(turns: &[Turn], seed: usize) -> Value {
    let merge_steps = seed % 2 == 0;
    let mut out: Vec<Value> = Vec::new();
    let answer = |id: &str| {
        turns
            .iter()
            .find(|t| t.answers.as_deref() == Some(id))
            .map(|t| t.text.clone())
    };
    for (i, t) in turns.iter().enumerate() {
        let id = format!("m{seed}_{i}");
        match t.role.as_str() {
            "system" | "user" => out.push(
                json!({"id": id, "role": t.role, "parts": [{"type": "text", "text": t.text}]}),
            ),
            "assistant" => {
                let mut parts = vec![json!({"type": "step-start"})];
                if (i + seed) % 4 == 0 {
                    parts.push(json!({"type": "reasoning", "text": format!("Step {i}: what next?"), "state": "done"}));
                }
                if !t.text.trim().is_empty() {
                    parts.push(json!({"type": "text", "text": t.text, "state": "done"}));
                }
                for (k, (call, name, args)) in t.calls.iter().enumerate() {
                    let mut p = Map::new();
                    let dynamic = (i + k) % 5 == 0;
                    if dynamic {
                        p.insert("type".into(), "dynamic-tool".into());
                        p.insert("toolName".into(), name.clone().into());
                    } else {
                        p.insert("type".into(), format!("tool-{name}").into());
                    }
                    p.insert("toolCallId".into(), call.clone().into());
                    p.insert("input".into(), args_value(args));
                    match answer(call) {
                        Some(text) if text.contains("<tool_use_error>") => {
                            p.insert("state".into(), "output-error".into());
                            p.insert("errorText".into(), text.into());
                        }
                        Some(text) => {
                            p.insert("state".into(), "output-available".into());
                            p.insert("output".into(), text.into());
                        }
                        None => {
                            p.insert("state".into(), "input-available".into());
                        }
                    }
                    parts.push(Value::Object(p));
                }
                match out.last_mut() {
                    Some(last)
                        if merge_steps
                            && last["role"] == "assistant"
                            && !t
                                .calls
                                .iter()
                                .any(|c| last.to_string().contains(&format!("\"{}\"", c.0))) =>
                    {
                        last["parts"].as_array_mut().unwrap().extend(parts)
                    }
                    _ => out.push(json!({"id": id, "role": "assistant", "parts": parts})),
                }
            }
            _ => {} // folded into the calling part
        }
    }
    Value::Array(out)
}

fn gemini(turns: &[Turn], seed: usize) -> Value {
    let with_ids = seed % 2 == 0;
    let mut contents: Vec<Value> = Vec::new();
    let mut system = None;
    for (i, t) in turns.iter().enumerate() {
        let (role, parts) = match t.role.as_str() {
            "system" if i == 0 => {
                system = Some(t.text.clone());
                continue;
            }
            "system" | "user" => ("user", vec![json!({"text": t.text})]),
            "assistant" => {
                let mut parts = Vec::new();
                if (i + seed) % 3 == 0 {
                    parts.push(json!({"text": format!("Step {i}: what next?"), "thought": true}));
                }
                if !t.text.trim().is_empty() {
                    parts.push(json!({"text": t.text}));
                }
                for (k, (id, name, args)) in t.calls.iter().enumerate() {
                    let mut call = json!({"name": name, "args": args_value(args)});
                    if with_ids {
                        call["id"] = id.clone().into();
                    }
                    let mut part = json!({ "functionCall": call });
                    if k == 0 {
                        part["thoughtSignature"] = opaque(seed * 7 + i, 160).into();
                    }
                    parts.push(part);
                }
                ("model", parts)
            }
            _ => {
                let id = t.answers.clone().unwrap_or_default();
                let mut response =
                    json!({"name": name_of(turns, i, &id), "response": {"result": t.text}});
                if with_ids {
                    response["id"] = id.into();
                }
                ("user", vec![json!({ "functionResponse": response })])
            }
        };
        match contents.last_mut() {
            Some(last) if last["role"] == role => {
                last["parts"].as_array_mut().unwrap().extend(parts)
            }
            _ => contents.push(json!({"role": role, "parts": parts})),
        }
    }
    if system.is_some() || seed % 2 == 1 {
        // a request about to be sent asks something
        if contents.last().is_some_and(|c| c["role"] == "model") {
            contents.push(json!({"role": "user", "parts": [{"text": "Go on."}]}));
        }
        let mut req = json!({"model": "gemini-2.5-pro", "contents": contents});
        if let Some(s) = system {
            req["systemInstruction"] = json!({"parts": [{"text": s}]});
        }
        req
    } else {
        Value::Array(contents)
    }
}
