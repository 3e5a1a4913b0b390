//! The LLM modes (`structured`, `llm_replace`) driven by scripted summarizers:
//! the seed's own tests re-expressed, the summarizer's input, the quality check,
//! fallbacks, usage, iterative re-compaction, and the corpus in every format.

use std::collections::VecDeque;
use std::future::Future;
use std::task::{Context, Poll, Waker};

use chat_compaction::summarizer::{Failure, Next};
use chat_compaction::tokens::{Profile, TokenCounter};
use chat_compaction::{
    compact, compact_step, compact_with_summarizer, estimate_tokens, options, Compaction,
    ErrorKind, ParsedOptions, Reply, Summarizer, SummaryRequest, Usage,
};
use serde_json::{json, Value};

#[path = "common/chats.rs"]
mod chats;
#[path = "common/corpus.rs"]
mod corpus;
#[path = "common/rules.rs"]
mod rules;

const HEADINGS: [&str; 10] = [
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Relevant Files",
    "## Next Steps",
    "## Critical Context",
];

/// A summary in the template whose Goal section says `goal`.
fn template(goal: &str) -> String {
    HEADINGS
        .iter()
        .map(|h| match *h {
            "## Goal" => format!("{h}\n{goal}"),
            "## Progress" => h.to_string(),
            _ => format!("{h}\n(none)"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Polls a future whose summarizer answers at once (scripted stubs never wait).
fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

type Answer = Result<(String, Option<Usage>), String>;

/// A summarizer that answers from a script and records every request.
#[derive(Default)]
struct Script {
    answers: VecDeque<Answer>,
    seen: Vec<SummaryRequest<Value>>,
}

impl Script {
    fn new(answers: impl IntoIterator<Item = Answer>) -> Self {
        Script {
            answers: answers.into_iter().collect(),
            seen: Vec::new(),
        }
    }
}

impl Summarizer for Script {
    async fn summarize(&mut self, request: &SummaryRequest<Value>) -> Answer {
        self.seen.push(request.clone());
        self.answers
            .pop_front()
            .unwrap_or_else(|| Err("the script ran out of answers".into()))
    }
}

fn config(options: Value) -> ParsedOptions {
    options::from_json(&options).expect("valid options")
}

fn run(input: &Value, options: Value, script: &mut Script) -> chat_compaction::Result<Compaction> {
    block_on(compact_with_summarizer(input, &config(options), script))
}

fn ok(text: &str) -> Answer {
    Ok((text.to_string(), None))
}

/// Moltis's count (`bytes / 4 + 10` a message) for the seed's tiny windows.
struct MoltisCount;

impl TokenCounter for MoltisCount {
    fn count(&self, text: &str) -> u64 {
        text.len() as u64 / 4 + 6 // + the profile's 4 tokens of framing
    }
    fn profile(&self) -> Profile {
        Profile::O200k
    }
}

/// Drives `compact_step` with `counter`, answering with `answers` in order;
/// returns the result (as JSON) and the requests.
fn drive(
    input: &Value,
    options: Value,
    counter: &dyn TokenCounter,
    answers: Vec<Reply>,
) -> (chat_compaction::Result<Value>, Vec<Value>) {
    let config = config(options);
    let mut replies = Vec::new();
    let mut asked = Vec::new();
    let mut answers = answers.into_iter();
    loop {
        match compact_step(input, &config, counter, &replies) {
            Err(e) => return (Err(e), asked),
            Ok(Next::Done(done)) => {
                let doc = serde_json::from_str(&done.to_json()).expect("JSON");
                return (Ok(doc), asked);
            }
            Ok(Next::Summarize(request)) => {
                asked.push(serde_json::from_str(&request.to_json()).expect("JSON"));
                replies.push(answers.next().expect("a scripted reply for every request"));
            }
        }
    }
}

fn summary(text: &str, usage: Option<Usage>) -> Reply {
    Reply::Summary {
        text: text.into(),
        usage,
    }
}

/// Ten alternating plain messages, as in Moltis's structured tests.
fn ten() -> Value {
    Value::Array(
        (0..10)
            .map(|i| {
                let role = if i % 2 == 0 { "user" } else { "assistant" };
                json!({"role": role, "content": format!("message {i}")})
            })
            .collect(),
    )
}

fn seed_options(mode: &str) -> Value {
    json!({"mode": mode, "protectHead": 2, "protectTailMin": 2, "contextWindow": 150, "toolPruneCharThreshold": 20})
}

fn content(m: &Value) -> &str {
    m["content"].as_str().unwrap_or("")
}

#[test]
fn seed_structured_splices_the_summary_between_head_and_tail() {
    let input = ten();
    let (out, asked) = drive(
        &input,
        seed_options("structured"),
        &MoltisCount,
        vec![summary(&template("summarize the stub"), None)],
    );
    let out = out.expect("compacts");
    let m = out["messages"].as_array().unwrap();
    assert_eq!(m.len(), 5);
    assert_eq!(m[..2], input.as_array().unwrap()[..2], "head verbatim");
    assert_eq!(m[3..], input.as_array().unwrap()[8..], "tail verbatim");
    assert!(content(&m[2]).starts_with("[Conversation Summary]\n\n"));
    assert!(content(&m[2]).contains("## Goal\nsummarize the stub"));
    assert_eq!(out["notice"]["mode"], "structured");
    assert_eq!(asked.len(), 1);
    // The middle (messages 2–7) went to the summarizer as separate messages.
    let sent = asked[0]["messages"].as_array().unwrap();
    assert_eq!(sent[0]["role"], "system");
    assert_eq!(sent[1..7], input.as_array().unwrap()[2..8]);
    assert_eq!(sent.last().unwrap()["content"], asked[0]["instruction"]);
}

#[test]
fn seed_structured_falls_back_to_recency_on_an_error_or_an_empty_summary() {
    let input = ten();
    for (reply, code) in [
        (
            Reply::Failed {
                failure: Failure::Failed,
                reason: "the summarizer threw: provider down".into(),
            },
            "LLM_FAILED",
        ),
        (summary("  \n ", None), "EMPTY_SUMMARY"),
        (
            Reply::Failed {
                failure: Failure::TimedOut,
                reason: "the summarizer did not answer within 50 ms (timeoutMs)".into(),
            },
            "TIMEOUT",
        ),
    ] {
        let (out, _) = drive(
            &input,
            seed_options("structured"),
            &MoltisCount,
            vec![reply],
        );
        let out = out.expect("falls back, never TOO_SMALL_TO_COMPACT");
        let m = out["messages"].as_array().unwrap();
        assert_eq!(m.len(), 5, "{code}");
        assert!(content(&m[2]).starts_with("[Conversation Compacted]\n\n"));
        assert_eq!(out["notice"]["mode"], "recency_preserving");
        assert_eq!(out["notice"]["requestedMode"], "structured");
        assert_eq!(out["notice"]["fallback"]["from"], "structured");
        assert_eq!(out["notice"]["fallback"]["code"], code);
        assert!(out["notice"]["text"]
            .as_str()
            .unwrap()
            .contains("Structured summary unavailable ("));
    }
}

#[test]
fn seed_previous_summary_is_forwarded_and_replaced_wherever_it_is() {
    // In the head (after a deterministic or llm_replace run) and in the middle.
    for at in [0, 4] {
        let mut input = ten();
        input[at] = json!({"role": "user", "content": "[Conversation Summary]\n\nNEEDLE-7f3a from an earlier compaction"});
        let (out, asked) = drive(
            &input,
            seed_options("structured"),
            &MoltisCount,
            vec![summary(&template("updated"), None)],
        );
        let out = out.expect("compacts");
        assert!(asked[0]["previousSummary"]
            .as_str()
            .unwrap()
            .contains("NEEDLE-7f3a"));
        assert!(asked[0]["instruction"]
            .as_str()
            .unwrap()
            .contains("PREVIOUS SUMMARY:\nNEEDLE-7f3a"));
        let text = out["messages"].to_string();
        assert_eq!(text.matches("[Conversation Summary]").count(), 1, "at {at}");
        assert!(!text.contains("NEEDLE-7f3a"), "the old summary is replaced");
        // Markers are not summaries.
        let mut marked = ten();
        marked[4] = json!({"role": "user", "content": "[Conversation Compacted]\n\n3 earlier messages were elided"});
        let (_, asked) = drive(
            &marked,
            seed_options("structured"),
            &MoltisCount,
            vec![summary(&template("x"), None)],
        );
        assert!(asked[0].get("previousSummary").is_none());
    }
}

#[test]
fn seed_the_summary_input_caps_tool_outputs_at_max_tool_result_bytes_not_the_prune_threshold() {
    let output = format!("{}NEEDLE-after-240-bytes", "x".repeat(240));
    let mut input = ten();
    input[3] = json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]});
    input[4] = json!({"role": "tool", "tool_call_id": "c1", "content": output});
    for mode in ["structured", "llm_replace"] {
        let reply = summary(&template("x"), None);
        let (_, asked) = drive(&input, seed_options(mode), &MoltisCount, vec![reply]);
        assert!(
            asked[0]["messages"]
                .to_string()
                .contains("NEEDLE-after-240-bytes"),
            "{mode}"
        );
    }
    // With a cap of 100 bytes the output is cut in its middle, both ends kept.
    let mut opts = seed_options("structured");
    opts["maxToolResultBytes"] = json!(100);
    let (_, asked) = drive(
        &input,
        opts,
        &MoltisCount,
        vec![summary(&template("x"), None)],
    );
    let sent = asked[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    let text = content(sent);
    assert!(text.len() <= 100 && text.contains("bytes cut") && text.ends_with("bytes"));
}

#[test]
fn seed_llm_replace_turns_the_history_into_one_summary() {
    let input = json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "fix src/a.rs"},
        {"role": "assistant", "content": "done"}
    ]);
    let mut script = Script::new([ok("The user asked to fix src/a.rs; it is fixed.")]);
    let r = run(&input, json!({"mode": "llm_replace"}), &mut script).expect("compacts");
    assert_eq!(r.messages.len(), 1);
    assert_eq!(r.messages[0]["role"], "user");
    assert!(content(&r.messages[0]).starts_with("[Conversation Summary]\n\n"));
    assert!(content(&r.messages[0]).ends_with("The user asked to fix src/a.rs; it is fixed."));
    assert_eq!(r.notice.mode.key(), "llm_replace");
    assert_eq!(script.seen[0].mode.key(), "llm_replace");
    assert!(!script.seen[0].instruction.contains("## Goal"));
    // System messages survive llm_replace.
    let with_system = json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]);
    let r = run(
        &with_system,
        json!({"mode": "llm_replace"}),
        &mut Script::new([ok("s")]),
    )
    .expect("compacts");
    assert_eq!(r.messages.len(), 2);
    assert_eq!(r.messages[0], with_system[0]);
}

