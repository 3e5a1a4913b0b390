//! The offline core under the failures a hostile but realistic user finds:
//! re-compaction round after round, results that must fit the window, standing
//! instructions in the middle, odd but valid shapes, huge shapes, extreme numbers,
//! and Moltis's own compaction tests re-expressed.

mod common;

use std::time::{Duration, Instant};

use chat_compaction::tokens::{Profile, TokenCounter};
use chat_compaction::{
    compact, compact_with, estimate_tokens_with, measure, options, validate, Compaction, ErrorKind,
    ValidateOptions,
};
use common::{chats, corpus, rules};
use serde_json::{json, Value};

fn run(input: &Value, opts: Value) -> Compaction {
    compact(input, &options::from_json(&opts).expect("valid options")).expect("compacts")
}

fn text_of(r: &Compaction) -> String {
    serde_json::to_string(&r.messages).unwrap()
}

fn session(name: &str) -> Option<Vec<Value>> {
    let conv = corpus::swecontext()
        .into_iter()
        .find(|c| c.name.ends_with(name))?;
    serde_json::from_str(&conv.json).ok()
}

/// Ten more messages of work and then a new request, as a session goes on.
fn more_work(round: usize) -> Vec<Value> {
    let mut m = Vec::new();
    for k in 0..5 {
        m.push(json!({"role": "assistant", "content": format!("Round {round} step {k}: editing src/round{round}/step{k}.py"), "tool_calls": [{"id": format!("r{round}c{k}"), "type": "function", "function": {"name": "Edit", "arguments": format!("{{\"file_path\":\"src/round{round}/step{k}.py\"}}")}}]}));
        m.push(json!({"role": "tool", "tool_call_id": format!("r{round}c{k}"), "content": "ok ".repeat(100)}));
    }
    m.push(json!({"role": "user", "content": format!("ROUND-{round}-REQUEST: now also handle the edge case {round}; TODO: add a test for it")}));
    m
}

#[test]
fn deterministic_recompaction_keeps_every_newest_request() {
    let Some(start) = session("c1f62324.openai.json") else {
        corpus::missing(true);
        return;
    };
    let mut history = start;
    for round in 1..=6 {
        let r = run(
            &Value::Array(history.clone()),
            json!({"mode": "deterministic", "contextWindow": 8000}),
        );
        let text = text_of(&r);
        if round > 1 {
            // The request being answered stays verbatim, after the summary.
            let newest = format!("ROUND-{}-REQUEST", round - 1);
            let last = r.messages.last().unwrap()["content"].as_str().unwrap();
            assert!(
                last.starts_with(&newest),
                "round {round}: the newest request {newest} is not last:\n{text}"
            );
            assert!(text.contains("Newly compacted context"), "round {round}");
        }
        if round > 2 {
            assert!(
                text.contains("Pending work"),
                "round {round}: the earlier requests' pending items survive"
            );
        }
        assert_eq!(text.matches("[Conversation Summary]").count(), 1);
        history = r.messages;
        history.extend(more_work(round));
    }
}

#[test]
fn a_second_marker_carries_the_totals_and_tools_of_the_first() {
    let Some(start) = session("c1f62324.openai.json") else {
        corpus::missing(true);
        return;
    };
    let opts = json!({"mode": "recency_preserving", "contextWindow": 16000});
    let first = run(&Value::Array(start), opts.clone());
    let marker_of = |r: &Compaction| -> String {
        r.messages
            .iter()
            .filter_map(|m| m["content"].as_str())
            .find(|t| t.starts_with("[Conversation Compacted]"))
            .expect("a marker")
            .to_string()
    };
    let elided = |marker: &str| -> usize {
        marker["[Conversation Compacted]\n\n".len()..]
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a count")
    };
    let m1 = marker_of(&first);
    let mut history = first.messages.clone();
    for round in 1..=3 {
        history.extend(more_work(round));
    }
    let second = run(&Value::Array(history), opts);
    let m2 = marker_of(&second);
    assert!(
        elided(&m2) > elided(&m1),
        "running total: {} then {}",
        elided(&m1),
        elided(&m2)
    );
    for tool in ["Bash", "Read", "Edit"] {
        assert!(
            m2.contains(tool),
            "{tool} listed by the first marker is kept:\n{m2}"
        );
    }
    assert_eq!(
        text_of(&second).matches("[Conversation Compacted]").count(),
        1
    );
}

