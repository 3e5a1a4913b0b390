//! The formats JS chat apps hold (OpenAI Responses items, AI SDK model and UI
//! messages, Gemini contents) on real conversations: the corpus sessions
//! converted by `common::convert`, compacted by both offline modes at several
//! windows. Each input is detected as its format and validates; each output
//! validates too, keeps every signed or encrypted part byte-identical, never
//! parts a reasoning item from the item it produced, keeps the newest message,
//! is byte-identical across runs and leaves the input unchanged.

mod common;

use std::collections::HashSet;

use chat_compaction::{compact, options, validate, ErrorKind, ValidateOptions};
use common::{convert, corpus};
use serde_json::{json, Value};

const WINDOWS: [u64; 3] = [4_096, 16_384, 128_000];

/// The sources: the coding sessions (tool-heavy), and samples of the tool
/// conversations, agent runs and plain chats.
fn sources() -> Vec<corpus::Conversation> {
    let mut v: Vec<_> = corpus::swecontext()
        .into_iter()
        .chain(corpus::swecontext_more())
        .filter(|c| c.format == "openai")
        .collect();
    v.extend(corpus::tau_bench().into_iter().take(30));
    v.extend(corpus::swe_agent().into_iter().take(6));
    v.extend(corpus::sharegpt().into_iter().take(20));
    v
}

fn messages_of(v: &Value) -> &[Value] {
    match v {
        Value::Array(a) => a,
        other => ["messages", "input", "contents"]
            .iter()
            .find_map(|k| other[k].as_array())
            .map_or(&[], Vec::as_slice),
    }
}

/// Every object in `v` carrying a signature or encrypted content, as JSON text.
fn sealed(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            if ["encrypted_content", "thoughtSignature", "providerOptions"]
                .iter()
                .any(|k| o.contains_key(*k))
            {
                out.push(v.to_string());
            }
            o.values().for_each(|x| sealed(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| sealed(x, out)),
        _ => {}
    }
}

fn violations(v: &Value, format: &str) -> Vec<String> {
    let opts = ValidateOptions::from_json(&json!({ "format": format })).unwrap();
    validate(v, &opts)
        .unwrap_or_else(|e| panic!("{e}: {:.300}", v.to_string()))
        .violations
        .iter()
        .map(|v| format!("{} {}", v.code, v.message))
        .collect()
}

#[test]
fn converted_corpus_conversations_compact_validly_in_every_new_format() {
    let sources = sources();
    if corpus::missing(sources.is_empty()) {
        return;
    }
    let (mut runs, mut refused) = (0, 0);
    for (seed, source) in sources.iter().enumerate() {
        let openai: Value = serde_json::from_str(&source.json).unwrap();
        for format in convert::FORMATS {
            let input = convert::convert(&openai, format, seed);
            let msgs = messages_of(&input);
            if msgs.len() < 2 {
                continue;
            }
            let name = format!("{} as {format} (seed {seed})", source.name);
            let detected = validate(&input, &ValidateOptions::default())
                .unwrap()
                .format;
            // AI SDK messages of plain text are OpenAI messages too
            let plain = msgs.iter().all(|m| {
                m["content"]
                    .as_array()
                    .is_none_or(|parts| parts.iter().all(|p| p["type"] == "text"))
            });
            assert!(
                detected.name() == format
                    || (format == "ai-sdk" && plain && detected.name() == "openai"),
                "{name}: detected as {}",
                detected.name()
            );
            let bad = violations(&input, format);
            assert!(
                bad.is_empty(),
                "{name}: the converted input breaks rules: {bad:?}"
            );
            let pristine = input.clone();
            let mut sealed_in = Vec::new();
            sealed(&input, &mut sealed_in);
            let sealed_in: HashSet<String> = sealed_in.into_iter().collect();
            for mode in ["deterministic", "recency_preserving"] {
                for window in WINDOWS {
                    if mode == "deterministic" && window != WINDOWS[0] {
                        continue;
                    }
                    let ctx = format!("{name} {mode} window={window}");
                    let config = options::from_json(
                        &json!({"mode": mode, "contextWindow": window, "format": format}),
                    )
                    .unwrap();
                    let result = match compact(&input, &config) {
                        Ok(r) => r,
                        Err(e) if e.kind() == ErrorKind::TooSmallToCompact => {
                            refused += 1;
                            continue;
                        }
                        Err(e) => panic!("{ctx}: {e}"),
                    };
                    runs += 1;
                    assert_eq!(input, pristine, "{ctx}: input mutated");
                    let again = compact(&input, &config).unwrap();
                    assert_eq!(
                        serde_json::to_string(&result).unwrap(),
                        serde_json::to_string(&again).unwrap(),
                        "{ctx}: output differs between runs"
                    );
                    let out = Value::Array(result.messages.clone());
                    let bad = violations(&out, format);
                    assert!(bad.is_empty(), "{ctx}: output breaks rules: {bad:?}");
                    if let Some(request) = &result.request {
                        let bad = violations(request, format);
                        assert!(
                            bad.is_empty(),
                            "{ctx}: output request breaks rules: {bad:?}"
                        );
                    }
                    let mut sealed_out = Vec::new();
                    sealed(&out, &mut sealed_out);
                    for s in &sealed_out {
                        assert!(
                            sealed_in.contains(s),
                            "{ctx}: a signed or encrypted part changed: {s:.200}"
                        );
                    }
                    if format == "openai-responses" {
                        for (k, item) in result.messages.iter().enumerate() {
                            if item["type"] == "reasoning" {
                                let at = msgs.iter().position(|m| m == item).unwrap();
                                // the item it produced (whose bulky arguments may be shortened)
                                let key = |v: Option<&Value>| {
                                    v.map(|v| (v["type"].clone(), v["id"].clone()))
                                };
                                assert_eq!(
                                    key(result.messages.get(k + 1)),
                                    key(msgs.get(at + 1)),
                                    "{ctx}: reasoning item parted from the item after it"
                                );
                            }
                        }
                    }
                    let warned = |c: &str| result.warnings.iter().any(|w| w.code == c);
                    if !warned("TEXTS_SHORTENED")
                        && !warned("TAIL_PRUNED")
                        && mode != "deterministic"
                    {
                        assert_eq!(
                            result.messages.last(),
                            msgs.last(),
                            "{ctx}: the newest message is not kept verbatim"
                        );
                    }
                    if !result.notice.fits {
                        assert!(warned("DOES_NOT_FIT"), "{ctx}: does not fit, says nothing");
                    }
                    if format == "ai-sdk-ui" {
                        let ids: HashSet<&str> = result
                            .messages
                            .iter()
                            .filter_map(|m| m["id"].as_str())
                            .collect();
                        assert_eq!(
                            ids.len(),
                            result.messages.len(),
                            "{ctx}: UI message ids missing or repeated"
                        );
                    }
                }
            }
        }
    }
    eprintln!(
        "{runs} compactions of converted conversations checked, {refused} refused as too small"
    );
    assert!(runs > 500, "too few compactions ran: {runs}");
}
