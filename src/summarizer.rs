//! How the LLM modes talk to a caller's summarizer: as plain data (sans-IO).
//!
//! Each step of a `structured` or `llm_replace` compaction either asks for a
//! summary ([`crate::Next::Summarize`] with a [`SummaryRequest`]) or is done. The caller
//! sends the request wherever it likes and appends the [`Reply`]; the same input,
//! options and replies always give the same step. The JS layer drives this loop
//! around the caller's async function (with streaming, timeouts and abort); Rust
//! callers implement [`Summarizer`] and call [`compact_with_summarizer`].

use crate::error::{Error, Result};
use crate::json::{Kind, Node, WriteJson, Writer};
use crate::options::Mode;

#[cfg(feature = "serde_json")]
pub use crate::api::Next;

/// Tokens a summarizer call used, as the provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

impl Usage {
    /// Reads usage as SDKs and providers spell it: `inputTokens`/`outputTokens`,
    /// `input_tokens`/`output_tokens` (Anthropic), `prompt_tokens`/`completion_tokens`
    /// (OpenAI). `None` when neither count is a number.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn from_node<'a, N: Node<'a>>(v: N) -> Option<Usage> {
        let pick = |keys: &[&str]| {
            keys.iter()
                .find_map(|k| v.get(k).and_then(Node::as_f64))
                .filter(|n| n.is_finite() && *n >= 0.0)
                .map(|n| n.round().min(9_007_199_254_740_992.0) as u64)
        };
        let input = pick(&["inputTokens", "input_tokens", "prompt_tokens"]);
        let output = pick(&["outputTokens", "output_tokens", "completion_tokens"]);
        (input.is_some() || output.is_some()).then(|| Usage {
            input_tokens: input.unwrap_or(0),
            output_tokens: output.unwrap_or(0),
        })
    }
}

/// Why a summarizer call gave no summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// It threw, rejected, or returned something that is not a summary.
    Failed,
    /// It did not answer within `timeoutMs`.
    TimedOut,
}

/// What one summarizer call gave back.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The summary text (streams already concatenated) and the usage, if reported.
    Summary {
        /// The text as returned.
        text: String,
        /// Token usage, when the summarizer reported it.
        usage: Option<Usage>,
    },
    /// No summary.
    Failed {
        /// What went wrong.
        failure: Failure,
        /// In words, for the notice or the error (`the summarizer threw: …`).
        reason: String,
    },
}

impl Reply {
    /// Reads a reply as the JS layer writes it: `{"text", "usage"?}` or
    /// `{"failed": "error" | "timeout", "reason"}`.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn from_node<'a, N: Node<'a>>(v: N, at: usize) -> Result<Reply> {
        let bad = |what: &str| Error::input(format!("replies[{at}]"), what.to_string());
        if let Some(text) = v.get("text") {
            let text = text
                .as_str()
                .ok_or_else(|| bad("text: expected a string"))?;
            return Ok(Reply::Summary {
                text: text.to_string(),
                usage: v.get("usage").and_then(Usage::from_node),
            });
        }
        let failure = match v.get("failed").and_then(Node::as_str) {
            Some("timeout") => Failure::TimedOut,
            Some("error") => Failure::Failed,
            _ => {
                return Err(bad(
                    "expected {text} or {failed: \"error\" | \"timeout\", reason}",
                ))
            }
        };
        let reason = v
            .get("reason")
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_string();
        Ok(Reply::Failed { failure, reason })
    }
}

/// Reads the replies so far from the JS layer's JSON array.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn replies_from_json(text: &str) -> Result<Vec<Reply>> {
    let parsed = crate::json::parse::parse_str(text)
        .map_err(|e| Error::input("replies", format!("not JSON: {e}")))?;
    let root = parsed.tape().root();
    if root.kind() != Kind::Array {
        return Err(Error::input("replies", "expected an array"));
    }
    let mut replies = Vec::new();
    for (i, v) in root.items().enumerate() {
        replies.push(Reply::from_node(v, i)?);
    }
    Ok(replies)
}

