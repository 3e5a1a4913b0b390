//! Heuristic token estimation: one pass over the bytes, no vocabulary files.
//!
//! The scan sorts the text into the pieces a BPE pre-tokenizer would cut it into
//! (words, digit groups, punctuation runs, whitespace runs, CJK and other
//! non-ASCII characters) and weighs each kind of piece by how many o200k tokens it
//! costs on average. The weights were fitted by least squares against the exact
//! o200k and cl100k tokenizers on real conversations (`examples/calibrate.rs`).

use serde::Serialize;

use crate::message::{Message, Role};

/// Which tokenizer the estimate imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// OpenAI's o200k_base (GPT-4o and later). The default.
    #[default]
    O200k,
    /// OpenAI's cl100k_base (GPT-4, GPT-3.5).
    Cl100k,
    /// Anthropic Claude: about 1.1 × o200k plus a larger per-message overhead.
    Claude,
}

impl Profile {
    /// Parses a profile name (`o200k`, `cl100k`, `claude`).
    pub fn from_name(name: &str) -> Option<Profile> {
        match name {
            "o200k" | "o200k_base" => Some(Profile::O200k),
            "cl100k" | "cl100k_base" => Some(Profile::Cl100k),
            "claude" => Some(Profile::Claude),
            _ => None,
        }
    }

    /// Tokens a message costs beyond its text (role markers, separators).
    pub fn message_overhead(self) -> u64 {
        match self {
            Profile::O200k | Profile::Cl100k => 4,
            Profile::Claude => 7,
        }
    }

    /// Tokens counted for one image, whatever its size (a flat amount: the real
    /// cost depends on resolution, which the library does not decode).
    pub fn image_tokens(self) -> u64 {
        match self {
            Profile::O200k | Profile::Cl100k => 765,
            Profile::Claude => 1_600,
        }
    }

    /// Tokens a tool call costs beyond its name and arguments.
    pub fn call_overhead(self) -> u64 {
        match self {
            Profile::O200k | Profile::Cl100k => 8,
            Profile::Claude => 12,
        }
    }

    fn weights(self) -> &'static Weights {
        match self {
            Profile::O200k | Profile::Claude => &O200K,
            Profile::Cl100k => &CL100K,
        }
    }

    fn scale(self) -> f64 {
        match self {
            Profile::Claude => 1.1,
            _ => 1.0,
        }
    }
}

/// Counts of the pieces the scan found; the estimate is their weighted sum.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Features {
    /// Words (letter runs, split where a lower-case letter meets an upper-case one).
    pub words: f64,
    /// Letters beyond the sixth in each word (long words split into several tokens).
    pub long_word_letters: f64,
    /// Digit groups of up to three digits.
    pub digit_groups: f64,
    /// Runs of punctuation / symbols.
    pub punct_runs: f64,
    /// Punctuation characters beyond the first of each run.
    pub punct_extra: f64,
    /// Runs of whitespace that contain a line break.
    pub newline_runs: f64,
    /// Runs of two or more spaces/tabs without a line break (indentation).
    pub space_runs: f64,
    /// CJK ideographs, kana and CJK punctuation (U+3000–U+9FFF).
    pub cjk: f64,
    /// Hangul syllables and the rest of U+A000–U+DFFF.
    pub hangul: f64,
    /// Runs of CJK or Hangul characters (a token rarely spans the gap between two).
    pub cjk_runs: f64,
    /// Other three-byte characters (symbols, punctuation, other scripts).
    pub other3: f64,
    /// Two-byte characters (accented Latin, Greek, Cyrillic, Hebrew, Arabic …).
    pub two_byte: f64,
    /// Four-byte characters (emoji, rare ideographs).
    pub four_byte: f64,
}

/// One weight per feature, in the order of [`Features`].
type Weights = [f64; 13];

/// Fitted on the corpus against o200k_base.
const O200K: Weights = [
    0.952, 0.090, 1.436, 0.902, 0.020, 0.661, 0.919, 0.701, 0.357, 1.089, 1.250, 2.578, 3.325,
];
/// Fitted on the corpus against cl100k_base.
const CL100K: Weights = [
    0.984, 0.058, 1.463, 0.890, 0.019, 0.650, 0.728, 1.195, 0.918, 1.023, 1.341, 2.563, 4.997,
];

