//! What a request spends besides its messages: the system prompt held apart,
//! the tool definitions, and the room reserved for the answer; and the window of
//! the model it names. A provider counts all of it against the window, so the
//! meter, the trigger and the fit targets do too.

use std::borrow::Cow;

use crate::formats::{json_text, Document};
use crate::json::{Node, WriteJson, Writer};
use crate::options::{Options, ParsedOptions};
use crate::tokens::{Profile, TokenCounter};

/// Well-known models' context windows (input + output tokens), matched by the
/// longest prefix of the model name after any `provider/` prefix, in any case
/// (`meta-llama/Llama-3.3-70B-Instruct`; Bedrock and `ft:` ids by the model
/// they name, see [`model_names`]). Used only when the caller gives no
/// `contextWindow`; the README lists them.
const MODEL_WINDOWS: [(&str, u64); 30] = [
    ("gpt-5", 400_000),
    ("gpt-5-chat", 128_000),
    ("gpt-4.5", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4-1106", 128_000),
    ("gpt-4-0125", 128_000),
    ("gpt-4-vision", 128_000),
    ("gpt-4o", 128_000),
    ("chatgpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("o1-mini", 128_000),
    ("o1-preview", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude-2", 100_000),
    ("claude-2.1", 200_000),
    ("claude-instant", 100_000),
    ("claude", 200_000),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.5-flash", 1_048_576),
    ("gemini-1.0", 32_760),
    ("gemini-2", 1_048_576),
    ("gemini-3", 1_048_576),
    ("deepseek", 128_000),
    ("mistral-large", 128_000),
    ("llama-3.", 128_000),
];

/// The tokenizers of well-known models whose token counts differ from o200k's,
/// matched as [`MODEL_WINDOWS`] are: Claude counts about 1.1 × o200k, GPT-4 and
/// GPT-3.5 use cl100k. Used only when the caller gives no `tokenizer`; the JS
/// layer holds the same table (`MODEL_TOKENIZERS` in api.js) and
/// `tests/fixtures/estimates/models.json` holds both to the same answers.
const MODEL_TOKENIZERS: [(&str, Profile); 7] = [
    ("claude", Profile::Claude),
    ("gpt-4", Profile::Cl100k),
    ("gpt-3.5", Profile::Cl100k),
    ("gpt-4o", Profile::O200k),
    ("gpt-4.1", Profile::O200k),
    ("gpt-4.5", Profile::O200k),
    ("chatgpt-4o", Profile::O200k),
];

/// The names a model id is matched by: the id after any `provider/`, and that
/// without a fine-tune's `ft:` and a Bedrock id's region and provider, the
/// dot-ended words of letters before the model (`us.anthropic.claude-…`).
fn model_names(model: &str) -> [&str; 2] {
    let name = model.rsplit('/').next().unwrap_or(model);
    let mut bare = match name.get(..3) {
        Some(ft) if ft.eq_ignore_ascii_case("ft:") => &name[3..],
        _ => name,
    };
    while let Some((head, rest)) = bare.split_once('.') {
        if head.is_empty() || !head.bytes().all(|b| b.is_ascii_alphabetic()) {
            break;
        }
        bare = rest;
    }
    [name, bare]
}

/// The entry of `table` for `model`, by the longest prefix of either of its
/// names (in any case).
fn by_model<T: Copy>(table: &[(&str, T)], model: &str) -> Option<T> {
    let mut best: Option<(usize, T)> = None;
    for name in model_names(model) {
        for &(prefix, value) in table {
            let matches = name
                .get(..prefix.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(prefix));
            if matches && best.is_none_or(|(len, _)| prefix.len() > len) {
                best = Some((prefix.len(), value));
            }
        }
    }
    best.map(|(_, value)| value)
}

/// The window of a well-known model.
pub(crate) fn model_window(model: &str) -> Option<u64> {
    by_model(&MODEL_WINDOWS, model)
}

/// The model a request names (the AI SDK names it as an object: `model.modelId`).
fn model_name<'a, N: Node<'a>>(root: N) -> Option<&'a str> {
    let model = root.get("model")?;
    model.as_str().or_else(|| model.get("modelId")?.as_str())
}

/// `config` for `input`: without a `tokenizer` given, the profile of the
/// model a request names, when it is a well-known one (the JS layer does the
/// same before it calls wasm). A profile other than the default set on the
/// options by hand counts as given.
pub(crate) fn for_input<'c, 'a, N: Node<'a>>(
    config: &'c ParsedOptions,
    input: N,
) -> Cow<'c, ParsedOptions> {
    let given = config.tokenizer_given || config.options.tokenizer != Profile::O200k;
    match model_name(input).and_then(|m| by_model(&MODEL_TOKENIZERS, m)) {
        Some(profile) if !given && profile != Profile::O200k => {
            let mut resolved = config.clone();
            resolved.options.tokenizer = profile;
            Cow::Owned(resolved)
        }
        _ => Cow::Borrowed(config),
    }
}