#[test]
fn seed_usage_reaches_the_notice_with_or_without_the_hint() {
    let usage = Some(Usage {
        input_tokens: 1234,
        output_tokens: 567,
    });
    for hint in [true, false] {
        let mut opts = seed_options("structured");
        opts["showSettingsHint"] = json!(hint);
        let (out, _) = drive(
            &ten(),
            opts,
            &MoltisCount,
            vec![summary(&template("x"), usage)],
        );
        let out = out.expect("compacts");
        let text = out["notice"]["text"].as_str().unwrap();
        assert!(text.contains("Mode: Structured"));
        assert!(text.contains("Used 1801 tokens (1234 in + 567 out)"));
        assert_eq!(text.contains("chat.compaction.mode"), hint);
        assert_eq!(out["notice"]["compactionTotalTokens"], 1801);
    }
}

#[test]
fn a_summary_that_fails_the_check_is_retried_once_with_the_reasons() {
    let input = ten();
    let bad = "## Goal\nonly a goal";
    let good = template("second try");
    let (out, asked) = drive(
        &input,
        seed_options("structured"),
        &MoltisCount,
        vec![
            summary(
                bad,
                Some(Usage {
                    input_tokens: 100,
                    output_tokens: 10,
                }),
            ),
            summary(
                &good,
                Some(Usage {
                    input_tokens: 120,
                    output_tokens: 50,
                }),
            ),
        ],
    );
    let out = out.expect("compacts");
    assert_eq!(asked.len(), 2);
    assert_eq!(asked[1]["attempt"], 2);
    let retry = asked[1]["instruction"].as_str().unwrap();
    assert!(retry.contains("heading \"## Constraints & Preferences\" is missing"));
    assert_eq!(out["notice"]["mode"], "structured");
    assert_eq!(out["summary"], good.as_str());
    assert_eq!(
        out["notice"]["compactionInputTokens"], 220,
        "retries add up"
    );
    assert_eq!(out["notice"]["compactionOutputTokens"], 60);

    // Failing twice falls back, saying why.
    let (out, asked) = drive(
        &input,
        seed_options("structured"),
        &MoltisCount,
        vec![summary(bad, None), summary(bad, None)],
    );
    let out = out.expect("falls back");
    assert_eq!(asked.len(), 2);
    assert_eq!(out["notice"]["fallback"]["code"], "QUALITY_CHECK");
    assert!(out["notice"]["fallback"]["reason"]
        .as_str()
        .unwrap()
        .contains("failed the quality check twice"));
    assert_eq!(out["notice"]["usageEstimated"], true);
}

