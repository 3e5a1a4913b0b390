//! Options: defaults, validation, clamping with honest warnings, from TOML
//! (`[chat.compaction]` of a moltis.toml, or a bare table) or from a JSON object
//! (camelCase or snake_case keys).

use crate::error::{Error, Result};
use crate::formats::{Format, FORMATS};
use crate::json::{number, Kind, Node, WriteJson, Writer};
use crate::names::Names;
use crate::text::Quoted;
use crate::tokens::Profile;

mod config;
#[cfg(target_arch = "wasm32")]
pub(crate) use config::from_entries_json;
#[cfg(feature = "toml")]
pub use config::from_toml;

/// The compaction strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Leading system messages + one bounded, structured summary. No LLM.
    #[default]
    Deterministic,
    /// Head + marker with a digest + tail by token budget. No LLM.
    RecencyPreserving,
    /// Head + LLM summary in a fixed template + tail.
    Structured,
    /// Leading system messages + one LLM summary.
    LlmReplace,
}

impl Mode {
    /// The config spelling (`recency_preserving`).
    pub fn key(self) -> &'static str {
        match self {
            Mode::Deterministic => "deterministic",
            Mode::RecencyPreserving => "recency_preserving",
            Mode::Structured => "structured",
            Mode::LlmReplace => "llm_replace",
        }
    }

    /// The human label used in notices (`Recency preserving`).
    pub fn label(self) -> &'static str {
        match self {
            Mode::Deterministic => "Deterministic",
            Mode::RecencyPreserving => "Recency preserving",
            Mode::Structured => "Structured",
            Mode::LlmReplace => "LLM replace",
        }
    }

    /// The label in lower case, for running text (`recency preserving`).
    pub fn label_lowercase(self) -> &'static str {
        match self {
            Mode::Deterministic => "deterministic",
            Mode::RecencyPreserving => "recency preserving",
            Mode::Structured => "structured",
            Mode::LlmReplace => "LLM replace",
        }
    }

    /// Parses a mode name, accepting Moltis's documented hyphenated aliases.
    pub fn from_name(name: &str) -> Option<Mode> {
        match name {
            "deterministic" => Some(Mode::Deterministic),
            "recency_preserving" | "recency-preserving" => Some(Mode::RecencyPreserving),
            "structured" => Some(Mode::Structured),
            "llm_replace" | "llm-replace" => Some(Mode::LlmReplace),
            _ => None,
        }
    }
}

/// Effective options (after defaults and clamping).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The compaction strategy.
    pub mode: Mode,
    /// Auto-compact trigger and tail-budget multiplier, in [0.1, 0.95].
    pub threshold_percent: f64,
    /// Head messages kept verbatim.
    pub protect_head: usize,
    /// Minimum tail messages kept verbatim.
    pub protect_tail_min: usize,
    /// Tail budget as a fraction of `context_window × threshold_percent`, in [0.05, 0.80].
    pub tail_budget_ratio: f64,
    /// Tool outputs longer than this (UTF-8 bytes) outside the protected tail become placeholders.
    pub tool_prune_char_threshold: usize,
    /// Model passed to the summarizer.
    pub summary_model: Option<String>,
    /// The summary model's window, which bounds what it reads; when not given,
    /// a well-known `summary_model`'s, else `context_window` (see
    /// [`Options::summary_window`]).
    pub summary_context_window: Option<u64>,
    /// Token limit passed to the summarizer.
    pub max_summary_tokens: u64,
    /// Add Moltis's settings hint ("Change chat.compaction.mode in your config…")
    /// to the notice: off by default, on by default for a moltis.toml.
    pub show_settings_hint: bool,
    /// The model's context window in tokens (input and output). When the caller
    /// gives none and a request names a well-known `model`, its window is used.
    pub context_window: u64,
    /// Tokens kept free for the answer: the trigger and the fit target are taken
    /// from `context_window` less this. A request's own `max_tokens` (or
    /// `max_completion_tokens`, `max_output_tokens`) counts when it is larger.
    pub reserve_output_tokens: u64,
    /// Cap on each tool output in the summarizer input (bytes).
    pub max_tool_result_bytes: usize,
    /// Force the message format instead of detecting it.
    pub format: Option<Format>,
    /// Whether what compaction adds is merged into a neighbouring user message so
    /// that roles alternate; `None`: the format's default (merge for Anthropic and
    /// Gemini, keep for the others).
    pub alternation: Option<Alternation>,
    /// Which tokenizer the estimator imitates.
    pub tokenizer: Profile,
    /// `created_at` (ms) for synthesized Moltis messages.
    pub now: Option<i64>,
    /// Random instead of content-derived ids for synthesized messages.
    pub random_ids: bool,
    /// Seed for random ids (the JS layer sets it from `crypto.getRandomValues`).
    pub random_seed: Option<u64>,
    /// Unknown keys are errors instead of warnings.
    pub strict: bool,
    /// Messages kept verbatim in every mode, by input index (the JS layer also
    /// turns a `pin` function into this list).
    pub pin: Vec<usize>,
    /// Roles whose messages are kept verbatim in every mode (`system`, `user`,
    /// `assistant`, `tool`; `developer` is `system`).
    pub pin_roles: Vec<String>,
}

