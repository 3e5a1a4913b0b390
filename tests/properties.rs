//! Property tests over random histories in all three formats (SPEC §2, §5, §8):
//! realistic structures (system prompts, user turns, assistant tool calls with
//! 1-3 calls and their results, sometimes missing, orphaned or answered twice,
//! call ids reused across turns, unicode/CJK/emoji texts of every size) and
//! random options, through both offline modes.
//!
//! Properties: never panics; Ok or an allowed coded error; on Ok the output
//! obeys the provider rules, is byte-identical across runs and across the value
//! and text entry points, leaves the input unchanged, keeps the plain head and the
//! newest plain message verbatim, and (recency) is smaller. A history with one
//! deliberately broken message gives `INVALID_INPUT` naming that message.

mod common;

use chat_compaction::{compact, compact_json, options, validate, ErrorKind, ValidateOptions};
use common::{convert, rules};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{json, Map, Value};

// ---------------------------------------------------------------- the model

#[derive(Debug, Clone)]
struct Call {
    id: String,
    name: &'static str,
    /// JSON text; sometimes not valid JSON (OpenAI and Moltis allow any string).
    args: String,
}

#[derive(Debug, Clone)]
struct Res {
    id: String,
    name: &'static str,
    text: String,
    is_error: bool,
    /// Moltis: a `tool_result` message instead of a `tool` message.
    structured: bool,
}

#[derive(Debug, Clone)]
enum Item {
    User {
        text: String,
        parts: bool,
    },
    /// Moltis only (other formats skip it).
    Notice(String),
    Assistant {
        text: Option<String>,
        calls: Vec<Call>,
        parts: bool,
    },
    /// The results of the calls right before (or stray ones: orphans).
    Results {
        results: Vec<Res>,
        trailing_text: Option<String>,
    },
}

#[derive(Debug, Clone)]
struct History {
    systems: Vec<String>,
    items: Vec<Item>,
    /// OpenAI: wrap the messages in a request object.
    request: bool,
    /// OpenAI and Moltis: give every message a unique `id`.
    ids: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Openai,
    Anthropic,
    Moltis,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Openai => "openai",
            Format::Anthropic => "anthropic",
            Format::Moltis => "moltis",
        }
    }
}

const TOOLS: &[&str] = &["read_file", "shell", "grep", "write_file", "web_fetch"];

// ---------------------------------------------------------------- strategies

const WORDS: &[&str] = &[
    "the", "build", "fails", "because", "of", "a", "missing", "import", "in", "module", "we",
    "should", "retry", "with", "backoff", "and", "log", "error", "message", "user", "asked", "for",
    "tests", "refactor", "parser", "function", "returns", "value", "config", "deploy", "cache",
    "timeout", "fixed", "it", "now", "please", "check", "output", "lines", "warning", "cargo",
    "npm",
];

const CAPITALIZED: &[&str] = &[
    "Please", "The", "Now", "Run", "Fix", "Done", "We", "Check", "Ok", "Next",
];

/// `1..=max` characters from `lo..=hi` (CJK, kana, hangul ranges).
fn chars(lo: char, hi: char, max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::char::range(lo, hi), 1..=max).prop_map(|v| v.into_iter().collect())
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => prop::sample::select(WORDS.to_vec()).prop_map(String::from),
        4 => chars('\u{4e00}', '\u{9fa5}', 6),
        1 => chars('\u{3041}', '\u{3093}', 5),
        1 => chars('\u{ac00}', '\u{d7a3}', 4),
        1 => prop::sample::select(vec!["🦀", "👩‍💻", "🎉🎉", "é", "ß", "∑", "\u{200b}", "𝔘"]).prop_map(String::from),
        1 => prop::sample::select(vec![
            "src/main.rs", "tests/io.rs", "TODO:", "next", "pending", "follow up", "remaining",
            "\"quoted\"", "back\\slash", "line\nbreak", "tab\there", "{\"json\": [1, 2]}",
            "[Conversation Summary]", "[Conversation Compacted]",
        ])
        .prop_map(String::from),
        1 => "\\PC{1,3}",
    ]
}