#[test]
fn the_summary_is_kept_exactly_as_returned() {
    let text = format!(
        "{}\n\n{}",
        template("keep **this** order"),
        "Extra notes\n- b\n- a\n# z"
    );
    let (out, _) = drive(
        &ten(),
        seed_options("structured"),
        &MoltisCount,
        vec![summary(&format!("\n {text} \n"), None)],
    );
    let out = out.expect("compacts");
    let body = content(&out["messages"][2]);
    assert!(body.ends_with(&text), "never reordered or cut");
    assert_eq!(out["summary"], text.as_str());
}

#[test]
fn llm_replace_failures_are_errors_and_never_fall_back() {
    let input = ten();
    let (out, _) = drive(
        &input,
        json!({"mode": "llm_replace"}),
        &MoltisCount,
        vec![Reply::Failed {
            failure: Failure::Failed,
            reason: "the summarizer threw: boom".into(),
        }],
    );
    let e = out.expect_err("an error");
    assert_eq!(e.kind(), ErrorKind::LlmFailed);
    assert!(e.message().contains("boom") && e.message().contains("not changed"));
    let (out, _) = drive(
        &input,
        json!({"mode": "llm_replace"}),
        &MoltisCount,
        vec![summary(" ", None)],
    );
    assert_eq!(out.expect_err("an error").kind(), ErrorKind::EmptySummary);
    let (out, _) = drive(
        &input,
        json!({"mode": "llm_replace", "timeoutMs": 5}),
        &MoltisCount,
        vec![Reply::Failed {
            failure: Failure::TimedOut,
            reason: "the summarizer did not answer within 5 ms (timeoutMs)".into(),
        }],
    );
    assert_eq!(out.expect_err("an error").kind(), ErrorKind::LlmFailed);
}