impl Features {
    /// The features as a vector in weight order.
    pub fn to_array(self) -> [f64; 13] {
        [
            self.words,
            self.long_word_letters,
            self.digit_groups,
            self.punct_runs,
            self.punct_extra,
            self.newline_runs,
            self.space_runs,
            self.cjk,
            self.hangul,
            self.cjk_runs,
            self.other3,
            self.two_byte,
            self.four_byte,
        ]
    }
}

// Byte classes of the scan.
const LOWER: u8 = 0;
const UPPER: u8 = 1;
const DIGIT: u8 = 2;
const SPACE: u8 = 3;
const NEWLINE: u8 = 4;
const PUNCT: u8 = 5;
/// Lead byte of a two-byte character.
const LEAD2: u8 = 6;
/// Lead bytes of three-byte characters: CJK (U+3000–U+9FFF), Hangul
/// (U+A000–U+DFFF), the rest.
const LEAD3_CJK: u8 = 7;
const LEAD3_HANGUL: u8 = 8;
const LEAD3: u8 = 9;
const LEAD4: u8 = 10;
/// A continuation byte out of place (cannot happen in a `str`; skipped).
const CONT: u8 = 11;

/// The class of every byte value, so the scan does one table look-up a byte.
static CLASS: [u8; 256] = {
    let mut t = [PUNCT; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = match b as u8 {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            b' ' | b'\t' => SPACE,
            b'\n' | b'\r' => NEWLINE,
            0x80..=0xBF => CONT,
            0xC0..=0xDF => LEAD2,
            0xE3..=0xE9 => LEAD3_CJK,
            0xEA..=0xED => LEAD3_HANGUL,
            0xE0..=0xEF => LEAD3,
            0xF0..=0xFF => LEAD4,
            _ => PUNCT,
        };
        b += 1;
    }
    t
};

/// End of the run of bytes of class `class` that starts at or after `i`.
#[inline]
fn run_end(b: &[u8], i: usize, class: u8) -> usize {
    b[i..]
        .iter()
        .position(|&x| CLASS[x as usize] != class)
        .map_or(b.len(), |p| i + p)
}

/// Scans `text` once and counts the pieces the estimate weighs.
pub fn features(text: &str) -> Features {
    let b = text.as_bytes();
    let n = b.len();
    let (mut words, mut long, mut digits, mut punct_runs, mut punct_extra) =
        (0u32, 0u32, 0u32, 0u32, 0u32);
    let (mut newlines, mut spaces, mut two, mut four) = (0u32, 0u32, 0u32, 0u32);
    let (mut cjk, mut hangul, mut cjk_runs, mut other3) = (0u32, 0u32, 0u32, 0u32);
    let mut i = 0;
    while i < n {
        let start = i;
        match CLASS[b[i] as usize] {
            LOWER | UPPER => {
                // A word: capitals, then lower-case letters and two-byte letters
                // (how the o200k pre-tokenizer cuts `CamelCase` and `HTTPServer`).
                i = run_end(b, i, UPPER);
                loop {
                    i = run_end(b, i, LOWER);
                    if i + 1 < n && CLASS[b[i] as usize] == LEAD2 {
                        i += 2;
                    } else {
                        break;
                    }
                }
                words += 1;
                long += (i - start).saturating_sub(6) as u32;
            }
            DIGIT => {
                i = run_end(b, i, DIGIT);
                digits += (i - start).div_ceil(3) as u32;
            }
            SPACE | NEWLINE => {
                let mut newline = false;
                loop {
                    i = run_end(b, i, SPACE);
                    if i < n && CLASS[b[i] as usize] == NEWLINE {
                        newline = true;
                        i = run_end(b, i, NEWLINE);
                    } else {
                        break;
                    }
                }
                if newline {
                    newlines += 1;
                } else if i - start > 1 {
                    spaces += 1;
                }
            }
            PUNCT => {
                i = run_end(b, i, PUNCT);
                punct_runs += 1;
                punct_extra += (i - start - 1) as u32;
            }
            LEAD2 => {
                two += 1;
                i += 2;
            }
            class @ (LEAD3_CJK | LEAD3_HANGUL) => {
                cjk_runs += 1;
                while i < n && CLASS[b[i] as usize] == class {
                    *if class == LEAD3_CJK {
                        &mut cjk
                    } else {
                        &mut hangul
                    } += 1;
                    i += 3;
                }
            }
            LEAD3 => {
                other3 += 1;
                i += 3;
            }
            LEAD4 => {
                four += 1;
                i += 4;
            }
            _ => i += 1,
        }
    }
    Features {
        words: words.into(),
        long_word_letters: long.into(),
        digit_groups: digits.into(),
        punct_runs: punct_runs.into(),
        punct_extra: punct_extra.into(),
        newline_runs: newlines.into(),
        space_runs: spaces.into(),
        cjk: cjk.into(),
        hangul: hangul.into(),
        cjk_runs: cjk_runs.into(),
        other3: other3.into(),
        two_byte: two.into(),
        four_byte: four.into(),
    }
}

