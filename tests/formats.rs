//! The formats JS chat apps hold (OpenAI Responses items, AI SDK model and UI
//! messages, Gemini contents) on real conversations: the corpus sessions
//! converted by `common::convert`, compacted by both offline modes at several
//! windows. Each input is detected as its format and validates; each output
//! validates too, keeps every signed or encrypted part byte-identical, never
//! parts a reasoning item from the item it produced, keeps the newest message,
//! is byte-identical across runs and leaves the input unchanged.

mod common;

use std::collections::HashSet;

use chat_compaction::{compact, estimate_tokens, options, validate, ErrorKind, ValidateOptions};
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
            for (mode, _, config, ctx) in common::offline_runs(&WINDOWS, format, &name) {
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
                    result.to_json(),
                    again.to_json(),
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
                            let key =
                                |v: Option<&Value>| v.map(|v| (v["type"].clone(), v["id"].clone()));
                            assert_eq!(
                                key(result.messages.get(k + 1)),
                                key(msgs.get(at + 1)),
                                "{ctx}: reasoning item parted from the item after it"
                            );
                        }
                    }
                }
                let warned = |c: &str| result.warnings.iter().any(|w| w.code == c);
                if !warned("TEXTS_SHORTENED") && !warned("TAIL_PRUNED") && mode != "deterministic" {
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
    eprintln!(
        "{runs} compactions of converted conversations checked, {refused} refused as too small"
    );
    assert!(runs > 500, "too few compactions ran: {runs}");
}

fn codes(input: Value, options: Value) -> Vec<(usize, &'static str)> {
    let opts = ValidateOptions::from_json(&options).unwrap();
    validate(&input, &opts)
        .unwrap()
        .violations
        .iter()
        .map(|v| (v.index, v.code))
        .collect()
}