/// What the library asks a summarizer for (SPEC §6, "The summarizer").
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRequest<M> {
    /// The mode asking.
    pub mode: Mode,
    /// The system instruction (also the first of `messages` in the OpenAI-like formats).
    pub system: String,
    /// The messages to send, in the input's format: OpenAI-like formats start with
    /// the system message; all end with the final user instruction.
    pub messages: Vec<M>,
    /// The final user instruction (the last of `messages`).
    pub instruction: String,
    /// The newest earlier summary, when re-compacting (also inside `instruction`).
    pub previous_summary: Option<String>,
    /// `summary_model` from the options.
    pub model: Option<String>,
    /// `max_summary_tokens` from the options.
    pub max_tokens: u64,
    /// The request's input tokens by the library's count.
    pub estimated_input_tokens: u64,
    /// 1 for the first call, 2 for the retry after a failed quality check.
    pub attempt: u32,
}

impl<M: WriteJson> WriteJson for SummaryRequest<M> {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("mode", &self.mode);
        w.field("system", &self.system);
        w.field("messages", &self.messages);
        w.field("instruction", &self.instruction);
        w.field_some("previousSummary", self.previous_summary.as_ref());
        w.field_some("model", self.model.as_ref());
        w.field("maxTokens", &self.max_tokens);
        w.field("estimatedInputTokens", &self.estimated_input_tokens);
        w.field("attempt", &self.attempt);
        w.close();
    }
}

impl WriteJson for Usage {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("inputTokens", &self.input_tokens);
        w.field("outputTokens", &self.output_tokens);
        w.close();
    }
}

/// A summarizer for Rust callers: any async function from a request to a summary.
/// An `Err` is a failed call (its text becomes the fallback reason or the
/// `LLM_FAILED` message). Time limits are the implementation's business.
#[cfg(feature = "serde_json")]
#[allow(async_fn_in_trait)] // no Send bound: JS futures are not Send
pub trait Summarizer {
    /// Summarizes `request`; the text and, if known, the usage.
    async fn summarize(
        &mut self,
        request: &SummaryRequest<serde_json::Value>,
    ) -> std::result::Result<(String, Option<Usage>), String>;
}

/// Compacts `input` with an LLM mode, calling `summarizer` for each summary the
/// mode asks for (at most two: the first and one retry). Offline modes work too
/// and never call it.
#[cfg(feature = "serde_json")]
pub async fn compact_with_summarizer(
    input: &serde_json::Value,
    config: &crate::ParsedOptions,
    summarizer: &mut impl Summarizer,
) -> Result<crate::Compaction> {
    use crate::json::serde::tape_of;
    let tape = tape_of(input);
    let config = &crate::request::for_input(config, tape.open()?.root());
    let counter = crate::tokens::Estimator(config.options.tokenizer);
    let mut replies = Vec::new();
    loop {
        match crate::compact_step(input, config, &counter, &replies)? {
            crate::Next::Done(compaction) => return Ok(compaction),
            crate::Next::Summarize(request) => {
                replies.push(match summarizer.summarize(&request).await {
                    Ok((text, usage)) => Reply::Summary { text, usage },
                    Err(reason) => Reply::Failed {
                        failure: Failure::Failed,
                        reason: format!("the summarizer failed: {reason}"),
                    },
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::serde::tape_of;
    use serde_json::json;

    #[test]
    fn usage_is_read_in_every_spelling() {
        let want = Some(Usage {
            input_tokens: 1234,
            output_tokens: 567,
        });
        for v in [
            json!({"inputTokens": 1234, "outputTokens": 567}),
            json!({"input_tokens": 1234, "output_tokens": 567}),
            json!({"prompt_tokens": 1234, "completion_tokens": 567, "total_tokens": 1801}),
        ] {
            let tape = tape_of(&v);
            assert_eq!(Usage::from_node(tape.open().unwrap().root()), want, "{v}");
        }
        let tape = tape_of(&json!({"inputTokens": "many"}));
        assert_eq!(Usage::from_node(tape.open().unwrap().root()), None);
    }

    #[test]
    fn replies_are_read_from_the_js_layers_json() {
        let reply =
            |v: serde_json::Value, at| Reply::from_node(tape_of(&v).open().unwrap().root(), at);
        let r = reply(json!({"failed": "timeout", "reason": "slow"}), 0);
        assert_eq!(
            r,
            Ok(Reply::Failed {
                failure: Failure::TimedOut,
                reason: "slow".into()
            })
        );
        assert!(reply(json!({"text": 3}), 1).is_err());
    }
}
