//! Data-driven conformance suite: every case in `tests/fixtures/*.json` is run
//! through the library and checked against its declarative expectations. The
//! fixtures are plain JSON so the JavaScript test suite can run the same cases.
//!
//! # Fixture files
//!
//! Each file is `{"about": "...", "cases": [case, ...]}`. A case has:
//!
//! | key | meaning |
//! |---|---|
//! | `name` | unique id of the case (required) |
//! | `description` | what the case checks and where the SPEC says so (required) |
//! | `difference` | `"DIFFERENCE: ..."`: where and why we deliberately differ from Moltis |
//! | `op` | `"compact"` (default), `"shouldCompact"` or `"config"` |
//! | `format` | `"openai"`, `"anthropic"` or `"moltis"`: the format of `input` (required for `compact`); not passed to the library (auto-detection is part of what is tested), used for the provider-rule check |
//! | `input` | a message array or a request object (`compact`, `shouldCompact`) |
//! | `options` | options object as a JS caller passes it (camelCase or snake_case) |
//! | `toml` | a TOML document instead of `options` (`[chat.compaction]` of a moltis.toml, or a bare table) |
//! | `pending` | the pending new user text (`shouldCompact`) |
//! | `expect` | the expectations (below) |
//!
//! Inside `input` and `pending`, two macros keep big inputs readable:
//! `{"$repeat": "text", "times": n}` is `text` repeated `n` times, and
//! `{"$concat": [part, ...]}` is its (expanded) string parts joined.
//!
//! # Expectations
//!
//! Message indexes are output positions given as strings; a negative index counts
//! from the end (`"-1"` is the last message). "Content" is the message's `content`
//! string (the check fails if it is not a string). JSON pointers (RFC 6901) are
//! evaluated against the result document `{messages, request?, notice, summary?,
//! warnings}` of `compact`.
//!
//! | key | op | checks |
//! |---|---|---|
//! | `error` | any | the call fails with this stable code (`TOO_SMALL_TO_COMPACT` …) |
//! | `errorContains` | any | the error message contains each string |
//! | `warningsContain` | any | each string occurs in some warning's message |
//! | `warningsNotContain` | any | no warning message contains any of the strings |
//! | `warningCount` | any | exact number of warnings |
//! | `length` | compact | number of output messages |
//! | `roles` | compact | the output roles, in order |
//! | `outputIndexEqualsInput` | compact | `{"out": in}`: output message `out` deep-equals input message `in` (verbatim copy) |
//! | `messageEquals` | compact | `{"i": message}`: output message `i` deep-equals `message` |
//! | `containsMessage` | compact | each listed message deep-equals some output message |
//! | `messageContains` | compact | `{"i": [s, ...]}`: content of message `i` contains each `s` |
//! | `messageNotContains` | compact | `{"i": [s, ...]}`: content contains none of them |
//! | `messageContainsOnce` | compact | `{"i": [s, ...]}`: each `s` occurs exactly once in the content |
//! | `messageHasLines` | compact | `{"i": [line, ...]}`: each `line` is a whole line of the content |
//! | `messageStartsWith` / `messageEndsWith` | compact | `{"i": s}` |
//! | `messageMaxBytes` | compact | `{"i": n}`: content is at most `n` UTF-8 bytes |
//! | `countMessagesContaining` | compact | `{"s": n}`: exactly `n` output messages contain `s` in their JSON serialization |
//! | `summaryBlock` | compact | `{"message": i, "maxBytes", "maxLines", "maxLineBytes"}`: the `<summary>…</summary>` block of message `i`, tags included, stays within these bounds |
//! | `summaryContains` | compact | the result's `summary` contains each string |
//! | `toolArgsValidJson` | compact | `true`: every output `tool_calls[].function.arguments` parses as JSON |
//! | `pointerEquals` | compact | `{"/ptr": value}` deep equality |
//! | `pointerStartsWith` | compact | `{"/ptr": s}`: the string there starts with `s` |
//! | `pointerContains` | compact | `{"/ptr": [s, ...]}`: the string there contains each `s` |
//! | `pointerAbsent` / `pointerPresent` | compact | `["/ptr", ...]` |
//! | `pointerType` | compact | `{"/ptr": "string" \| "number" \| "boolean" \| "object" \| "array" \| "null"}` |
//! | `pointerMaxBytes` | compact | `{"/ptr": n}`: the string there is at most `n` bytes |
//! | `pointerJsonPartial` | compact | `{"/ptr": object}`: the string there parses as JSON and matches `object` partially |
//! | `notice` | compact | partial match of `notice` |
//! | `noticeText` | compact | `notice.text` exactly |
//! | `requestFieldsKept` | compact | `true`: `request` is the input object with only `messages` replaced (by the output messages); `false`: there is no `request` |
//! | `smaller` | compact | `true`: `notice.tokensAfter < notice.tokensBefore` |
//! | `shouldCompact` | shouldCompact | the decision |
//! | `trigger` | shouldCompact | partial match of `{shouldCompact, estimatedTokens, threshold, reported}` |
//! | `effectiveOptions` | config | partial match of the effective options (camelCase keys) |
//! | `tailBudget` / `triggerTokens` | config | derived budgets: `max(1, round(window × threshold × ratio))` / `max(1, round(window × threshold))` |
//!
//! "Partial match": every key of an expected object must match recursively;
//! arrays and scalars must be equal (numbers compared as numbers).
//!
//! Checked on every successful `compact`, without being asked: the input is not
//! mutated; a second run gives byte-identical output (unless `randomIds`); the
//! output obeys the provider rules of `format` (SPEC §2); `notice.messagesBefore`
//! / `messagesAfter` match the input and output lengths.
//!
//! Unknown keys (case, expectation, or `summaryBlock`) fail the case loudly.
//! Failures quote message contents cut to 400 bytes; set `CONFORMANCE_FULL=1`
//! to see them whole.

