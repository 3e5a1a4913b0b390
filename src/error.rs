//! The library's one error type: a stable code plus a message that says what is
//! wrong, where, and how to fix it.

use std::fmt;

/// What went wrong, as a stable code (the same strings reach JS as `error.code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The history or one of its messages is malformed.
    InvalidInput,
    /// An option or the TOML config has the wrong type, an unknown mode, or (strict) an unknown key.
    InvalidConfig,
    /// There are no messages to compact.
    EmptyHistory,
    /// Head and tail already cover everything and nothing can be pruned, or the
    /// result would not be smaller than the input.
    TooSmallToCompact,
    /// An LLM mode was asked for without a summarizer function.
    SummarizerRequired,
    /// The summarizer failed (threw, rejected, timed out).
    LlmFailed,
    /// The summarizer returned an empty summary.
    EmptySummary,
    /// The caller aborted the operation.
    Aborted,
    /// The history changed under a pending compaction in a way its result cannot
    /// be spliced onto (messages it covered were edited or removed, or a tool
    /// pair would be split at the seam).
    StaleHistory,
}

impl ErrorKind {
    /// The stable code string, e.g. `INVALID_INPUT`.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidInput => "INVALID_INPUT",
            ErrorKind::InvalidConfig => "INVALID_CONFIG",
            ErrorKind::EmptyHistory => "EMPTY_HISTORY",
            ErrorKind::TooSmallToCompact => "TOO_SMALL_TO_COMPACT",
            ErrorKind::SummarizerRequired => "SUMMARIZER_REQUIRED",
            ErrorKind::LlmFailed => "LLM_FAILED",
            ErrorKind::EmptySummary => "EMPTY_SUMMARY",
            ErrorKind::Aborted => "ABORTED",
            ErrorKind::StaleHistory => "STALE_HISTORY",
        }
    }
}

/// An error with a stable [`ErrorKind`] and a specific, lowercase message that
/// says what is wrong, where (a byte offset in JSON text, a line and column in
/// TOML) and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

// The constructors are `#[cold]`: an error is off every hot path, and code that
// builds one is then kept out of line (part of −10.9 KB gzipped with the build's
// wasm-opt flags, DESIGN.md).
impl Error {
    /// Builds an error of `kind` with `message`.
    #[cold]
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// The same error with `note` after its message.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn noting(mut self, note: &str) -> Self {
        self.message = format!("{} ({note})", self.message);
        self
    }

    /// An [`ErrorKind::InvalidInput`] error located at `path` (e.g. `messages[3].role`).
    #[cold]
    pub fn input(path: impl fmt::Display, what: impl fmt::Display) -> Self {
        Error::new(ErrorKind::InvalidInput, format!("{path}: {what}"))
    }

    /// An [`ErrorKind::InvalidConfig`] error.
    #[cold]
    pub fn config(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidConfig, message)
    }

    /// The error's kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The stable code string of the kind.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// The human-readable message (without the code).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.code(), self.message)
    }
}

impl std::error::Error for Error {}

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_syntax_error_says_where() {
        let e = crate::options::from_json_text("{nope").expect_err("bad JSON");
        assert_eq!(e.kind(), ErrorKind::InvalidConfig);
        assert!(
            e.message().contains("expected a key (a string) at byte 1"),
            "{e}"
        );
    }
}
