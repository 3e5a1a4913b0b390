//! Tool-output pruning: bulky old tool outputs become placeholders, long tool-call
//! arguments are shortened inside their parsed JSON (so they stay valid JSON).

use crate::json::Value;

use crate::message::{Call, Message};
use crate::plan::{Edit, PLACEHOLDER};
use crate::text::{count, one_line, truncate};
use crate::tokens::TokenCounter;

/// String values longer than this (bytes) are shortened in old tool-call arguments.
const LONG_ARG_STRING: usize = 120;
/// How much of a shortened argument string is kept.
const KEPT_ARG_PREFIX: usize = 60;

/// Argument names that best identify what a call was about, in order of preference.
const KEY_ARGS: &[&str] = &[
    "file_path",
    "path",
    "filename",
    "file",
    "command",
    "cmd",
    "query",
    "pattern",
    "url",
    "name",
];

/// One thing pruning can do to a message: a tool output made a placeholder, or
/// a call's long argument strings shortened.
pub(crate) struct Cut {
    pub edit: Edit,
    /// Tokens it takes out of the message.
    pub saving: u64,
}

impl Cut {
    /// Whether it shortens arguments (those go after every output).
    pub(crate) fn is_args(&self) -> bool {
        matches!(self.edit, Edit::ShortenArgs { .. })
    }
}

/// Adds to `cuts` those that prune message `i` (at output position `pos`):
/// placeholders for its tool outputs over `threshold` bytes, shortened
/// arguments for its tool calls over `threshold`.
pub(crate) fn cuts(
    views: &[Message<'_>],
    i: usize,
    threshold: usize,
    counter: &dyn TokenCounter,
    pos: usize,
    cuts: &mut Vec<(usize, Cut)>,
) {
    let m = &views[i];
    for (k, r) in m.results.iter().enumerate() {
        if r.is_placeholder || r.bytes <= threshold {
            continue;
        }
        let call = r.call.map(|(o, k)| &views[o].calls[k]);
        let what = match call {
            Some(c) => format!("Tool: {}", describe_call(c)),
            None => format!("Tool: {}", r.name.unwrap_or("unknown")),
        };
        let text = format!(
            "{PLACEHOLDER}\n{what}; original output {}.",
            count(r.bytes as u64, "byte")
        );
        let saving = r.tokens.saturating_sub(counter.count(&text));
        let edit = Edit::ReplaceOutput { result: k, text };
        cuts.push((pos, Cut { edit, saving }));
    }
    for (k, c) in m.calls.iter().enumerate() {
        let text = c.args.text();
        if text.len() <= threshold || c.sealed {
            continue;
        }
        let Some(parsed) = c.args.parsed() else {
            continue; // not JSON: kept verbatim rather than broken
        };
        let short = shorten_strings(&parsed);
        let written = short.to_string();
        if written.len() < text.len() {
            let saving = counter.count(&text).saturating_sub(counter.count(&written));
            let edit = Edit::ShortenArgs {
                call: k,
                args: short,
            };
            cuts.push((pos, Cut { edit, saving }));
        }
    }
}

/// `Read(file_path: src/main.rs)`: the tool's name and its most telling argument.
pub(crate) fn describe_call(call: &Call<'_>) -> String {
    let parsed = call.args.parsed();
    let key = parsed.as_deref().and_then(|v| {
        let obj = v.as_object()?;
        KEY_ARGS
            .iter()
            .find_map(|k| obj.get(k).and_then(Value::as_str).map(|s| (*k, s)))
            .or_else(|| {
                obj.iter()
                    .find_map(|(k, v)| v.as_str().map(|s| (k.as_str(), s)))
            })
    });
    match key {
        Some((k, v)) => format!("{}({k}: {})", call.name, one_line(v, 80)),
        None => call.name.to_string(),
    }
}

/// A copy of `v` with every long string value cut short (keys and structure kept).
pub(crate) fn shorten_strings(v: &Value) -> Value {
    match v {
        Value::String(s) if s.len() > LONG_ARG_STRING => Value::String(format!(
            "{} [{} cleared to save context space]",
            truncate(s, KEPT_ARG_PREFIX),
            count(s.len() as u64, "byte")
        )),
        Value::Array(a) => Value::Array(a.iter().map(shorten_strings).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), shorten_strings(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::serde::{from_serde, to_serde};
    use crate::message::Args;
    use serde_json::json;

    #[test]
    fn shortened_arguments_stay_valid_json_with_the_same_keys() {
        let long = "x".repeat(500);
        let v = json!({"file_path": "a/b.rs", "new_string": long, "n": [1, {"s": long}]});
        let s = to_serde(&shorten_strings(&from_serde(&v)));
        assert_eq!(s["file_path"], "a/b.rs");
        assert!(s["new_string"].as_str().unwrap().len() < 120);
        assert_eq!(s["n"][0], 1);
        let text = shorten_strings(&from_serde(&v)).to_string();
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), s);
    }

    #[test]
    fn call_description_prefers_the_path() {
        let c = Call {
            sealed: false,
            id: "1".into(),
            name: "Read",
            args: Args::Text(r#"{"limit": "10", "file_path": "src/x.rs"}"#),
        };
        assert_eq!(describe_call(&c), "Read(file_path: src/x.rs)");
    }
}