#[test]
fn results_fit_the_window_in_every_format() {
    let sessions = corpus::swecontext();
    if sessions.is_empty() {
        corpus::missing(true);
        return;
    }
    for conv in sessions {
        let input: Value = serde_json::from_str(&conv.json).unwrap();
        for window in [2_000u64, 4_000, 8_000, 16_000] {
            let opts = json!({"mode": "recency_preserving", "contextWindow": window});
            let config = options::from_json(&opts).unwrap();
            let r = match compact(&input, &config) {
                Ok(r) => r,
                Err(e) if e.kind() == ErrorKind::TooSmallToCompact => continue,
                Err(e) => panic!("{} {window}: {e}", conv.name),
            };
            let target = config.options.trigger_tokens();
            assert!(
                r.notice.fits && r.notice.tokens_after <= target,
                "{} at {window}: {} tokens for a target of {target}; warnings {:?}",
                conv.name,
                r.notice.tokens_after,
                r.warnings
            );
            rules::check(conv.format, &r.messages).unwrap();
        }
    }
}

#[test]
fn a_history_that_cannot_fit_says_so_with_the_numbers() {
    let huge_request = "please ".repeat(20_000);
    let mut h = vec![json!({"role": "user", "content": "start"})];
    for k in 0..20 {
        h.push(
            json!({"role": "assistant", "content": format!("step {k} {}", "work ".repeat(400))}),
        );
        h.push(json!({"role": "user", "content": format!("next {k}")}));
    }
    h.push(json!({"role": "user", "content": huge_request}));
    let input = Value::Array(h);
    let r = run(
        &input,
        json!({"mode": "recency_preserving", "contextWindow": 2000, "protectHead": 1, "protectTailMin": 1}),
    );
    assert!(!r.notice.fits);
    let w = r
        .warnings
        .iter()
        .find(|w| w.code == "DOES_NOT_FIT")
        .expect("a warning");
    assert!(
        w.message.contains("should stay under 1900 tokens"),
        "{}",
        w.message
    );
    assert!(
        text_of(&r).contains(&huge_request),
        "the newest request is never cut"
    );
}

#[test]
fn instructions_in_the_middle_stay_in_every_mode_and_format() {
    let mut openai = vec![json!({"role": "system", "content": "You are a coding agent."})];
    for k in 0..30 {
        openai.push(json!({"role": "user", "content": format!("request {k}: {}", "lorem ipsum ".repeat(30))}));
        openai.push(json!({"role": "assistant", "content": format!("answer {k}: {}", "dolor sit ".repeat(30))}));
        if k == 8 {
            openai.push(
                json!({"role": "developer", "content": "STANDING-RULE: never push to main."}),
            );
        }
    }
    let moltis: Vec<Value> = openai
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut m = m.clone();
            m["created_at"] = json!(1_700_000_000_000u64 + i as u64);
            m
        })
        .collect();
    for (format, input) in [
        ("openai", Value::Array(openai)),
        ("moltis", Value::Array(moltis)),
    ] {
        for mode in ["deterministic", "recency_preserving"] {
            let r = run(&input, json!({"mode": mode, "contextWindow": 4000}));
            let kept: Vec<&Value> = r
                .messages
                .iter()
                .filter(|m| {
                    m["content"]
                        .as_str()
                        .is_some_and(|t| t.contains("STANDING-RULE"))
                })
                .collect();
            assert_eq!(
                kept.len(),
                1,
                "{format} {mode}: the instruction is kept once"
            );
            assert_eq!(kept[0]["role"], "developer", "{format} {mode}: verbatim");
            let at = r.messages.iter().position(|m| m == kept[0]).unwrap();
            let summary_at = r
                .messages
                .iter()
                .position(|m| {
                    m["content"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("[Conversation"))
                })
                .unwrap();
            assert!(
                at < summary_at,
                "{format} {mode}: before the summary/marker"
            );
            rules::check(format, &r.messages).unwrap();
        }
    }
}