/// What to do when compaction puts two user messages in a row (a marker after a
/// user message, stubs before one): strict backends reject that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alternation {
    /// Leave them as separate messages.
    Keep,
    /// Merge them into one message (Anthropic: text blocks after the
    /// `tool_result` blocks), so that roles alternate.
    Merge,
}

impl Options {
    /// The window of the model that writes the summary, which bounds what it
    /// reads: `summary_context_window`, else a well-known `summary_model`'s,
    /// else `context_window` (a summary model may read far more than the
    /// window being compacted: gpt-4o-mini's 128K for a 16K chat).
    pub(crate) fn summary_window(&self) -> u64 {
        self.summary_context_window
            .or_else(|| {
                let model = self.summary_model.as_deref()?;
                crate::request::model_window(model)
            })
            .unwrap_or(self.context_window)
    }

    /// Whether added messages are merged into their neighbours for `format`.
    pub(crate) fn merges_turns(&self, format: Format) -> bool {
        match self.alternation {
            Some(a) => a == Alternation::Merge,
            None => format.system_apart(),
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            mode: Mode::Deterministic,
            threshold_percent: 0.95,
            protect_head: 3,
            protect_tail_min: 20,
            tail_budget_ratio: 0.20,
            tool_prune_char_threshold: 200,
            summary_model: None,
            summary_context_window: None,
            max_summary_tokens: 4096,
            show_settings_hint: false,
            context_window: 200_000,
            reserve_output_tokens: 0,
            max_tool_result_bytes: 50_000,
            format: None,
            alternation: None,
            tokenizer: Profile::O200k,
            now: None,
            random_ids: false,
            random_seed: None,
            strict: false,
            pin: Vec::new(),
            pin_roles: Vec::new(),
        }
    }
}

/// Rounds half away from zero after removing binary noise (150 × 0.95 × 0.2 = 28.5 → 29).
fn round_tokens(x: f64) -> u64 {
    ((x * 1e9).round() / 1e9).round().max(0.0) as u64
}

impl Options {
    /// The window the input may fill: `context_window` less the answer's room.
    pub fn input_window(&self) -> u64 {
        self.context_window
            .saturating_sub(self.reserve_output_tokens)
    }

    /// Tokens of verbatim tail: `max(1, round(input_window × threshold × ratio))`.
    pub fn tail_budget(&self) -> u64 {
        round_tokens(self.input_window() as f64 * self.threshold_percent * self.tail_budget_ratio)
            .max(1)
    }

    /// The auto-compact trigger: `max(1, round(input_window × threshold))`.
    pub fn trigger_tokens(&self) -> u64 {
        round_tokens(self.input_window() as f64 * self.threshold_percent).max(1)
    }
}

/// A non-fatal remark about the input or options, returned in results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Stable code: `CLAMPED`, `UNKNOWN_OPTION`, `EMPTY_MESSAGE_DROPPED`,
    /// `DOES_NOT_FIT` and the others the README lists.
    pub code: &'static str,
    /// What happened and what value is used.
    pub message: String,
}

