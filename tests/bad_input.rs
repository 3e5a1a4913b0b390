//! A catalogue of malformed inputs and options (SPEC §8). Every case gets either
//! a clear error with a stable code and a message naming what is wrong and where,
//! or a correct result that obeys the provider rules; never a panic. After the
//! whole catalogue a good call must still give the same answer as before it.

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use chat_compaction::{
    compact, compact_json, estimate_tokens, measure, options, Error, ErrorKind, ParsedOptions,
};
use common::rules;
use serde_json::{json, Value};

/// How a case hands its history to the library.
enum Input {
    /// A parsed value, through `compact`.
    Value(Value),
    /// JSON text, through `compact_json` (the path the wasm build uses).
    Text(String),
}

/// How a case passes its options.
enum Opts {
    /// A JSON object (`options::from_json`, or its text for `compact_json`).
    Json(Value),
    /// Raw options text (`config_from_json_text` / `compact_json`).
    Text(&'static str),
    /// A TOML document (`options::from_toml`).
    Toml(&'static str),
}

/// What a successful run produced, whichever path it took.
struct Output {
    messages: Vec<Value>,
    request: Option<Value>,
    /// `(code, message)` of each warning.
    warnings: Vec<(String, String)>,
}

/// Extra checks on a successful result: `(input, output)`; the input is `Null`
/// for text cases.
type Check = fn(&Value, &Output) -> Result<(), String>;

/// One acceptable outcome.
enum Expect {
    /// An error of this kind whose message contains every substring
    /// (`"a|b"`: either `a` or `b`; `"!a"`: not `a`).
    Err(ErrorKind, &'static [&'static str]),
    /// A result in this format that obeys `rules::check` and then `Check`.
    Ok(&'static str, Check),
}

struct Case {
    name: &'static str,
    input: Input,
    opts: Opts,
    /// The one correct outcome.
    expect: Expect,
}

fn no_check(_: &Value, _: &Output) -> Result<(), String> {
    Ok(())
}

fn err(kind: ErrorKind, subs: &'static [&'static str]) -> Expect {
    Expect::Err(kind, subs)
}

fn invalid(subs: &'static [&'static str]) -> Expect {
    err(ErrorKind::InvalidInput, subs)
}

fn bad_config(subs: &'static [&'static str]) -> Expect {
    err(ErrorKind::InvalidConfig, subs)
}

fn ok(format: &'static str, check: Check) -> Expect {
    Expect::Ok(format, check)
}

fn case(name: &'static str, input: Value, opts: Value, expect: Expect) -> Case {
    Case {
        name,
        input: Input::Value(input),
        opts: Opts::Json(opts),
        expect,
    }
}

fn text_case(name: &'static str, input: String, opts: Value, expect: Expect) -> Case {
    Case {
        name,
        input: Input::Text(input),
        opts: Opts::Json(opts),
        expect,
    }
}

fn opts_case(name: &'static str, opts: Value, expect: Expect) -> Case {
    case(name, good_history(), opts, expect)
}

fn toml_case(name: &'static str, toml: &'static str, expect: Expect) -> Case {
    Case {
        name,
        input: Input::Value(good_history()),
        opts: Opts::Toml(toml),
        expect,
    }
}

// ---------------------------------------------------------------- histories

const PROSE: &str = "We looked at the failing build in src/lib.rs and the flaky test in tests/io.rs; the fix needs a retry with backoff and a clearer error message for the user. ";

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": text})
}

fn call(id: &str, name: &str, args: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
}

fn calls(calls: Vec<Value>) -> Value {
    json!({"role": "assistant", "content": null, "tool_calls": calls})
}

fn tool(id: &str, content: &str) -> Value {
    json!({"role": "tool", "tool_call_id": id, "content": content})
}

/// `turns` user/assistant pairs of ~400 bytes each (plain text: valid in every format).
fn filler(turns: usize) -> Vec<Value> {
    (0..turns)
        .flat_map(|k| {
            [
                user(&format!("Request {k}: {}", PROSE.repeat(2))),
                assistant(&format!("Answer {k}: {}", PROSE.repeat(2))),
            ]
        })
        .collect()
}

/// `head` + ten filler turns + `tail`.
fn around(head: Vec<Value>, tail: Vec<Value>) -> Value {
    let mut v = head;
    v.extend(filler(10));
    v.extend(tail);
    Value::Array(v)
}

/// A healthy OpenAI history with tool calls, long enough to compact.
fn good_history() -> Value {
    around(
        vec![
            json!({"role": "system", "content": "You are a careful coding agent."}),
            user("Fix the failing build in src/lib.rs"),
            calls(vec![call(
                "call_1",
                "read_file",
                r#"{"path": "src/lib.rs"}"#,
            )]),
            tool("call_1", &"fn main() {}\n".repeat(40)),
        ],
        vec![
            user("Now run the tests."),
            calls(vec![call(
                "call_2",
                "shell",
                r#"{"command": "cargo test"}"#,
            )]),
            tool("call_2", "test result: ok. 12 passed"),
            assistant("All 12 tests pass."),
        ],
    )
}

/// Options under which `around(..)` histories compact with recency_preserving.
fn recency() -> Value {
    json!({"mode": "recency_preserving", "protectHead": 4, "protectTailMin": 3, "contextWindow": 1000})
}

fn anthropic(messages: Vec<Value>) -> Value {
    json!({"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": "Be brief.", "messages": messages})
}

fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

fn tool_result(id: &str, content: Value) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": content})
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn moltis(mut messages: Vec<Value>) -> Value {
    for (k, m) in messages.iter_mut().enumerate() {
        if let Some(o) = m.as_object_mut() {
            o.entry("created_at")
                .or_insert(json!(1_700_000_000_000_i64 + k as i64 * 1000));
        }
    }
    Value::Array(messages)
}