#[test]
fn pinned_messages_stay_by_index_and_by_role() {
    let mut h = Vec::new();
    for k in 0..40 {
        h.push(json!({"role": "user", "content": format!("user {k} {}", "x ".repeat(60))}));
        h.push(
            json!({"role": "assistant", "content": format!("assistant {k} {}", "y ".repeat(60))}),
        );
    }
    let input = Value::Array(h.clone());
    for mode in ["deterministic", "recency_preserving"] {
        let r = run(
            &input,
            json!({"mode": mode, "contextWindow": 4000, "pin": [10, 11]}),
        );
        assert!(
            r.messages.contains(&h[10]) && r.messages.contains(&h[11]),
            "{mode}: pinned by index"
        );
        let toml = format!(
            "[chat.compaction]\nmode = \"{mode}\"\ncontext_window = 8000\npin_roles = [\"user\"]\n"
        );
        let config = options::from_toml(&toml).unwrap();
        let r = compact(&input, &config).unwrap();
        for m in h.iter().filter(|m| m["role"] == "user") {
            assert!(
                r.messages.contains(m),
                "{mode}: every user message pinned from TOML"
            );
        }
    }
    let bad = options::from_toml("[chat.compaction]\npin_roles = [\"wizard\"]\n").unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidConfig);
    assert!(bad.message().contains("\"wizard\""), "{}", bad.message());
}

/// Pins that hold the whole middle leave nothing to elide: no marker saying "0
/// earlier messages were elided", no pinned text cut or pinned tool output
/// pruned to make room, and a refusal that names the pins when nothing shrinks.
#[test]
fn pins_over_the_whole_middle_are_kept_verbatim_and_get_no_empty_marker() {
    let h = chats::long_turns(8);
    let input = Value::Array(h.clone());
    let pin: Vec<usize> = (3..h.len() - 2).collect();
    for window in [1000, 2000, 3000, 4000, 6000] {
        let config = options::from_json(&json!({
            "mode": "recency_preserving", "contextWindow": window, "protectTailMin": 2, "pin": pin
        }))
        .unwrap();
        match compact(&input, &config) {
            Ok(r) => {
                let text = text_of(&r);
                assert!(!text.contains(" 0 earlier messages"), "{window}: {text}");
                for i in &pin {
                    assert!(
                        r.messages.contains(&h[*i]),
                        "{window}: pinned message {i} verbatim"
                    );
                }
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::TooSmallToCompact, "{window}: {e}");
                if e.message().contains("would not make this history smaller") {
                    assert!(e.message().contains("pin"), "{window}: names the pins: {e}");
                }
            }
        }
    }
    // A pinned tool output is never pruned, in place or in the tail.
    let mut t = vec![json!({"role": "user", "content": "look"})];
    for k in 0..6 {
        t.push(json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{k}"), "type": "function", "function": {"name": "read", "arguments": "{}"}}]}));
        t.push(json!({"role": "tool", "tool_call_id": format!("c{k}"), "content": format!("out {k} {}", "data ".repeat(400))}));
    }
    t.push(json!({"role": "user", "content": "and?"}));
    let input = Value::Array(t.clone());
    for window in [3000, 6000, 20000] {
        let config = options::from_json(&json!({
            "mode": "recency_preserving", "contextWindow": window, "protectTailMin": 1, "pin": [2, 4]
        }))
        .unwrap();
        if let Ok(r) = compact(&input, &config) {
            assert!(
                r.messages.contains(&t[2]) && r.messages.contains(&t[4]),
                "{window}: pinned outputs whole"
            );
        }
    }
}

