//! Every function stays linear in the size of one turn, in every format: a
//! history four times as large (one assistant turn of that many parallel tool
//! calls, answered) takes about four times as long, not the eight to sixteen
//! times a quadratic step takes (UIMessage and Gemini histories, and the
//! deterministic mode, were quadratic in the calls of one turn). A test, not a
//! benchmark, because it compares two sizes in one run: a ratio, not a time.

mod common;

use std::time::{Duration, Instant};

use chat_compaction::{compact, measure, options, validate, ValidateOptions};
use serde_json::{json, Value};

/// An exchange, one request, one assistant turn of `n` parallel calls, their
/// `n` results, an answer, then a chat of 30 short messages (so the turn lies
/// between head and tail).
fn openai(n: usize) -> Value {
    let calls: Vec<Value> = (0..n)
        .map(|k| json!({"id": format!("c{k}"), "type": "function", "function": {"name": format!("f{}", k % 7), "arguments": format!("{{\"path\":\"src/m{k}.rs\"}}")}}))
        .collect();
    let mut h = vec![
        json!({"role": "user", "content": "hello"}),
        json!({"role": "assistant", "content": "hi"}),
        json!({"role": "user", "content": "go"}),
        json!({"role": "assistant", "content": null, "tool_calls": calls}),
    ];
    for k in 0..n {
        h.push(json!({"role": "tool", "tool_call_id": format!("c{k}"), "content": format!("output {k} {}", "x".repeat(if k % 4 == 0 { 300 } else { 10 }))}));
    }
    h.push(json!({"role": "assistant", "content": "done"}));
    h.extend(chat());
    Value::Array(h)
}

/// The anthropic form: one assistant message of `tool_use` blocks, one user message of results.
fn anthropic(n: usize) -> Value {
    let calls: Vec<Value> = (0..n)
        .map(|k| json!({"type": "tool_use", "id": format!("c{k}"), "name": format!("f{}", k % 7), "input": {"path": format!("src/m{k}.rs")}}))
        .collect();
    let results: Vec<Value> = (0..n)
        .map(|k| json!({"type": "tool_result", "tool_use_id": format!("c{k}"), "content": format!("output {k} {}", "x".repeat(if k % 4 == 0 { 300 } else { 10 }))}))
        .collect();
    let mut h = vec![
        json!({"role": "user", "content": "hello"}),
        json!({"role": "assistant", "content": "hi"}),
        json!({"role": "user", "content": "go"}),
        json!({"role": "assistant", "content": calls}),
        json!({"role": "user", "content": results}),
        json!({"role": "assistant", "content": "done"}),
    ];
    h.extend(chat());
    Value::Array(h)
}

fn chat() -> Vec<Value> {
    (0..30)
        .map(|k| json!({"role": if k % 2 == 0 { "user" } else { "assistant" }, "content": format!("message {k}")}))
        .collect()
}

fn input(format: &str, n: usize) -> Value {
    match format {
        "openai" => openai(n),
        "anthropic" => anthropic(n),
        other => common::convert::convert(&openai(n), other, 2), // (2: no provider compaction)
    }
}

/// The fastest of `runs` runs (the least disturbed by the rest of the machine).
fn fastest(runs: usize, run: &dyn Fn()) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            run();
            t.elapsed()
        })
        .min()
        .unwrap()
}

#[test]
fn every_function_is_linear_in_the_calls_of_one_turn_in_every_format() {
    const N: usize = 1_500;
    let formats = [
        "openai",
        "anthropic",
        "openai-responses",
        "ai-sdk",
        "ai-sdk-ui",
        "gemini",
    ];
    let functions = [
        "measure",
        "validate",
        "deterministic",
        "recency_preserving",
        "structured",
    ];
    for format in formats {
        let (small, large) = (input(format, N), input(format, 4 * N));
        for function in functions {
            let mode = if function.contains('_')
                || function == "deterministic"
                || function == "structured"
            {
                function
            } else {
                "deterministic"
            };
            let opts = json!({"mode": mode, "format": format, "contextWindow": 20_000});
            let config = options::from_json(&opts).unwrap();
            let checks = ValidateOptions::from_json(&json!({"format": format})).unwrap();
            let run = |h: &Value| match function {
                "measure" => drop(measure(h, &config, "").unwrap()),
                "validate" => drop(validate(h, &checks).unwrap()),
                "structured" => drop(common::summarized(h, &config).unwrap()),
                _ => drop(compact(h, &config).unwrap()),
            };
            let (a, b) = (fastest(5, &|| run(&small)), fastest(3, &|| run(&large)));
            let ratio = b.as_secs_f64() / a.as_secs_f64().max(1e-6);
            eprintln!("{format} {function}: {a:?} → {b:?} (×{ratio:.1})");
            assert!(
                ratio < 8.0,
                "{format} {function}: ×{ratio:.1} for ×4 the calls ({a:?} → {b:?})"
            );
        }
    }
}
