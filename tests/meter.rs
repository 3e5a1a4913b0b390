//! The context meter and what a request spends besides its messages: tool
//! definitions, a system prompt held apart, the room reserved for the answer,
//! and the window of the model it names.

use chat_compaction::tokens::Profile;
use chat_compaction::{compact, estimate_tokens, measure, options, ParsedOptions, WindowSource};
use serde_json::{json, Value};

fn config(o: Value) -> ParsedOptions {
    options::from_json(&o).expect("valid options")
}

fn chat(turns: usize, words: usize) -> Vec<Value> {
    let mut m = vec![json!({"role": "system", "content": "You are terse."})];
    for i in 0..turns {
        m.push(
            json!({"role": "user", "content": format!("question {i}: {}", "why ".repeat(words))}),
        );
        m.push(json!({"role": "assistant", "content": format!("answer {i}: {}", "because ".repeat(words))}));
    }
    m.push(json!({"role": "user", "content": "and now?"}));
    m
}

/// A tool schema of about 4,000 characters.
fn big_tools() -> Value {
    let props: serde_json::Map<String, Value> = (0..60)
        .map(|i| {
            (
                format!("parameter_{i}"),
                json!({"type": "string", "description": format!("what parameter {i} of the search means")}),
            )
        })
        .collect();
    json!([{"type": "function", "function": {"name": "search", "description": "Searches the code base.", "parameters": {"type": "object", "properties": props}}}])
}

#[test]
fn per_message_tokens_add_up_to_the_total_and_the_fraction_is_of_the_window() {
    let history = Value::Array(chat(10, 20));
    let m = measure(&history, &config(json!({"contextWindow": 10_000})), "").unwrap();
    assert_eq!(m.per_message.len(), 22);
    assert_eq!(m.tokens, m.per_message.iter().sum::<u64>());
    assert_eq!(
        m.tokens,
        estimate_tokens(&history, &config(json!({}))).unwrap()
    );
    assert!((m.fraction - m.tokens as f64 / 10_000.0).abs() < 1e-12);
    assert_eq!(
        (m.threshold, m.window_source),
        (9_500, WindowSource::Option)
    );
    // The heaviest message is one of the long ones, not the system prompt.
    let heaviest = (0..22).max_by_key(|&i| m.per_message[i]).unwrap();
    assert!(heaviest > 0);
    let with_pending = measure(&history, &config(json!({})), "one more question").unwrap();
    assert!(with_pending.pending_tokens > 0);
    assert_eq!(with_pending.tokens, m.tokens + with_pending.pending_tokens);
}

#[test]
fn tool_definitions_and_the_system_prompt_count() {
    let messages = chat(3, 5);
    let bare = json!({"model": "custom", "messages": messages});
    let with_tools = json!({"model": "custom", "messages": messages, "tools": big_tools()});
    let c = config(json!({}));
    let (a, b) = (
        measure(&bare, &c, "").unwrap(),
        measure(&with_tools, &c, "").unwrap(),
    );
    assert_eq!(a.tools_tokens, 0);
    assert!(
        b.tools_tokens > 500,
        "a 4,000-character schema costs hundreds of tokens, got {}",
        b.tools_tokens
    );
    assert_eq!(b.tokens, a.tokens + b.tools_tokens);
    // Anthropic's system prompt sits outside the messages.
    let anthropic = json!({"model": "claude-x", "system": "You are a careful reviewer. ".repeat(40), "messages": [{"role": "user", "content": "hi"}]});
    let m = measure(&anthropic, &c, "").unwrap();
    assert!(m.system_tokens > 100);
    assert_eq!(m.tokens, m.system_tokens + m.per_message[0]);
}

#[test]
fn the_answer_s_room_is_reserved_from_the_window() {
    let messages = chat(3, 5);
    let c = config(json!({"contextWindow": 10_000}));
    for key in [
        "max_tokens",
        "max_completion_tokens",
        "max_output_tokens",
        "maxOutputTokens",
    ] {
        let request = json!({"messages": messages, key: 4_000});
        let m = measure(&request, &c, "").unwrap();
        assert_eq!(m.reserved_output_tokens, 4_000, "{key}");
        assert_eq!(m.threshold, 5_700, "{key}: (10,000 − 4,000) × 0.95");
    }
    // Of several limits, the largest.
    let both = json!({"messages": messages, "max_tokens": 1_000, "max_completion_tokens": 3_000});
    assert_eq!(
        measure(&both, &c, "").unwrap().reserved_output_tokens,
        3_000
    );
    let gemini = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "generationConfig": {"maxOutputTokens": 2_000}});
    assert_eq!(measure(&gemini, &c, "").unwrap().threshold, 7_600);
    // The option reserves for bare arrays; the larger of the two wins.
    let option = config(json!({"contextWindow": 10_000, "reserveOutputTokens": 5_000}));
    let array = Value::Array(messages.clone());
    assert_eq!(measure(&array, &option, "").unwrap().threshold, 4_750);
    let smaller = json!({"messages": messages, "max_tokens": 1_000});
    assert_eq!(
        measure(&smaller, &option, "")
            .unwrap()
            .reserved_output_tokens,
        5_000
    );
}