#[test]
fn the_sync_entry_refuses_llm_modes_and_points_to_the_async_one() {
    for mode in ["structured", "llm_replace", "llm-replace"] {
        let e = compact(&ten(), &config(json!({"mode": mode}))).expect_err("refused");
        assert_eq!(e.kind(), ErrorKind::SummarizerRequired);
        assert!(e.message().contains("await compact(") && e.message().contains("summarize"));
    }
}

#[test]
fn structured_without_a_middle_prunes_in_place_or_refuses_before_any_call() {
    let input = json!([
        {"role": "user", "content": "read it"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "x".repeat(500)}
    ]);
    let mut script = Script::default();
    let r = run(
        &input,
        json!({"mode": "structured", "protectHead": 3, "protectTailMin": 0, "contextWindow": 150, "toolPruneCharThreshold": 20}),
        &mut script,
    )
    .expect("pruned in place");
    assert!(script.seen.is_empty(), "no LLM call");
    assert!(content(&r.messages[2]).starts_with("[Old tool output cleared"));
    // No summary was made: the notice says so instead of naming one.
    assert_eq!(r.notice.mode.key(), "recency_preserving");
    let fallback = r.notice.fallback.as_ref().expect("says why");
    assert_eq!(fallback.code, "NOTHING_TO_SUMMARIZE");
    assert!(r.notice.text.contains("Structured summary unavailable"));
    let e = run(&ten(), json!({"mode": "structured"}), &mut script).expect_err("too small");
    assert_eq!(e.kind(), ErrorKind::TooSmallToCompact);
    assert!(script.seen.is_empty());
}

/// An Anthropic history: the summarizer's input keeps `tool_use`/`tool_result`
/// blocks valid, `system` apart, and no thinking blocks.
#[test]
fn anthropic_summary_requests_are_valid_messages_requests() {
    let mut messages = vec![json!({"role": "user", "content": "start"})];
    for k in 0..12 {
        messages.push(json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "text", "text": format!("step {k}")},
            {"type": "tool_use", "id": format!("t{k}"), "name": "Bash", "input": {"command": format!("ls dir{k}")}}
        ]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("t{k}"), "content": format!("output {k} {}", "y".repeat(400))}
        ]}));
    }
    messages.push(json!({"role": "user", "content": "now finish"}));
    let input = json!({"system": "You are a coder.", "model": "claude", "messages": messages});
    let mut script = Script::new([ok(&template("finish"))]);
    let r = run(
        &input,
        json!({"mode": "structured", "protectHead": 1, "protectTailMin": 2, "contextWindow": 3000}),
        &mut script,
    )
    .expect("compacts");
    let req = &script.seen[0];
    assert!(req.messages.iter().all(|m| m["role"] != "system"));
    assert_eq!(
        req.messages[0]["role"], "user",
        "a user message opens the request"
    );
    rules::check("anthropic", &req.messages).expect("valid Anthropic request");
    assert!(!serde_json::to_string(&req.messages)
        .unwrap()
        .contains("thinking"));
    rules::check("anthropic", &r.messages).expect("valid output");
    assert_eq!(r.request.as_ref().unwrap()["system"], "You are a coder.");
}