#[test]
fn the_developer_role_is_accepted_with_created_at() {
    let input = json!([
        {"role": "developer", "content": "Be brief.", "created_at": 1},
        {"role": "user", "content": "hi", "created_at": 2},
        {"role": "assistant", "content": "hello", "created_at": 3}
    ]);
    let r = run(&input, json!({"mode": "deterministic"}));
    assert_eq!(r.messages[0], input[0]);
    assert_eq!(r.notice.format, chat_compaction::Format::Moltis);
}

/// Asserts that `large` (four times the input of `small`) takes less than ten
/// times as long: about four when linear, sixteen when quadratic. The two run
/// in turn, five times each, and the fastest of each counts, so a burst of
/// load from the tests running beside this one (a 2-core machine) falls on
/// both rather than on one.
fn assert_linear(what: &str, small: impl Fn(), large: impl Fn()) {
    let time = |f: &dyn Fn()| {
        let t = Instant::now();
        f();
        t.elapsed()
    };
    let (mut fastest_small, mut fastest_large) = (Duration::MAX, Duration::MAX);
    for _ in 0..5 {
        fastest_small = fastest_small.min(time(&small));
        fastest_large = fastest_large.min(time(&large));
    }
    let ratio = fastest_large.as_secs_f64() / fastest_small.as_secs_f64().max(1e-6);
    assert!(
        ratio < 10.0,
        "{what}: four times the size took {ratio:.1}× as long ({fastest_small:?} → {fastest_large:?})"
    );
}

#[test]
fn hostile_shapes_take_linear_time() {
    let toml = |n: usize| {
        let mut t = String::from("[chat.compaction]\n");
        for k in 0..n {
            t.push_str(&format!("unknown_{k} = {k}\n"));
        }
        t
    };
    let (a, b) = (toml(10_000), toml(40_000));
    assert_linear(
        "unknown TOML keys",
        || drop(options::from_toml(&a)),
        || drop(options::from_toml(&b)),
    );
    let calls = |n: usize| {
        let calls: Vec<Value> = (0..n)
            .map(|k| json!({"id": format!("c{k}"), "type": "function", "function": {"name": "t", "arguments": "{}"}}))
            .collect();
        let mut h = vec![
            json!({"role": "user", "content": "go"}),
            json!({"role": "assistant", "content": null, "tool_calls": calls}),
        ];
        h.extend((0..n).map(|k| json!({"role": "tool", "tool_call_id": format!("c{k}"), "content": "x".repeat(300)})));
        h.push(json!({"role": "user", "content": "next"}));
        Value::Array(h)
    };
    let (a, b) = (calls(5_000), calls(20_000));
    let config =
        options::from_json(&json!({"mode": "recency_preserving", "contextWindow": 200_000}))
            .unwrap();
    assert_linear(
        "tool calls in one message",
        || drop(compact(&a, &config)),
        || drop(compact(&b, &config)),
    );
}

/// A counter that answers absurdly large numbers.
struct Huge;

impl TokenCounter for Huge {
    fn count(&self, _: &str) -> u64 {
        1 << 62
    }
    fn profile(&self) -> Profile {
        Profile::O200k
    }
}

#[test]
fn huge_counts_saturate_instead_of_wrapping() {
    let input = json!([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]);
    let config = options::from_json(&json!({})).unwrap();
    let n = estimate_tokens_with(&input, &config, &Huge).unwrap();
    assert!(n >= 3 << 40, "{n}");
    let r = compact_with(&input, &config, &Huge).unwrap();
    assert!(!r.notice.fits);
}

#[test]
fn two_spellings_of_one_option_must_agree() {
    let e =
        options::from_json(&json!({"contextWindow": 4000, "context_window": 200000})).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidConfig);
    assert!(
        e.message().contains("contextWindow and context_window"),
        "{}",
        e.message()
    );
    assert!(options::from_json(&json!({"contextWindow": 4000, "context_window": 4000})).is_ok());
}