#[test]
fn a_well_known_model_picks_the_window_unless_the_caller_gives_one() {
    let messages = chat(2, 3);
    let gpt4o = json!({"model": "gpt-4o-2024-08-06", "messages": messages});
    let m = measure(&gpt4o, &config(json!({})), "").unwrap();
    assert_eq!(
        (m.context_window, m.window_source),
        (128_000, WindowSource::Model)
    );
    assert_eq!(m.options.context_window, 128_000);
    let given = measure(&gpt4o, &config(json!({"contextWindow": 50_000})), "").unwrap();
    assert_eq!(
        (given.context_window, given.window_source),
        (50_000, WindowSource::Option)
    );
    // Any case, after a provider prefix; the longest prefix wins.
    for (model, window) in [
        ("meta-llama/Llama-3.3-70B-Instruct", 128_000),
        ("deepseek-ai/DeepSeek-V3", 128_000),
        ("GPT-4o", 128_000),
        ("claude-2.1", 200_000),
        ("claude-2.0", 100_000),
        ("gpt-5-chat-latest", 128_000),
        ("gpt-5-mini", 400_000),
    ] {
        let request = json!({"model": model, "messages": messages});
        let m = measure(&request, &config(json!({})), "").unwrap();
        assert_eq!(
            (m.context_window, m.window_source),
            (window, WindowSource::Model),
            "{model}"
        );
    }
    // The AI SDK's model object names it by `modelId`.
    let sdk = json!({"model": {"modelId": "gpt-4o-mini", "provider": "openai.chat"}, "messages": messages});
    assert_eq!(
        measure(&sdk, &config(json!({})), "")
            .unwrap()
            .context_window,
        128_000
    );
    let unknown = json!({"model": "my-finetune", "messages": messages});
    let d = measure(&unknown, &config(json!({})), "").unwrap();
    assert_eq!(
        (d.context_window, d.window_source),
        (200_000, WindowSource::Default)
    );
}

#[test]
fn compaction_makes_room_for_the_tools_and_reports_the_effective_options() {
    let messages = chat(40, 120);
    let request =
        json!({"model": "gpt-4", "messages": messages, "tools": big_tools(), "max_tokens": 1_000});
    let r = compact(&request, &config(json!({"mode": "recency_preserving"}))).unwrap();
    let o = &r.notice.options;
    assert_eq!((o.context_window, o.reserve_output_tokens), (8_192, 1_000));
    let tools = measure(&request, &config(json!({})), "")
        .unwrap()
        .tools_tokens;
    let after = measure(r.request.as_ref().unwrap(), &config(json!({})), "").unwrap();
    assert!(r.notice.fits, "{:?}", r.warnings);
    let before = measure(&request, &config(json!({})), "").unwrap();
    assert!(
        before.should_compact && before.tokens > after.threshold,
        "{before:?}"
    );
    assert_eq!(after.tools_tokens, tools);
    assert!(
        after.tokens <= after.threshold && !after.should_compact,
        "the compacted request, tools included, is under the trigger: {} vs {}",
        after.tokens,
        after.threshold
    );
    assert_eq!(r.notice.tokens_after, after.tokens);
}

#[test]
fn an_answer_room_that_fills_the_model_s_window_is_warned_about() {
    let request = json!({"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 10_000});
    let m = measure(&request, &config(json!({})), "").unwrap();
    assert_eq!(
        (m.context_window, m.reserved_output_tokens),
        (8_192, 10_000)
    );
    assert!(
        m.warnings
            .iter()
            .any(|w| w.code == "NO_ROOM_FOR_INPUT" && w.message.contains("10000 tokens")),
        "{:?}",
        m.warnings
    );
}

/// Without a `tokenizer` given, a request's well-known model picks the profile
/// (`tests/fixtures/estimates/models.json`, which the JS suite reads too); a
/// given tokenizer wins, and a history without a model keeps `o200k`.
#[test]
fn a_request_s_model_picks_the_tokenizer_unless_one_is_given() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/estimates/models.json"
    );
    let cases: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let messages = json!([
        {"role": "user", "content": "How many tokens is this question, really?"},
        {"role": "assistant", "content": "About ten."}
    ]);
    let none = config(json!({}));
    for case in &cases {
        let request = json!({"model": case["model"], "messages": messages});
        let m = measure(&request, &none, "").unwrap();
        let expected = case["tokenizer"].as_str().unwrap();
        assert_eq!(
            m.options.tokenizer,
            Profile::from_name(expected).unwrap(),
            "{}",
            case["model"]
        );
        // the estimate is that profile's, in every entry point
        let given = config(json!({"tokenizer": expected}));
        assert_eq!(m.tokens, measure(&request, &given, "").unwrap().tokens);
        assert_eq!(
            estimate_tokens(&request, &none).unwrap(),
            estimate_tokens(&request, &given).unwrap()
        );
        let c = compact(&request, &config(json!({"mode": "deterministic"}))).unwrap();
        assert_eq!(c.notice.options.tokenizer, m.options.tokenizer);
        // a given tokenizer is kept whatever the model
        let o200k = config(json!({"tokenizer": "o200k"}));
        assert_eq!(
            measure(&request, &o200k, "").unwrap().options.tokenizer,
            Profile::O200k
        );
    }
    let claude = json!({"model": "claude-sonnet-4-5", "messages": messages});
    let (as_claude, as_o200k) = (
        measure(&claude, &none, "").unwrap().tokens,
        measure(&claude, &config(json!({"tokenizer": "o200k"})), "")
            .unwrap()
            .tokens,
    );
    assert!(as_claude > as_o200k, "{as_claude} vs {as_o200k}");
    assert_eq!(
        measure(&messages, &none, "").unwrap().options.tokenizer,
        Profile::O200k
    );
    // a profile set on parsed options by hand counts as given
    let mut by_hand = config(json!({}));
    by_hand.options.tokenizer = Profile::Claude;
    let gpt4 = json!({"model": "gpt-4", "messages": messages});
    assert_eq!(
        measure(&gpt4, &by_hand, "").unwrap().options.tokenizer,
        Profile::Claude
    );
}
