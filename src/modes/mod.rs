//! The compaction modes. Each plans on message views and returns a [`Outcome`];
//! none of them sees format-specific JSON.

pub mod deterministic;
pub mod recency;

use crate::plan::Plan;

/// What a mode decided.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The output history as steps.
    pub plan: Plan,
    /// The summary text, for modes that write one.
    pub summary: Option<String>,
}