use std::fs;
use std::path::{Path, PathBuf};

use chat_compaction::tokens::{Estimator, Profile, TokenCounter};
use chat_compaction::{
    compact_with, measure_with, options, validate, Error, Format, ParsedOptions, ValidateOptions,
};
use serde_json::{json, Map, Value};

#[path = "common/rules.rs"]
mod rules;

const CASE_KEYS: &[&str] = &[
    "name",
    "description",
    "difference",
    "op",
    "format",
    "input",
    "options",
    "toml",
    "pending",
    "counter",
    "expect",
];

const ANY_KEYS: &[&str] = &[
    "error",
    "errorContains",
    "warningsContain",
    "warningsNotContain",
    "warningCount",
];

const COMPACT_KEYS: &[&str] = &[
    "length",
    "roles",
    "outputIndexEqualsInput",
    "messageEquals",
    "containsMessage",
    "messageContains",
    "messageNotContains",
    "messageContainsOnce",
    "messageHasLines",
    "messageStartsWith",
    "messageEndsWith",
    "messageMaxBytes",
    "countMessagesContaining",
    "summaryBlock",
    "summaryContains",
    "toolArgsValidJson",
    "pointerEquals",
    "pointerStartsWith",
    "pointerContains",
    "pointerAbsent",
    "pointerPresent",
    "pointerType",
    "pointerMaxBytes",
    "pointerJsonPartial",
    "notice",
    "noticeText",
    "requestFieldsKept",
    "smaller",
];

const TRIGGER_KEYS: &[&str] = &["shouldCompact", "trigger"];

const CONFIG_KEYS: &[&str] = &["effectiveOptions", "tailBudget", "triggerTokens"];

const SUMMARY_BLOCK_KEYS: &[&str] = &["message", "maxBytes", "maxLines", "maxLineBytes"];

/// A failed expectation.
type Check = Result<(), String>;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Expands the `$repeat` / `$concat` macros.
fn expand(v: &Value) -> Result<Value, String> {
    match v {
        Value::Object(o) if o.contains_key("$repeat") => {
            let text = o["$repeat"].as_str().ok_or("$repeat: expected a string")?;
            let times = o
                .get("times")
                .and_then(Value::as_u64)
                .ok_or("$repeat: expected \"times\": <non-negative integer>")?;
            if o.len() != 2 {
                return Err("$repeat: only \"$repeat\" and \"times\" are allowed".into());
            }
            Ok(Value::String(text.repeat(
                usize::try_from(times).map_err(|e| e.to_string())?,
            )))
        }
        Value::Object(o) if o.contains_key("$concat") => {
            if o.len() != 1 {
                return Err("$concat: no other keys allowed".into());
            }
            let parts = o["$concat"]
                .as_array()
                .ok_or("$concat: expected an array")?;
            let mut s = String::new();
            for p in parts {
                match expand(p)? {
                    Value::String(t) => s.push_str(&t),
                    other => return Err(format!("$concat: parts must be strings, got {other}")),
                }
            }
            Ok(Value::String(s))
        }
        Value::Object(o) => {
            let mut out = Map::new();
            for (k, v) in o {
                out.insert(k.clone(), expand(v)?);
            }
            Ok(Value::Object(out))
        }
        Value::Array(a) => Ok(Value::Array(
            a.iter().map(expand).collect::<Result<_, _>>()?,
        )),
        other => Ok(other.clone()),
    }
}