/// Every message of `out` whose JSON mentions `needle`.
fn mentions(out: &Output, needle: &str) -> usize {
    out.messages
        .iter()
        .filter(|m| m.to_string().contains(needle))
        .count()
}

fn no_empty_messages(_: &Value, out: &Output) -> Result<(), String> {
    for (i, m) in out.messages.iter().enumerate() {
        let empty_content = match &m["content"] {
            Value::Null => true,
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => false,
        };
        let has_calls = m["tool_calls"].as_array().is_some_and(|a| !a.is_empty());
        let is_result = m["role"] == "tool_result";
        if empty_content && !has_calls && !is_result {
            return Err(format!("output messages[{i}] is empty: {m}"));
        }
    }
    Ok(())
}

/// A ~50 MB agent history as JSON text: 2,500 tool groups with 20 KB outputs.
fn huge_history() -> String {
    let chunk = "Compiling chat_compaction v0.1.0 (/work/main) — 警告: unused variable `x` 🦀\n";
    let output = chunk.repeat(20_000 / chunk.len() + 1);
    let mut msgs = vec![json!({"role": "system", "content": "You are a coding agent."})];
    for k in 0..2_500 {
        let id = format!("call_{k}");
        msgs.push(user(&format!(
            "Step {k}: build crate {k} and report warnings."
        )));
        msgs.push(calls(vec![call(
            &id,
            "shell",
            &json!({"command": format!("cargo build -p crate_{k}")}).to_string(),
        )]));
        msgs.push(tool(&id, &output));
    }
    msgs.push(assistant("All crates build; 2,500 warnings remain."));
    Value::Array(msgs).to_string()
}