#[test]
fn validate_names_each_broken_rule_where_it_breaks() {
    let user = json!({"role": "user", "content": "go"});
    let call = json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]});
    let result = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]});
    // Anthropic: the result must be in the very next message, first in it
    assert_eq!(
        codes(json!([user, call, user, result]), json!({})),
        [(1, "MISSING_RESULT"), (3, "ORPHAN_RESULT")]
    );
    let late = json!({"role": "user", "content": [{"type": "text", "text": "x"}, {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]});
    assert_eq!(
        codes(json!([user, call, late]), json!({})),
        [(2, "RESULT_AFTER_TEXT")]
    );
    assert_eq!(
        codes(json!([call, result]), json!({})),
        [(0, "FIRST_NOT_USER")]
    );
    assert_eq!(
        codes(
            json!([user, call, result, user]),
            json!({"strictAlternation": true})
        ),
        [(3, "ROLES_NOT_ALTERNATING")]
    );
    // a stored history may end while tools run; a request about to be sent may not
    assert!(codes(json!([user, call]), json!({})).is_empty());
    assert_eq!(
        codes(json!({"messages": [user, call]}), json!({})),
        [(1, "MISSING_RESULT")]
    );
    // OpenAI: a tool message answers the assistant right before it, once
    let oa_call = json!({"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]});
    let oa_result = json!({"role": "tool", "tool_call_id": "c1", "content": "ok"});
    assert_eq!(
        codes(
            json!([user, oa_call, oa_result, oa_result]),
            json!({"format": "openai"})
        ),
        [(3, "DUPLICATE_RESULT")]
    );
    assert_eq!(
        codes(json!([user, oa_result]), json!({"format": "openai"})),
        [(1, "ORPHAN_RESULT")]
    );
    // Responses: a reasoning item needs the item it produced
    let items = json!([
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
        {"type": "reasoning", "summary": [], "encrypted_content": "x"},
    ]);
    assert_eq!(codes(items, json!({})), [(1, "REASONING_WITHOUT_FOLLOWER")]);
    // UI: only the newest message may hold a call still running
    let ui = |state: &str| json!({"id": "a", "role": "assistant", "parts": [{"type": "tool-ls", "toolCallId": "u1", "state": state, "input": {}}]});
    let ui_user = json!({"id": "u", "role": "user", "parts": [{"type": "text", "text": "go"}]});
    assert_eq!(
        codes(json!([ui_user, ui("input-available"), ui_user]), json!({})),
        [(1, "INCOMPLETE_TOOL_PART")]
    );
    assert!(codes(json!([ui_user, ui("input-available")]), json!({})).is_empty());
    // Gemini: a call turn follows a user turn; a request ends on one
    let g_user = json!({"role": "user", "parts": [{"text": "go"}]});
    let g_text = json!({"role": "model", "parts": [{"text": "sure"}]});
    let g_call = json!({"role": "model", "parts": [{"functionCall": {"name": "ls", "args": {}}}]});
    let g_resp = json!({"role": "user", "parts": [{"functionResponse": {"name": "ls", "response": {"result": "ok"}}}]});
    assert_eq!(
        codes(json!([g_user, g_text, g_call, g_resp]), json!({})),
        [(2, "CALL_TURN_POSITION")]
    );
    assert_eq!(
        codes(json!({"contents": [g_user, g_text]}), json!({})),
        [(1, "ENDS_ON_MODEL")]
    );
    // AI SDK: Bedrock wants alternation and no system prompt in the middle
    let sys = json!({"role": "system", "content": "be brief"});
    let a = json!({"role": "assistant", "content": "ok"});
    assert_eq!(
        codes(
            json!([sys, user, a, sys, user, user]),
            json!({"format": "ai-sdk", "provider": "bedrock"})
        ),
        [(3, "SYSTEM_IN_MIDDLE"), (5, "ROLES_NOT_ALTERNATING")]
    );
    // behind a provider compaction nothing is checked
    let boundary =
        json!({"role": "assistant", "content": [{"type": "compaction", "content": "summary"}]});
    assert!(codes(json!([user, call, user, boundary, user]), json!({})).is_empty());
}

#[test]
fn bad_input_in_the_newer_formats_is_a_located_error_and_the_library_goes_on() {
    let cases = [
        (
            "gemini",
            json!([{"role": "model", "parts": "hi"}]),
            "messages[0].parts",
        ),
        (
            "gemini",
            json!([{"role": "bot", "parts": []}]),
            "messages[0].role",
        ),
        (
            "gemini",
            json!([{"role": "user", "parts": [{"functionCall": {"name": "ls"}}]}]),
            "messages[0].parts[0].functionCall",
        ),
        (
            "ai-sdk-ui",
            json!([{"id": "a", "role": "assistant", "parts": [{"type": "tool-ls", "toolCallId": "x"}, {"type": "tool-ls", "toolCallId": "x"}]}]),
            "messages[0].parts[1].toolCallId",
        ),
        (
            "ai-sdk-ui",
            json!([{"id": "a", "role": "user", "parts": [7]}]),
            "messages[0].parts[0]",
        ),
        (
            "ai-sdk",
            json!([{"role": "user", "content": [{"type": "tool-result", "toolCallId": "x"}]}]),
            "messages[0].content[0].type",
        ),
        (
            "openai-responses",
            json!([{"type": "function_call_output", "output": "x"}]),
            "messages[0].call_id",
        ),
        (
            "openai-responses",
            json!([{"type": "message", "role": "critic", "content": "x"}]),
            "messages[0].role",
        ),
        (
            "openai-responses",
            json!([{"type": "function_call", "call_id": "a", "name": "ls", "arguments": "{}"}, {"type": "function_call", "call_id": "a", "name": "ls", "arguments": "{}"}]),
            "messages[1].call_id",
        ),
    ];
    let config = options::from_json(&json!({"mode": "deterministic"})).unwrap();
    for (format, input, at) in cases {
        let pristine = input.clone();
        let e = compact(&input, &config).expect_err(at);
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{format} {at}: {e}");
        assert!(e.message().contains(at), "{format}: {e} does not name {at}");
        let v = validate(
            &input,
            &ValidateOptions::from_json(&json!({"format": format})).unwrap(),
        );
        assert_eq!(
            v.map_err(|e| e.kind()).err(),
            Some(ErrorKind::InvalidInput),
            "{format} {at}"
        );
        assert_eq!(input, pristine);
    }
    for bad in [
        json!({"provider": "mistral"}),
        json!({"format": "xml"}),
        json!({"strictAlternation": 1}),
        json!({"colour": 1}),
        json!(3),
    ] {
        let e = ValidateOptions::from_json(&bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidConfig, "{bad}");
    }
    // the library still works after every error
    let fine = json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes"}]);
    assert!(compact(&fine, &config).is_ok());
}

#[test]
fn a_forced_format_that_does_not_fit_the_data_names_the_first_message_that_does_not() {
    let anthropic = json!([
        {"role": "user", "content": "read src/a.rs"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "fn main() {}"}]},
        {"role": "assistant", "content": "done"},
    ]);
    let openai = json!([
        {"role": "user", "content": "read src/a.rs"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "fn main() {}"},
    ]);
    for (history, forced, index, what) in [
        (&anthropic, "openai", 1, "tool_use"),
        (&anthropic, "moltis", 1, "tool_use"),
        (&anthropic, "ai-sdk", 1, "tool_use"),
        (&openai, "anthropic", 1, "tool_calls"),
        (&openai, "gemini", 1, "tool_calls"),
        (&openai, "openai-responses", 1, "tool_calls"),
    ] {
        let config =
            options::from_json(&json!({"format": forced, "mode": "recency_preserving"})).unwrap();
        let before = history.clone();
        let e = compact(history, &config).expect_err(forced);
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{forced}: {e}");
        let message = e.to_string();
        assert!(
            message.contains(&format!("messages[{index}]"))
                && message.contains(what)
                && message.contains(forced),
            "{forced}: {message}"
        );
        assert_eq!(history, &before, "the input is untouched");
    }
    // Plain text fits any format, and OpenAI and Moltis messages fit each other.
    let plain =
        json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]);
    for forced in ["openai", "anthropic", "moltis", "ai-sdk"] {
        let config = options::from_json(&json!({"format": forced})).unwrap();
        assert!(estimate_tokens(&plain, &config).is_ok(), "{forced}");
    }
    let config = options::from_json(&json!({"format": "moltis"})).unwrap();
    assert!(estimate_tokens(&openai, &config).is_ok());
}