/// Numbers compare as numbers (1 == 1.0); everything else structurally.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn partial(expected: &Value, actual: &Value, path: &str) -> Check {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, v) in e {
                let p = format!("{path}.{k}");
                match a.get(k) {
                    Some(got) => partial(v, got, &p)?,
                    None => return Err(format!("{p}: missing (expected {v})")),
                }
            }
            Ok(())
        }
        _ if same(expected, actual) => Ok(()),
        _ => Err(format!("{path}: expected {expected}, got {actual}")),
    }
}

fn obj<'a>(v: &'a Value, key: &str) -> Result<&'a Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("fixture: {key} must be an object"))
}

fn arr<'a>(v: &'a Value, key: &str) -> Result<&'a Vec<Value>, String> {
    v.as_array()
        .ok_or_else(|| format!("fixture: {key} must be an array"))
}

fn strs<'a>(v: &'a Value, key: &str) -> Result<Vec<&'a str>, String> {
    arr(v, key)?
        .iter()
        .map(|s| {
            s.as_str()
                .ok_or_else(|| format!("fixture: {key} must hold strings"))
        })
        .collect()
}

fn string<'a>(v: &'a Value, key: &str) -> Result<&'a str, String> {
    v.as_str()
        .ok_or_else(|| format!("fixture: {key} must be a string"))
}

fn number(v: &Value, key: &str) -> Result<usize, String> {
    v.as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("fixture: {key} must be a non-negative integer"))
}

/// Resolves an index key (`"2"`, `"-1"`) against a length.
fn index(key: &str, len: usize) -> Result<usize, String> {
    let i: i64 = key
        .parse()
        .map_err(|_| format!("fixture: bad message index {key:?}"))?;
    let len_i = i64::try_from(len).map_err(|e| e.to_string())?;
    let resolved = if i < 0 { len_i + i } else { i };
    if resolved < 0 || resolved >= len_i {
        return Err(format!(
            "message index {key} out of range (output has {len} messages)"
        ));
    }
    usize::try_from(resolved).map_err(|e| e.to_string())
}

fn index_value(v: &Value, len: usize) -> Result<usize, String> {
    match v {
        Value::Number(n) => index(&n.to_string(), len),
        Value::String(s) => index(s, len),
        _ => Err(format!("fixture: bad index {v}")),
    }
}

fn content<'a>(messages: &'a [Value], key: &str) -> Result<(usize, &'a str), String> {
    let i = index(key, messages.len())?;
    messages[i]["content"]
        .as_str()
        .map(|c| (i, c))
        .ok_or_else(|| {
            format!(
                "messages[{i}].content is not a string: {}",
                messages[i]["content"]
            )
        })
}

fn at<'a>(doc: &'a Value, ptr: &str) -> Result<&'a Value, String> {
    doc.pointer(ptr).ok_or_else(|| format!("{ptr}: absent"))
}

fn at_str<'a>(doc: &'a Value, ptr: &str) -> Result<&'a str, String> {
    at(doc, ptr)?
        .as_str()
        .ok_or_else(|| format!("{ptr}: not a string"))
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn short(s: &str) -> String {
    let one_line = s.replace('\n', "⏎");
    if one_line.len() <= 400 || std::env::var_os("CONFORMANCE_FULL").is_some() {
        return one_line;
    }
    let mut end = 400;
    while !one_line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &one_line[..end], s.len())
}

fn input_messages(input: &Value) -> &[Value] {
    match input {
        Value::Array(a) => a,
        other => other["messages"].as_array().map_or(&[], Vec::as_slice),
    }
}

struct Case<'a> {
    raw: &'a Map<String, Value>,
    expect: &'a Map<String, Value>,
}

impl Case<'_> {
    fn configure(&self) -> Result<Result<ParsedOptions, Error>, String> {
        match (self.raw.get("options"), self.raw.get("toml")) {
            (Some(_), Some(_)) => Err("fixture: give either options or toml, not both".into()),
            (_, Some(t)) => Ok(options::from_toml(string(t, "toml")?)),
            (Some(o), None) => Ok(options::from_json(o)),
            (None, None) => Ok(options::from_json(&Value::Null)),
        }
    }

    fn input(&self) -> Result<Value, String> {
        expand(
            self.raw
                .get("input")
                .ok_or("fixture: input is required for this op")?,
        )
    }
}

