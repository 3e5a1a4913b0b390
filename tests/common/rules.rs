//! Checks the provider rules of SPEC §2 on an output history, independently of
//! the library's own code: every call answered right after it, no result without
//! its call, no empty messages, Anthropic's first message is `user`. The one
//! exception: calls of the last group may still lack results (the history ended
//! while those tools were running; the caller appends their results).
#![allow(dead_code)]

use std::collections::BTreeSet;

use serde_json::Value;

fn blocks<'a>(m: &'a Value, kind: &str) -> Vec<&'a Value> {
    m["content"]
        .as_array()
        .map(|a| a.iter().filter(|b| b["type"] == kind).collect())
        .unwrap_or_default()
}

fn is_tool_message(m: &Value) -> bool {
    matches!(m["role"].as_str(), Some("tool" | "tool_result"))
}

/// Returns the first violated rule, if any.
pub fn check(format: &str, messages: &[Value]) -> Result<(), String> {
    for (i, m) in messages.iter().enumerate() {
        if let Some(a) = m["content"].as_array() {
            if a.is_empty() {
                return Err(format!("messages[{i}] has an empty content array"));
            }
        }
    }
    if format == "anthropic" {
        check_anthropic(messages)
    } else {
        // Moltis notices are UI-only: they are dropped before a request is sent.
        let sent: Vec<Value> = messages
            .iter()
            .filter(|m| m["role"] != "notice")
            .cloned()
            .collect();
        check_openai(&sent)
    }
}

fn check_openai(messages: &[Value]) -> Result<(), String> {
    let mut i = 0;
    while i < messages.len() {
        let m = &messages[i];
        if is_tool_message(m) {
            return Err(format!(
                "messages[{i}] is a tool result without a call right before it"
            ));
        }
        let calls: Vec<&str> = m["tool_calls"]
            .as_array()
            .map(|a| a.iter().filter_map(|c| c["id"].as_str()).collect())
            .unwrap_or_default();
        i += 1;
        if calls.is_empty() {
            continue;
        }
        let mut answered = BTreeSet::new();
        while i < messages.len() && is_tool_message(&messages[i]) {
            let id = messages[i]["tool_call_id"].as_str().unwrap_or("");
            if !calls.contains(&id) {
                return Err(format!(
                    "messages[{i}] answers {id:?}, which the assistant before did not call"
                ));
            }
            if !answered.insert(id) {
                return Err(format!("messages[{i}] answers {id:?} a second time"));
            }
            i += 1;
        }
        let want: BTreeSet<&str> = calls.into_iter().collect();
        let still_running = i == messages.len();
        if answered != want && !still_running {
            return Err(format!(
                "calls {:?} before messages[{i}] have no result",
                want.difference(&answered).collect::<Vec<_>>()
            ));
        }
    }
    Ok(())
}

fn check_anthropic(messages: &[Value]) -> Result<(), String> {
    if messages.first().is_some_and(|m| m["role"] != "user") {
        return Err("the first message is not a user message".into());
    }
    for (i, m) in messages.iter().enumerate() {
        let results: Vec<&str> = blocks(m, "tool_result")
            .iter()
            .filter_map(|b| b["tool_use_id"].as_str())
            .collect();
        let prev_calls: BTreeSet<&str> = i
            .checked_sub(1)
            .map(|p| {
                blocks(&messages[p], "tool_use")
                    .iter()
                    .filter_map(|b| b["id"].as_str())
                    .collect()
            })
            .unwrap_or_default();
        let got: BTreeSet<&str> = results.iter().copied().collect();
        if got.len() != results.len() {
            return Err(format!("messages[{i}] answers a call twice"));
        }
        if !got.is_subset(&prev_calls) {
            return Err(format!(
                "messages[{i}] has tool_result blocks for calls not made right before it"
            ));
        }
        let calls: BTreeSet<&str> = blocks(m, "tool_use")
            .iter()
            .filter_map(|b| b["id"].as_str())
            .collect();
        if !calls.is_empty() {
            let next: BTreeSet<&str> = messages
                .get(i + 1)
                .map(|n| {
                    blocks(n, "tool_result")
                        .iter()
                        .filter_map(|b| b["tool_use_id"].as_str())
                        .collect()
                })
                .unwrap_or_default();
            // the last group: the history ended while those tools ran
            let still_running = i + 2 >= messages.len() && next.is_subset(&calls);
            if next != calls && !still_running {
                return Err(format!(
                    "tool_use blocks of messages[{i}] are not all answered in the next message"
                ));
            }
        }
        if let Some(a) = m["content"].as_array() {
            let first_text = a.iter().position(|b| b["type"] != "tool_result");
            let last_result = a.iter().rposition(|b| b["type"] == "tool_result");
            if let (Some(t), Some(r)) = (first_text, last_result) {
                if t < r {
                    return Err(format!(
                        "messages[{i}] has content before its tool_result blocks"
                    ));
                }
            }
        }
    }
    Ok(())
}
