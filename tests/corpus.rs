//! Every conversation of ../shared/corpus, in every format it is given in, for
//! context windows from 4K to 200K, through both offline modes: the output obeys
//! the provider rules, keeps head and newest messages verbatim, is byte-identical
//! across runs, leaves the input unchanged, and is smaller.

mod common;

use chat_compaction::{compact, estimate_tokens, options, ErrorKind};
use common::{corpus, rules};
use serde_json::{json, Value};

const WINDOWS: [u64; 6] = [4_096, 8_192, 16_384, 32_768, 128_000, 200_000];

fn messages_of(v: &Value) -> &[Value] {
    match v {
        Value::Array(a) => a,
        other => other["messages"].as_array().map_or(&[], Vec::as_slice),
    }
}

#[test]
fn every_corpus_conversation_compacts_correctly_in_both_offline_modes() {
    let all = corpus::all();
    if all.is_empty() {
        eprintln!("skipped: ../shared/corpus is not there");
        return;
    }
    let (mut runs, mut too_small) = (0, 0);
    for conv in &all {
        let input: Value = serde_json::from_str(&conv.json).unwrap();
        let pristine = input.clone();
        let msgs = messages_of(&input);
        if msgs.is_empty() {
            continue;
        }
        for mode in ["deterministic", "recency_preserving"] {
            for window in WINDOWS {
                if mode == "deterministic" && window != WINDOWS[0] {
                    continue; // the window does not affect deterministic output
                }
                let config =
                    options::from_json(&json!({"mode": mode, "contextWindow": window})).unwrap();
                let ctx = format!("{} {mode} window={window}", conv.name);
                let first = match compact(&input, &config) {
                    Ok(r) => r,
                    Err(e)
                        if e.kind() == ErrorKind::TooSmallToCompact && mode != "deterministic" =>
                    {
                        // A refusal is right only for a history that (nearly) fits the
                        // verbatim tail: few messages, or few tokens for this window.
                        let tokens = estimate_tokens(&input, &config).unwrap();
                        let budget = config.options.tail_budget();
                        assert!(
                            msgs.len() <= 30 || tokens <= budget * 2,
                            "{ctx}: refused as too small with {} messages and {tokens} tokens (tail budget {budget}): {e}",
                            msgs.len()
                        );
                        too_small += 1;
                        continue;
                    }
                    Err(e)
                        if e.kind() == ErrorKind::EmptyHistory
                            && msgs.iter().all(|m| m["role"] == "system") =>
                    {
                        continue
                    }
                    Err(e) => panic!("{ctx}: {e}"),
                };
                runs += 1;
                let again = compact(&input, &config).unwrap();
                assert_eq!(
                    serde_json::to_string(&first).unwrap(),
                    serde_json::to_string(&again).unwrap(),
                    "{ctx}: output differs between runs"
                );
                assert_eq!(input, pristine, "{ctx}: input was mutated");
                let out = &first.messages;
                if let Err(e) = rules::check(conv.format, out) {
                    panic!("{ctx}: provider rule broken: {e}");
                }
                assert_eq!(first.notice.messages_after, out.len());
                let systems = msgs.iter().take_while(|m| m["role"] == "system").count();
                let system_tokens =
                    estimate_tokens(&Value::Array(msgs[..systems].to_vec()), &config).unwrap();
                if first.notice.tokens_before > 1_500 + system_tokens {
                    assert!(
                        first.notice.tokens_after < first.notice.tokens_before,
                        "{ctx}: output not smaller ({} → {})",
                        first.notice.tokens_before,
                        first.notice.tokens_after
                    );
                }
                let is_marker = |m: &Value| {
                    m["content"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("[Conversation Compacted]"))
                };
                if mode == "recency_preserving" && out.iter().any(is_marker) {
                    let head = msgs.len().min(3);
                    assert_eq!(&out[..head], &msgs[..head], "{ctx}: head not verbatim");
                    for m in &msgs[msgs.len().saturating_sub(3)..] {
                        if m["role"] != "tool" && !m["content"].is_array() {
                            assert!(
                                out.contains(m),
                                "{ctx}: a newest message is not verbatim in the output"
                            );
                        }
                    }
                    assert!(first.request.is_some() == input.is_object());
                }
                if mode == "deterministic" {
                    assert_eq!(out.len(), systems + 1, "{ctx}");
                    assert_eq!(
                        &out[..systems],
                        &msgs[..systems],
                        "{ctx}: system messages not kept"
                    );
                }
            }
        }
    }
    eprintln!("{runs} compactions checked, {too_small} correctly refused as too small");
    assert!(runs > 900, "too few compactions ran: {runs}");
}
