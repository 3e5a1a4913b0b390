//! The TOML reader behind `parseConfig` never panics (a panic would kill the wasm
//! instance) and reads generated `[chat.compaction]` tables exactly as the `toml`
//! crate does.

use chat_compaction::options;
use chat_compaction::toml_lite::{parse, TomlValue};
use proptest::prelude::*;

/// Pieces that TOML documents are made of, glued at random.
fn tomlish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("[chat.compaction]\n".to_string()),
        Just("[[x]]\n".to_string()),
        Just("mode = ".to_string()),
        Just("\"\"\"".to_string()),
        Just("'''".to_string()),
        Just("\\u00e9".to_string()),
        Just("[1, [2, {a = 3}],\n]".to_string()),
        Just("{ b = \"c\" }".to_string()),
        Just("# comment\n".to_string()),
        Just("1979-05-27T07:32:00Z".to_string()),
        Just("0x1F".to_string()),
        Just("-inf".to_string()),
        "[ -~]{0,12}",
        "\\PC{0,4}",
        Just("\n".to_string()),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

fn scalar() -> impl Strategy<Value = (String, String)> {
    prop_oneof![
        "[a-zA-Z0-9 _é\\\\\"\\t-]{0,20}".prop_map(|s| {
            let lit = toml_escape(&s);
            (lit, s)
        }),
        (-1_000_000i64..1_000_000).prop_map(|i| (i.to_string(), i.to_string())),
        any::<bool>().prop_map(|b| (b.to_string(), b.to_string())),
        (-1.0e6f64..1.0e6).prop_map(|f| (format!("{f:?}"), format!("{f:?}"))),
    ]
}

fn toml_escape(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
        let _ = parse(&text);
        let _ = options::from_toml(&text);
    }

    #[test]
    fn never_panics_on_toml_like_text(text in tomlish()) {
        let _ = parse(&text);
        let _ = options::from_toml(&text);
    }

    #[test]
    fn scalars_read_like_the_toml_crate(values in prop::collection::vec(scalar(), 1..8)) {
        let mut doc = String::from("[server]\nports = [1, 2]\n\n[chat.compaction]\n");
        for (i, (lit, _)) in values.iter().enumerate() {
            doc.push_str(&format!("k{i} = {lit}\n"));
        }
        let theirs: toml::Table = toml::from_str(&doc).unwrap();
        let ours = parse(&doc).unwrap();
        let table = theirs["chat"]["compaction"].as_table().unwrap();
        for entry in ours.iter().filter(|e| e.path[0] == "chat") {
            let key = &entry.path[2];
            let same = match (&entry.value, &table[key]) {
                (TomlValue::Str(a), toml::Value::String(b)) => a == b,
                (TomlValue::Int(a), toml::Value::Integer(b)) => a == b,
                (TomlValue::Float(a), toml::Value::Float(b)) => a == b,
                (TomlValue::Bool(a), toml::Value::Boolean(b)) => a == b,
                _ => false,
            };
            prop_assert!(same, "{key}: {:?} vs {:?} in\n{doc}", entry.value, table[key]);
        }
    }
}