/// Moltis sessions go to an OpenAI-compatible summarizer as plain OpenAI messages.
#[test]
fn moltis_summary_requests_are_plain_openai_messages() {
    let input = json!([
        {"role": "user", "content": "go", "created_at": 1},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "exec", "arguments": "{}"}}], "created_at": 2, "inputTokens": 10},
        {"role": "tool_result", "tool_call_id": "c1", "tool_name": "exec", "success": false, "error": "denied", "created_at": 3},
        {"role": "notice", "content": "ui only", "created_at": 4},
        {"role": "assistant", "content": "it failed", "created_at": 5},
        {"role": "user", "content": "retry", "created_at": 6},
        {"role": "assistant", "content": "ok", "created_at": 7}
    ]);
    let mut script = Script::new([ok(&template("retry"))]);
    run(
        &input,
        json!({"mode": "structured", "protectHead": 1, "protectTailMin": 1, "contextWindow": 30}),
        &mut script,
    )
    .expect("compacts");
    let sent = &script.seen[0].messages;
    let tool = sent
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message");
    assert_eq!(
        *tool,
        json!({"role": "tool", "tool_call_id": "c1", "content": "Error: denied"})
    );
    assert!(sent
        .iter()
        .all(|m| m.get("created_at").is_none() && m["role"] != "notice"));
    rules::check("openai", sent).expect("valid OpenAI request");
}

/// Tokens of a summary request by the library's own estimator.
fn request_tokens(format: &str, req: &SummaryRequest<Value>) -> u64 {
    let c = config(json!({"format": format}));
    let doc = if format == "anthropic" {
        json!({"system": req.system, "messages": req.messages})
    } else {
        Value::Array(req.messages.clone())
    };
    estimate_tokens(&doc, &c).expect("estimates")
}

#[test]
fn a_500k_token_history_gives_a_request_within_the_window() {
    // 1,200 tool rounds of ~1.7 KB each, plus a few huge outputs and one huge user text.
    let mut m = vec![
        json!({"role": "system", "content": "agent"}),
        json!({"role": "user", "content": "build it"}),
    ];
    for k in 0..1200 {
        let big = if k % 200 == 7 { 400_000 } else { 1_600 };
        m.push(json!({"role": "assistant", "content": format!("step {k}: reading src/mod{k}.rs"), "tool_calls": [{"id": format!("c{k}"), "type": "function", "function": {"name": "read", "arguments": format!("{{\"path\":\"src/mod{k}.rs\"}}")}}]}));
        m.push(json!({"role": "tool", "tool_call_id": format!("c{k}"), "content": format!("fn f{k}() {{ {} }}", "let x = compute(a, b) + 1; ".repeat(big / 28))}));
    }
    m.push(json!({"role": "user", "content": format!("now ship it {}", "please ".repeat(60_000))}));
    let input = Value::Array(m);
    let c = config(json!({"mode": "structured"}));
    let total = estimate_tokens(&input, &c).expect("estimates");
    assert!(total > 500_000, "{total} tokens");
    for (window, max) in [(128_000u64, 4096u64), (32_000, 2000)] {
        for mode in ["structured", "llm_replace"] {
            let mut script = Script::new([ok(&template("ship"))]);
            let opts = json!({"mode": mode, "contextWindow": window, "maxSummaryTokens": max});
            let r = run(&input, opts, &mut script).expect("compacts");
            let req = &script.seen[0];
            let sent = request_tokens("openai", req);
            assert!(sent + max <= window, "{mode} at {window}: {sent} + {max}");
            assert!(
                sent > window / 2,
                "{mode} at {window}: the room is used ({sent})"
            );
            let text = serde_json::to_string(&req.messages).unwrap();
            assert!(
                text.contains("messages left out here"),
                "sampled with gap markers"
            );
            assert!(r.warnings.iter().any(|w| w.code == "SUMMARY_INPUT_SHRUNK"));
            rules::check("openai", &req.messages).expect("valid request");
            // The request being answered stays, after the summary, and is not
            // summarized.
            let last = r.messages.last().unwrap()["content"].as_str().unwrap();
            assert!(
                last.starts_with("now ship it"),
                "{mode} {window}: the newest request is kept"
            );
            assert!(!text.contains("now ship it"), "{mode}: summarized too");
        }
    }
}

#[test]
fn data_uris_and_long_hex_or_base64_runs_are_replaced_by_a_note() {
    let b64: String = (0..600).map(|i| ["Qm", "9x", "Zk", "T3"][i % 4]).collect();
    let hex: String = (0..300).map(|i| ["a", "3", "f", "0"][i % 4]).collect();
    let output = format!(
        "screenshot: data:image/png;base64,{b64} | digest {hex} | token {b64} | sha 9f86d081884c7d65 | {}",
        "x".repeat(300)
    );
    let mut input = ten();
    input[3] = json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "shot", "arguments": "{}"}}]});
    input[4] = json!({"role": "tool", "tool_call_id": "c1", "content": output});
    let (_, asked) = drive(
        &input,
        seed_options("structured"),
        &MoltisCount,
        vec![summary(&template("x"), None)],
    );
    let sent = asked[0]["messages"].to_string();
    assert!(sent.contains("screenshot: [image/png data removed — 1200 bytes]"));
    assert!(sent.contains("digest [hex data removed — 300 chars]"));
    assert!(sent.contains("token [base64 data removed — 1200 chars]"));
    assert!(sent.contains("sha 9f86d081884c7d65"), "short hashes stay");
    assert!(
        sent.contains(&"x".repeat(300)),
        "a long plain run is not data"
    );
}

