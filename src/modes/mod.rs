//! The compaction modes. Each plans on message views and returns a [`Decision`];
//! none of them sees format-specific JSON.

pub(crate) mod deterministic;
pub(crate) mod llm_replace;
pub(crate) mod recency;
pub(crate) mod structured;

use crate::message::{Message, Role};
use crate::modes::deterministic::PREAMBLE;
use crate::options::Warning;
use crate::plan::{Plan, Step};
use crate::text::SUMMARY_PREFIX;

/// What a mode decided.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Decision {
    /// The output history as steps.
    pub plan: Plan,
    /// The summary text, for modes that write one.
    pub summary: Option<String>,
    /// Remarks about the input (dropped empty messages).
    pub warnings: Vec<Warning>,
}

/// Removes kept messages that are empty (providers reject them), with a warning each.
pub(crate) fn drop_empty(plan: Plan, views: &[Message<'_>], warnings: &mut Vec<Warning>) -> Plan {
    plan.into_iter()
        .filter(|step| match step {
            Step::Keep { index, .. } if views[*index].is_empty() => {
                warnings.push(Warning {
                    code: "EMPTY_MESSAGE_DROPPED",
                    message: format!(
                        "messages[{index}] has no content; providers reject empty messages, so it was left out"
                    ),
                });
                false
            }
            _ => true,
        })
        .collect()
}

/// The newest user message at or after `from` that holds the summary of an
/// earlier compaction, from any mode (markers do not count); older summaries
/// open with the preamble, without the `[Conversation Summary]` prefix.
pub(crate) fn newest_summary(views: &[Message<'_>], from: usize) -> Option<usize> {
    (from..views.len()).rev().find(|&i| {
        views[i].role == Role::User
            && views[i]
                .texts
                .first()
                .is_some_and(|t| t.starts_with(SUMMARY_PREFIX) || t.starts_with(PREAMBLE))
    })
}
