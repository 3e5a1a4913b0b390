//! Compacts a JSON history file natively and prints the result.
//! Run: `cargo run --example compact -- FILE [MODE] [CONTEXT_WINDOW]`.

use chat_compaction::{compact, options};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: compact FILE [MODE] [CONTEXT_WINDOW]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    let input: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(1)
    });
    let mode = args.get(1).map_or("deterministic", String::as_str);
    let window: u64 = args.get(2).and_then(|w| w.parse().ok()).unwrap_or(200_000);
    let config = options::from_json(&serde_json::json!({"mode": mode, "contextWindow": window}))
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1)
        });
    match compact(&input, &config) {
        Ok(r) => println!("{}", r.to_json()),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1)
        }
    }
}