/// Non-blank text: a latin word first, then up to `words` more, repeated up to `repeat` times.
fn text(words: usize, repeat: usize) -> impl Strategy<Value = String> {
    (
        prop::sample::select(CAPITALIZED.to_vec()).prop_map(String::from),
        prop::collection::vec(word(), 0..words),
        prop_oneof![3 => Just(1usize), 1 => 1..=repeat],
    )
        .prop_map(|(first, rest, times)| {
            let mut s = first;
            for w in rest {
                s.push(' ');
                s.push_str(&w);
            }
            let mut out = s.clone();
            for _ in 1..times {
                out.push('\n');
                out.push_str(&s);
            }
            out
        })
}

fn short() -> impl Strategy<Value = String> {
    text(14, 3)
}

fn bulky() -> impl Strategy<Value = String> {
    text(30, 60)
}

fn args() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (prop::sample::select(vec!["src/lib.rs", "a/b/c.py", "README.md", "日本/設定.toml"]), text(10, 20))
            .prop_map(|(p, t)| json!({"path": p, "content": t}).to_string()),
        2 => short().prop_map(|t| json!({"command": t, "timeout": 30}).to_string()),
        1 => Just("{}".to_string()),
        1 => short().prop_map(|t| format!("{{not json: {t}")),
    ]
}

/// An assistant step with 1-3 calls and the results right after it.
fn tool_step() -> impl Strategy<Value = Vec<Item>> {
    (
        0..4usize,
        prop::collection::vec(
            (
                prop::sample::select(TOOLS.to_vec()),
                args(),
                prop::bool::weighted(0.85),
                prop_oneof![2 => short(), 1 => bulky()],
                prop::bool::weighted(0.1),
                any::<bool>(),
            ),
            1..=3,
        ),
        prop::option::weighted(0.3, short()),
        any::<bool>(),
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.05),
        prop::bool::weighted(0.2),
        prop::option::weighted(0.1, short()),
    )
        .prop_map(
            |(base, specs, text, parts, orphan, twice, reverse, trailing_text)| {
                let mut calls = Vec::new();
                let mut results = Vec::new();
                for (k, (name, args, answered, output, is_error, structured)) in
                    specs.into_iter().enumerate()
                {
                    let id = format!("call_{}", base + k);
                    if answered {
                        results.push(Res {
                            id: id.clone(),
                            name,
                            text: output,
                            is_error,
                            structured,
                        });
                    }
                    calls.push(Call { id, name, args });
                }
                if reverse {
                    results.reverse();
                }
                if twice {
                    if let Some(first) = results.first().cloned() {
                        results.push(first);
                    }
                }
                if orphan {
                    results.push(Res {
                        id: format!("orphan_{base}"),
                        name: "shell",
                        text: "an orphan result".into(),
                        is_error: false,
                        structured: false,
                    });
                }
                let mut items = vec![Item::Assistant { text, calls, parts }];
                if !results.is_empty() {
                    items.push(Item::Results {
                        results,
                        trailing_text,
                    });
                }
                items
            },
        )
}

fn step() -> impl Strategy<Value = Vec<Item>> {
    prop_oneof![
        1 => (short(), any::<bool>()).prop_map(|(t, parts)| vec![Item::Assistant { text: Some(t), calls: Vec::new(), parts }]),
        2 => tool_step(),
    ]
}

/// A user turn: the request, maybe a notice, 0-3 assistant steps, maybe a stray
/// (positionally orphaned) result.
fn turn() -> impl Strategy<Value = Vec<Item>> {
    (
        prop_oneof![4 => short(), 1 => bulky()],
        any::<bool>(),
        prop::option::weighted(0.1, short()),
        prop::collection::vec(step(), 0..=3),
        prop::option::weighted(0.05, (0..4usize, short())),
    )
        .prop_map(|(request, parts, notice, steps, stray)| {
            let mut items = vec![Item::User {
                text: request,
                parts,
            }];
            if let Some((k, text)) = stray {
                items.push(Item::Results {
                    results: vec![Res {
                        id: format!("call_{k}"),
                        name: "grep",
                        text,
                        is_error: false,
                        structured: k % 2 == 0,
                    }],
                    trailing_text: None,
                });
            }
            if let Some(n) = notice {
                items.push(Item::Notice(n));
            }
            items.extend(steps.into_iter().flatten());
            items
        })
}

fn history() -> impl Strategy<Value = History> {
    (
        prop::collection::vec(short(), 0..=2),
        prop::collection::vec(turn(), 1..16),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(systems, turns, request, ids)| History {
            systems,
            items: turns.into_iter().flatten().collect(),
            request,
            ids,
        })
}