/// Options together with the warnings validation produced.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedOptions {
    /// The effective options.
    pub options: Options,
    /// Clamps, unknown keys and the like.
    pub warnings: Vec<Warning>,
    /// Whether `context_window` was given; when not, a request's well-known
    /// `model` chooses the window.
    pub context_window_given: bool,
    /// Whether `tokenizer` was given; when not, a request's well-known `model`
    /// chooses the profile (`claude-*` → `claude`, GPT-4 and GPT-3.5 → `cl100k`).
    pub tokenizer_given: bool,
}

/// A value as it came from TOML or JSON, before validation.
#[derive(Debug, Clone, PartialEq)]
enum Given {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Vec<Given>),
    Other(&'static str),
}

impl Given {
    fn type_name(&self) -> &'static str {
        match self {
            Given::Str(_) => "a string",
            Given::Int(_) | Given::Float(_) => "a number",
            Given::Bool(_) => "a boolean",
            Given::List(_) => "an array",
            Given::Other(t) => t,
        }
    }

    fn from_node<'a, N: Node<'a>>(v: N) -> Given {
        match v.kind() {
            Kind::String => Given::Str(v.as_str().unwrap_or("").to_string()),
            Kind::Bool => Given::Bool(v.as_bool() == Some(true)),
            Kind::Number => match v.number_text().unwrap_or("").parse::<i64>() {
                Ok(i) => Given::Int(i),
                Err(_) => Given::Float(v.as_f64().unwrap_or(f64::NAN)),
            },
            Kind::Array => Given::List(v.items().map(Given::from_node).collect()),
            other => Given::Other(other.name()),
        }
    }
}

struct Entry {
    /// The key in snake_case, as matched.
    key: String,
    /// The key as the caller wrote it, for messages.
    name: String,
    value: Given,
    /// `(line, column)`, 1-based, for TOML input.
    location: Option<(usize, usize)>,
}

/// Roles `pin_roles` accepts.
const PIN_ROLES: &[&str] = &["system", "developer", "user", "assistant", "tool"];

/// Keys handled by the JS layer (functions, signals): known, not validated here.
const JS_ONLY_KEYS: &[&str] = &["summarize", "count_tokens", "signal", "timeout_ms"];

/// camelCase → snake_case (`protectHead` → `protect_head`).
fn snake_case(key: &str) -> String {
    let mut s = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            s.push('_');
            s.push(c.to_ascii_lowercase());
        } else {
            s.push(c);
        }
    }
    s
}

impl Entry {
    fn here(&self) -> String {
        match self.location {
            Some((l, c)) => format!(" (line {l}, column {c})"),
            None => String::new(),
        }
    }

    fn wrong_type(&self, expected: &str) -> Error {
        Error::config(format!(
            "{}: expected {expected}, got {}{}",
            self.name,
            self.value.type_name(),
            self.here()
        ))
    }

    fn string(&self) -> Result<&str> {
        match &self.value {
            Given::Str(s) => Ok(s),
            _ => Err(self.wrong_type("a string")),
        }
    }

    fn list(&self, expected: &str) -> Result<&[Given]> {
        match &self.value {
            Given::List(items) => Ok(items),
            _ => Err(self.wrong_type(expected)),
        }
    }

    fn boolean(&self) -> Result<bool> {
        match self.value {
            Given::Bool(b) => Ok(b),
            _ => Err(self.wrong_type("a boolean (true or false)")),
        }
    }

    fn number(&self) -> Result<f64> {
        match self.value {
            Given::Int(i) => Ok(i as f64),
            Given::Float(f) if f.is_finite() => Ok(f),
            Given::Float(_) => Err(Error::config(format!(
                "{}: expected a finite number{}",
                self.name,
                self.here()
            ))),
            _ => Err(self.wrong_type("a number")),
        }
    }