#[test]
fn openai_file_parts_are_openai_not_ai_sdk() {
    let request = json!({"model": "gpt-4o", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "summarize the attached"},
        {"type": "file", "file": {"filename": "a.pdf", "file_data": "data:application/pdf;base64,JVBERi0xLjQK"}}
    ]}]});
    let forced = options::from_json(&json!({"format": "openai"})).unwrap();
    assert!(estimate_tokens(&request, &forced).is_ok());
    let detected = validate(&request, &ValidateOptions::default()).unwrap();
    assert_eq!(detected.format, chat_compaction::Format::Openai);
}

/// A Gemini text part with a `thoughtSignature` goes back exactly as it is, so
/// fitting never plans to cut it: no `TEXTS_SHORTENED` for a cut that could not
/// happen, and the unsigned texts give way instead.
#[test]
fn signed_gemini_texts_are_never_planned_as_cuts() {
    let long = |tag: &str| format!("{tag} {}", "the plan goes on and on ".repeat(300));
    let contents = json!([
        {"role": "user", "parts": [{"text": long("first question")}]},
        {"role": "model", "parts": [{"text": long("signed answer"), "thoughtSignature": "c2lnbmF0dXJl"}]},
        {"role": "user", "parts": [{"text": long("second question")}]},
        {"role": "model", "parts": [{"text": long("plain answer")}]},
        {"role": "user", "parts": [{"text": "so?"}]}
    ]);
    let mut cut_seen = false;
    for window in [2_000, 3_000, 4_000, 5_000, 6_000, 8_000] {
        let config = options::from_json(
            &json!({"mode": "recency_preserving", "contextWindow": window, "protectTailMin": 4}),
        )
        .unwrap();
        let Ok(r) = compact(&contents, &config) else {
            continue;
        };
        let signed = &contents[1]["parts"][0];
        for m in &r.messages {
            for p in m["parts"].as_array().into_iter().flatten() {
                if p.get("thoughtSignature").is_some() {
                    assert_eq!(p, signed, "{window}: the signed part as it was");
                }
            }
        }
        if r.warnings.iter().any(|w| w.code == "TEXTS_SHORTENED") {
            cut_seen = true;
            let text = serde_json::to_string(&r.messages).unwrap();
            assert!(text.contains('…'), "{window}: a cut that happened");
        }
        let tokens = estimate_tokens(&Value::Array(r.messages.clone()), &config).unwrap();
        assert_eq!(
            r.notice.fits,
            tokens <= config.options.trigger_tokens(),
            "{window}: fits says what the result is"
        );
        // Cutting the unsigned texts gets there (a plan that counted on cutting
        // the signed one did not).
        assert!(r.notice.fits, "{window}: {:?}", r.warnings);
    }
    assert!(cut_seen, "some window cut the unsigned texts");
}