fn options_json() -> impl Strategy<Value = Value> {
    (
        prop::bool::weighted(0.65),
        0..=6u64,
        prop_oneof![2 => 0..=6u64, 1 => 0..=30u64],
        prop_oneof![2 => 50..=3_000u64, 1 => 50..=50_000u64],
        0..=500u64,
        0..3usize,
    )
        .prop_map(|(recency, head, tail, window, prune, alternation)| {
            let mut o = json!({
                "mode": if recency { "recency_preserving" } else { "deterministic" },
                "protectHead": head,
                "protectTailMin": tail,
                "contextWindow": window,
                "toolPruneCharThreshold": prune,
            });
            if alternation > 0 {
                o["alternation"] = json!(["keep", "merge"][alternation - 1]);
            }
            o
        })
}

// ---------------------------------------------------------------- rendering

fn content(text: &str, parts: bool) -> Value {
    if parts {
        json!([{"type": "text", "text": text}])
    } else {
        json!(text)
    }
}

fn render(h: &History, format: Format) -> Value {
    match format {
        Format::Anthropic => render_anthropic(h),
        Format::Openai | Format::Moltis => render_openai(h, format == Format::Moltis),
    }
}

fn render_openai(h: &History, moltis: bool) -> Value {
    let mut out: Vec<Value> = h
        .systems
        .iter()
        .map(|s| json!({"role": "system", "content": s}))
        .collect();
    for item in &h.items {
        match item {
            Item::User { text, parts } => {
                out.push(json!({"role": "user", "content": content(text, *parts)}))
            }
            Item::Notice(text) if moltis => out.push(json!({"role": "notice", "content": text})),
            Item::Notice(_) => {}
            Item::Assistant { text, calls, parts } => {
                let mut m = Map::new();
                m.insert("role".into(), "assistant".into());
                m.insert(
                    "content".into(),
                    text.as_deref().map_or(Value::Null, |t| content(t, *parts)),
                );
                if !calls.is_empty() {
                    let calls: Vec<Value> = calls
                        .iter()
                        .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.args}}))
                        .collect();
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                if moltis && *parts {
                    m.insert("inputTokens".into(), json!(1234));
                }
                out.push(Value::Object(m));
            }
            Item::Results { results, .. } => {
                for r in results {
                    out.push(if moltis && r.structured {
                        let mut m = json!({"role": "tool_result", "tool_call_id": r.id, "tool_name": r.name, "success": !r.is_error});
                        m[if r.is_error { "error" } else { "result" }] = json!(r.text);
                        m
                    } else {
                        json!({"role": "tool", "tool_call_id": r.id, "content": r.text})
                    });
                }
            }
        }
    }
    for (k, m) in out.iter_mut().enumerate() {
        if h.ids {
            m["id"] = json!(format!("msg_{k:04}"));
        }
        if moltis {
            m["created_at"] = json!(1_700_000_000_000_i64 + 1000 * k as i64);
        }
    }
    if moltis {
        return Value::Array(out);
    }
    if h.request {
        json!({"model": "gpt-4o", "temperature": 0.2, "messages": out})
    } else {
        Value::Array(out)
    }
}

fn render_anthropic(h: &History) -> Value {
    let mut out = Vec::new();
    for item in &h.items {
        match item {
            Item::User { text, parts } => {
                out.push(json!({"role": "user", "content": content(text, *parts)}))
            }
            Item::Notice(_) => {}
            Item::Assistant { text, calls, parts } => {
                if calls.is_empty() {
                    let t = text.as_deref().unwrap_or("ok");
                    out.push(json!({"role": "assistant", "content": content(t, *parts)}));
                    continue;
                }
                let mut blocks: Vec<Value> = text
                    .iter()
                    .map(|t| json!({"type": "text", "text": t}))
                    .collect();
                blocks.extend(calls.iter().map(|c| {
                    let input = serde_json::from_str::<Value>(&c.args)
                        .unwrap_or_else(|_| json!({"raw": c.args}));
                    json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input})
                }));
                out.push(json!({"role": "assistant", "content": blocks}));
            }
            Item::Results {
                results,
                trailing_text,
            } => {
                let mut blocks: Vec<Value> = results
                    .iter()
                    .map(|r| {
                        let mut b =
                            json!({"type": "tool_result", "tool_use_id": r.id, "content": r.text});
                        if r.is_error {
                            b["is_error"] = json!(true);
                        }
                        b
                    })
                    .collect();
                blocks.extend(
                    trailing_text
                        .iter()
                        .map(|t| json!({"type": "text", "text": t})),
                );
                out.push(json!({"role": "user", "content": blocks}));
            }
        }
    }
    let system = if h.systems.is_empty() {
        json!("You are a helpful assistant.")
    } else {
        json!(h.systems.join("\n\n"))
    };
    json!({"model": "claude-sonnet-4-5", "max_tokens": 4096, "system": system, "messages": out})
}

