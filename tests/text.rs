//! JSON text in, JSON text out (`compact_body`, `compact_json`): on the corpus
//! in every format and at several windows, the text path compacts exactly as
//! the objects path does (the same messages and notice), every kept message and
//! every field besides the messages are the input's bytes (spacing and key
//! order as they were), a request that fits comes back untouched, and bad
//! bytes get a coded error naming the byte.

mod common;

use chat_compaction::{compact, compact_body, compact_json, options, ErrorKind};
use common::{convert, corpus};
use serde_json::{json, Value};

const WINDOWS: [u64; 3] = [4_096, 16_384, 128_000];

/// The key a request keeps its messages under, per format.
fn key(format: &str) -> &'static str {
    match format {
        "openai-responses" => "input",
        "gemini" => "contents",
        _ => "messages",
    }
}

/// A request of `messages` as text laid out by hand: other fields before and
/// after the messages, each message pretty-printed (its own spacing), odd
/// separators between them. Answers the text and each message's text.
fn request_text(format: &str, messages: &[Value]) -> (String, Vec<String>) {
    let items: Vec<String> = messages
        .iter()
        .map(|m| serde_json::to_string_pretty(m).unwrap())
        .collect();
    let text = format!(
        "{{\n  \"model\" :  \"my-model\",\n  \"{}\": [\n    {}\n  ] ,\n  \"temperature\": 0.20,\n  \"stream\": true\n}}\n",
        key(format),
        items.join(" ,\n\n    ")
    );
    (text, items)
}

fn sources() -> Vec<(String, &'static str, Value)> {
    let mut out = Vec::new();
    let mut base: Vec<_> = corpus::swecontext()
        .into_iter()
        .chain(corpus::swecontext_more())
        .collect();
    base.extend(corpus::tau_bench().into_iter().take(8));
    base.extend(corpus::sharegpt().into_iter().take(6));
    for (seed, c) in base.iter().enumerate() {
        let v: Value = serde_json::from_str(&c.json).unwrap();
        let messages = match &v {
            Value::Array(_) => v.clone(),
            other => other["messages"].clone(),
        };
        out.push((c.name.clone(), c.format, messages.clone()));
        if c.format == "openai" && seed % 3 == 0 {
            for format in convert::FORMATS {
                let converted = convert::convert(&messages, format, seed);
                let converted = match converted {
                    Value::Array(_) => converted,
                    other => other[key(format)].clone(),
                };
                out.push((format!("{} as {format}", c.name), format, converted));
            }
        }
    }
    out
}

#[test]
fn the_text_path_compacts_as_the_objects_path_and_keeps_the_input_bytes() {
    let sources = sources();
    if corpus::missing(sources.is_empty()) {
        return;
    }
    let (mut runs, mut kept_checked) = (0, 0);
    for (name, format, messages) in &sources {
        let Some(list) = messages.as_array() else {
            continue;
        };
        if list.len() < 2 {
            continue;
        }
        let (text, items) = request_text(format, list);
        let value: Value = serde_json::from_str(&text).unwrap();
        for (mode, window, config, ctx) in common::offline_runs(&WINDOWS, format, name) {
            let objects = compact(&value, &config);
            let body = compact_body(text.as_bytes(), &config, true);
            let (objects, body) = match (objects, body) {
                (Ok(o), Ok(b)) => (o, b),
                (Err(a), Err(b)) => {
                    assert_eq!(a, b, "{ctx}: the two paths refuse differently");
                    continue;
                }
                (a, b) => panic!("{ctx}: {:?} vs {:?}", a.err(), b.err()),
            };
            runs += 1;
            assert_eq!(body.notice.as_ref(), Some(&objects.notice), "{ctx}: notice");
            let out = body.text.expect("forced: compacted");
            let parsed: Value = serde_json::from_str(&out)
                .unwrap_or_else(|e| panic!("{ctx}: output is not JSON: {e}"));
            assert_eq!(
                parsed[key(format)],
                Value::Array(objects.messages.clone()),
                "{ctx}: messages differ from the objects path"
            );
            // Everything around the message array is the input's bytes.
            let open = text.find('[').unwrap();
            let close = text.rfind(']').unwrap();
            assert!(out.starts_with(&text[..=open]), "{ctx}: the head changed");
            assert!(out.ends_with(&text[close..]), "{ctx}: the tail changed");
            // Each kept message is its input text, spacing and all.
            for m in &objects.messages {
                if let Some(k) = list.iter().position(|x| x == m) {
                    assert!(
                        out.contains(&items[k]),
                        "{ctx}: message {k} not kept as its bytes"
                    );
                    kept_checked += 1;
                }
            }
            // The same request as compact JSON text, through compact_json.
            let result: Value = serde_json::from_str(
                &compact_json(&value.to_string(), &config_text(mode, window, format)).unwrap(),
            )
            .unwrap();
            assert_eq!(
                result["messages"],
                Value::Array(objects.messages.clone()),
                "{ctx}: compact_json"
            );
        }
    }
    assert!(
        runs > 100 && kept_checked > 1000,
        "{runs} runs, {kept_checked} kept messages checked"
    );
}

