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