    /// A non-negative integer; values past 2^53 (the largest a JS number holds
    /// exactly) are clamped to it with a warning.
    fn integer(&self, warnings: &mut Vec<Warning>) -> Result<u64> {
        const MAX: u64 = 1 << 53;
        let bad = |what: String| {
            Error::config(format!(
                "{}: expected a non-negative integer, got {what}{}",
                self.name,
                self.here()
            ))
        };
        let value = match self.value {
            Given::Int(i) if i >= 0 => i as u64,
            Given::Int(i) => return Err(bad(i.to_string())),
            Given::Float(f) if f.fract() == 0.0 && f >= 0.0 => {
                if f > MAX as f64 {
                    u64::MAX
                } else {
                    f as u64
                }
            }
            Given::Float(f) => return Err(bad(number_text(f))),
            _ => return Err(self.wrong_type("a non-negative integer")),
        };
        if value > MAX {
            warnings.push(Warning {
                code: "CLAMPED",
                message: format!(
                    "{} is above the maximum of {MAX}; using {MAX}{}",
                    self.name,
                    self.here()
                ),
            });
            return Ok(MAX);
        }
        Ok(value)
    }

    /// A count or size: an [`Entry::integer`] the platform's `usize` holds (in
    /// wasm, 2^32 − 1), clamped to it with a warning.
    fn count(&self, warnings: &mut Vec<Warning>) -> Result<usize> {
        let value = self.integer(warnings)?;
        usize::try_from(value).or_else(|_| {
            warnings.push(Warning {
                code: "CLAMPED",
                message: format!(
                    "{} is above the maximum of {}; using it{}",
                    self.name,
                    usize::MAX,
                    self.here()
                ),
            });
            Ok(usize::MAX)
        })
    }
}

/// A number as JSON writes it (`0.95`, `1e20`): no `f64` `Display`, which
/// would add core's float printing (~10 KB gzipped) to the `.wasm`.
fn number_text(value: f64) -> String {
    let mut out = String::new();
    number::write_f64(value, &mut out);
    out
}

fn clamp(entry: &Entry, value: f64, lo: f64, hi: f64, warnings: &mut Vec<Warning>) -> f64 {
    // Not `f64::clamp`: its check of the bounds formats floats with `Debug`,
    // which alone brought core's float printing (10 KB gzipped) into the `.wasm`.
    // `value` is finite here, and `lo ≤ hi` are constants.
    let used = value.max(lo).min(hi);
    if used != value {
        let side = if value < lo {
            "below the minimum"
        } else {
            "above the maximum"
        };
        warnings.push(Warning {
            code: "CLAMPED",
            message: format!(
                "{} = {} is {side} of the range [{}, {}]; using {}{}",
                entry.name,
                number_text(value),
                number_text(lo),
                number_text(hi),
                number_text(used),
                entry.here()
            ),
        });
    }
    used
}