/// Checks an error against `error` / `errorContains`, or reports it as unexpected.
fn check_error(expect: &Map<String, Value>, err: &Error, out: &mut Vec<String>) {
    let Some(code) = expect.get("error") else {
        out.push(format!("unexpected error {err}"));
        return;
    };
    if code.as_str() != Some(err.code()) {
        out.push(format!("expected error {code}, got {err}"));
    }
    if let Some(subs) = expect.get("errorContains") {
        match strs(subs, "errorContains") {
            Ok(subs) => {
                for s in subs {
                    if !err.message().contains(s) {
                        out.push(format!("error message lacks {s:?}: {}", err.message()));
                    }
                }
            }
            Err(e) => out.push(e),
        }
    }
}

fn check_warnings(expect: &Map<String, Value>, config: &ParsedOptions, out: &mut Vec<String>) {
    let messages: Vec<&str> = config.warnings.iter().map(|w| w.message.as_str()).collect();
    let mut run = |r: Check| {
        if let Err(e) = r {
            out.push(e);
        }
    };
    if let Some(v) = expect.get("warningsContain") {
        run(strs(v, "warningsContain").and_then(|subs| {
            for s in subs {
                if !messages.iter().any(|m| m.contains(s)) {
                    return Err(format!("no warning contains {s:?}; warnings: {messages:?}"));
                }
            }
            Ok(())
        }));
    }
    if let Some(v) = expect.get("warningsNotContain") {
        run(strs(v, "warningsNotContain").and_then(|subs| {
            for s in subs {
                if let Some(m) = messages.iter().find(|m| m.contains(s)) {
                    return Err(format!("a warning contains {s:?}: {m}"));
                }
            }
            Ok(())
        }));
    }
    if let Some(v) = expect.get("warningCount") {
        run(number(v, "warningCount").and_then(|n| {
            if messages.len() == n {
                Ok(())
            } else {
                Err(format!(
                    "expected {n} warnings, got {}: {messages:?}",
                    messages.len()
                ))
            }
        }));
    }
}

fn run_case(case: &Case<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let op = case
        .raw
        .get("op")
        .and_then(Value::as_str)
        .unwrap_or("compact");
    let allowed: &[&[&str]] = match op {
        "compact" => &[ANY_KEYS, COMPACT_KEYS],
        "shouldCompact" => &[ANY_KEYS, TRIGGER_KEYS],
        "config" => &[ANY_KEYS, CONFIG_KEYS],
        other => return vec![format!("fixture: unknown op {other:?}")],
    };
    for key in case.expect.keys() {
        if !allowed.iter().any(|set| set.contains(&key.as_str())) {
            out.push(format!(
                "fixture: unknown expectation key {key:?} for op {op:?}"
            ));
        }
    }
    if !out.is_empty() {
        return out;
    }
    let config = match case.configure() {
        Err(e) => return vec![e],
        Ok(Err(e)) => {
            check_error(case.expect, &e, &mut out);
            return out;
        }
        Ok(Ok(c)) => c,
    };
    check_warnings(case.expect, &config, &mut out);
    let result = match op {
        "config" => check_config(case.expect, &config),
        "shouldCompact" => check_trigger(case, &config, &mut out),
        _ => check_compact(case, &config, &mut out),
    };
    if let Err(e) = result {
        out.push(e);
    }
    out
}

fn check_config(expect: &Map<String, Value>, config: &ParsedOptions) -> Check {
    if expect.contains_key("error") {
        return Err(format!(
            "expected error {}, but the options were accepted",
            expect["error"]
        ));
    }
    let o = &config.options;
    if let Some(e) = expect.get("effectiveOptions") {
        let actual: Value = serde_json::from_str(&o.to_json()).map_err(|e| e.to_string())?;
        partial(e, &actual, "options")?;
    }
    if let Some(e) = expect.get("tailBudget") {
        let want = e.as_u64().ok_or("fixture: tailBudget must be an integer")?;
        if o.tail_budget() != want {
            return Err(format!(
                "tail budget: expected {want}, got {}",
                o.tail_budget()
            ));
        }
    }
    if let Some(e) = expect.get("triggerTokens") {
        let want = e
            .as_u64()
            .ok_or("fixture: triggerTokens must be an integer")?;
        if o.trigger_tokens() != want {
            return Err(format!(
                "trigger tokens: expected {want}, got {}",
                o.trigger_tokens()
            ));
        }
    }
    Ok(())
}

