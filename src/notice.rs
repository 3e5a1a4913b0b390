//! The notice of SPEC §7: what happened, as data and as a human-readable text.

use crate::formats::Format;
use crate::json::{WriteJson, Writer};
use crate::options::{Mode, Options};
use crate::summarizer::Usage;
use crate::text::count;

/// The settings hint line.
pub(crate) const SETTINGS_HINT: &str =
    "Change chat.compaction.mode in your config to pick a different compaction strategy.";

/// Why an LLM mode fell back to `recency_preserving`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fallback {
    /// The mode that was asked for.
    pub from: Mode,
    /// Which failure: `LLM_FAILED` (threw, rejected, returned no text), `TIMEOUT`,
    /// `EMPTY_SUMMARY` or `QUALITY_CHECK`; or `NOTHING_TO_SUMMARIZE` (nothing
    /// new lies between head and tail: only pinned messages, UI notices or the
    /// earlier summary; no call was made).
    pub code: &'static str,
    /// What went wrong, in words.
    pub reason: String,
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// The format the input was read as (detected, or forced with `format`).
    pub format: Format,
    /// The mode whose output this is.
    pub mode: Mode,
    /// The mode that was asked for.
    pub requested_mode: Mode,
    /// Set when an LLM mode fell back.
    pub fallback: Option<Fallback>,
    /// Messages in the input.
    pub messages_before: usize,
    /// Messages in the output.
    pub messages_after: usize,
    /// Estimated tokens of the input (system prompt included).
    pub tokens_before: u64,
    /// Estimated tokens of the output.
    pub tokens_after: u64,
    /// Whether the output stays under the auto-compact trigger (context window ×
    /// threshold), so it fits the window with room for the next turn; when not, a
    /// `DOES_NOT_FIT` warning gives the numbers.
    pub fits: bool,
    /// Summarizer input tokens (0 for offline modes).
    pub compaction_input_tokens: u64,
    /// Summarizer output tokens.
    pub compaction_output_tokens: u64,
    /// Their sum.
    pub compaction_total_tokens: u64,
    /// Set when the summarizer reported no usage and the counts are the
    /// library's estimates of the request and the summary.
    pub usage_estimated: bool,
    /// The settings hint, when `show_settings_hint` is on.
    pub settings_hint: Option<String>,
    /// The human notice.
    pub text: String,
    /// The options in effect: clamped, with the window chosen for the request's
    /// model and the room reserved for its answer.
    pub options: Options,
}

/// The human notice text: what ran, the LLM tokens it used, why it fell back.
pub(crate) fn text(
    mode: Mode,
    usage: Usage,
    estimated: bool,
    fallback: Option<&Fallback>,
    hint: bool,
) -> String {
    let (input, output) = (usage.input_tokens, usage.output_tokens);
    let total = input + output;
    let usage = if total == 0 {
        format!("No LLM tokens used ({} strategy)", mode.label_lowercase())
    } else if estimated {
        format!(
            "Used about {} ({input} in + {output} out, estimated)",
            count(total, "token")
        )
    } else {
        format!("Used {} ({input} in + {output} out)", count(total, "token"))
    };
    let mut t = format!("🧹 Conversation compacted\nMode: {}\n{usage}", mode.label());
    if let Some(f) = fallback {
        t.push_str(&format!(
            "\n{} summary unavailable ({}); used {} instead",
            f.from.label(),
            f.reason,
            mode.label_lowercase()
        ));
    }
    if hint {
        t.push('\n');
        t.push_str(SETTINGS_HINT);
    }
    t
}

impl WriteJson for Fallback {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("from", &self.from);
        w.field("code", &self.code);
        w.field("reason", &self.reason);
        w.close();
    }
}

impl WriteJson for Notice {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("format", &self.format);
        w.field("mode", &self.mode);
        w.field("requestedMode", &self.requested_mode);
        w.field_some("fallback", self.fallback.as_ref());
        w.field("messagesBefore", &self.messages_before);
        w.field("messagesAfter", &self.messages_after);
        w.field("tokensBefore", &self.tokens_before);
        w.field("tokensAfter", &self.tokens_after);
        w.field("fits", &self.fits);
        w.field("compactionInputTokens", &self.compaction_input_tokens);
        w.field("compactionOutputTokens", &self.compaction_output_tokens);
        w.field("compactionTotalTokens", &self.compaction_total_tokens);
        if self.usage_estimated {
            w.field("usageEstimated", &true);
        }
        w.field_some("settingsHint", self.settings_hint.as_ref());
        w.field("text", &self.text);
        w.field("options", &self.options);
        w.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notice_text_matches_the_spec() {
        let none = Usage::default();
        assert_eq!(
            text(Mode::RecencyPreserving, none, false, None, false),
            "🧹 Conversation compacted\nMode: Recency preserving\nNo LLM tokens used (recency preserving strategy)"
        );
        let used = Usage {
            input_tokens: 1234,
            output_tokens: 567,
        };
        assert!(text(Mode::Structured, used, false, None, true).contains(
            "Mode: Structured\nUsed 1801 tokens (1234 in + 567 out)\nChange chat.compaction.mode"
        ));
        assert!(
            !text(Mode::Deterministic, none, false, None, false).contains("chat.compaction.mode")
        );
        let fallback = Fallback {
            from: Mode::Structured,
            code: "TIMEOUT",
            reason: "the summarizer timed out after 50 ms".into(),
        };
        assert!(text(Mode::RecencyPreserving, used, true, Some(&fallback), false).ends_with(
            "Used about 1801 tokens (1234 in + 567 out, estimated)\nStructured summary unavailable (the summarizer timed out after 50 ms); used recency preserving instead"
        ));
    }
}