fn validate(entries: Vec<Entry>) -> Result<ParsedOptions> {
    let mut o = Options::default();
    let mut warnings = Vec::new();
    let mut window_given = false;
    let mut tokenizer_given = false;
    o.strict = match entries.iter().find(|e| e.key == "strict") {
        Some(e) => e.boolean()?,
        None => false,
    };
    for e in &entries {
        match e.key.as_str() {
            "mode" => {
                let name = e.string()?;
                o.mode = Mode::from_name(name).ok_or_else(|| {
                    Error::config(format!(
                        "mode: unknown mode {}{}; expected one of \"deterministic\", \"recency_preserving\", \"structured\", \"llm_replace\"",
                        Quoted(name),
                        e.here()
                    ))
                })?;
            }
            "threshold_percent" => {
                let given = e.number()?;
                // `80` means 80%: a fraction above 1 could only be clamped to 0.95.
                let fraction = if given > 1.0 && given <= 100.0 {
                    warnings.push(Warning {
                        code: "READ_AS_PERCENT",
                        message: format!(
                            "{} = {} read as a percent: {}{}",
                            e.name,
                            number_text(given),
                            number_text(given / 100.0),
                            e.here()
                        ),
                    });
                    given / 100.0
                } else {
                    given
                };
                o.threshold_percent = clamp(e, fraction, 0.1, 0.95, &mut warnings)
            }
            "tail_budget_ratio" => {
                o.tail_budget_ratio = clamp(e, e.number()?, 0.05, 0.80, &mut warnings)
            }
            "protect_head" => o.protect_head = e.count(&mut warnings)?,
            "protect_tail_min" => o.protect_tail_min = e.count(&mut warnings)?,
            "tool_prune_char_threshold" => {
                o.tool_prune_char_threshold = e.count(&mut warnings)?
            }
            "max_tool_result_bytes" => {
                o.max_tool_result_bytes = e.count(&mut warnings)?
            }
            "max_summary_tokens" => {
                // The template's ten sections need room: a smaller bound would
                // fail every summary's quality check.
                const MIN: u64 = 256;
                o.max_summary_tokens = e.integer(&mut warnings)?;
                if o.max_summary_tokens < MIN {
                    warnings.push(Warning {
                        code: "CLAMPED",
                        message: format!(
                            "{} = {} is below the minimum of {MIN} (a summary in the template's sections needs room); using {MIN}{}",
                            e.name,
                            o.max_summary_tokens,
                            e.here()
                        ),
                    });
                    o.max_summary_tokens = MIN;
                }
            }
            "context_window" => {
                o.context_window = e.integer(&mut warnings)?;
                if o.context_window == 0 {
                    return Err(Error::config(format!(
                        "{} = 0{} is not a context window: give the model's window in tokens (e.g. 128000), or leave it out to take the request's model's window or 200000",
                        e.name,
                        e.here()
                    )));
                }
                window_given = true;
            }
            "reserve_output_tokens" => o.reserve_output_tokens = e.integer(&mut warnings)?,
            "summary_model" => o.summary_model = Some(e.string()?.to_string()),
            "summary_context_window" => {
                let window = e.integer(&mut warnings)?;
                if window == 0 {
                    return Err(Error::config(format!(
                        "{} = 0{} is not a context window: give the summary model's window in tokens, or leave it out to take the summary model's or contextWindow",
                        e.name,
                        e.here()
                    )));
                }
                o.summary_context_window = Some(window);
            }
            "pin" => {
                o.pin.clear();
                for g in e.list("an array of message indices")? {
                    o.pin.push(match g {
                        Given::Int(i) if *i >= 0 => to_usize(*i as u64),
                        Given::Float(f) if f.fract() == 0.0 && *f >= 0.0 => *f as usize,
                        other => {
                            return Err(Error::config(format!(
                                "{}: expected an array of message indices (whole numbers from 0), found {}{}",
                                e.name,
                                match other {
                                    Given::Int(_) | Given::Float(_) => {
                                        "a negative or fractional number"
                                    }
                                    _ => other.type_name(),
                                },
                                e.here()
                            )))
                        }
                    });
                }
            }
            "pin_roles" => {
                o.pin_roles.clear();
                for g in e.list("an array of roles")? {
                    o.pin_roles.push(match g {
                        Given::Str(r) if PIN_ROLES.contains(&r.as_str()) => r.clone(),
                        other => {
                            return Err(Error::config(format!(
                                "{}: expected roles among {}, found {}{}",
                                e.name,
                                PIN_ROLES.join(", "),
                                match other {
                                    Given::Str(r) => Quoted(r).to_string(),
                                    _ => other.type_name().to_string(),
                                },
                                e.here()
                            )))
                        }
                    });
                }
            }
            "show_settings_hint" => o.show_settings_hint = e.boolean()?,
            "random_ids" => o.random_ids = e.boolean()?,
            "random_seed" => o.random_seed = Some(e.integer(&mut warnings)?),
            "strict" => {}
            "now" => {
                o.now = Some(match e.value {
                    Given::Int(i) => i,
                    Given::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => f as i64,
                    _ => return Err(e.wrong_type("an integer timestamp in milliseconds")),
                })
            }
            "format" => {
                let name = e.string()?;
                o.format = match name {
                    "auto" => None,
                    _ => Some(Format::from_name(name).ok_or_else(|| {
                        let names: Vec<String> =
                            FORMATS.iter().map(|(n, _)| format!("\"{n}\"")).collect();
                        Error::config(format!(
                            "format: unknown format {}{}; expected \"auto\" or one of {}",
                            Quoted(name),
                            e.here(),
                            names.join(", ")
                        ))
                    })?),
                }
            }
            "alternation" => {
                o.alternation = match e.string()? {
                    "auto" => None,
                    "keep" => Some(Alternation::Keep),
                    "merge" => Some(Alternation::Merge),
                    other => {
                        return Err(Error::config(format!(
                            "alternation: unknown value {}{}; expected \"keep\", \"merge\" or \"auto\"",
                            Quoted(other),
                            e.here()
                        )))
                    }
                }
            }
            "tokenizer" => {
                let name = e.string()?;
                tokenizer_given = true;
                o.tokenizer = Profile::from_name(name).ok_or_else(|| {
                    Error::config(format!(
                        "tokenizer: unknown tokenizer {}{}; expected \"o200k\", \"cl100k\" or \"claude\"",
                        Quoted(name),
                        e.here()
                    ))
                })?;
            }
            // What a JS call passes; in a config file it does nothing.
            k if JS_ONLY_KEYS.contains(&k) && e.location.is_some() => warnings.push(Warning {
                code: "UNKNOWN_OPTION",
                message: format!(
                    "{}{} ignored: a function, signal or timeout is passed to the JS call (summarize, countTokens, signal, timeoutMs), never read from a config file",
                    Quoted(&e.name),
                    e.here()
                ),
            }),
            k if JS_ONLY_KEYS.contains(&k) => {}
            _ => {
                if o.strict {
                    return Err(Error::config(format!(
                        "unknown option {}{}: strict mode rejects unknown options; check the spelling or remove it",
                        Quoted(&e.name),
                        e.here()
                    )));
                }
                warnings.push(Warning {
                    code: "UNKNOWN_OPTION",
                    message: format!("unknown option {}{} ignored", Quoted(&e.name), e.here()),
                });
            }
        }
    }
    if window_given && o.reserve_output_tokens >= o.context_window {
        return Err(Error::config(format!(
            "reserve_output_tokens ({}) leaves no room for the conversation in context_window ({}): the answer's room must be smaller than the window",
            o.reserve_output_tokens, o.context_window
        )));
    }
    Ok(ParsedOptions {
        options: o,
        warnings,
        context_window_given: window_given,
        tokenizer_given,
    })
}

fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// Options from a JSON object (camelCase or snake_case keys). `null` and
/// missing keys take the default.
pub(crate) fn from_node<'a, N: Node<'a>>(value: N) -> Result<ParsedOptions> {
    match value.kind() {
        Kind::Null => return validate(Vec::new()),
        Kind::Object => {}
        other => {
            return Err(Error::config(format!(
                "options: expected an object, got {}",
                other.name()
            )))
        }
    }
    let entries: Vec<Entry> = value
        .members()
        .filter(|(_, v)| v.kind() != Kind::Null)
        .map(|(k, v)| Entry {
            key: snake_case(k),
            name: k.to_string(),
            value: Given::from_node(v),
            location: None,
        })
        .collect();
    one_value_each(&entries)?;
    validate(entries)
}

/// Options from a JSON object (camelCase or snake_case keys). `null` and
/// missing keys take the default.
#[cfg(feature = "serde_json")]
pub fn from_json(value: &serde_json::Value) -> Result<ParsedOptions> {
    let tape = crate::json::serde::tape_of(value);
    from_node(tape.open()?.root())
}

/// `contextWindow` and `context_window` are one option: two different values
/// are a mistake, in JSON and in TOML alike.
fn one_value_each(entries: &[Entry]) -> Result<()> {
    // A table, not a loop over the others: a config may hold thousands of keys.
    let mut seen = Names::new();
    for (k, e) in entries.iter().enumerate() {
        if !seen.insert(&e.key, k as u64) {
            let first = &entries[seen.get(&e.key).unwrap_or(0) as usize];
            if first.value != e.value {
                return Err(Error::config(format!(
                    "{} and {}{} are the same option, given two different values; keep one",
                    first.name,
                    e.name,
                    e.here()
                )));
            }
        }
    }
    Ok(())
}