fn check_trigger(case: &Case<'_>, config: &ParsedOptions, out: &mut Vec<String>) -> Check {
    let input = case.input()?;
    let pending = match case.raw.get("pending") {
        Some(p) => expand(p)?
            .as_str()
            .ok_or("fixture: pending must be a string")?
            .to_string(),
        None => String::new(),
    };
    let counter = case.counter()?;
    let trigger = match measure_with(&input, config, &pending, &*counter) {
        Ok(t) => t,
        Err(e) => {
            check_error(case.expect, &e, out);
            return Ok(());
        }
    };
    if case.expect.contains_key("error") {
        return Err(format!(
            "expected error {}, got {trigger:?}",
            case.expect["error"]
        ));
    }
    if let Some(want) = case.expect.get("shouldCompact") {
        if want.as_bool() != Some(trigger.should_compact) {
            out.push(format!("shouldCompact: expected {want}, got {trigger:?}"));
        }
    }
    if let Some(want) = case.expect.get("trigger") {
        let actual: Value = serde_json::from_str(&trigger.to_json()).map_err(|e| e.to_string())?;
        partial(want, &actual, "trigger")?;
    }
    Ok(())
}

/// `ceil(characters / 4)` a text: the case key `"counter": "chars/4"`, for cases
/// whose outcome depends on counts, so a refit of the estimator leaves them be.
struct CharsOver4;

impl TokenCounter for CharsOver4 {
    fn count(&self, text: &str) -> u64 {
        (text.chars().count() as u64).div_ceil(4)
    }
    fn profile(&self) -> Profile {
        Profile::O200k
    }
}

impl Case<'_> {
    fn counter(&self) -> Result<Box<dyn TokenCounter>, String> {
        match self.raw.get("counter").map(|c| c.as_str()) {
            None => Ok(Box::new(Estimator::default())),
            Some(Some("chars/4")) => Ok(Box::new(CharsOver4)),
            Some(other) => Err(format!("fixture: unknown counter {other:?}")),
        }
    }
}

