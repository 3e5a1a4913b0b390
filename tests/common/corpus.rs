//! Loads the real conversations of `../shared/corpus` for tests, benchmarks and
//! the estimator calibration. Nothing of the corpus is vendored: when the folder
//! is absent the loaders return nothing and callers skip with a message.
#![allow(dead_code)]

use std::io::Read;
use std::path::PathBuf;

use serde_json::{json, Value};

/// One conversation as a JSON document in one of the supported formats.
pub struct Conversation {
    /// `file#index` for messages.
    pub name: String,
    /// The format the file is in (`openai`, `anthropic`, `moltis`).
    pub format: &'static str,
    /// The document: a message array or a `{messages}` request object.
    pub json: String,
}

/// Whether a test must skip because the corpus is absent. With `REQUIRE_CORPUS`
/// set (the test script sets it), a missing corpus fails the test instead of
/// letting it pass silently.
pub fn missing(empty: bool) -> bool {
    if !empty {
        return false;
    }
    assert!(
        std::env::var_os("REQUIRE_CORPUS").is_none(),
        "../shared/corpus is missing, and REQUIRE_CORPUS is set"
    );
    eprintln!("skipped: ../shared/corpus is not there");
    true
}

/// The corpus folder, if it is there.
pub fn dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    d.is_dir().then_some(d)
}

fn read(name: &str) -> Option<String> {
    let path = dir()?.join(name);
    let bytes = std::fs::read(path).ok()?;
    if name.ends_with(".gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .ok()?;
        Some(s)
    } else {
        String::from_utf8(bytes).ok()
    }
}

/// The three Claude Code sessions, each in all three formats.
pub fn swecontext() -> Vec<Conversation> {
    let mut out = Vec::new();
    for id in ["8c0be6e5", "5558c6aa", "c1f62324"] {
        for format in ["anthropic", "openai", "moltis"] {
            let file = format!("swecontext-{id}.{format}.json");
            if let Some(json) = read(&file) {
                out.push(Conversation {
                    name: file,
                    format,
                    json,
                });
            }
        }
    }
    out
}

/// The 200 tau-bench airline conversations (OpenAI format with function calls).
pub fn tau_bench() -> Vec<Conversation> {
    let Some(text) = read("tau-bench-gpt-4o-airline.json.gz") else {
        return Vec::new();
    };
    let entries: Vec<Value> = serde_json::from_str(&text).unwrap_or_default();
    entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            Some(Conversation {
                name: format!("tau-bench#{i}"),
                format: "openai",
                json: e.get("traj")?.to_string(),
            })
        })
        .collect()
}

/// The 22 SWE-agent trajectories (OpenAI format).
pub fn swe_agent() -> Vec<Conversation> {
    let Some(text) = read("swe-agent-demos.jsonl.gz") else {
        return Vec::new();
    };
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let v: Value = serde_json::from_str(line).ok()?;
            Some(Conversation {
                name: format!("swe-agent#{i}"),
                format: "openai",
                json: v.get("messages")?.to_string(),
            })
        })
        .collect()
}

/// The 319 ShareGPT chats, converted to OpenAI messages (human → user, gpt → assistant).
pub fn sharegpt() -> Vec<Conversation> {
    let Some(text) = read("sharegpt-v3-sample.jsonl.gz") else {
        return Vec::new();
    };
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let v: Value = serde_json::from_str(line).ok()?;
            let msgs: Vec<Value> = v
                .get("conversations")?
                .as_array()?
                .iter()
                .filter_map(|c| {
                    let role = match c.get("from")?.as_str()? {
                        "human" => "user",
                        "gpt" => "assistant",
                        "system" => "system",
                        _ => return None,
                    };
                    Some(json!({"role": role, "content": c.get("value")?.as_str()?}))
                })
                .collect();
            Some(Conversation {
                name: format!(
                    "sharegpt#{i}({})",
                    v.get("selection").and_then(Value::as_str).unwrap_or("")
                ),
                format: "openai",
                json: Value::Array(msgs).to_string(),
            })
        })
        .collect()
}

