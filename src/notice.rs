//! The notice of SPEC §7: what happened, as data and as a human-readable text.

use serde::Serialize;

use crate::options::Mode;

/// The settings hint line.
pub const SETTINGS_HINT: &str =
    "Change chat.compaction.mode in your config to pick a different compaction strategy.";

/// Why an LLM mode fell back to `recency_preserving`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fallback {
    /// The mode that was asked for.
    pub from: Mode,
    /// What went wrong.
    pub reason: String,
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Notice {
    /// The mode whose output this is.
    pub mode: Mode,
    /// The mode that was asked for.
    pub requested_mode: Mode,
    /// Set when an LLM mode fell back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<Fallback>,
    /// Messages in the input.
    pub messages_before: usize,
    /// Messages in the output.
    pub messages_after: usize,
    /// Estimated tokens of the input (system prompt included).
    pub tokens_before: u64,
    /// Estimated tokens of the output.
    pub tokens_after: u64,
    /// Summarizer input tokens (0 for offline modes).
    pub compaction_input_tokens: u64,
    /// Summarizer output tokens.
    pub compaction_output_tokens: u64,
    /// Their sum.
    pub compaction_total_tokens: u64,
    /// The settings hint, when `show_settings_hint` is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings_hint: Option<String>,
    /// The human notice.
    pub text: String,
}

/// The human notice text.
pub fn text(mode: Mode, input_tokens: u64, output_tokens: u64, hint: bool) -> String {
    let total = input_tokens + output_tokens;
    let usage = if total == 0 {
        format!(
            "No LLM tokens used ({} strategy)",
            mode.label().to_lowercase()
        )
    } else {
        format!("Used {total} tokens ({input_tokens} in + {output_tokens} out)")
    };
    let mut t = format!("🧹 Conversation compacted\nMode: {}\n{usage}", mode.label());
    if hint {
        t.push('\n');
        t.push_str(SETTINGS_HINT);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notice_text_matches_the_spec() {
        assert_eq!(
            text(Mode::RecencyPreserving, 0, 0, false),
            "🧹 Conversation compacted\nMode: Recency preserving\nNo LLM tokens used (recency preserving strategy)"
        );
        assert!(text(Mode::Structured, 1234, 567, true)
            .contains("Used 1801 tokens (1234 in + 567 out)\nChange chat.compaction.mode"));
        assert!(!text(Mode::Deterministic, 0, 0, false).contains("chat.compaction.mode"));
    }
}
