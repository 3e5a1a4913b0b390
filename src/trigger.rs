//! The auto-compact trigger (SPEC §3): fire when the estimated next request
//! reaches `max(1, round(context_window × threshold_percent))`.

use serde::Serialize;

use crate::message::{Message, Role};
use crate::options::Options;
use crate::tokens::TokenCounter;

/// The trigger's decision and the numbers behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Trigger {
    /// Whether to compact before sending.
    pub should_compact: bool,
    /// The estimated input tokens of the next request.
    pub estimated_tokens: u64,
    /// The threshold it was compared with.
    pub threshold: u64,
    /// Whether the estimate starts from provider-reported usage.
    pub reported: bool,
}

/// Evaluates the trigger. When the last assistant turn carries provider-reported
/// input tokens, the estimate is that figure plus the tokens of that turn and of
/// everything after it (they become input too); otherwise the whole history's
/// estimate. The pending new text is added in both cases.
pub(crate) fn evaluate(
    views: &[Message<'_>],
    system_tokens: u64,
    options: &Options,
    pending: &str,
    counter: &dyn TokenCounter,
) -> Trigger {
    let pending_tokens = if pending.is_empty() {
        0
    } else {
        counter.count(pending) + counter.profile().message_overhead()
    };
    let last_assistant = views.iter().rposition(|m| m.role == Role::Assistant);
    let reported = last_assistant.and_then(|a| Some((a, views[a].reported_input_tokens?)));
    let history = match reported {
        Some((a, r)) => views[a..]
            .iter()
            .fold(r, |acc, m| acc.saturating_add(m.tokens)),
        None => views
            .iter()
            .fold(system_tokens, |acc, m| acc.saturating_add(m.tokens)),
    };
    let estimated = history.saturating_add(pending_tokens);
    let threshold = options.trigger_tokens();
    Trigger {
        should_compact: estimated >= threshold,
        estimated_tokens: estimated,
        threshold,
        reported: reported.is_some(),
    }
}
