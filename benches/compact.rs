//! Native timings of both offline modes on the longest corpus session and on a
//! 2,000-message synthetic agent history, plus estimator throughput.
//! Run: `cargo bench --bench compact` (prints medians; no assertions).

#[path = "../tests/common/corpus.rs"]
mod corpus;

use std::time::Instant;

use chat_compaction::{compact, compact_json, options, tokens};
use serde_json::{json, Value};

/// A 2,000-message agent history: a tool call every other turn, 40-line outputs.
fn synthetic_agent_history(n: usize) -> Value {
    let mut msgs = vec![json!({"role": "system", "content": "You are a coding agent."})];
    let mut i = 0;
    while msgs.len() < n {
        msgs.push(json!({"role": "user", "content": format!("Step {i}: please look at src/module_{i}.rs and fix the failing test, then tell me what is next.")}));
        let id = format!("call_{i}");
        msgs.push(json!({"role": "assistant", "content": "Let me read the file.", "tool_calls": [
            {"id": id, "type": "function", "function": {"name": "read_file", "arguments": format!("{{\"path\":\"src/module_{i}.rs\"}}")}}
        ]}));
        let output: String = (0..40)
            .map(|l| format!("{l:>4}  fn helper_{l}(x: u32) -> u32 {{ x.wrapping_mul({l}) + {i} }} // line {l}\n"))
            .collect();
        msgs.push(json!({"role": "tool", "tool_call_id": id, "content": output}));
        msgs.push(json!({"role": "assistant", "content": format!("Fixed module {i}: the helper overflowed. Next: run the tests again.")}));
        i += 1;
    }
    msgs.truncate(n);
    // never end inside a tool group
    while msgs
        .last()
        .is_some_and(|m| m["role"] == "tool" || m.get("tool_calls").is_some())
    {
        msgs.pop();
    }
    Value::Array(msgs)
}

fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm-up
    let mut t: Vec<f64> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[runs / 2]
}

fn bench(name: &str, input: &Value) {
    let text = input.to_string();
    let n = input.as_array().map_or_else(
        || input["messages"].as_array().map_or(0, Vec::len),
        Vec::len,
    );
    println!("\n{name}: {n} messages, {:.2} MB", text.len() as f64 / 1e6);
    for mode in ["deterministic", "recency_preserving"] {
        let config = options::from_json(&json!({"mode": mode, "contextWindow": 40_000})).unwrap();
        let on_values = median_ms(21, || {
            std::hint::black_box(compact(input, &config).unwrap());
        });
        let opts = json!({"mode": mode, "contextWindow": 40_000}).to_string();
        let on_text = median_ms(21, || {
            std::hint::black_box(compact_json(&text, &opts).unwrap());
        });
        println!("  {mode:<19} parsed Value → result: {on_values:7.3} ms   JSON text → JSON text: {on_text:7.3} ms");
    }
}

fn main() {
    let synthetic = synthetic_agent_history(2_000);
    if let Some(longest) = corpus::swecontext()
        .into_iter()
        .find(|c| c.name == "swecontext-c1f62324.anthropic.json")
    {
        bench(&longest.name, &serde_json::from_str(&longest.json).unwrap());
    }
    if let Some(longest) = corpus::swecontext()
        .into_iter()
        .find(|c| c.name == "swecontext-c1f62324.openai.json")
    {
        bench(&longest.name, &serde_json::from_str(&longest.json).unwrap());
    }
    bench("synthetic agent history", &synthetic);
    for scale in [200usize, 2_000, 20_000] {
        let h = synthetic_agent_history(scale);
        let config =
            options::from_json(&json!({"mode": "recency_preserving", "contextWindow": 40_000}))
                .unwrap();
        let ms = median_ms(11, || {
            std::hint::black_box(compact(&h, &config).unwrap());
        });
        println!(
            "recency_preserving, {scale:>6} messages: {ms:8.3} ms ({:.2} µs/message)",
            ms * 1e3 / scale as f64
        );
    }
    println!("\nestimator (o200k), best of 50:");
    let joined = |texts: &mut dyn Iterator<Item = String>| texts.collect::<Vec<_>>().join("\n");
    let synthetic_texts = joined(&mut synthetic.as_array().unwrap().iter().flat_map(|m| {
        let mut t: Vec<String> = m["content"]
            .as_str()
            .map(str::to_string)
            .into_iter()
            .collect();
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            t.push(
                c["function"]["arguments"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            );
        }
        t
    }));
    estimator_speed("synthetic history, JSON text", &synthetic.to_string());
    estimator_speed("synthetic history, message texts", &synthetic_texts);
    let agent = corpus::texts()
        .into_iter()
        .filter(|t| {
            t.source == "swecontext"
                && matches!(t.category, corpus::Category::Code | corpus::Category::Json)
        })
        .map(|t| t.text);
    estimator_speed(
        "corpus agent tool output and arguments",
        &joined(&mut agent.into_iter()),
    );
    let cjk = corpus::texts()
        .into_iter()
        .filter(|t| t.category == corpus::Category::Cjk)
        .map(|t| t.text);
    estimator_speed("CJK texts", &joined(&mut cjk.into_iter()));
}

fn estimator_speed(name: &str, text: &str) {
    if text.is_empty() {
        return;
    }
    let ms = (0..50)
        .map(|_| {
            let s = Instant::now();
            std::hint::black_box(tokens::estimate(
                std::hint::black_box(text),
                tokens::Profile::O200k,
            ));
            s.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min);
    println!(
        "  {name:<40} {:>6.0} MB/s over {:.2} MB",
        text.len() as f64 / 1e6 / (ms / 1e3),
        text.len() as f64 / 1e6
    );
}