#[test]
fn iterative_compaction_replaces_the_previous_summary_in_every_mode_pair() {
    let Some(conv) = corpus::swecontext()
        .into_iter()
        .find(|c| c.name.ends_with("c1f62324.openai.json"))
    else {
        corpus::missing(true);
        return;
    };
    let history: Value = serde_json::from_str(&conv.json).unwrap();
    let all = history.as_array().unwrap();
    let first: Value = Value::Array(all[..120].to_vec());
    let later: Vec<Value> = all[120..].to_vec();
    let opts = |mode: &str| json!({"mode": mode, "contextWindow": 16000});
    let compact_with = |mode: &str, input: &Value, goal: &str| -> (Compaction, Script) {
        let mut script = Script::new([ok(&template(goal))]);
        let r = run(input, opts(mode), &mut script).expect("compacts");
        (r, script)
    };
    for (from, to) in [
        ("structured", "structured"),
        ("deterministic", "structured"),
        ("llm_replace", "structured"),
        ("structured", "deterministic"),
        ("structured", "recency_preserving"),
    ] {
        let (r1, _) = compact_with(from, &first, "FIRST-ROUND-GOAL");
        let mut grown = r1.messages.clone();
        grown.extend(later.iter().cloned());
        let (r2, s2) = compact_with(to, &Value::Array(grown), "SECOND-ROUND-GOAL");
        let text = serde_json::to_string(&r2.messages).unwrap();
        assert_eq!(
            text.matches("[Conversation Summary]").count(),
            1,
            "{from}→{to}: one summary"
        );
        rules::check("openai", &r2.messages).unwrap_or_else(|e| panic!("{from}→{to}: {e}"));
        match to {
            "structured" => {
                let prev = s2.seen[0].previous_summary.as_deref().unwrap_or("");
                let expected = if from == "deterministic" {
                    "Scope:"
                } else {
                    "FIRST-ROUND-GOAL"
                };
                assert!(
                    prev.contains(expected),
                    "{from}→{to}: previousSummary {prev:.200}"
                );
                assert!(text.contains("SECOND-ROUND-GOAL") && !text.contains("FIRST-ROUND-GOAL"));
            }
            "deterministic" => assert!(
                text.contains("Previously compacted context") && text.contains("FIRST-ROUND-GOAL"),
                "{from}→{to}: {text:.3000}"
            ),
            _ => assert!(
                text.contains("FIRST-ROUND-GOAL"),
                "recency keeps the summary verbatim"
            ),
        }
    }
}

/// A summarizer that snowballs: it repeats the previous summary and adds to it.
struct Snowball(Vec<SummaryRequest<Value>>);

impl Summarizer for Snowball {
    async fn summarize(&mut self, req: &SummaryRequest<Value>) -> Answer {
        self.0.push(req.clone());
        let prev = req.previous_summary.clone().unwrap_or_default();
        let done = format!(
            "{prev}\n- round {} work ({} messages seen)",
            self.0.len(),
            req.messages.len()
        );
        Ok((template(&done), None))
    }
}

#[test]
fn ten_rounds_of_structured_compaction_never_snowball() {
    let Some(conv) = corpus::swecontext()
        .into_iter()
        .find(|c| c.name.ends_with("c1f62324.openai.json"))
    else {
        corpus::missing(true);
        return;
    };
    let all: Vec<Value> = serde_json::from_str(&conv.json).unwrap();
    let max = 300u64;
    let opts = json!({"mode": "structured", "contextWindow": 12000, "maxSummaryTokens": max});
    let c = config(json!({}));
    let mut history: Vec<Value> = all[..40].to_vec();
    let mut cursor = 40;
    for round in 0..10 {
        let mut s = Snowball(Vec::new());
        let input = Value::Array(history.clone());
        let r = block_on(compact_with_summarizer(
            &input,
            &config(opts.clone()),
            &mut s,
        ))
        .expect("compacts");
        for req in &s.0 {
            if let Some(p) = &req.previous_summary {
                let t = estimate_tokens(&json!(p), &c).unwrap();
                assert!(
                    t <= 2 * max + 20,
                    "round {round}: previous summary bounded ({t})"
                );
            }
        }
        if let Some(s) = &r.summary {
            let t = estimate_tokens(&json!(s), &c).unwrap();
            assert!(t <= 2 * max, "round {round}: summary {t} tokens");
        }
        let text = serde_json::to_string(&r.messages).unwrap();
        assert!(
            text.matches("[Conversation Summary]").count() <= 1,
            "round {round}"
        );
        history = r.messages;
        let next = (cursor + 16).min(all.len());
        history.extend(all[cursor..next].iter().cloned());
        cursor = next;
    }
}