fn check_compact(case: &Case<'_>, config: &ParsedOptions, out: &mut Vec<String>) -> Check {
    let input = case.input()?;
    let pristine = input.clone();
    let counter = case.counter()?;
    let compact = |input: &Value, config: &ParsedOptions| compact_with(input, config, &*counter);
    let result = match compact(&input, config) {
        Ok(r) => r,
        Err(e) => {
            check_error(case.expect, &e, out);
            return Ok(());
        }
    };
    if case.expect.contains_key("error") {
        return Err(format!(
            "expected error {}, got {} messages: {}",
            case.expect["error"],
            result.messages.len(),
            short(&serde_json::to_string(&result.messages).unwrap_or_default())
        ));
    }
    let format = case
        .raw
        .get("format")
        .and_then(Value::as_str)
        .ok_or("fixture: compact cases need \"format\"")?;
    if Format::from_name(format).is_none() {
        return Err(format!("fixture: unknown format {format:?}"));
    }

    // Invariants.
    if input != pristine {
        out.push("the input was mutated".into());
    }
    let mut doc: Value = serde_json::from_str(&result.to_json()).map_err(|e| e.to_string())?;
    if let (Some(r), Some(d)) = (&result.request, doc.as_object_mut()) {
        d.insert("request".into(), r.clone());
    }
    if !config.options.random_ids {
        match compact(&input, config) {
            Ok(again) => {
                if result.to_json() != again.to_json() || result.request != again.request {
                    out.push("a second run gave different output".into());
                }
            }
            Err(e) => out.push(format!("a second run failed: {e}")),
        }
    }
    let legacy = matches!(format, "openai" | "anthropic" | "moltis");
    let checked = if legacy {
        rules::check(format, &result.messages)
    } else {
        let opts = ValidateOptions::from_json(&json!({ "format": format })).unwrap_or_default();
        match validate(&Value::Array(result.messages.clone()), &opts) {
            Ok(v) if v.violations.is_empty() => Ok(()),
            Ok(v) => Err(format!("{:?}", v.violations)),
            Err(e) => Err(e.to_string()),
        }
    };
    if let Err(e) = checked {
        out.push(format!("provider rule broken: {e}"));
    }
    let before = input_messages(&input).len();
    if result.notice.messages_before != before
        || result.notice.messages_after != result.messages.len()
    {
        out.push(format!(
            "notice counts {} → {} do not match the input ({before}) and output ({})",
            result.notice.messages_before,
            result.notice.messages_after,
            result.messages.len()
        ));
    }

    let msgs = &result.messages;
    let inputs = input_messages(&input);
    let mut run = |r: Check| {
        if let Err(e) = r {
            out.push(e);
        }
    };
    for (key, want) in case.expect {
        let r = match key.as_str() {
            "error" | "errorContains" | "warningsContain" | "warningsNotContain"
            | "warningCount" => Ok(()),
            "length" => number(want, key).and_then(|n| {
                if msgs.len() == n {
                    Ok(())
                } else {
                    Err(format!(
                        "length: expected {n}, got {}; roles {:?}",
                        msgs.len(),
                        roles(msgs)
                    ))
                }
            }),
            "roles" => strs(want, key).and_then(|w| {
                let got = roles(msgs);
                if got == w {
                    Ok(())
                } else {
                    Err(format!("roles: expected {w:?}, got {got:?}"))
                }
            }),
            "outputIndexEqualsInput" => obj(want, key).and_then(|m| {
                for (o, i) in m {
                    let o = index(o, msgs.len())?;
                    let i = index_value(i, inputs.len())?;
                    if msgs[o] != inputs[i] {
                        return Err(format!(
                            "output[{o}] is not a verbatim copy of input[{i}]: {}",
                            short(&msgs[o].to_string())
                        ));
                    }
                }
                Ok(())
            }),
            "messageEquals" => obj(want, key).and_then(|m| {
                for (k, v) in m {
                    let i = index(k, msgs.len())?;
                    if !same(&msgs[i], v) {
                        return Err(format!(
                            "messages[{i}]: expected {v}, got {}",
                            short(&msgs[i].to_string())
                        ));
                    }
                }
                Ok(())
            }),
            "containsMessage" => arr(want, key).and_then(|list| {
                for v in list {
                    if !msgs.iter().any(|m| same(m, v)) {
                        return Err(format!("no output message equals {v}"));
                    }
                }
                Ok(())
            }),
            "messageContains"
            | "messageNotContains"
            | "messageContainsOnce"
            | "messageHasLines" => obj(want, key).and_then(|m| {
                for (k, subs) in m {
                    let (i, text) = content(msgs, k)?;
                    for s in strs(subs, key)? {
                        let bad = match key.as_str() {
                            "messageContains" => !text.contains(s),
                            "messageNotContains" => text.contains(s),
                            "messageContainsOnce" => text.matches(s).count() != 1,
                            _ => !text.lines().any(|l| l == s),
                        };
                        if bad {
                            return Err(format!(
                                "{key} messages[{i}] {s:?} failed; content: {}",
                                short(text)
                            ));
                        }
                    }
                }
                Ok(())
            }),
            "messageStartsWith" | "messageEndsWith" => obj(want, key).and_then(|m| {
                for (k, s) in m {
                    let (i, text) = content(msgs, k)?;
                    let s = string(s, key)?;
                    let ok = if key == "messageStartsWith" {
                        text.starts_with(s)
                    } else {
                        text.ends_with(s)
                    };
                    if !ok {
                        return Err(format!(
                            "{key} messages[{i}] {s:?} failed; content: {}",
                            short(text)
                        ));
                    }
                }
                Ok(())
            }),
            "messageMaxBytes" => obj(want, key).and_then(|m| {
                for (k, n) in m {
                    let (i, text) = content(msgs, k)?;
                    let n = number(n, key)?;
                    if text.len() > n {
                        return Err(format!(
                            "messages[{i}] has {} bytes, more than {n}",
                            text.len()
                        ));
                    }
                }
                Ok(())
            }),
            "countMessagesContaining" => obj(want, key).and_then(|m| {
                for (s, n) in m {
                    let n = number(n, key)?;
                    let got = msgs
                        .iter()
                        .filter(|x| x.to_string().contains(s.as_str()))
                        .count();
                    if got != n {
                        return Err(format!("{got} output messages contain {s:?}, expected {n}"));
                    }
                }
                Ok(())
            }),
            "summaryBlock" => check_summary_block(want, msgs),
            "summaryContains" => strs(want, key).and_then(|subs| {
                let summary = result
                    .summary
                    .as_deref()
                    .ok_or("the result has no summary")?;
                for s in subs {
                    if !summary.contains(s) {
                        return Err(format!("summary lacks {s:?}: {}", short(summary)));
                    }
                }
                Ok(())
            }),
            "toolArgsValidJson" => {
                let mut r = Ok(());
                for (i, m) in msgs.iter().enumerate() {
                    for (k, c) in m["tool_calls"].as_array().into_iter().flatten().enumerate() {
                        let args = c["function"]["arguments"].as_str().unwrap_or("");
                        if serde_json::from_str::<Value>(args).is_err() {
                            r = Err(format!(
                                "messages[{i}].tool_calls[{k}] arguments are not valid JSON: {}",
                                short(args)
                            ));
                        }
                    }
                }
                if want == &Value::Bool(true) {
                    r
                } else {
                    Err("fixture: toolArgsValidJson must be true".into())
                }
            }
            "pointerEquals" => obj(want, key).and_then(|m| {
                for (p, v) in m {
                    let got = at(&doc, p)?;
                    if !same(got, v) {
                        return Err(format!(
                            "{p}: expected {v}, got {}",
                            short(&got.to_string())
                        ));
                    }
                }
                Ok(())
            }),
            "pointerStartsWith" => obj(want, key).and_then(|m| {
                for (p, v) in m {
                    let got = at_str(&doc, p)?;
                    let s = string(v, key)?;
                    if !got.starts_with(s) {
                        return Err(format!("{p}: does not start with {s:?}: {}", short(got)));
                    }
                }
                Ok(())
            }),
            "pointerContains" => obj(want, key).and_then(|m| {
                for (p, v) in m {
                    let got = at_str(&doc, p)?;
                    for s in strs(v, key)? {
                        if !got.contains(s) {
                            return Err(format!("{p}: lacks {s:?}: {}", short(got)));
                        }
                    }
                }
                Ok(())
            }),
            "pointerAbsent" => strs(want, key).and_then(|ptrs| {
                for p in ptrs {
                    if let Some(v) = doc.pointer(p) {
                        return Err(format!(
                            "{p}: expected absent, got {}",
                            short(&v.to_string())
                        ));
                    }
                }
                Ok(())
            }),
            "pointerPresent" => strs(want, key).and_then(|ptrs| {
                for p in ptrs {
                    at(&doc, p)?;
                }
                Ok(())
            }),
            "pointerType" => obj(want, key).and_then(|m| {
                for (p, t) in m {
                    let got = type_of(at(&doc, p)?);
                    if Some(got) != t.as_str() {
                        return Err(format!("{p}: expected a {t}, got a {got}"));
                    }
                }
                Ok(())
            }),
            "pointerMaxBytes" => obj(want, key).and_then(|m| {
                for (p, n) in m {
                    let got = at_str(&doc, p)?;
                    let n = number(n, key)?;
                    if got.len() > n {
                        return Err(format!("{p}: {} bytes, more than {n}", got.len()));
                    }
                }
                Ok(())
            }),
            "pointerJsonPartial" => obj(want, key).and_then(|m| {
                for (p, v) in m {
                    let got = at_str(&doc, p)?;
                    let parsed: Value = serde_json::from_str(got)
                        .map_err(|e| format!("{p}: not valid JSON ({e}): {}", short(got)))?;
                    partial(v, &parsed, p)?;
                }
                Ok(())
            }),
            "notice" => partial(want, &doc["notice"], "notice"),
            "noticeText" => {
                let got = &result.notice.text;
                if want.as_str() == Some(got.as_str()) {
                    Ok(())
                } else {
                    Err(format!("notice text: expected {want}, got {got:?}"))
                }
            }
            "requestFieldsKept" => match (want.as_bool(), &result.request) {
                (Some(true), Some(r)) => {
                    let mut expected = input.clone();
                    if let Some(o) = expected.as_object_mut() {
                        o.insert("messages".into(), Value::Array(msgs.clone()));
                    }
                    if r == &expected {
                        Ok(())
                    } else {
                        Err(format!(
                            "request differs from the input beyond messages: {}",
                            short(&r.to_string())
                        ))
                    }
                }
                (Some(true), None) => Err("the result has no request".into()),
                (Some(false), None) => Ok(()),
                (Some(false), Some(_)) => {
                    Err("the result has a request, but the input was an array".into())
                }
                (None, _) => Err("fixture: requestFieldsKept must be a boolean".into()),
            },
            "smaller" => {
                let (b, a) = (result.notice.tokens_before, result.notice.tokens_after);
                if want != &Value::Bool(true) {
                    Err("fixture: smaller must be true".into())
                } else if a < b {
                    Ok(())
                } else {
                    Err(format!("output not smaller: {b} → {a} tokens"))
                }
            }
            other => Err(format!("fixture: unhandled key {other:?}")),
        };
        run(r);
    }
    Ok(())
}

