//! Helpers shared by the integration tests.
pub mod chats;
pub mod convert;
pub mod corpus;
pub mod rules;

/// The offline runs a corpus test makes of one history: each mode at each
/// window (deterministic at the first only, its summary is bounded whatever the
/// window), with the options of each and a name for messages.
#[allow(dead_code)] // (not every test that includes `common` uses it)
pub fn offline_runs(
    windows: &[u64],
    format: &str,
    name: &str,
) -> Vec<(&'static str, u64, chat_compaction::ParsedOptions, String)> {
    let mut out = Vec::new();
    for mode in ["deterministic", "recency_preserving"] {
        for &window in windows {
            if mode == "deterministic" && window != windows[0] {
                continue;
            }
            let config = chat_compaction::options::from_json(
                &serde_json::json!({"mode": mode, "contextWindow": window, "format": format}),
            )
            .unwrap();
            out.push((
                mode,
                window,
                config,
                format!("{name} {mode} window={window}"),
            ));
        }
    }
    out
}

/// A structured compaction whose summarizer answers at once with a summary in
/// the template.
#[allow(dead_code)] // (not every test that includes `common` uses it)
pub fn summarized(
    input: &serde_json::Value,
    config: &chat_compaction::ParsedOptions,
) -> chat_compaction::Result<chat_compaction::Compaction> {
    use chat_compaction::tokens::{Estimator, Profile};
    use chat_compaction::{compact_step, Next, Reply};
    const SUMMARY: &str = "## Goal\nShip it.\n## Constraints & Preferences\n(none)\n## Progress\n### Done\n(none)\n### In Progress\n(none)\n### Blocked\n(none)\n## Key Decisions\n(none)\n## Relevant Files\n(none)\n## Next Steps\n(none)\n## Critical Context\n(none)";
    let counter = Estimator(Profile::O200k);
    let mut replies = Vec::new();
    loop {
        match compact_step(input, config, &counter, &replies)? {
            Next::Done(done) => return Ok(done),
            Next::Summarize(_) => replies.push(Reply::Summary {
                text: SUMMARY.into(),
                usage: None,
            }),
        }
    }
}
