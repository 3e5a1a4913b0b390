//! The compaction modes. Each plans on message views and returns a [`Outcome`];
//! none of them sees format-specific JSON.

pub mod deterministic;
pub mod recency;

use crate::message::Message;
use crate::options::Warning;
use crate::plan::{Plan, Step};

/// What a mode decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The output history as steps.
    pub plan: Plan,
    /// The summary text, for modes that write one.
    pub summary: Option<String>,
    /// Remarks about the input (dropped empty messages).
    pub warnings: Vec<Warning>,
}

/// Removes kept messages that are empty (providers reject them), with a warning each.
pub fn drop_empty(plan: Plan, views: &[Message<'_>], warnings: &mut Vec<Warning>) -> Plan {
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