#[test]
fn anthropic_tool_results_after_text_come_first_in_the_output() {
    let mut messages = vec![json!({"role": "user", "content": "start"})];
    for k in 0..40 {
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": format!("t{k}"), "name": "Bash", "input": {"command": "ls"}}]}));
        messages.push(json!({"role": "user", "content": [
            {"type": "text", "text": format!("note {k}")},
            {"type": "tool_result", "tool_use_id": format!("t{k}"), "content": "y ".repeat(150)}
        ]}));
    }
    messages.push(json!({"role": "assistant", "content": "done"}));
    let input = json!({"messages": messages});
    let r = run(
        &input,
        json!({"mode": "recency_preserving", "contextWindow": 8000}),
    );
    for m in &r.messages {
        if let Some(blocks) = m["content"].as_array() {
            let first_other = blocks.iter().position(|b| b["type"] != "tool_result");
            let last_result = blocks.iter().rposition(|b| b["type"] == "tool_result");
            if let (Some(o), Some(t)) = (first_other, last_result) {
                assert!(t < o, "tool_result blocks first: {m}");
            }
        }
    }
    rules::check("anthropic", &r.messages).unwrap();
}

#[test]
fn plural_grammar_everywhere() {
    let one = json!([{"role": "user", "content": "only one"}, {"role": "user", "content": "and?"}]);
    let r = run(&one, json!({"mode": "deterministic"}));
    let t = text_of(&r);
    assert!(t.contains("Scope: 1 earlier message compacted"), "{t}");
    let mut h: Vec<Value> = (0..9)
        .map(|k| json!({"role": if k % 2 == 0 {"user"} else {"assistant"}, "content": format!("m{k}")}))
        .collect();
    h.push(json!({"role": "user", "content": "last"}));
    h.push(json!({"role": "assistant", "content": "done"}));
    let t = text_of(&run(
        &Value::Array(h.clone()),
        json!({"mode": "deterministic"}),
    ));
    assert!(t.contains("(3 messages omitted)"), "{t}");
    let t = text_of(&run(
        &Value::Array(h[..10].to_vec()),
        json!({"mode": "deterministic"}),
    ));
    assert!(t.contains("(1 message omitted)"), "{t}");
    let mut three: Vec<Value> = (0..10)
        .map(|k| json!({"role": if k % 2 == 0 {"user"} else {"assistant"}, "content": format!("message {k} {}", "long words ".repeat(5))}))
        .collect();
    three[5]["content"] = json!("a long answer ".repeat(200)); // the one elided message
    let r = run(
        &Value::Array(three),
        json!({"mode": "recency_preserving", "protectHead": 5, "protectTailMin": 4, "contextWindow": 1000, "tailBudgetRatio": 0.05}),
    );
    let t = text_of(&r);
    assert!(t.contains("1 earlier message was elided to save context space (0 user, 1 assistant, 0 tool). Recent"), "{t}");
}

// Moltis's own compaction tests, re-expressed (same inputs, same observable outcome).

#[test]
fn seed_an_analysis_block_is_not_carried_into_the_merge() {
    // Also after a stray `</analysis>` before the block: Moltis anchors the
    // closing tag after the opening one (searched from the start, the block
    // survived into the merge).
    for note in ["", "A note that mentions </analysis> in passing.\n"] {
        let prior = format!("[Conversation Summary]\n\n{note}<analysis>\nSCRATCH-WORK that must not survive\n</analysis>\n- Key files referenced: src/kept.rs.");
        let input = json!([{"role": "user", "content": prior}, {"role": "user", "content": "go on"}, {"role": "assistant", "content": "ok"}]);
        let t = text_of(&run(&input, json!({"mode": "deterministic"})));
        assert!(!t.contains("SCRATCH-WORK"), "{t}");
        assert!(
            t.contains("Previously compacted context") && t.contains("src/kept.rs"),
            "{t}"
        );
    }
}