#[test]
fn corpus_sessions_compact_in_every_format_with_both_llm_modes() {
    let sessions = corpus::swecontext();
    if sessions.is_empty() {
        corpus::missing(true);
        return;
    }
    for conv in sessions {
        let input: Value = serde_json::from_str(&conv.json).unwrap();
        let before = input.clone();
        for window in [8_000u64, 32_000, 200_000] {
            for mode in ["structured", "llm_replace"] {
                let mut script = Script::new([ok(&template("fix the bug"))]);
                let opts = json!({"mode": mode, "contextWindow": window, "maxSummaryTokens": 1000});
                let r = match run(&input, opts, &mut script) {
                    Ok(r) => r,
                    Err(e) if e.kind() == ErrorKind::TooSmallToCompact => continue,
                    Err(e) => panic!("{} {mode} {window}: {e}", conv.name),
                };
                assert_eq!(input, before, "input untouched");
                rules::check(conv.format, &r.messages)
                    .unwrap_or_else(|e| panic!("{} {mode} {window}: output {e}", conv.name));
                let Some(req) = script.seen.first() else {
                    continue;
                };
                rules::check(conv.format, &req.messages)
                    .unwrap_or_else(|e| panic!("{} {mode} {window}: request {e}", conv.name));
                let format = if conv.format == "anthropic" {
                    "anthropic"
                } else {
                    "openai"
                };
                let sent = request_tokens(format, req);
                assert!(
                    sent + 1000 <= window.max(2000 + 1000),
                    "{} {mode} {window}: {sent}",
                    conv.name
                );
                assert_eq!(r.notice.mode.key(), mode);
                if mode == "llm_replace" {
                    assert!(r.messages.len() <= 2);
                }
            }
        }
    }
}

/// Pins over the whole middle leave a structured compaction nothing to
/// summarize: no call, the offline result, and a fallback that says why.
#[test]
fn structured_with_the_whole_middle_pinned_makes_no_call() {
    let h = chats::long_turns(8);
    let input = Value::Array(h.clone());
    let pin: Vec<usize> = (3..h.len() - 2).collect();
    let mut fell_back = 0;
    for window in [2000, 2400, 2800, 3000, 3200, 4000] {
        let mut script = Script::new([ok(&template("the goal"))]);
        let options =
            json!({"mode": "structured", "contextWindow": window, "protectTailMin": 2, "pin": pin});
        let r = run(&input, options.clone(), &mut script);
        assert!(
            script.seen.is_empty(),
            "{window}: no summary of nothing was asked for"
        );
        let offline = compact(
            &input,
            &config(
                json!({"mode": "recency_preserving", "contextWindow": window, "protectTailMin": 2, "pin": pin}),
            ),
        );
        match (r, offline) {
            (Ok(r), Ok(o)) => {
                fell_back += 1;
                let f = r.notice.fallback.as_ref().expect("a fallback");
                assert_eq!(f.code, "NOTHING_TO_SUMMARIZE");
                assert_eq!(r.messages, o.messages, "{window}: the offline result");
                assert!(r.messages.len() <= h.len(), "{window}: never longer");
            }
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{window}"),
            (a, b) => panic!("{window}: {a:?} vs {b:?}"),
        }
    }
    assert!(fell_back > 0, "some window laid the pins out as the middle");
}