fn roles(msgs: &[Value]) -> Vec<&str> {
    msgs.iter()
        .map(|m| m["role"].as_str().unwrap_or("?"))
        .collect()
}

fn check_summary_block(want: &Value, msgs: &[Value]) -> Check {
    let spec = obj(want, "summaryBlock")?;
    for k in spec.keys() {
        if !SUMMARY_BLOCK_KEYS.contains(&k.as_str()) {
            return Err(format!("fixture: unknown summaryBlock key {k:?}"));
        }
    }
    let key = spec
        .get("message")
        .map(|v| v.to_string())
        .ok_or("fixture: summaryBlock.message is required")?;
    let (i, text) = content(msgs, key.trim_matches('"'))?;
    let start = text
        .find("<summary>")
        .ok_or_else(|| format!("messages[{i}] has no <summary>"))?;
    let end = text
        .rfind("</summary>")
        .map(|e| e + "</summary>".len())
        .filter(|e| *e > start)
        .ok_or_else(|| format!("messages[{i}] has no </summary>"))?;
    let block = &text[start..end];
    let limit = |k: &str| spec.get(k).map(|v| number(v, k)).transpose();
    if let Some(n) = limit("maxBytes")? {
        if block.len() > n {
            return Err(format!(
                "summary block has {} bytes, more than {n}: {}",
                block.len(),
                short(block)
            ));
        }
    }
    if let Some(n) = limit("maxLines")? {
        let lines = block.lines().count();
        if lines > n {
            return Err(format!("summary block has {lines} lines, more than {n}"));
        }
    }
    if let Some(n) = limit("maxLineBytes")? {
        if let Some(l) = block.lines().find(|l| l.len() > n) {
            return Err(format!("summary line of {} bytes (max {n}): {l}", l.len()));
        }
    }
    Ok(())
}