#[test]
fn seed_an_older_summary_without_the_prefix_is_merged() {
    let older = "This session is being continued from a previous conversation that ran out of context. The summary below covers the earlier portion of the conversation.\n\nSummary:\n- Key files referenced: src/older.rs.\nRecent messages are preserved verbatim.";
    let input = json!([{"role": "user", "content": older}, {"role": "user", "content": "continue please"}, {"role": "assistant", "content": "ok"}]);
    let t = text_of(&run(&input, json!({"mode": "deterministic"})));
    assert_eq!(
        t.matches("This session is being continued").count(),
        1,
        "{t}"
    );
    assert!(
        t.contains("Previously compacted context") && t.contains("src/older.rs"),
        "{t}"
    );
    assert!(
        !t.contains("Recent messages are preserved verbatim."),
        "{t}"
    );
}

#[test]
fn seed_reported_usage_is_read_in_any_format() {
    // Moltis's auto-compact test, without created_at (so not detected as Moltis).
    let input = json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "final reply", "requestInputTokens": 94}
    ]);
    let config = options::from_json(&json!({"contextWindow": 100})).unwrap();
    let t = measure(&input, &config, "ping").unwrap();
    assert!(t.should_compact, "94 reported + ping reaches 95");
}

/// A user who writes after calls whose results never came has ended that turn:
/// the calls are not "still running", so they get stubs (found by the property
/// tests once `validate` read the Anthropic rule exactly).
#[test]
fn calls_before_a_users_words_are_answered_even_next_to_an_orphan_result() {
    let input = json!([
        {"role": "user", "content": "Please"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_0", "name": "read_file", "input": {"path": "src/lib.rs"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_0", "content": "fn main() {}\n".repeat(300)}]},
        {"role": "user", "content": "Please"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_0", "name": "read_file", "input": {"path": "src/lib.rs"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "orphan_0", "content": "an orphan result"},
            {"type": "text", "text": "Please"}
        ]},
    ]);
    for opts in [
        json!({"mode": "recency_preserving", "protectHead": 0, "protectTailMin": 0, "contextWindow": 300, "alternation": "keep"}),
        json!({"mode": "recency_preserving", "protectHead": 0, "protectTailMin": 2, "contextWindow": 2000}),
    ] {
        let config = options::from_json(&opts).unwrap();
        let out = compact(&input, &config).unwrap();
        let v = validate(
            &Value::Array(out.messages.clone()),
            &ValidateOptions::default(),
        )
        .unwrap();
        assert!(
            v.violations.is_empty(),
            "{opts}: {:?}\n{}",
            v.violations,
            Value::Array(out.messages)
        );
        let last = out.messages.last().unwrap();
        assert_eq!(
            last["content"][0]["tool_use_id"], "call_0",
            "{opts}: no stub for call_0: {last}"
        );
        assert_eq!(
            last["content"].as_array().unwrap().last().unwrap()["text"],
            "Please"
        );
    }
}

#[test]
fn deterministic_with_nothing_new_since_its_summary_is_too_small() {
    let h = json!([
        {"role": "user", "content": "Please refactor src/app.ts and add tests."},
        {"role": "assistant", "content": "I refactored src/app.ts; next I will add tests."},
        {"role": "user", "content": "Thanks, also update README.md."},
        {"role": "assistant", "content": "Updated README.md."}
    ]);
    let config = options::from_json(&json!({"mode": "deterministic"})).unwrap();
    let first = run(&h, json!({"mode": "deterministic"}));
    let summary_only = Value::Array(first.messages.clone());
    let e = compact(&summary_only, &config).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooSmallToCompact);
    assert!(
        e.message()
            .contains("nothing was added since the last summary"),
        "{e}"
    );
    // Everything pinned: nothing to summarize either.
    let pinned =
        options::from_json(&json!({"mode": "deterministic", "pin": [0, 1, 2, 3]})).unwrap();
    let e = compact(&h, &pinned).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooSmallToCompact, "{e}");
    // One new message after the summary: one merged summary, no "Scope: 0" lines.
    let mut more = first.messages.clone();
    more.push(json!({"role": "user", "content": "Now run the tests."}));
    // Only the request being answered is new: it stays, there is nothing to summarize.
    let e = compact(&Value::Array(more.clone()), &config).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooSmallToCompact, "{e}");
    more.push(json!({"role": "assistant", "content": "All tests pass."}));
    let again = run(&Value::Array(more), json!({"mode": "deterministic"}));
    let text = again.messages[0]["content"].as_str().unwrap();
    assert_eq!(text.matches("[Conversation Summary]").count(), 1);
    assert!(!text.contains("Scope: 0 "), "{text}");
}