// ---------------------------------------------------------------- checks

fn messages_of(v: &Value) -> &[Value] {
    match v {
        Value::Array(a) => a,
        other => other["messages"].as_array().map_or(&[], Vec::as_slice),
    }
}

fn blocks_of<'a>(m: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    m["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(move |b| b["type"] == kind)
}

fn carries_results(m: &Value) -> bool {
    matches!(m["role"].as_str(), Some("tool" | "tool_result"))
        || blocks_of(m, "tool_result").next().is_some()
}

fn call_ids(m: &Value) -> Vec<&str> {
    let openai = m["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["id"].as_str());
    let anthropic = blocks_of(m, "tool_use").filter_map(|b| b["id"].as_str());
    openai.chain(anthropic).collect()
}

fn is_plain(m: &Value) -> bool {
    !carries_results(m) && call_ids(m).is_empty()
}

/// A plain message's text as it appears inside JSON (escaped, no quotes).
fn text_of(m: &Value) -> String {
    let text = match &m["content"] {
        Value::Array(parts) => &parts[0]["text"],
        other => other,
    };
    let quoted = text.to_string();
    quoted.trim_matches('"').to_string()
}

/// Whether the message's text (its first text part) starts with `prefix`.
fn starts_with(m: &Value, prefix: &str) -> bool {
    let text = match &m["content"] {
        Value::Array(parts) => &parts[0]["text"],
        other => other,
    };
    text.as_str().is_some_and(|t| t.starts_with(prefix))
}

/// Runs both offline entry points twice and checks every property of a valid history.
fn check_valid(format: Format, input: &Value, opts: &Value) -> Result<(), TestCaseError> {
    let config = options::from_json(opts)
        .map_err(|e| TestCaseError::fail(format!("options rejected: {e}")))?;
    let pristine = input.clone();
    let first = compact(input, &config);
    let again = compact(input, &config);
    prop_assert_eq!(input, &pristine, "input was mutated");
    let via_text = compact_json(&input.to_string(), &opts.to_string());
    let msgs = messages_of(input);
    let recency = opts["mode"] == "recency_preserving";
    let leading_systems = msgs.iter().take_while(|m| m["role"] == "system").count();

    let out = match first {
        Err(e) => {
            // Nothing to summarize but the request the history ends with.
            let only_request = msgs[leading_systems..]
                .iter()
                .filter(|m| m["role"] != "notice")
                .count()
                == 1
                && msgs
                    .iter()
                    .rfind(|m| m["role"] != "notice")
                    .is_some_and(|m| m["role"] == "user");
            let allowed = match e.kind() {
                ErrorKind::TooSmallToCompact => recency || only_request,
                ErrorKind::EmptyHistory => !recency && leading_systems == msgs.len(),
                _ => false,
            };
            prop_assert!(allowed, "unexpected error {}", e);
            prop_assert!(!e.message().is_empty());
            prop_assert_eq!(
                again.err().map(|e| e.kind()),
                Some(e.kind()),
                "second run differs"
            );
            prop_assert_eq!(
                via_text.err().map(|e| e.kind()),
                Some(e.kind()),
                "compact_json differs"
            );
            return Ok(());
        }
        Ok(out) => out,
    };
    let text = out.to_json();
    let again = again.map_err(|e| TestCaseError::fail(format!("second run failed: {e}")))?;
    prop_assert_eq!(&text, &again.to_json(), "output differs between runs");
    prop_assert_eq!(&out.request, &again.request, "request differs between runs");
    match via_text {
        Ok(t) => prop_assert_eq!(&text, &t, "compact_json differs from compact"),
        Err(e) => return Err(TestCaseError::fail(format!("compact_json failed: {e}"))),
    }

    let res = &out.messages;
    if let Err(why) = rules::check(format.name(), res) {
        return Err(TestCaseError::fail(format!(
            "provider rule broken: {why}\noutput: {}",
            Value::Array(res.clone())
        )));
    }
    // Merging what compaction adds into neighbouring user messages (the default for
    // Anthropic) makes roles alternate, at the price of those messages' verbatim copy.
    let merges = match opts["alternation"].as_str() {
        Some(a) => a == "merge",
        None => format == Format::Anthropic,
    };
    let alternates = |v: &Value| {
        let strict = json!({"format": format.name(), "strictAlternation": true});
        validate(v, &ValidateOptions::from_json(&strict).unwrap()).is_ok_and(|v| {
            v.violations
                .iter()
                .all(|v| v.code != "ROLES_NOT_ALTERNATING")
        })
    };
    let strict = merges && alternates(&Value::Array(msgs.to_vec()));
    let checks =
        ValidateOptions::from_json(&json!({"format": format.name(), "strictAlternation": strict}))
            .unwrap();
    let v = validate(&Value::Array(res.clone()), &checks)
        .map_err(|e| TestCaseError::fail(format!("validate failed: {e}")))?;
    // Every output validates, however broken the input was (pairs are repaired);
    // only two user messages the input itself put in a row may stay.
    prop_assert!(
        v.violations.is_empty(),
        "output does not validate: {:?}\noutput: {}",
        v.violations,
        Value::Array(res.clone())
    );
    prop_assert_eq!(out.notice.messages_before, msgs.len());
    prop_assert_eq!(out.notice.messages_after, res.len());
    prop_assert_eq!(
        out.request.is_some(),
        input.is_object(),
        "request present iff the input was one"
    );
    if let Some(req) = &out.request {
        prop_assert_eq!(&req["messages"], &Value::Array(res.clone()));
        for (k, v) in input
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.as_str() != "messages")
        {
            prop_assert_eq!(&req[k], v, "request field {} changed", k);
        }
    }
    if msgs.iter().any(|m| m.get("id").is_some()) {
        let mut seen = std::collections::BTreeSet::new();
        for (i, m) in res.iter().enumerate() {
            let id = m["id"].as_str();
            prop_assert!(
                id.is_some(),
                "output messages[{}] has no id although the input's messages do: {}",
                i,
                m
            );
            prop_assert!(
                seen.insert(id),
                "output messages[{}] repeats id {:?}",
                i,
                id
            );
        }
    }
    if format == Format::Moltis {
        for (i, m) in res.iter().enumerate() {
            prop_assert!(
                m.get("created_at").is_some(),
                "moltis output messages[{}] has no created_at: {}",
                i,
                m
            );
        }
    }
    let markers = res
        .iter()
        .filter(|m| starts_with(m, "[Conversation Compacted]\n\n"))
        .count();
    prop_assert!(
        !text.contains(MARKS_NOTHING),
        "a marker for nothing: {}",
        text
    );
    let summaries = res
        .iter()
        .filter(|m| starts_with(m, "[Conversation Summary]\n\n"))
        .count();

    if !recency {
        // Systems, one summary, then what closes the history: a turn whose tools
        // are still running (its results are about to be appended), or the
        // request about to be answered, verbatim.
        let closing = &res[(leading_systems + 1).min(res.len())..];
        prop_assert!(
            closing.len() < msgs.len(),
            "deterministic: systems + one summary"
        );
        if let Some(first) = closing.first().filter(|m| !merges || m["role"] != "user") {
            prop_assert!(
                msgs.contains(first),
                "deterministic: the closing turn verbatim"
            );
        }
        let last = msgs.iter().rev().find(|m| m["role"] != "notice");
        if let Some(last) = last.filter(|m| m["role"] == "user" && !carries_results(m)) {
            prop_assert!(
                res.iter()
                    .any(|m| m == last || merges && m.to_string().contains(&text_of(last))),
                "deterministic: the closing request was folded: {}",
                last
            );
        }
        prop_assert_eq!(&res[..leading_systems], &msgs[..leading_systems]);
        prop_assert_eq!(summaries, 1, "{}", Value::Array(res.clone()));
        prop_assert_eq!(&res[leading_systems]["role"], "user");
        return Ok(());
    }

    prop_assert!(markers <= 1, "{} markers", markers);
    prop_assert!(
        out.notice.tokens_after < out.notice.tokens_before,
        "not smaller: {} -> {}",
        out.notice.tokens_before,
        out.notice.tokens_after
    );
    // Leading system messages and the plain start of the head stay verbatim and
    // first, unless texts had to be cut to fit the window (then a warning says so).
    let cut = out.warnings.iter().any(|w| w.code == "TEXTS_SHORTENED");
    let head = opts["protectHead"].as_u64().unwrap_or(3) as usize;
    let plain_start = msgs.iter().take_while(|m| is_plain(m)).count();
    let verbatim = head.min(msgs.len()).max(leading_systems).min(plain_start);
    if !cut && !merges {
        prop_assert!(res.len() >= verbatim);
        prop_assert_eq!(
            &res[..verbatim],
            &msgs[..verbatim],
            "plain head not verbatim"
        );
    }
    // The newest request of the person is never elided or cut (merged into a
    // neighbour, its text is still there).
    // (Text beside Anthropic tool results is the newest request then: it stays
    // with the newest tool group.)
    let request = msgs
        .iter()
        .rev()
        .find(|m| m["role"] == "user" && !starts_with(m, "[Conversation "));
    if let Some(request) = request.filter(|m| !carries_results(m)) {
        prop_assert!(
            res.iter()
                .any(|m| m == request || merges && m.to_string().contains(&text_of(request))),
            "the newest request is gone: {}\noutput: {}",
            request,
            Value::Array(res.clone())
        );
    }
    // The newest message that carries no results survives: verbatim when it has no
    // calls (only tool outputs and call arguments are ever pruned), else with its calls.
    if let Some(last) = msgs.iter().rev().find(|m| !carries_results(m)) {
        if merges {
            // merged into a neighbour: its text is still there
        } else if call_ids(last).is_empty() && !cut {
            prop_assert!(
                res.contains(last),
                "newest plain message not verbatim in output: {}",
                last
            );
        } else {
            let ids = call_ids(last);
            prop_assert!(
                res.iter()
                    .any(|m| m["role"] == last["role"] && call_ids(m) == ids),
                "newest calling message lost its calls"
            );
        }
    }
    Ok(())
}