#[test]
fn every_fixture_case_conforms() {
    let mut files: Vec<PathBuf> = fs::read_dir(fixtures_dir())
        .expect("tests/fixtures exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in tests/fixtures");

    let mut names = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    let mut total = 0;
    for file in &files {
        let label = file
            .file_name()
            .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
        let text = fs::read_to_string(file).expect("fixture readable");
        let doc: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{label}: invalid JSON: {e}"));
        let top = doc
            .as_object()
            .unwrap_or_else(|| panic!("{label}: expected {{about, cases}}"));
        for k in top.keys() {
            assert!(
                k == "about" || k == "cases",
                "{label}: unknown top-level key {k:?}"
            );
        }
        let cases = top
            .get("cases")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("{label}: \"cases\" must be an array"));
        for (n, raw) in cases.iter().enumerate() {
            total += 1;
            let raw = raw
                .as_object()
                .unwrap_or_else(|| panic!("{label} case {n}: not an object"));
            let name = raw
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("{label} case {n}: missing name"))
                .to_string();
            let mut problems = Vec::new();
            if !names.insert(name.clone()) {
                problems.push("fixture: duplicate case name".to_string());
            }
            for k in raw.keys() {
                if !CASE_KEYS.contains(&k.as_str()) {
                    problems.push(format!("fixture: unknown case key {k:?}"));
                }
            }
            if !raw.get("description").is_some_and(Value::is_string) {
                problems.push("fixture: missing description".into());
            }
            if let Some(d) = raw.get("difference") {
                if !d.as_str().is_some_and(|d| d.starts_with("DIFFERENCE: ")) {
                    problems.push("fixture: difference must start with \"DIFFERENCE: \"".into());
                }
            }
            match raw.get("expect").and_then(Value::as_object) {
                None => problems.push("fixture: missing expect object".into()),
                Some(expect) if problems.is_empty() => {
                    problems = run_case(&Case { raw, expect });
                }
                Some(_) => {}
            }
            if !problems.is_empty() {
                failures.push(format!(
                    "{label} / {name}:\n    {}",
                    problems.join("\n    ")
                ));
            }
        }
    }
    eprintln!("{total} conformance cases in {} files", files.len());
    assert!(
        failures.is_empty(),
        "{} of {total} conformance cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The provider-rule checker judges the cases of `tests/fixtures/rules/checker.json`
/// as they say; the JS twin (`tests/js/rules.mjs`) is held to the same cases.
#[test]
fn the_rule_checker_judges_the_shared_cases() {
    let path = fixtures_dir().join("rules/checker.json");
    let doc: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for c in cases {
        let messages = c["messages"].as_array().unwrap();
        let got = rules::check(c["format"].as_str().unwrap(), messages);
        assert_eq!(got.is_ok(), c["valid"] == true, "{}: {got:?}", c["name"]);
    }
}