/// Where the context window in effect came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// The caller's `contextWindow`.
    Option,
    /// The request's `model`, from the table of well-known models.
    Model,
    /// Neither: the default of 200,000.
    Default,
}

impl WriteJson for WindowSource {
    fn write_json(&self, w: &mut Writer) {
        w.string(match self {
            WindowSource::Option => "option",
            WindowSource::Model => "model",
            WindowSource::Default => "default",
        });
    }
}

/// A request's spending outside its messages, and the window it is held to.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Spend {
    /// The system prompt held apart (Anthropic `system`, Gemini `systemInstruction` …).
    pub system: u64,
    /// The tool definitions (`tools`, `functions`).
    pub tools: u64,
    /// The answer's room (`max_tokens`, `max_completion_tokens`, `max_output_tokens` …).
    pub reserved: u64,
    /// The window of the model the request names, when it is a well-known one.
    pub model_window: Option<u64>,
}

/// Keys that reserve room for the answer, in every format the library reads.
const OUTPUT_LIMITS: [&str; 4] = [
    "max_completion_tokens",
    "max_tokens",
    "max_output_tokens",
    "maxOutputTokens",
];

impl Spend {
    /// Reads what `doc` spends besides its messages (nothing for a bare array).
    pub(crate) fn read<'a, N: Node<'a>>(doc: &Document<'a, N>, counter: &dyn TokenCounter) -> Self {
        let system = doc.system_texts().iter().map(|t| counter.count(t)).sum();
        if !doc.is_request {
            return Spend {
                system,
                ..Spend::default()
            };
        }
        let root = doc.root;
        let tools = [Some(root), doc.config()]
            .into_iter()
            .flatten()
            .flat_map(|at| {
                ["tools", "functions"]
                    .into_iter()
                    .filter_map(move |k| at.get(k))
            })
            .map(|t| {
                let definitions = t.items().count().max(1) as u64;
                counter.count(&json_text(Some(t))) + definitions * counter.profile().call_overhead()
            })
            .sum();
        // Gemini keeps its limit in `generationConfig` (REST) or `config` (@google/genai);
        // of several limits, the answer may take the largest.
        let reserved = [Some(root), root.get("generationConfig"), root.get("config")]
            .into_iter()
            .flatten()
            .flat_map(|at| OUTPUT_LIMITS.iter().filter_map(move |k| at.get(k)))
            .filter_map(Node::as_u64)
            .max()
            .unwrap_or(0);
        let model_window = model_name(root).and_then(model_window);
        Spend {
            system,
            tools,
            reserved,
            model_window,
        }
    }

    /// Tokens that travel with every request whatever compaction does.
    pub(crate) fn fixed(&self) -> u64 {
        self.system.saturating_add(self.tools)
    }

    /// The options in effect for this request: the window from the option, the
    /// model or the default, and the larger of the configured and the requested
    /// room for the answer.
    pub(crate) fn apply(&self, config: &ParsedOptions) -> (Options, WindowSource) {
        let o = &config.options;
        let (window, source) = match (config.context_window_given, self.model_window) {
            (true, _) => (o.context_window, WindowSource::Option),
            (false, Some(w)) => (w, WindowSource::Model),
            (false, None) => (o.context_window, WindowSource::Default),
        };
        let mut effective = o.clone();
        effective.context_window = window;
        effective.reserve_output_tokens = o.reserve_output_tokens.max(self.reserved);
        (effective, source)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_wins_and_provider_prefixes_are_ignored() {
        assert_eq!(model_window("gpt-4o-mini-2024-07-18"), Some(128_000));
        assert_eq!(model_window("gpt-4"), Some(8_192));
        assert_eq!(model_window("gpt-4.1-nano"), Some(1_047_576));
        assert_eq!(
            model_window("openrouter/anthropic/claude-sonnet-4"),
            Some(200_000)
        );
        assert_eq!(model_window("o1-mini"), Some(128_000));
        assert_eq!(model_window("gpt-4-1106-preview"), Some(128_000));
        assert_eq!(model_window("gpt-4-0613"), Some(8_192));
        assert_eq!(model_window("my-local-model"), None);
        // Bedrock ids and fine-tunes: the model after the region and provider, or `ft:`
        assert_eq!(
            model_window("us.anthropic.claude-sonnet-4-20250514-v1:0"),
            Some(200_000)
        );
        assert_eq!(
            model_window("ft:gpt-4o-mini-2024-07-18:org::abc"),
            Some(128_000)
        );
        // a provider word that is itself a listed prefix still matches whole
        assert_eq!(model_window("deepseek.r1-v1:0"), Some(128_000));
        assert_eq!(
            model_window("mistral.mistral-large-2402-v1:0"),
            Some(128_000)
        );
    }
}