/// Estimated tokens of `text` under `profile` (text only, no message framing).
pub fn estimate(text: &str, profile: Profile) -> u64 {
    if text.is_empty() {
        return 0;
    }
    let w = profile.weights();
    let sum: f64 = features(text)
        .to_array()
        .iter()
        .zip(w.iter())
        .map(|(x, w)| x * w)
        .sum();
    (sum * profile.scale()).ceil().max(1.0) as u64
}

/// How tokens are counted: the built-in estimator or a caller's exact counter.
pub trait TokenCounter {
    /// Tokens of `text` (text only).
    fn count(&self, text: &str) -> u64;
    /// The profile whose framing overheads and image cost apply.
    fn profile(&self) -> Profile;
}

/// A counter whose answers are capped at 2^40 tokens (no real text comes near),
/// so that sums over any history cannot overflow, whatever a caller's counter says.
pub(crate) struct Capped<'c>(pub &'c dyn TokenCounter);

impl TokenCounter for Capped<'_> {
    fn count(&self, text: &str) -> u64 {
        self.0.count(text).min(1 << 40)
    }
    fn profile(&self) -> Profile {
        self.0.profile()
    }
}

/// The built-in heuristic estimator for a profile.
#[derive(Debug, Clone, Copy, Default)]
pub struct Estimator(pub Profile);

impl TokenCounter for Estimator {
    fn count(&self, text: &str) -> u64 {
        estimate(text, self.0)
    }
    fn profile(&self) -> Profile {
        self.0
    }
}

/// Estimated tokens of one message: its text, reasoning, tool calls and results,
/// images at a flat rate, plus the profile's framing overhead. UI-only notices
/// are never sent to a model and count nothing.
/// Also notes each tool output's own count on it, for plans that replace it.
pub(crate) fn message_tokens(m: &mut Message<'_>, counter: &dyn TokenCounter) -> u64 {
    if m.role == Role::Notice {
        return 0;
    }
    let profile = counter.profile();
    let mut t = profile.message_overhead();
    t += m
        .texts
        .iter()
        .chain(&m.reasoning)
        .map(|s| counter.count(s))
        .sum::<u64>();
    for c in &m.calls {
        t += profile.call_overhead() + counter.count(c.name) + counter.count(&c.args.text());
    }
    for r in &mut m.results {
        r.tokens = counter.count(&r.text);
        t += r.tokens + r.images as u64 * profile.image_tokens() + (r.opaque_bytes / 3) as u64;
    }
    t += m.images as u64 * profile.image_tokens();
    t += (m.opaque_bytes / 3) as u64;
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_text_is_zero_and_any_text_is_at_least_one() {
        assert_eq!(estimate("", Profile::O200k), 0);
        assert_eq!(estimate(" ", Profile::O200k), 1);
    }

    #[test]
    fn scan_splits_camel_case_and_digit_groups() {
        let f = features("HTTPServer parseJson 1234567");
        assert_eq!(f.words, 3.0); // `HTTPServer`, `parse`, `Json`
        assert_eq!(f.digit_groups, 3.0);
    }

    #[test]
    fn cjk_costs_more_per_byte_than_english() {
        let zh = "这是一个关于上下文窗口压缩的测试句子";
        let en = "this is a sentence about context window compaction";
        let per_byte = |s: &str| estimate(s, Profile::O200k) as f64 / s.len() as f64;
        assert!(per_byte(zh) > per_byte(en));
    }

    #[test]
    fn claude_counts_more_than_o200k() {
        let t = "The quick brown fox jumps over the lazy dog. ".repeat(20);
        assert!(estimate(&t, Profile::Claude) > estimate(&t, Profile::O200k));
    }
}