/// Breaks message `k` of `input` in a way every format rejects.
fn corrupt(input: &mut Value, k: usize, how: u8) {
    let msgs = match input {
        Value::Array(a) => a,
        other => other["messages"]
            .as_array_mut()
            .expect("request has messages"),
    };
    let m = &mut msgs[k];
    match how {
        0 => *m = json!(42),
        1 => m["role"] = json!(7),
        2 => m["role"] = json!("wizard"),
        _ => {
            if let Some(o) = m.as_object_mut() {
                o.remove("role");
            }
        }
    }
}

/// A marker's opening as JSON writes it, when it would stand for nothing.
const MARKS_NOTHING: &str = "[Conversation Compacted]\\n\\n0 earlier";

/// Fails unless `messages` validate under `checks`, naming the input.
fn validates(
    messages: &[Value],
    input: &Value,
    checks: &ValidateOptions,
) -> Result<(), TestCaseError> {
    let output = Value::Array(messages.to_vec());
    let v = validate(&output, checks).unwrap();
    prop_assert!(
        v.violations.is_empty(),
        "output does not validate: {:?}\ninput: {}\noutput: {}",
        v.violations,
        input,
        output
    );
    Ok(())
}

fn config() -> ProptestConfig {
    ProptestConfig {
        // `PROPTEST_CASES=5000 cargo test --test properties` for a longer hunt.
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(256),
        failure_persistence: None,
        // the newer formats' test skips the made-up histories that break their rules
        max_global_rejects: 1 << 20,
        ..ProptestConfig::default()
    }
}