/// `depth` nested arrays (or `{"a": …}` objects) around `0`.
fn nested(depth: usize, objects: bool) -> String {
    let (open, close) = if objects {
        (r#"{"a":"#, "}")
    } else {
        ("[", "]")
    };
    format!("{}0{}", open.repeat(depth), close.repeat(depth))
}

// ---------------------------------------------------------------- the catalogue

fn catalogue() -> Vec<Case> {
    use ErrorKind::*;
    let det = json!({"mode": "deterministic"});
    let u = user("hi");
    vec![
        // ---- shape of the input
        case(
            "top-level string",
            json!("hello"),
            det.clone(),
            invalid(&["input", "got a string"]),
        ),
        case(
            "top-level null",
            Value::Null,
            det.clone(),
            invalid(&["input", "got null"]),
        ),
        case(
            "top-level number",
            json!(42),
            det.clone(),
            invalid(&["input", "got a number"]),
        ),
        case(
            "top-level boolean",
            json!(true),
            det.clone(),
            invalid(&["input", "got a boolean"]),
        ),
        case(
            "object without messages",
            json!({"model": "gpt-4o", "temperature": 0.2}),
            det.clone(),
            invalid(&["input", "\"messages\""]),
        ),
        case(
            "messages is a string",
            json!({"messages": "hi"}),
            det.clone(),
            invalid(&["messages", "got a string"]),
        ),
        case(
            "messages is null",
            json!({"messages": null}),
            det.clone(),
            invalid(&["messages", "got null"]),
        ),
        case(
            "message is null",
            json!([u, null]),
            det.clone(),
            invalid(&["messages[1]", "got null"]),
        ),
        case(
            "message is a string",
            json!([u, "hello"]),
            det.clone(),
            invalid(&["messages[1]", "got a string"]),
        ),
        case(
            "message is an array",
            json!([[u]]),
            det.clone(),
            invalid(&["messages[0]", "got an array"]),
        ),
        // ---- roles
        case(
            "missing role",
            json!([u, {"content": "x"}]),
            det.clone(),
            invalid(&["messages[1].role", "missing"]),
        ),
        case(
            "role is a number",
            json!([{"role": 1, "content": "x"}]),
            det.clone(),
            invalid(&["messages[0].role", "got a number"]),
        ),
        case(
            "unknown role",
            json!([u, {"role": "wizard", "content": "x"}]),
            det.clone(),
            invalid(&["messages[1].role", "wizard"]),
        ),
        case(
            "empty role",
            json!([{"role": "", "content": "x"}]),
            det.clone(),
            invalid(&["messages[0].role"]),
        ),
        // ---- content
        case(
            "content is a number",
            json!([{"role": "user", "content": 7}]),
            det.clone(),
            invalid(&["messages[0].content", "got a number"]),
        ),
        case(
            "content is an object",
            json!([{"role": "user", "content": {"text": "hi"}}]),
            det.clone(),
            invalid(&["messages[0].content", "got an object"]),
        ),
        case(
            "null content on user",
            json!([u, {"role": "user", "content": null}]),
            det.clone(),
            invalid(&["messages[1].content"]),
        ),
        case(
            "missing content on user",
            json!([{"role": "user"}]),
            det.clone(),
            invalid(&["messages[0].content"]),
        ),
        case(
            "content part is a string",
            json!([{"role": "user", "content": ["hi"]}]),
            det.clone(),
            invalid(&["messages[0].content[0]", "got a string"]),
        ),
        case(
            "content part without type",
            json!([{"role": "user", "content": [{"text": "hi"}]}]),
            det.clone(),
            invalid(&["messages[0].content[0].type", "missing"]),
        ),
        case(
            "text part with a numeric text",
            json!([{"role": "user", "content": [{"type": "text", "text": 5}]}]),
            det.clone(),
            invalid(&["messages[0].content[0].text", "got a number"]),
        ),
        Case {
            name: "assistant with null content and no tool calls (empty message)",
            input: Input::Value(around(
                vec![
                    user("start"),
                    json!({"role": "assistant", "content": null}),
                    user("again"),
                ],
                vec![user("last"), assistant("done")],
            )),
            opts: Opts::Json(recency()),
            expect: ok("openai", |i, out| {
                no_empty_messages(i, out)?;
                warned(out, "EMPTY_MESSAGE_DROPPED", &["messages[1]"])
            }),
        },
        Case {
            name: "anthropic user with empty string content (empty message)",
            input: Input::Value(anthropic({
                let mut v = vec![user("start"), assistant("ok"), user("")];
                v.extend(filler(10));
                v.extend([user("last"), assistant("done")]);
                v
            })),
            opts: Opts::Json(recency()),
            expect: ok("anthropic", |i, out| {
                no_empty_messages(i, out)?;
                warned(out, "EMPTY_MESSAGE_DROPPED", &["messages[2]"])
            }),
        },
        // ---- OpenAI tool calls
        case(
            "tool_calls is a string",
            json!([u, {"role": "assistant", "content": null, "tool_calls": "read"}]),
            det.clone(),
            invalid(&["messages[1].tool_calls", "got a string"]),
        ),
        case(
            "tool call is a string",
            json!([u, calls(vec![json!("call_1")])]),
            det.clone(),
            invalid(&["messages[1].tool_calls[0]", "got a string"]),
        ),
        case(
            "tool call without id",
            json!([
                u,
                calls(vec![
                    json!({"type": "function", "function": {"name": "f", "arguments": "{}"}})
                ])
            ]),
            det.clone(),
            invalid(&["messages[1].tool_calls[0].id", "missing"]),
        ),
        case(
            "tool call id is a number",
            json!([
                u,
                calls(vec![
                    call("a", "f", "{}"),
                    json!({"id": 7, "type": "function", "function": {"name": "f", "arguments": "{}"}})
                ])
            ]),
            det.clone(),
            invalid(&["messages[1].tool_calls[1].id", "got a number"]),
        ),
        case(
            "tool call without function",
            json!([u, calls(vec![json!({"id": "a", "type": "function"})])]),
            det.clone(),
            invalid(&["messages[1].tool_calls[0].function"]),
        ),
        case(
            "function without name",
            json!([
                u,
                calls(vec![
                    json!({"id": "a", "type": "function", "function": {"arguments": "{}"}})
                ])
            ]),
            det.clone(),
            invalid(&["messages[1].tool_calls[0].function.name", "missing"]),
        ),
        case(
            "arguments is an object",
            json!([
                u,
                calls(vec![
                    json!({"id": "a", "type": "function", "function": {"name": "f", "arguments": {"path": "x"}}})
                ])
            ]),
            det.clone(),
            invalid(&[
                "messages[1].tool_calls[0].function.arguments",
                "got an object",
            ]),
        ),
        case(
            "arguments missing",
            json!([
                u,
                calls(vec![
                    json!({"id": "a", "type": "function", "function": {"name": "f"}})
                ])
            ]),
            det.clone(),
            invalid(&["messages[1].tool_calls[0].function.arguments"]),
        ),
        case(
            "duplicate call ids in one message",
            json!([
                u,
                calls(vec![call("call_1", "f", "{}"), call("call_1", "g", "{}")]),
                tool("call_1", "x")
            ]),
            det.clone(),
            invalid(&["messages[1].tool_calls[1].id", "duplicate", "call_1"]),
        ),
        case(
            "tool message without tool_call_id",
            json!([u, calls(vec![call("a", "f", "{}")]), {"role": "tool", "content": "x"}]),
            det.clone(),
            invalid(&["messages[2].tool_call_id", "missing"]),
        ),
        case(
            "tool_call_id is a number",
            json!([u, calls(vec![call("a", "f", "{}")]), {"role": "tool", "tool_call_id": 1, "content": "x"}]),
            det.clone(),
            invalid(&["messages[2].tool_call_id", "got a number"]),
        ),
        case(
            "arguments that are not valid JSON are kept verbatim",
            around(
                vec![
                    user("run it"),
                    calls(vec![call(
                        "c1",
                        "shell",
                        &format!("{{not json: {}", "x".repeat(400)),
                    )]),
                    tool("c1", "ok"),
                ],
                vec![user("last"), assistant("done")],
            ),
            json!({"mode": "recency_preserving", "protectHead": 2, "protectTailMin": 2, "contextWindow": 1000}),
            ok("openai", |input, out| {
                let original = &input[1];
                if out.messages.contains(original) {
                    Ok(())
                } else {
                    Err("the call with non-JSON arguments is not in the output verbatim".into())
                }
            }),
        ),
        case(
            "orphan tool results (head and tail) are dropped",
            around(
                vec![
                    json!({"role": "system", "content": "sys"}),
                    user("start"),
                    tool("ghost_head", "orphan in the head"),
                    assistant("ok"),
                ],
                vec![
                    user("last"),
                    calls(vec![call("c9", "read_file", r#"{"path": "a.rs"}"#)]),
                    tool("c9", "contents"),
                    tool("ghost_tail", "orphan in the tail"),
                    assistant("done"),
                ],
            ),
            json!({"mode": "recency_preserving", "protectHead": 4, "protectTailMin": 5, "contextWindow": 1000}),
            ok("openai", |_, out| {
                match (
                    mentions(out, "ghost_head"),
                    mentions(out, "ghost_tail"),
                    mentions(out, "\"c9\""),
                ) {
                    (0, 0, 2) => Ok(()),
                    other => Err(format!("(ghost_head, ghost_tail, c9) mentions = {other:?}")),
                }
            }),
        ),
        case(
            "a call answered twice keeps one result",
            around(
                vec![
                    user("start"),
                    calls(vec![call("c1", "f", "{}")]),
                    tool("c1", "first"),
                    tool("c1", "second"),
                ],
                vec![user("last"), assistant("done")],
            ),
            json!({"mode": "recency_preserving", "protectHead": 2, "protectTailMin": 2, "contextWindow": 1000}),
            ok("openai", no_check),
        ),
        case(
            "a call without its result gets a stub",
            around(
                vec![
                    user("start"),
                    calls(vec![call("c1", "f", "{}"), call("c2", "g", "{}")]),
                    tool("c2", "only c2"),
                ],
                vec![user("last"), assistant("done")],
            ),
            json!({"mode": "recency_preserving", "protectHead": 2, "protectTailMin": 2, "contextWindow": 1000}),
            ok("openai", |_, out| {
                let stub = out
                    .messages
                    .iter()
                    .any(|m| m["role"] == "tool" && m["tool_call_id"] == "c1");
                if stub {
                    Ok(())
                } else {
                    Err("no stub result for c1".into())
                }
            }),
        ),
        case(
            "the same call ids reused across turns",
            Value::Array(
                (0..12)
                    .flat_map(|k| {
                        [
                            user(&format!("turn {k}: {PROSE}")),
                            calls(vec![
                                call("call_0", "read_file", r#"{"path": "a.rs"}"#),
                                call("call_1", "shell", r#"{"command": "ls"}"#),
                            ]),
                            tool("call_0", &PROSE.repeat(3)),
                            tool("call_1", "a.rs b.rs"),
                            assistant(&format!("turn {k} done")),
                        ]
                    })
                    .collect(),
            ),
            json!({"mode": "recency_preserving", "protectHead": 3, "protectTailMin": 4, "contextWindow": 1000}),
            ok("openai", no_check),
        ),
        case(
            "call ids reused across turns, messages with ids: synthesized ids stay unique",
            around(
                vec![
                    json!({"id": "m0", "role": "user", "content": "start"}),
                    json!({"id": "m1", "role": "assistant", "content": null, "tool_calls": [call("call_0", "read_file", "{}")]}),
                    json!({"id": "m2", "role": "user", "content": "never mind"}),
                    json!({"id": "m3", "role": "assistant", "content": null, "tool_calls": [call("call_0", "read_file", "{}")]}),
                    json!({"id": "m4", "role": "user", "content": "skip it"}),
                ],
                vec![user("last"), assistant("done")],
            ),
            json!({"mode": "recency_preserving", "protectHead": 5, "protectTailMin": 2, "contextWindow": 1000}),
            ok("openai", |_, out| {
                let ids: Vec<&str> = out
                    .messages
                    .iter()
                    .filter_map(|m| m["id"].as_str())
                    .collect();
                let unique: std::collections::BTreeSet<&str> = ids.iter().copied().collect();
                if unique.len() == ids.len() {
                    Ok(())
                } else {
                    Err(format!("duplicate message ids in the output: {ids:?}"))
                }
            }),
        ),
        case(
            "request object: other fields survive",
            json!({"model": "gpt-4o", "temperature": 0.3, "tools": [{"type": "function"}], "messages": good_history()}),
            recency(),
            ok("openai", |input, out| {
                let Some(req) = &out.request else {
                    return Err("no request in the result".into());
                };
                for key in ["model", "temperature", "tools"] {
                    if req[key] != input[key] {
                        return Err(format!("request.{key} changed"));
                    }
                }
                if req["messages"] != Value::Array(out.messages.clone()) {
                    return Err("request.messages is not the compacted messages".into());
                }
                Ok(())
            }),
        ),
        // ---- Anthropic
        case(
            "anthropic tool_use in a user message",
            anthropic(vec![
                json!({"role": "user", "content": [tool_use("t1", "f", json!({}))]}),
            ]),
            det.clone(),
            invalid(&[
                "messages[0].content[0]",
                "tool_use",
                "an assistant message",
                "a user message",
            ]),
        ),
        case(
            "anthropic tool_result in an assistant message",
            anthropic(vec![
                u.clone(),
                json!({"role": "assistant", "content": [tool_result("t1", json!("x"))]}),
            ]),
            det.clone(),
            invalid(&[
                "messages[1].content[0]",
                "tool_result",
                "a user message",
                "an assistant message",
            ]),
        ),
        case(
            "anthropic system role inside messages",
            anthropic(vec![json!({"role": "system", "content": "sys"}), u.clone()]),
            det.clone(),
            invalid(&["messages[0].role", "system"]),
        ),
        case(
            "anthropic duplicate tool_use ids in one message",
            anthropic(vec![
                u.clone(),
                json!({"role": "assistant", "content": [tool_use("t1", "f", json!({})), tool_use("t1", "g", json!({}))]}),
            ]),
            det.clone(),
            invalid(&["messages[1].content[1].id", "duplicate", "t1"]),
        ),
        case(
            "anthropic tool_use without input",
            anthropic(vec![
                u.clone(),
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f"}]}),
            ]),
            det.clone(),
            invalid(&["messages[1].content[0].input", "missing"]),
        ),
        case(
            "anthropic tool_use without id",
            anthropic(vec![
                u.clone(),
                json!({"role": "assistant", "content": [{"type": "tool_use", "name": "f", "input": {}}]}),
            ]),
            det.clone(),
            invalid(&["messages[1].content[0].id", "missing"]),
        ),
        case(
            "anthropic tool_result content is a number",
            anthropic(vec![
                u.clone(),
                json!({"role": "assistant", "content": [tool_use("t1", "f", json!({}))]}),
                json!({"role": "user", "content": [tool_result("t1", json!(5))]}),
            ]),
            det.clone(),
            invalid(&["messages[2].content[0].content", "got a number"]),
        ),
        case(
            "anthropic content block is a string",
            anthropic(vec![json!({"role": "user", "content": ["hi"]})]),
            det.clone(),
            invalid(&["messages[0].content[0]", "got a string"]),
        ),
        case(
            "anthropic orphan tool_result blocks are dropped",
            anthropic({
                let mut v = vec![
                    user("start"),
                    assistant("hello"),
                    json!({"role": "user", "content": [tool_result("ghost_a", json!("orphan")), text_block("and then")]}),
                    json!({"role": "assistant", "content": [text_block("sure"), tool_use("t1", "read_file", json!({"path": "a.rs"}))]}),
                    json!({"role": "user", "content": [tool_result("t1", json!("contents")), tool_result("ghost_b", json!("orphan"))]}),
                ];
                v.extend(filler(10));
                v.push(json!({"role": "user", "content": [tool_result("ghost_c", json!("orphan")), text_block("last")]}));
                v.push(assistant("done"));
                v
            }),
            json!({"mode": "recency_preserving", "protectHead": 4, "protectTailMin": 2, "contextWindow": 1000}),
            ok("anthropic", |_, out| {
                match (mentions(out, "ghost_"), mentions(out, "\"t1\"")) {
                    (0, 2) => Ok(()),
                    other => Err(format!("(ghost, t1) mentions = {other:?}")),
                }
            }),
        ),
        case(
            "anthropic results message answering none of the calls, plus text",
            anthropic({
                let mut v = vec![
                    user("start"),
                    json!({"role": "assistant", "content": [tool_use("t1", "read_file", json!({"path": "a.rs"}))]}),
                    json!({"role": "user", "content": [tool_result("ghost", json!("orphan")), text_block("and then")]}),
                    assistant("ok"),
                ];
                v.extend(filler(10));
                v.extend([user("last"), assistant("done")]);
                v
            }),
            json!({"mode": "recency_preserving", "protectHead": 4, "protectTailMin": 2, "contextWindow": 1000}),
            ok("anthropic", |_, out| {
                match (
                    mentions(out, "ghost"),
                    mentions(out, "\"t1\""),
                    mentions(out, "and then"),
                ) {
                    (0, 2, 1) => Ok(()),
                    other => Err(format!("(ghost, t1, text) mentions = {other:?}")),
                }
            }),
        ),
        case(
            "format forced to anthropic on an openai history",
            json!([u, calls(vec![call("a", "f", "{}")]), tool("a", "x")]),
            json!({"format": "anthropic"}),
            invalid(&["messages[1]|messages[2]"]),
        ),
        // ---- Moltis
        case(
            "moltis tool_result with success not a boolean",
            moltis(vec![
                u.clone(),
                calls(vec![call("a", "exec", "{}")]),
                json!({"role": "tool_result", "tool_call_id": "a", "tool_name": "exec", "success": "yes", "result": "ok"}),
            ]),
            det.clone(),
            invalid(&["messages[2].success", "boolean"]),
        ),
        case(
            "moltis tool_result without tool_call_id",
            moltis(vec![
                u.clone(),
                calls(vec![call("a", "exec", "{}")]),
                json!({"role": "tool_result", "tool_name": "exec", "success": true, "result": "ok"}),
            ]),
            det.clone(),
            invalid(&["messages[2].tool_call_id", "missing"]),
        ),
        case(
            "moltis tool_result error is a number",
            moltis(vec![
                u.clone(),
                calls(vec![call("a", "exec", "{}")]),
                json!({"role": "tool_result", "tool_call_id": "a", "success": false, "error": 500}),
            ]),
            det.clone(),
            invalid(&["messages[2].error", "got a number"]),
        ),
        case(
            "moltis unknown role",
            moltis(vec![u.clone(), json!({"role": "narrator", "content": "x"})]),
            det.clone(),
            invalid(&["messages[1].role", "narrator"]),
        ),
        case(
            "moltis structured result value is fine",
            moltis({
                let mut v = vec![
                    user("start"),
                    calls(vec![call("a", "exec", r#"{"command": "ls"}"#)]),
                    json!({"role": "tool_result", "tool_call_id": "a", "tool_name": "exec", "success": true, "result": {"stdout": "a.rs", "code": 0}}),
                ];
                v.extend(filler(10));
                v.extend([user("last"), assistant("done")]);
                v
            }),
            json!({"mode": "recency_preserving", "protectHead": 3, "protectTailMin": 2, "contextWindow": 1000}),
            ok("moltis", no_check),
        ),
        // ---- JSON text (the wasm path)
        text_case(
            "10,000 nested arrays inside content",
            format!(
                r#"[{{"role": "user", "content": {}}}]"#,
                nested(10_000, false)
            ),
            det.clone(),
            invalid(&["recursion|nest|depth", "line 1"]),
        ),
        text_case(
            "10,000 nested objects inside a tool input",
            format!(
                r#"{{"system": "s", "messages": [{{"role": "user", "content": "hi"}}, {{"role": "assistant", "content": [{{"type": "tool_use", "id": "t", "name": "f", "input": {}}}]}}]}}"#,
                nested(10_000, true)
            ),
            det.clone(),
            invalid(&["recursion|nest|depth", "line 1"]),
        ),
        text_case(
            "100 nested objects inside a tool input are fine",
            format!(
                r#"{{"system": "s", "messages": [{{"role": "user", "content": "hi"}}, {{"role": "assistant", "content": [{{"type": "tool_use", "id": "t", "name": "f", "input": {}}}]}}, {{"role": "user", "content": [{{"type": "tool_result", "tool_use_id": "t", "content": "ok"}}]}}, {{"role": "assistant", "content": "done"}}]}}"#,
                nested(100, true)
            ),
            det.clone(),
            ok("anthropic", no_check),
        ),
        text_case(
            "truncated JSON text",
            r#"[{"role": "user", "content": "hi"}, {"role": "assist"#.to_string(),
            det.clone(),
            invalid(&["history", "line 1", "column"]),
        ),
        text_case(
            "trailing garbage after the JSON",
            r#"[{"role": "user", "content": "hi"}] ]"#.to_string(),
            det.clone(),
            invalid(&["history", "line 1"]),
        ),
        text_case(
            "a ~50 MB history",
            huge_history(),
            json!({"mode": "recency_preserving"}),
            ok("openai", |_, out| {
                let n = out.messages.len();
                if n > 200 || mentions(out, "[Conversation Compacted]") != 1 {
                    return Err(format!(
                        "{n} messages after compaction, marker count {}",
                        mentions(out, "[Conversation Compacted]")
                    ));
                }
                let last = &out.messages[n - 1];
                if last["content"] != "All crates build; 2,500 warnings remain." {
                    return Err(format!("last message is not the newest one: {last}"));
                }
                Ok(())
            }),
        ),
        // ---- empty
        case(
            "empty array",
            json!([]),
            det.clone(),
            err(EmptyHistory, &["no messages"]),
        ),
        case(
            "request with empty messages",
            json!({"messages": []}),
            recency(),
            err(EmptyHistory, &["no messages"]),
        ),
        case(
            "only system messages",
            json!([{"role": "system", "content": "a"}, {"role": "system", "content": "b"}]),
            det.clone(),
            err(EmptyHistory, &["system"]),
        ),
        case(
            "recency on a history its head and tail already cover",
            json!([u, assistant("hello")]),
            json!({"mode": "recency_preserving"}),
            err(
                TooSmallToCompact,
                &["protect_head", "protect_tail_min", "deterministic"],
            ),
        ),
        // ---- options: types
        opts_case(
            "mode is a number",
            json!({"mode": 3}),
            bad_config(&["mode", "expected a string", "got a number"]),
        ),
        opts_case(
            "protectHead is a string",
            json!({"protectHead": "3"}),
            bad_config(&["protectHead|protect_head", "integer", "got a string"]),
        ),
        opts_case(
            "thresholdPercent is a word",
            json!({"thresholdPercent": "high"}),
            bad_config(&[
                "thresholdPercent|threshold_percent",
                "number",
                "got a string",
            ]),
        ),
        opts_case(
            "showSettingsHint is a number",
            json!({"showSettingsHint": 1}),
            bad_config(&[
                "showSettingsHint|show_settings_hint",
                "boolean",
                "got a number",
            ]),
        ),
        opts_case(
            "contextWindow is an array",
            json!({"contextWindow": [128000]}),
            bad_config(&["contextWindow|context_window", "got an array"]),
        ),
        opts_case(
            "summaryModel is a number",
            json!({"summaryModel": 4}),
            bad_config(&["summaryModel|summary_model", "string"]),
        ),
        opts_case(
            "now is a date string",
            json!({"now": "yesterday"}),
            bad_config(&["now", "got a string"]),
        ),
        opts_case(
            "randomIds is a string",
            json!({"randomIds": "yes"}),
            bad_config(&["randomIds|random_ids", "boolean"]),
        ),
        opts_case(
            "unknown mode",
            json!({"mode": "turbo"}),
            bad_config(&[
                "turbo",
                "deterministic",
                "recency_preserving",
                "structured",
                "llm_replace",
            ]),
        ),
        opts_case(
            "unknown format",
            json!({"format": "bard"}),
            bad_config(&["format", "bard", "openai"]),
        ),
        opts_case(
            "unknown alternation",
            json!({"alternation": "interleave"}),
            bad_config(&["alternation", "interleave", "merge"]),
        ),
        opts_case(
            "unknown tokenizer",
            json!({"tokenizer": "gpt2"}),
            bad_config(&["tokenizer", "gpt2", "o200k"]),
        ),
        // ---- options: values
        opts_case(
            "protectHead is negative",
            json!({"protectHead": -1}),
            bad_config(&["protectHead|protect_head", "-1"]),
        ),
        opts_case(
            "protectHead is fractional",
            json!({"protectHead": 2.5}),
            bad_config(&["protectHead|protect_head", "2.5", "integer"]),
        ),
        opts_case(
            "contextWindow is 1e300",
            json!({"contextWindow": 1e300}),
            ok("openai", |_, out| {
                warned(out, "CLAMPED", &["contextWindow", "9007199254740992"])
            }),
        ),
        opts_case(
            "contextWindow is u64::MAX",
            json!({"contextWindow": u64::MAX}),
            ok("openai", |_, out| {
                warned(out, "CLAMPED", &["contextWindow", "9007199254740992"])
            }),
        ),
        opts_case(
            "thresholdPercent is 1e308",
            json!({"thresholdPercent": 1e308}),
            ok("openai", |_, out| {
                warned(out, "CLAMPED", &["threshold", "0.95"])
            }),
        ),
        opts_case(
            "tailBudgetRatio is negative",
            json!({"tailBudgetRatio": -3, "mode": "recency_preserving", "protectHead": 2, "protectTailMin": 2, "contextWindow": 1000}),
            ok("openai", |_, out| {
                warned(
                    out,
                    "CLAMPED",
                    &["tail_budget_ratio|tailBudgetRatio", "0.05"],
                )
            }),
        ),
        opts_case(
            "contextWindow 0 is not a window",
            json!({"contextWindow": 0, "mode": "recency_preserving", "protectHead": 1, "protectTailMin": 1}),
            bad_config(&["contextWindow = 0", "not a context window"]),
        ),
        opts_case(
            "the answer's room as large as the window",
            json!({"contextWindow": 8000, "reserveOutputTokens": 8000}),
            bad_config(&["reserve_output_tokens (8000)", "context_window (8000)"]),
        ),
        Case {
            name: "options text is not JSON (NaN)",
            input: Input::Text(good_history().to_string()),
            opts: Opts::Text(r#"{"thresholdPercent": NaN}"#),
            expect: bad_config(&["options", "line 1"]),
        },
        Case {
            name: "options are an array",
            input: Input::Text(good_history().to_string()),
            opts: Opts::Text("[1, 2]"),
            expect: bad_config(&["options", "got an array"]),
        },
        // ---- options: keys
        opts_case(
            "unknown option key is a warning",
            json!({"protectHeads": 3}),
            ok("openai", |_, out| {
                warned(out, "UNKNOWN_OPTION", &["protectHeads|protect_heads"])
            }),
        ),
        opts_case(
            "unknown option key with strict",
            json!({"protectHeads": 3, "strict": true}),
            bad_config(&["protectHeads|protect_heads", "strict", "!ignored"]),
        ),
        opts_case(
            "strict is a string",
            json!({"strict": "yes"}),
            bad_config(&["strict", "boolean"]),
        ),
        // ---- TOML
        toml_case(
            "TOML syntax error",
            "[chat.compaction]\nmode = \"deterministic\nprotect_head = 3\n",
            bad_config(&["line 2", "column"]),
        ),
        toml_case(
            "TOML wrong type",
            "[chat.compaction]\nmode = \"recency_preserving\"\nprotect_head = \"three\"\n",
            bad_config(&["protect_head", "line 3", "column"]),
        ),
        toml_case(
            "TOML unknown mode",
            "[server]\nport = 1\n\n[chat.compaction]\nmode = \"summarize\"\n",
            bad_config(&["mode", "summarize", "line 5", "column"]),
        ),
        toml_case(
            "TOML nan threshold",
            "threshold_percent = nan\n",
            bad_config(&["threshold_percent", "finite", "line 1", "column"]),
        ),
        toml_case(
            "TOML chat.compaction is not a table",
            "[chat]\ncompaction = 3\n",
            bad_config(&["compaction", "line 2", "column"]),
        ),
        toml_case(
            "TOML unknown key with strict",
            "[chat.compaction]\nstrict = true\nprotect_tails = 3\n",
            bad_config(&["protect_tails", "line 3", "column", "strict", "!ignored"]),
        ),
        // ---- LLM modes without a summarizer
        opts_case(
            "structured without summarizer",
            json!({"mode": "structured"}),
            err(SummarizerRequired, &["structured", "summarize"]),
        ),
        opts_case(
            "llm_replace without summarizer",
            json!({"mode": "llm-replace"}),
            err(SummarizerRequired, &["llm_replace", "summarize"]),
        ),
    ]
}

fn warned(out: &Output, code: &str, subs: &[&str]) -> Result<(), String> {
    let found = out
        .warnings
        .iter()
        .any(|(c, m)| c == code && subs.iter().all(|s| contains_any(m, s)));
    if found {
        Ok(())
    } else {
        Err(format!(
            "no {code} warning containing {subs:?}; warnings: {:?}",
            out.warnings
        ))
    }
}

// ---------------------------------------------------------------- the runner

/// `"a|b"`: `haystack` contains `a` or `b`; `"!a"`: it does not contain `a`.
fn contains_any(haystack: &str, alternatives: &str) -> bool {
    match alternatives.strip_prefix('!') {
        Some(banned) => !haystack.contains(banned),
        None => alternatives.split('|').any(|s| haystack.contains(s)),
    }
}

fn config(opts: &Opts) -> Result<ParsedOptions, Error> {
    match opts {
        Opts::Json(v) => options::from_json(v),
        Opts::Text(t) => options::from_json_text(t),
        Opts::Toml(t) => options::from_toml(t),
    }
}

fn run(case: &Case) -> Result<Output, Error> {
    match &case.input {
        Input::Value(input) => {
            let r = compact(input, &config(&case.opts)?)?;
            Ok(Output {
                messages: r.messages,
                request: r.request,
                warnings: r
                    .warnings
                    .into_iter()
                    .map(|w| (w.code.to_string(), w.message))
                    .collect(),
            })
        }
        Input::Text(text) => {
            let opts = match &case.opts {
                Opts::Json(v) => v.to_string(),
                Opts::Text(t) => t.to_string(),
                Opts::Toml(_) => unreachable!("TOML options go with value inputs"),
            };
            let out: Value = serde_json::from_str(&compact_json(text, &opts)?).map_err(|e| {
                Error::new(
                    ErrorKind::InvalidInput,
                    format!("compact_json returned invalid JSON: {e}"),
                )
            })?;
            let warnings = out["warnings"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|w| {
                    let s = |k: &str| w[k].as_str().unwrap_or("").to_string();
                    (s("code"), s("message"))
                })
                .collect();
            let messages = match out["messages"].as_array() {
                Some(m) => m.clone(),
                None => {
                    return Err(Error::new(
                        ErrorKind::InvalidInput,
                        "compact_json output has no messages array",
                    ))
                }
            };
            Ok(Output {
                messages,
                request: None,
                warnings,
            })
        }
    }
}

fn describe(result: &Result<Output, Error>) -> String {
    match result {
        Ok(out) => format!(
            "Ok ({} messages, warnings {:?})",
            out.messages.len(),
            out.warnings
        ),
        Err(e) => format!("Err({}: {})", e.code(), e.message()),
    }
}

fn describe_expect(e: &Expect) -> String {
    match e {
        Expect::Err(kind, subs) => format!("Err({}, containing {subs:?})", kind.code()),
        Expect::Ok(format, _) => format!("Ok({format}, provider rules + case check)"),
    }
}

/// `None` when `result` matches one of `case.expect`, else why not.
fn judge(case: &Case, result: &Result<Output, Error>) -> Option<String> {
    let input = match &case.input {
        Input::Value(v) => v.clone(),
        Input::Text(_) => Value::Null,
    };
    let mut reasons = Vec::new();
    for e in [&case.expect] {
        match (e, result) {
            (Expect::Err(kind, subs), Err(got)) => {
                if got.kind() != *kind {
                    reasons.push(format!("wrong code {}", got.code()));
                    continue;
                }
                let missing: Vec<_> = subs
                    .iter()
                    .filter(|s| !contains_any(got.message(), s))
                    .collect();
                if missing.is_empty() {
                    return None;
                }
                reasons.push(format!("message lacks {missing:?}"));
            }
            (Expect::Ok(format, check), Ok(out)) => {
                match rules::check(format, &out.messages).and_then(|()| check(&input, out)) {
                    Ok(()) => return None,
                    Err(why) => reasons.push(why),
                }
            }
            _ => {}
        }
    }
    let expected = [describe_expect(&case.expect)];
    Some(format!(
        "expected {}; got {}{}",
        expected.join(" or "),
        describe(result),
        if reasons.is_empty() {
            String::new()
        } else {
            format!(" ({})", reasons.join("; "))
        }
    ))
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".into())
}

/// The other entry points must not panic on the same input, and must agree
/// that a malformed history is malformed.
fn side_entry_points(case: &Case) -> Option<String> {
    // (A JSON string is a text to `estimate_tokens`, not a history.)
    let Input::Value(input) = &case.input else {
        return None;
    };
    if input.is_string() {
        return None;
    }
    let Ok(config) = config(&case.opts) else {
        return None;
    };
    let input_error = matches!(case.expect, Expect::Err(ErrorKind::InvalidInput, _));
    let est = catch_unwind(AssertUnwindSafe(|| {
        estimate_tokens(input, &config).map(|_| ())
    }));
    let trig = catch_unwind(AssertUnwindSafe(|| {
        measure(input, &config, "pending text").map(|_| ())
    }));
    for (what, r) in [("estimate_tokens", est), ("measure", trig)] {
        match r {
            Err(p) => return Some(format!("{what} PANICKED: {}", panic_text(&*p))),
            Ok(Ok(())) if input_error => {
                return Some(format!("{what} accepted a malformed history"))
            }
            Ok(Err(e)) if input_error && e.kind() != ErrorKind::InvalidInput => {
                return Some(format!("{what} gave {} instead of INVALID_INPUT", e.code()))
            }
            Ok(Err(e)) if !input_error && e.kind() == ErrorKind::InvalidInput => {
                return Some(format!("{what} rejected a valid history: {e}"))
            }
            _ => {}
        }
    }
    None
}

fn good_call() -> String {
    let config = options::from_json(&recency()).expect("good options");
    let r = compact(&good_history(), &config).expect("good history compacts");
    rules::check("openai", &r.messages).expect("good output obeys the provider rules");
    assert!(
        r.messages
            .iter()
            .filter(|m| m["content"]
                .as_str()
                .is_some_and(|t| t.starts_with("[Conversation Compacted]")))
            .count()
            == 1,
        "good output has one marker"
    );
    assert_eq!(
        r.messages.last(),
        good_history().as_array().and_then(|a| a.last())
    );
    r.to_json()
}

#[test]
fn every_malformed_input_gets_a_located_error_or_a_correct_result() {
    let before = good_call();
    let cases = catalogue();
    assert!(cases.len() >= 30, "catalogue too small: {}", cases.len());
    let verbose = std::env::var_os("BAD_INPUT_VERBOSE").is_some();
    let mut names = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for case in &cases {
        assert!(
            names.insert(case.name),
            "duplicate case name {:?}",
            case.name
        );
        let result = catch_unwind(AssertUnwindSafe(|| run(case)));
        if verbose {
            match &result {
                Ok(r) => eprintln!("[{}] {}", case.name, describe(r)),
                Err(_) => eprintln!("[{}] panicked", case.name),
            }
        }
        let problem = match &result {
            Err(p) => Some(format!("PANICKED: {}", panic_text(&**p))),
            Ok(r) => judge(case, r),
        };
        if let Some(p) = problem.or_else(|| side_entry_points(case)) {
            failures.push(format!("[{}] {p}", case.name));
        }
    }
    let after = good_call();
    assert_eq!(
        before, after,
        "a good call gives a different answer after the catalogue"
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    eprintln!("{} malformed-input cases checked", cases.len());
}

/// Half an emoji (a lone UTF-16 surrogate, as `JSON.stringify` writes it)
/// survives `compact_json` as the same escape, in a kept message (its bytes)
/// and in a summary that quotes it; nothing is replaced.
#[test]
fn lone_surrogate_escapes_survive_json_text() {
    for escape in [r"\ud800", r"\udc00"] {
        let filler = "more words ".repeat(200);
        let history = format!(
            r#"[{{"role": "user", "content": "broken emoji {escape} here {filler}"}}, {{"role": "assistant", "content": "ok {filler}"}}, {{"role": "user", "content": "and {escape} again"}}]"#
        );
        for mode in ["deterministic", "recency_preserving"] {
            let options = format!(
                r#"{{"mode": "{mode}", "protectHead": 0, "protectTailMin": 1, "contextWindow": 400}}"#
            );
            let out = compact_json(&history, &options).unwrap();
            assert!(
                out.contains(&format!("and {escape} again")),
                "{mode}: {out}"
            );
            assert!(!out.contains('\u{FFFD}'), "{mode}: {out}");
            // the same escapes where a summary or marker quotes the first message
            if mode == "deterministic" {
                assert!(
                    out.contains(&format!("broken emoji {escape} here")),
                    "{out}"
                );
            }
        }
    }
}