/// Options from JSON text (empty text or `null`: the defaults).
pub fn from_json_text(text: &str) -> Result<ParsedOptions> {
    if text.trim().is_empty() {
        return validate(Vec::new());
    }
    let parsed = crate::json::parse::parse_str(text)
        .map_err(|e| Error::config(format!("options is not valid JSON: {e}")))?;
    from_node(parsed.tape().root())
}

/// Whether `key` names an option (any spelling): one that is no option reads
/// as unknown even with a value no option takes.
pub(crate) fn is_option(key: &str) -> bool {
    let probe = Entry {
        key: snake_case(key),
        name: key.to_string(),
        value: Given::Other("a table"),
        location: None,
    };
    validate(vec![probe]).map_or(true, |p| p.warnings.is_empty())
}

impl WriteJson for Mode {
    fn write_json(&self, w: &mut Writer) {
        w.string(self.key());
    }
}

impl WriteJson for Alternation {
    fn write_json(&self, w: &mut Writer) {
        w.string(match self {
            Alternation::Keep => "keep",
            Alternation::Merge => "merge",
        });
    }
}

impl WriteJson for Options {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("mode", &self.mode);
        w.field("thresholdPercent", &self.threshold_percent);
        w.field("protectHead", &self.protect_head);
        w.field("protectTailMin", &self.protect_tail_min);
        w.field("tailBudgetRatio", &self.tail_budget_ratio);
        w.field("toolPruneCharThreshold", &self.tool_prune_char_threshold);
        w.field_some("summaryModel", self.summary_model.as_ref());
        w.field_some("summaryContextWindow", self.summary_context_window.as_ref());
        w.field("maxSummaryTokens", &self.max_summary_tokens);
        w.field("showSettingsHint", &self.show_settings_hint);
        w.field("contextWindow", &self.context_window);
        w.field("reserveOutputTokens", &self.reserve_output_tokens);
        w.field("maxToolResultBytes", &self.max_tool_result_bytes);
        w.field_some("format", self.format.as_ref());
        w.field_some("alternation", self.alternation.as_ref());
        w.field("tokenizer", &self.tokenizer);
        w.field_some("now", self.now.as_ref());
        w.field("randomIds", &self.random_ids);
        w.field_some("randomSeed", self.random_seed.as_ref());
        w.field("strict", &self.strict);
        if !self.pin.is_empty() {
            w.field("pin", &self.pin);
        }
        if !self.pin_roles.is_empty() {
            w.field("pinRoles", &self.pin_roles);
        }
        w.close();
    }
}

impl WriteJson for Warning {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("code", &self.code);
        w.field("message", &self.message);
        w.close();
    }
}

impl WriteJson for ParsedOptions {
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("options", &self.options);
        w.field("warnings", &self.warnings);
        w.field("contextWindowGiven", &self.context_window_given);
        w.field("tokenizerGiven", &self.tokenizer_given);
        w.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_sections_and_options_outside_the_table_are_told_apart() {
        // A moltis.toml's other sections are not options: no warning.
        let bare = from_toml(
            "mode = \"structured\"\n[server]\nport = 8080\n[providers.openai]\nkey = \"x\"\n",
        )
        .unwrap();
        assert_eq!(bare.options.mode, Mode::Structured);
        assert!(bare.warnings.is_empty(), "{:?}", bare.warnings);
        // An option next to [chat.compaction] is not read, and is said to be ignored.
        let moltis = from_toml(
            "mode = \"structured\"\n[server]\nport = 1\n[chat.compaction]\nprotect_head = 2\n",
        )
        .unwrap();
        assert_eq!(moltis.options.mode, Mode::Deterministic);
        assert_eq!(moltis.options.protect_head, 2);
        assert_eq!(moltis.warnings.len(), 1, "{:?}", moltis.warnings);
        assert!(moltis.warnings[0]
            .message
            .starts_with("\"mode\" (line 1, column "));
        assert!(moltis.warnings[0]
            .message
            .contains("is outside [chat.compaction]"));
        // Arrays of tables are sections too, even with strict on.
        let arrays =
            from_toml("strict = true\n[[servers]]\nport = 1\n[[servers]]\nport = 2\n").unwrap();
        assert!(arrays.warnings.is_empty(), "{:?}", arrays.warnings);
        // An option in [chat] is not read either.
        let chat = from_toml("[chat]\nmode = \"structured\"\n[chat.compaction]\n").unwrap();
        assert_eq!(chat.options.mode, Mode::Deterministic);
        assert_eq!(chat.warnings.len(), 1, "{:?}", chat.warnings);
        // A section named as an option is still a wrong type.
        assert!(from_toml("[mode]\nx = 1\n").is_err());
    }