/// The 20 further Claude Code sessions of `swecontext-more.jsonl.gz`, each in the
/// three formats, named `swecontext-more:<id>.<format>`.
pub fn swecontext_more() -> Vec<Conversation> {
    let Some(text) = read("swecontext-more.jsonl.gz") else {
        return Vec::new();
    };
    let mut out: Vec<Conversation> = text
        .lines()
        .filter_map(|line| {
            let v: Value = serde_json::from_str(line).ok()?;
            let format = match v.get("format")?.as_str()? {
                "anthropic" => "anthropic",
                "openai" => "openai",
                "moltis" => "moltis",
                _ => return None,
            };
            Some(Conversation {
                name: format!("swecontext-more:{}.{format}", v.get("id")?.as_str()?),
                format,
                json: v.get("input")?.to_string(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Whether a session is held out of the estimator's calibration: a quarter of
/// the extra sessions (by id), so that the accuracy measured on them carries
/// over to text the weights were not fitted on.
pub fn held_out(name: &str) -> bool {
    let Some(id) = name.strip_prefix("swecontext-more:") else {
        return false;
    };
    let id = id.split('.').next().unwrap_or("");
    u32::from_str_radix(id.get(..2).unwrap_or("0"), 16).is_ok_and(|b| b % 4 == 0)
}

/// Every conversation of the corpus, in every format it is given in.
pub fn all() -> Vec<Conversation> {
    let mut v = swecontext();
    v.extend(swecontext_more());
    v.extend(tau_bench());
    v.extend(swe_agent());
    v.extend(sharegpt());
    v
}

/// Kinds of text the estimator is judged on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    Prose,
    Code,
    Json,
    Cjk,
}

fn is_cjk(text: &str) -> bool {
    let total = text.chars().count().max(1);
    let cjk = text
        .chars()
        .filter(|c| matches!(*c as u32, 0x3000..=0x9FFF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF))
        .count();
    cjk * 5 >= total
}

/// One text of the corpus for the estimator: its kind, and whether it is held
/// out of the calibration.
pub struct Text {
    pub category: Category,
    pub text: String,
    pub held_out: bool,
}

/// Texts of the corpus sorted into categories: chat prose (ShareGPT, tau-bench
/// dialogue, the coding agents' own words), code and terminal output (tool
/// results of the coding sessions), JSON (tool results and call arguments) and
/// CJK chats.
pub fn texts() -> Vec<Text> {
    let mut out: Vec<Text> = texts_in_calibration()
        .into_iter()
        .map(|(category, text)| Text {
            category,
            text,
            held_out: false,
        })
        .collect();
    for c in swecontext_more().iter().filter(|c| c.format == "openai") {
        let held_out = held_out(&c.name);
        let messages: Vec<Value> = serde_json::from_str(&c.json).unwrap_or_default();
        for m in messages {
            let mut push = |category, text: &str| {
                if !text.trim().is_empty() {
                    out.push(Text {
                        category,
                        text: text.to_string(),
                        held_out,
                    })
                }
            };
            match m["role"].as_str() {
                Some("tool") => push(Category::Code, m["content"].as_str().unwrap_or("")),
                Some("assistant") => push(Category::Prose, m["content"].as_str().unwrap_or("")),
                _ => {}
            }
            for call in m["tool_calls"].as_array().into_iter().flatten() {
                push(
                    Category::Json,
                    call["function"]["arguments"].as_str().unwrap_or(""),
                );
            }
        }
    }
    out
}

fn texts_in_calibration() -> Vec<(Category, String)> {
    let mut out = Vec::new();
    let strings = |json: &str| -> Vec<Value> { serde_json::from_str(json).unwrap_or_default() };
    for c in sharegpt() {
        for m in strings(&c.json) {
            if let Some(t) = m["content"].as_str() {
                let cat = if is_cjk(t) {
                    Category::Cjk
                } else {
                    Category::Prose
                };
                out.push((cat, t.to_string()));
            }
        }
    }
    for c in tau_bench() {
        for m in strings(&c.json) {
            let t = m["content"].as_str().unwrap_or("");
            match m["role"].as_str() {
                Some("tool") => out.push((Category::Json, t.to_string())),
                Some("user") | Some("assistant") if !t.is_empty() => {
                    out.push((Category::Prose, t.to_string()))
                }
                _ => {}
            }
            for call in m["tool_calls"].as_array().into_iter().flatten() {
                if let Some(a) = call["function"]["arguments"].as_str() {
                    out.push((Category::Json, a.to_string()));
                }
            }
        }
    }
    for c in swecontext().into_iter().filter(|c| c.format == "openai") {
        for m in strings(&c.json) {
            if m["role"] == "tool" {
                if let Some(t) = m["content"].as_str() {
                    out.push((Category::Code, t.to_string()));
                }
            }
        }
    }
    for c in swe_agent() {
        for m in strings(&c.json) {
            if matches!(m["role"].as_str(), Some("tool") | Some("user")) {
                if let Some(t) = m["content"].as_str() {
                    out.push((Category::Code, t.to_string()));
                }
            }
        }
    }
    out.retain(|(_, t)| !t.trim().is_empty());
    out
}