fn any_format() -> impl Strategy<Value = Format> {
    prop::sample::select(vec![Format::Openai, Format::Anthropic, Format::Moltis])
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn openai_histories_compact_correctly(h in history(), opts in options_json()) {
        check_valid(Format::Openai, &render(&h, Format::Openai), &opts)?;
    }

    #[test]
    fn anthropic_histories_compact_correctly(h in history(), opts in options_json()) {
        check_valid(Format::Anthropic, &render(&h, Format::Anthropic), &opts)?;
    }

    #[test]
    fn moltis_histories_compact_correctly(h in history(), opts in options_json()) {
        check_valid(Format::Moltis, &render(&h, Format::Moltis), &opts)?;
    }

    #[test]
    fn histories_in_the_newer_formats_compact_to_valid_ones(
        h in history(),
        opts in options_json(),
        format in prop::sample::select(convert::FORMATS.to_vec()),
        seed in 0..6usize,
    ) {
        let input = convert::convert(&render(&h, Format::Openai), format, seed);
        let checks = ValidateOptions::from_json(&json!({"format": format})).unwrap();
        // made-up histories may hold what a format cannot (a call id twice in a UI message)
        prop_assume!(validate(&input, &checks).is_ok());
        let clean = |v: &Value| validate(v, &checks).is_ok_and(|v| v.violations.is_empty());
        let mut opts = opts;
        opts["format"] = json!(format);
        let config = options::from_json(&opts).unwrap();
        let pristine = input.clone();
        match compact(&input, &config) {
            Err(e) => prop_assert!(
                matches!(e.kind(), ErrorKind::TooSmallToCompact | ErrorKind::EmptyHistory),
                "unexpected error {}", e
            ),
            Ok(out) => {
                prop_assert_eq!(&input, &pristine, "input was mutated");
                let again = compact(&input, &config).unwrap();
                prop_assert_eq!(&out, &again, "output differs between runs");
                validates(&out.messages, &input, &checks)?;
                if let Some(request) = out.request.as_ref().filter(|_| clean(&input)) {
                    let v = validate(request, &checks).unwrap();
                    prop_assert!(v.violations.is_empty(), "request does not validate: {:?}", v.violations);
                }
            }
        }
    }

    #[test]
    fn pins_keep_every_format_valid(
        h in history(),
        opts in options_json(),
        roles in prop::sample::subsequence(vec!["user", "assistant", "tool"], 0..=2),
        indices in prop::collection::vec(0..40usize, 0..4),
        structured in any::<bool>(),
        format in prop::sample::select(vec!["openai", "anthropic", "moltis", "openai-responses", "ai-sdk", "ai-sdk-ui", "gemini"]),
        seed in 0..6usize,
    ) {
        let input = match format {
            "openai" => render(&h, Format::Openai),
            "anthropic" => render(&h, Format::Anthropic),
            "moltis" => render(&h, Format::Moltis),
            other => convert::convert(&render(&h, Format::Openai), other, seed),
        };
        let checks = ValidateOptions::from_json(&json!({"format": format})).unwrap();
        prop_assume!(validate(&input, &checks).is_ok_and(|v| v.violations.is_empty()));
        let mut opts = opts;
        opts["format"] = json!(format);
        opts["pinRoles"] = json!(roles);
        opts["pin"] = json!(indices);
        let config = options::from_json(&opts).unwrap();
        let out = if structured {
            let mut opts = opts.clone();
            opts["mode"] = json!("structured");
            common::summarized(&input, &options::from_json(&opts).unwrap())
        } else {
            compact(&input, &config)
        };
        match out {
            Err(e) => prop_assert!(
                matches!(e.kind(), ErrorKind::TooSmallToCompact | ErrorKind::EmptyHistory),
                "unexpected error {}", e
            ),
            Ok(out) => {
                let text = Value::Array(out.messages.clone()).to_string();
                prop_assert!(!text.contains(MARKS_NOTHING), "a marker for nothing: {}", text);
                validates(&out.messages, &input, &checks)?;
            }
        }
    }

    #[test]
    fn one_broken_message_is_reported_where_it_is(
        h in history(),
        format in any_format(),
        at in any::<Index>(),
        how in 0..4u8,
        opts in options_json(),
    ) {
        let mut input = render(&h, format);
        let k = at.index(messages_of(&input).len());
        corrupt(&mut input, k, how);
        let config = options::from_json(&opts).unwrap();
        match compact(&input, &config) {
            Ok(_) => prop_assert!(false, "accepted a broken messages[{}]", k),
            Err(e) => {
                prop_assert_eq!(e.kind(), ErrorKind::InvalidInput, "{}", e);
                let at = format!("messages[{k}]");
                prop_assert!(e.message().contains(&at), "error does not name {}: {}", at, e);
            }
        }
    }
}