    #[test]
    fn tail_budget_math_matches_moltis() {
        let mut o = Options::default();
        for (cw, want) in [(200_000, 38_000), (150, 29), (200, 38), (0, 1)] {
            o.context_window = cw;
            assert_eq!(o.tail_budget(), want, "window {cw}");
        }
    }

    #[test]
    fn a_threshold_above_one_and_up_to_a_hundred_is_a_percent() {
        let codes = |o: &ParsedOptions| o.warnings.iter().map(|w| w.code).collect::<Vec<_>>();
        for (given, used, warned) in [
            (80.0, 0.8, vec!["READ_AS_PERCENT"]),
            (100.0, 0.95, vec!["READ_AS_PERCENT", "CLAMPED"]),
            (5.0, 0.1, vec!["READ_AS_PERCENT", "CLAMPED"]),
            (150.0, 0.95, vec!["CLAMPED"]),
            (1.0, 0.95, vec!["CLAMPED"]),
            (0.5, 0.5, vec![]),
        ] {
            let o = from_json(&serde_json::json!({"thresholdPercent": given})).unwrap();
            assert_eq!(o.options.threshold_percent, used, "{given}");
            assert_eq!(codes(&o), warned, "{given}");
        }
        let toml = from_toml("[chat.compaction]\nthreshold_percent = 80\n").unwrap();
        assert_eq!(toml.options.threshold_percent, 0.8);
        assert!(toml.warnings[0]
            .message
            .contains("read as a percent: 0.8 (line 2"));
    }

    #[test]
    fn a_summary_bound_too_small_for_the_template_is_raised_with_a_warning() {
        for (given, used, warned) in [
            (0, 256, true),
            (255, 256, true),
            (256, 256, false),
            (800, 800, false),
        ] {
            let o = from_json(&serde_json::json!({"maxSummaryTokens": given})).unwrap();
            assert_eq!(o.options.max_summary_tokens, used, "{given}");
            assert_eq!(
                o.warnings.iter().any(|w| w.code == "CLAMPED"),
                warned,
                "{given}"
            );
        }
        let toml = from_toml("[chat.compaction]\nmax_summary_tokens = 0\n").unwrap();
        assert_eq!(toml.options.max_summary_tokens, 256);
        assert!(toml.warnings[0]
            .message
            .contains("below the minimum of 256"));
    }

    #[test]
    fn toml_takes_one_value_per_option_and_says_what_only_the_js_call_passes() {
        let e = from_toml("[chat.compaction]\nprotectHead = 1\nprotect_head = 5\n").unwrap_err();
        assert!(
            e.message()
                .contains("same option, given two different values"),
            "{e}"
        );
        let same = from_toml("[chat.compaction]\nprotectHead = 5\nprotect_head = 5\n").unwrap();
        assert_eq!(same.options.protect_head, 5);
        let js =
            from_toml("[chat.compaction]\ntimeout_ms = 60000\nsummarize = \"openai\"\n").unwrap();
        let ignored: Vec<_> = js
            .warnings
            .iter()
            .filter(|w| w.code == "UNKNOWN_OPTION")
            .collect();
        assert_eq!(ignored.len(), 2, "{ignored:?}");
        assert!(ignored[0].message.contains("passed to the JS call"));
        // A native caller's JSON may carry them: known, nothing to say.
        let json = from_json(&serde_json::json!({"timeoutMs": 10})).unwrap();
        assert!(json.warnings.is_empty());
    }

    #[test]
    fn camel_case_keys_become_snake_case() {
        assert_eq!(snake_case("protectTailMin"), "protect_tail_min");
        assert_eq!(snake_case("protect_head"), "protect_head");
    }
}
