//! The context meter: how full the next request is, message by message, and the
//! auto-compact trigger (SPEC §3): compact when the estimate reaches
//! `max(1, round((context_window − reserve_output_tokens) × threshold_percent))`.

use crate::formats::Format;
use crate::json::{WriteJson, Writer};
use crate::message::{Message, Role};
use crate::options::{Options, Warning};
use crate::request::{Spend, WindowSource};
use crate::tokens::TokenCounter;

/// How full the next request is, and whether to compact before sending it.
#[derive(Debug, Clone, PartialEq)]
pub struct Meter {
    /// The detected or forced format.
    pub format: Format,
    /// The estimated input tokens of the next request (messages, system prompt
    /// held apart, tool definitions and the pending text).
    pub tokens: u64,
    /// The model's context window in effect.
    pub context_window: u64,
    /// Where that window came from (the option, the request's model, the default).
    pub window_source: WindowSource,
    /// Tokens kept free for the answer (the option or the request's `max_tokens`).
    pub reserved_output_tokens: u64,
    /// The auto-compact threshold `tokens` is compared with.
    pub threshold: u64,
    /// `tokens / context_window`: how full the window is (above 1 it overflows).
    pub fraction: f64,
    /// Whether to compact before sending: `tokens ≥ threshold`.
    pub should_compact: bool,
    /// Whether the estimate starts from provider-reported usage.
    pub reported: bool,
    /// Tokens of the system prompt held outside the messages.
    pub system_tokens: u64,
    /// Tokens of the request's tool definitions.
    pub tools_tokens: u64,
    /// Tokens of the pending text, framing included (0 without one).
    pub pending_tokens: u64,
    /// Each message's estimated tokens, in input order (0 for UI-only notices and
    /// for messages behind a provider's compaction).
    pub per_message: Vec<u64>,
    /// The options in effect (window and reserve as applied).
    pub options: Options,
    /// Clamped options, unknown keys and the like.
    pub warnings: Vec<Warning>,
}

/// Whether the usage `reported` on assistant `a` may count a history a
/// compaction replaced. Only after a compaction (a summary or marker comes
/// before the turn): a turn the compaction kept carries the figure of the
/// request before it. A turn answered since reports what now precedes it, and
/// below the figures of the kept turns before it: a figure that dropped is
/// taken. Otherwise it is compared with what a fresh figure would be: the
/// estimate of what precedes the turn, plus what the provider counted beyond
/// the estimate on the newest figure older than every compaction (its history
/// is still all there: the system prompt and tools a bare array leaves out,
/// the estimator's error), give or take an eighth of what came since. Without
/// such a figure, one more than a quarter above the estimate is not taken.
/// (Either way a compaction that left out less than that margin keeps its old
/// figure; the history ambiguous, a loop of compactions is the worse mistake.)
fn stale(views: &[Message<'_>], a: usize, reported: u64, spend: &Spend) -> bool {
    let Some(w) = views[..a].iter().rposition(Message::holds_written) else {
        return false;
    };
    let dropped = views[w..a]
        .iter()
        .any(|m| m.reported_input_tokens.is_some_and(|r| r > reported));
    if dropped {
        return false;
    }
    let estimate = |end: usize| {
        views[..end]
            .iter()
            .fold(spend.fixed(), |acc, m| acc.saturating_add(m.tokens))
    };
    let before = estimate(a);
    let first = views.iter().position(Message::holds_written).unwrap_or(w);
    let untouched = views[..first]
        .iter()
        .rposition(|m| m.reported_input_tokens.is_some());
    match untouched {
        Some(h) => {
            let then = estimate(h);
            let beyond = views[h]
                .reported_input_tokens
                .unwrap_or(0)
                .saturating_sub(then);
            let margin = (before - then) / 8;
            reported > before.saturating_add(beyond).saturating_add(margin)
        }
        None => reported > before.saturating_add(before / 4),
    }
}

/// Reads the meter. When the last assistant turn carries provider-reported input
/// tokens, the estimate is that figure plus the tokens of that turn and of
/// everything after it (they become input too); otherwise the whole request's
/// estimate. The pending new text is added in both cases. A figure that may
/// count a history a compaction replaced is not taken ([`stale`]).
pub(crate) fn read(
    format: Format,
    views: &[Message<'_>],
    spend: &Spend,
    (options, window_source): (&Options, crate::request::WindowSource),
    pending: &str,
    counter: &dyn TokenCounter,
) -> Meter {
    let pending_tokens = if pending.is_empty() {
        0
    } else {
        counter.count(pending) + counter.profile().message_overhead()
    };
    let last_assistant = views.iter().rposition(|m| m.role == Role::Assistant);
    let reported = last_assistant
        .and_then(|a| Some((a, views[a].reported_input_tokens?)))
        .filter(|&(a, r)| !stale(views, a, r, spend));
    let history = match reported {
        Some((a, r)) => views[a..]
            .iter()
            .fold(r, |acc, m| acc.saturating_add(m.tokens)),
        None => views
            .iter()
            .fold(spend.fixed(), |acc, m| acc.saturating_add(m.tokens)),
    };
    let tokens = history.saturating_add(pending_tokens);
    let threshold = options.trigger_tokens();
    Meter {
        format,
        tokens,
        context_window: options.context_window,
        window_source,
        reserved_output_tokens: options.reserve_output_tokens,
        threshold,
        fraction: tokens as f64 / options.context_window.max(1) as f64,
        should_compact: tokens >= threshold,
        reported: reported.is_some(),
        system_tokens: spend.system,
        tools_tokens: spend.tools,
        pending_tokens,
        per_message: views.iter().map(|m| m.tokens).collect(),
        options: options.clone(),
        warnings: Vec::new(),
    }
}

impl WriteJson for Meter {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("format", &self.format);
        w.field("tokens", &self.tokens);
        w.field("contextWindow", &self.context_window);
        w.field("windowSource", &self.window_source);
        w.field("reservedOutputTokens", &self.reserved_output_tokens);
        w.field("threshold", &self.threshold);
        w.field("fraction", &self.fraction);
        w.field("shouldCompact", &self.should_compact);
        w.field("reported", &self.reported);
        w.field("systemTokens", &self.system_tokens);
        w.field("toolsTokens", &self.tools_tokens);
        w.field("pendingTokens", &self.pending_tokens);
        w.field("perMessage", &self.per_message);
        w.field("options", &self.options);
        w.field("warnings", &self.warnings);
        w.close();
    }
}