#[test]
fn a_short_history_over_the_window_is_cut_to_fit() {
    let big = "lorem ipsum dolor sit amet ".repeat(4000);
    for h in [
        json!([{"role": "user", "content": "q"}, {"role": "assistant", "content": big}]),
        json!([{"role": "user", "content": big}, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "and?"}]),
    ] {
        let config =
            options::from_json(&json!({"mode": "recency_preserving", "contextWindow": 8000}))
                .unwrap();
        let r = compact(&h, &config).unwrap_or_else(|e| panic!("{e}"));
        assert!(r.notice.fits, "{:?}", r.warnings);
        assert!(r.warnings.iter().any(|w| w.code == "TEXTS_SHORTENED"));
        assert!(r.notice.tokens_after <= 7600);
    }
}

#[test]
fn structured_recompaction_leaves_one_summary_when_an_older_one_sits_in_the_head() {
    let summary = |n: u32| {
        format!("[Conversation Summary]\n\nEarlier turns of this conversation were compacted into the summary below.\n\n## Goal\nround {n}")
    };
    let mut h = vec![json!({"role": "user", "content": summary(1)})];
    for k in 0..30 {
        let role = if k % 2 == 0 { "user" } else { "assistant" };
        h.push(json!({"role": role, "content": format!("turn {k} {}", "words ".repeat(200))}));
        if k == 11 {
            h.push(json!({"role": "user", "content": summary(2)}));
        }
    }
    let config =
        options::from_json(&json!({"mode": "structured", "contextWindow": 8000, "protectHead": 2}))
            .unwrap();
    let r = common::summarized(&Value::Array(h), &config).unwrap();
    assert_eq!(r.notice.mode, chat_compaction::options::Mode::Structured);
    let t = text_of(&r);
    assert_eq!(t.matches("[Conversation Summary]").count(), 1, "{t}");
    assert!(!t.contains("round 1") && !t.contains("round 2"), "{t}");
}

#[test]
fn a_summary_that_already_has_the_prefix_gets_it_once() {
    use chat_compaction::tokens::{Estimator, Profile};
    use chat_compaction::{compact_step, Next, Reply};
    let h: Vec<Value> = (0..30)
        .map(|k| json!({"role": if k % 2 == 0 { "user" } else { "assistant" }, "content": format!("turn {k} {}", "words ".repeat(200))}))
        .collect();
    let config = options::from_json(&json!({"mode": "llm_replace"})).unwrap();
    let reply = Reply::Summary {
        text: "[Conversation Summary]\n\nThe user and the assistant discussed turns.".into(),
        usage: None,
    };
    let Next::Done(r) = compact_step(
        &Value::Array(h),
        &config,
        &Estimator(Profile::O200k),
        &[reply],
    )
    .unwrap() else {
        panic!("not done");
    };
    let t = text_of(&r);
    assert_eq!(t.matches("[Conversation Summary]").count(), 1, "{t}");
    // and the next deterministic merge keeps one
    let mut next = r.messages.clone();
    next.extend([
        json!({"role": "user", "content": "more"}),
        json!({"role": "assistant", "content": "sure"}),
    ]);
    let again = text_of(&run(&Value::Array(next), json!({"mode": "deterministic"})));
    assert_eq!(
        again.matches("[Conversation Summary]").count(),
        1,
        "{again}"
    );
}
