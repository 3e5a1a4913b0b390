//! Every conversation of ../shared/corpus, in every format it is given in, for
//! context windows from 2K to 200K, through both offline modes: the output obeys
//! the provider rules, keeps head and newest messages verbatim (unless texts had
//! to be cut to fit), is byte-identical across runs, leaves the input unchanged,
//! is smaller, and fits the window — or says it does not, only when the system
//! messages and the newest request alone are too large.

mod common;

use chat_compaction::{compact, estimate_tokens, options, ErrorKind};
use common::{corpus, rules};
use serde_json::{json, Value};

const WINDOWS: [u64; 7] = [2_048, 4_096, 8_192, 16_384, 32_768, 128_000, 200_000];

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
        corpus::missing(true);
        return;
    }
    let (mut runs, mut too_small, mut not_fitting) = (0, 0, 0);
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
                    first.to_json(),
                    again.to_json(),
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
                let warned = |code: &str| first.warnings.iter().any(|w| w.code == code);
                let target = config.options.trigger_tokens();
                if first.notice.fits {
                    assert!(
                        first.notice.tokens_after <= target,
                        "{ctx}: fits but {} > {target}",
                        first.notice.tokens_after
                    );
                } else {
                    assert!(warned("DOES_NOT_FIT"), "{ctx}: no DOES_NOT_FIT warning");
                    let newest = msgs
                        .iter()
                        .rposition(|m| m["role"] == "user" && m["content"].is_string())
                        .map_or(0, |i| i);
                    let floor = estimate_tokens(
                        &Value::Array(
                            msgs.iter()
                                .enumerate()
                                .filter(|(i, m)| m["role"] == "system" || *i == newest)
                                .map(|(_, m)| m.clone())
                                .collect(),
                        ),
                        &config,
                    )
                    .unwrap();
                    assert!(
                        mode == "deterministic" || floor * 10 > target * 7,
                        "{ctx}: does not fit ({} > {target}) though system + newest request take only {floor}",
                        first.notice.tokens_after
                    );
                    not_fitting += 1;
                }
                if mode == "recency_preserving" {
                    // The newest request of the person is never elided or cut.
                    let request = msgs.iter().rev().find(|m| {
                        m["role"] == "user"
                            && m["content"]
                                .as_str()
                                .is_some_and(|t| !t.starts_with("[Conversation "))
                    });
                    if let Some(request) = request {
                        assert!(out.contains(request), "{ctx}: the newest request is gone");
                    }
                }
                if mode == "recency_preserving"
                    && out.iter().any(is_marker)
                    && !warned("TEXTS_SHORTENED")
                {
                    let head = msgs.len().min(3);
                    assert_eq!(&out[..head], &msgs[..head], "{ctx}: head not verbatim");
                    // The tail may give way to fit the window, down to the newest message.
                    let newest = if warned("TAIL_SHORTENED") || warned("TAIL_PRUNED") {
                        1
                    } else {
                        3
                    };
                    for m in &msgs[msgs.len().saturating_sub(newest)..] {
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
                    let all_systems: Vec<&Value> =
                        msgs.iter().filter(|m| m["role"] == "system").collect();
                    let s = all_systems.len();
                    assert_eq!(
                        out[..s].iter().collect::<Vec<_>>(),
                        all_systems,
                        "{ctx}: system messages not kept"
                    );
                    // The summary, then only what closes the history, verbatim:
                    // the request being answered, or a turn whose tools still run.
                    let summary = out[s].to_string().contains("[Conversation Summary]");
                    assert!(summary, "{ctx}: no summary after the systems");
                    let closing = &out[s + 1..];
                    assert_eq!(closing, &msgs[msgs.len() - closing.len()..], "{ctx}");
                    let last = msgs.last().unwrap();
                    if last["role"] == "user" && last["content"].is_string() {
                        assert_eq!(out.last(), Some(last), "{ctx}: the request was folded");
                    }
                }
            }
        }
    }
    eprintln!("{runs} compactions checked, {too_small} correctly refused as too small, {not_fitting} do not fit (and say so)");
    assert!(runs > 900, "too few compactions ran: {runs}");
}

/// Pruning inside the protected tail stops as soon as the result fits: on the
/// coding sessions in every format at 4K–16K windows, after TAIL_PRUNED the
/// result uses most of what it may (every tool output but the newest round's
/// pruned, it used 42–49%). A run that uses less is one where a single large
/// output had to go (no pruned output could come back: `choose`'s unit tests).
#[test]
fn tail_pruning_stops_once_the_result_fits() {
    use common::convert::convert;
    let mut convs = corpus::swecontext();
    convs.extend(corpus::swecontext_more());
    convs.extend(corpus::swe_agent());
    if convs.is_empty() {
        corpus::missing(true);
        return;
    }
    let mut used = Vec::new();
    for conv in &convs {
        let input: Value = serde_json::from_str(&conv.json).unwrap();
        let mut docs = vec![(conv.format.to_string(), input.clone())];
        if conv.format == "openai" {
            for f in ["openai-responses", "ai-sdk", "ai-sdk-ui", "gemini"] {
                docs.push((f.to_string(), convert(&input, f, 1)));
            }
        }
        for (format, doc) in &docs {
            for window in [4_096u64, 8_192, 12_288, 16_384] {
                let opts = json!({"mode": "recency_preserving", "contextWindow": window, "format": format});
                let config = options::from_json(&opts).unwrap();
                let Ok(r) = compact(doc, &config) else {
                    continue;
                };
                if r.warnings.iter().any(|w| w.code == "TAIL_PRUNED") {
                    let share =
                        r.notice.tokens_after as f64 / config.options.trigger_tokens() as f64;
                    assert!(share <= 1.0, "{} {format} {window}: {share}", conv.name);
                    used.push(share);
                }
            }
        }
    }
    used.sort_by(f64::total_cmp);
    let median = used[used.len() / 2];
    let full = used.iter().filter(|&&u| u >= 0.85).count();
    eprintln!(
        "{} runs pruned inside the tail: median {median:.2} of the target, {full} at 85% or more, least {:.2}",
        used.len(),
        used[0]
    );
    assert!(
        used.len() > 100,
        "too few runs pruned the tail: {}",
        used.len()
    );
    assert!(median >= 0.95, "median {median}");
    assert!(full * 100 >= used.len() * 85, "{full} of {}", used.len());
}