/// The summarizer's request alternates as the compacted history does: for
/// Anthropic (merged by default) the instruction joins the user message of tool
/// results before it; `alternation: "keep"` leaves it a message of its own.
#[test]
fn the_summary_request_alternates_like_the_history() {
    let mut h = Vec::new();
    for k in 0..12 {
        h.push(
            json!({"role": "user", "content": format!("step {k}: {}", "do the thing ".repeat(40))}),
        );
        h.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("t{k}"), "name": "read", "input": {"path": format!("src/f{k}.rs")}}]}));
        h.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{k}"), "content": "ok ".repeat(80)}]}));
        h.push(json!({"role": "assistant", "content": format!("done {k}")}));
    }
    // The newest round is still running: the history ends with its results.
    h.pop();
    let input = Value::Array(h);
    let roles = |messages: &[Value]| -> Vec<String> {
        messages
            .iter()
            .map(|m| m["role"].as_str().unwrap_or("").to_string())
            .collect()
    };
    for (alternation, merged) in [(None, true), (Some("keep"), false), (Some("merge"), true)] {
        let mut options = json!({"mode": "llm_replace", "contextWindow": 2000});
        if let Some(a) = alternation {
            options["alternation"] = json!(a);
        }
        let mut script = Script::new([ok("the summary")]);
        run(&input, options, &mut script).unwrap();
        let sent = &script.seen[0].messages;
        let r = roles(sent);
        let repeated = r.windows(2).any(|w| w[0] == w[1]);
        assert_eq!(!repeated, merged, "{alternation:?}: {r:?}");
        let last = sent.last().unwrap();
        let text = serde_json::to_string(last).unwrap();
        assert!(
            text.contains(&script.seen[0].instruction[..40]),
            "{alternation:?}: the instruction closes the request"
        );
        if merged {
            assert_eq!(
                last["content"][0]["type"], "tool_result",
                "results stay first"
            );
        }
    }
}

/// Only UI notices between head and tail, nothing pinned: no call either, and
/// nothing outside that middle is left out (the fallback keeps the layout).
#[test]
fn structured_with_only_notices_in_the_middle_drops_nothing_else() {
    let big = |s: &str| format!("{s}{}", " lorem ipsum dolor".repeat(200));
    let h = vec![
        json!({"role": "system", "content": "sys"}),
        json!({"role": "user", "content": big("u0")}),
        json!({"role": "assistant", "content": big("a0")}),
        json!({"role": "notice", "content": "ui note 1"}),
        json!({"role": "notice", "content": "ui note 2"}),
        json!({"role": "user", "content": big("u1")}),
        json!({"role": "assistant", "content": big("a1")}),
        json!({"role": "user", "content": "last?"}),
    ];
    let input = Value::Array(h.clone());
    let mut answered = 0;
    for window in [1500, 3000, 6000] {
        let mut script = Script::new([ok(&template("the goal"))]);
        let r = run(
            &input,
            json!({"mode": "structured", "contextWindow": window}),
            &mut script,
        );
        assert!(script.seen.is_empty(), "{window}: no call");
        let Ok(r) = r else { continue };
        answered += 1;
        assert_eq!(
            r.notice.fallback.as_ref().map(|f| f.code),
            Some("NOTHING_TO_SUMMARIZE")
        );
        let text = serde_json::to_string(&r.messages).unwrap();
        for tag in ["\"u1 lorem", "\"a1 lorem", "last?"] {
            assert!(
                text.contains(tag),
                "{window}: {tag} kept (perhaps cut, never left out)"
            );
        }
        assert!(!text.contains("elided"), "{window}: no marker");
    }
    assert!(answered > 0, "some window gave a result");
}

/// What the summary model reads is bounded by its own window: a well-known
/// `summaryModel`'s, or `summaryContextWindow`, else `contextWindow` (with a
/// 16K chat window and gpt-4o-mini, the input was cut to about 11K tokens
/// although that model reads 128K).
#[test]
fn the_summary_model_reads_as_much_as_its_own_window_holds() {
    let mut m = vec![json!({"role": "user", "content": "start"})];
    for k in 0..200 {
        let role = if k % 2 == 0 { "assistant" } else { "user" };
        m.push(json!({"role": role, "content": format!("turn {k}: {}", "some words about the work ".repeat(60))}));
    }
    let input = Value::Array(m);
    let sent = |extra: Value| {
        let mut opts =
            json!({"mode": "llm_replace", "contextWindow": 16_000, "maxSummaryTokens": 1000});
        for (k, v) in extra.as_object().unwrap() {
            opts[k] = v.clone();
        }
        let mut script = Script::new([ok("The summary.")]);
        run(&input, opts, &mut script).expect("compacts");
        request_tokens("openai", &script.seen[0])
    };
    let chat = sent(json!({}));
    assert!(chat + 1000 <= 16_000, "{chat}");
    let mini = sent(json!({"summaryModel": "gpt-4o-mini"}));
    assert!(mini > 16_000 && mini + 1000 <= 128_000, "{mini}");
    let given = sent(json!({"summaryModel": "gpt-4o-mini", "summaryContextWindow": 40_000}));
    assert!(given > 16_000 && given + 1000 <= 40_000, "{given}");
    let unknown = sent(json!({"summaryModel": "my-local-model"}));
    assert!(unknown + 1000 <= 16_000, "{unknown}");
    let e = chat_compaction::options::from_json(&json!({"summaryContextWindow": 0})).unwrap_err();
    assert_eq!(e.kind(), chat_compaction::ErrorKind::InvalidConfig);
}