/// Pins must keep every format's turn rules: pinned model turns with a call
/// after pinned model turns without one used to lose the user turn between
/// them (Gemini refuses a call turn after a model turn: CALL_TURN_POSITION).
#[test]
fn pinned_assistant_turns_keep_the_user_turns_between_them_in_every_format() {
    let big = |s: &str| format!("{s} {}", "lorem ipsum dolor ".repeat(150));
    let mut h = Vec::new();
    for k in 0..8 {
        h.push(json!({"role": "user", "content": big(&format!("q{k}"))}));
        h.push(json!({"role": "assistant", "content": big(&format!("thinking {k}"))}));
        h.push(json!({"role": "user", "content": format!("go on with step {k}")}));
        h.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{k}"), "type": "function", "function": {"name": format!("f{k}"), "arguments": "{\"p\":\"x\"}"}}]}));
        h.push(json!({"role": "tool", "tool_call_id": format!("c{k}"), "content": big("out")}));
        h.push(json!({"role": "assistant", "content": big(&format!("done {k}"))}));
    }
    h.push(json!({"role": "user", "content": "last"}));
    let openai = Value::Array(h);
    let formats = [
        "openai",
        "openai-responses",
        "ai-sdk",
        "ai-sdk-ui",
        "gemini",
    ];
    for format in formats {
        let input = match format {
            "openai" => openai.clone(),
            other => convert::convert(&openai, other, 0),
        };
        for mode in ["recency_preserving", "structured"] {
            for (window, tail) in [(2_000u64, 0u64), (4_000, 1), (8_000, 2), (8_000, 5)] {
                let opts = json!({"mode": mode, "format": format, "pinRoles": ["assistant"], "contextWindow": window, "protectTailMin": tail});
                let r = match mode {
                    "structured" => common::summarized(&input, &options::from_json(&opts).unwrap()),
                    _ => compact(&input, &options::from_json(&opts).unwrap()),
                }
                .unwrap();
                let ctx = format!("{format} {mode} {window} {tail}");
                assert!(
                    r.messages.len() < messages_of(&input).len(),
                    "{ctx}: nothing elided"
                );
                let out = Value::Array(r.messages);
                assert_eq!(
                    violations(&out, format),
                    Vec::<String>::new(),
                    "{ctx}: {out}"
                );
            }
        }
    }
}

/// Results of one Anthropic turn split over two user messages in a row answer
/// their calls (the API merges consecutive user turns): validate says nothing.
#[test]
fn anthropic_results_split_over_two_user_messages_validate() {
    let h = json!([
        {"role": "user", "content": "read both"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "read", "input": {"p": "a"}},
            {"type": "tool_use", "id": "b", "name": "read", "input": {"p": "b"}}
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "A"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "B"}]},
        {"role": "assistant", "content": "both read"}
    ]);
    assert_eq!(violations(&h, "anthropic"), Vec::<String>::new());
    // an assistant between them still breaks the pairing
    let mut broken = h.clone();
    broken
        .as_array_mut()
        .unwrap()
        .insert(3, json!({"role": "assistant", "content": "wait"}));
    let v = violations(&broken, "anthropic");
    assert!(
        v.iter().any(|v| v.starts_with("ORPHAN_RESULT messages[4]")),
        "{v:?}"
    );
}

/// A message of another format inside a history gets one answer whether the
/// format is forced or detected: INVALID_INPUT naming it (an Anthropic
/// `tool_use` block in an AI SDK history was accepted when detected).
#[test]
fn a_message_of_another_format_is_refused_whether_the_format_is_forced_or_detected() {
    let h = json!([
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "a", "toolName": "f", "input": {}}]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "a", "toolName": "f", "output": {"type": "text", "value": "x"}}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "g", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "ok"}]}
    ]);
    for opts in [json!({}), json!({"format": "ai-sdk"})] {
        let e = compact(&h, &options::from_json(&opts).unwrap()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{opts}: {e}");
        assert!(
            e.message().starts_with("messages[3]: holds tool_use"),
            "{e}"
        );
        assert!(e.message().contains("\"ai-sdk\""), "{e}");
        let e = validate(&h, &ValidateOptions::from_json(&opts).unwrap()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{opts}: {e}");
    }
}