fn config_text(mode: &str, window: u64, format: &str) -> String {
    json!({"mode": mode, "contextWindow": window, "format": format}).to_string()
}

#[test]
fn a_request_that_fits_comes_back_untouched() {
    let text = br#"{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 10}"#;
    let config = options::from_json(&json!({"mode": "recency_preserving"})).unwrap();
    let body = compact_body(text, &config, false).unwrap();
    assert_eq!(body.text, None);
    assert!(!body.meter.should_compact);
    assert_eq!(body.meter.per_message.len(), 1);
    assert_eq!(body.meter.context_window, 128_000, "the model's window");
    assert_eq!(body.notice, None);
}

#[test]
fn bad_bytes_get_a_coded_error_naming_the_byte() {
    let config = options::from_json(&json!({})).unwrap();
    let deep = format!(
        "{{\"messages\": [{}]}}",
        "[".repeat(10) + "1" + &"]".repeat(9)
    );
    let huge = format!(
        "{{\"messages\": [{{\"role\": \"user\", \"content\": \"{}",
        "x".repeat(50 << 20)
    );
    let huge_len = huge.len();
    let cases: Vec<(Vec<u8>, &str, usize)> = vec![
        (b"{\"messages\": [\xff]}".to_vec(), "not valid UTF-8", 14),
        (
            b"{\"messages\": [{\"role\": \"user\"".to_vec(),
            "ends early",
            29,
        ),
        (
            "\u{FEFF}{\"messages\": []}".as_bytes().to_vec(),
            "byte order mark",
            0,
        ),
        (deep.into_bytes(), "expected ',' or ']'", 35),
        (huge.into_bytes(), "not closed", huge_len),
        (b"".to_vec(), "ends early", 0),
    ];
    for (bytes, what, at) in cases {
        let e = compact_body(&bytes, &config, true).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
        assert!(e.message().contains(what), "{what}: {e}");
        assert!(
            e.message().contains(&format!("at byte {at} (line ")),
            "{what}: {}",
            &e.message()[..e.message().len().min(300)]
        );
    }
    // A well-formed text that is no history says what it expected.
    let e = compact_body(b"[1, 2]", &config, true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
}

#[test]
fn a_key_given_twice_is_read_as_json_parse_reads_it_the_last() {
    let long: Vec<String> = (0..80)
        .map(|i| {
            format!(
                r#"{{"role": "user", "content": "message {i} {}"}}"#,
                "word ".repeat(200)
            )
        })
        .collect();
    let text = format!(
        r#"{{"model": "gpt-4o", "messages": [{{"role": "user", "content": "x"}}], "messages": [{}]}}"#,
        long.join(",")
    );
    let config =
        options::from_json(&json!({"mode": "recency_preserving", "contextWindow": 8000})).unwrap();
    let body = compact_body(text.as_bytes(), &config, false).unwrap();
    assert_eq!(
        body.meter.per_message.len(),
        80,
        "the last messages array is the one read"
    );
    let out: Value =
        serde_json::from_str(&body.text.expect("over the threshold: compacted")).unwrap();
    // serde_json (as JSON.parse) takes the last key too: the compacted array
    let value: Value = serde_json::from_str(&text).unwrap();
    let objects = compact(&value, &config).unwrap();
    assert_eq!(out["messages"], Value::Array(objects.messages));
}
