//! Heuristic token estimation: one pass over the bytes, no vocabulary files.
//!
//! The scan sorts the text into the pieces a BPE pre-tokenizer would cut it into
//! (words, digit groups, punctuation runs, whitespace runs, CJK and other
//! non-ASCII characters) and weighs each kind of piece by how many tokens it
//! costs on average. It reads 64-byte blocks as bit masks, sixteen bytes at a
//! time (wasm `simd128` in the package), see `Masks`. The weights were fitted
//! against the exact o200k and cl100k tokenizers on real conversations and
//! generated CJK chat (`examples/calibrate.rs`). Images count by the providers'
//! rules for their size, read from the first bytes of their data (`Image`).

use crate::json::Node;
use crate::lanes::{Lanes, Native};
use crate::message::{Message, Role};

/// Which tokenizer the estimate imitates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Profile {
    /// OpenAI's o200k_base (GPT-4o and later). The default.
    #[default]
    O200k,
    /// OpenAI's cl100k_base (GPT-4, GPT-3.5).
    Cl100k,
    /// Anthropic Claude: 1.106 × o200k (measured on real Claude usage of the
    /// corpus sessions) plus a larger per-message overhead.
    Claude,
}

impl crate::json::WriteJson for Profile {
    fn write_json(&self, w: &mut crate::json::Writer) {
        w.string(match self {
            Profile::O200k => "o200k",
            Profile::Cl100k => "cl100k",
            Profile::Claude => "claude",
        });
    }
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

    /// Tokens counted for an image whose size is not known (a URL or file id,
    /// or data in a format the library does not read): what a 1024 × 1024
    /// image costs at OpenAI's high detail (4 tiles: 85 + 4 × 170), and the
    /// most an image costs Claude after resizing.
    pub fn image_tokens(self) -> u64 {
        match self {
            Profile::O200k | Profile::Cl100k => 765,
            Profile::Claude => 1_600,
        }
    }

    /// Tokens of one image by the provider's published rule for its size.
    pub(crate) fn image_cost(self, image: Image) -> u64 {
        match self {
            Profile::O200k | Profile::Cl100k => openai_image_tokens(image),
            Profile::Claude => claude_image_tokens(image),
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
            Profile::Claude => 1.106,
            _ => 1.0,
        }
    }
}

/// Counts of the pieces the scan found; the estimate is their weighted sum.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Features {
    /// Words: runs of letters (ASCII letters and two-byte characters such as
    /// accented Latin, Greek or Cyrillic), split where a lower-case letter meets
    /// an upper-case one (how the o200k pre-tokenizer cuts `parseJson`).
    pub words: f64,
    /// Bytes beyond the sixth in each word (long words split into several tokens).
    pub long_word_letters: f64,
    /// Words that start with an upper-case letter.
    pub capitalized: f64,
    /// Digit groups of up to three digits (a run of seven digits is three groups).
    pub digit_groups: f64,
    /// Runs of ASCII punctuation, symbols and control characters.
    pub punct_runs: f64,
    /// Punctuation characters beyond the first of a run that repeat the one
    /// before (`====`, `//`: such runs merge into few tokens).
    pub punct_repeats: f64,
    /// Punctuation characters beyond the first of a run that differ from the
    /// one before (`();`, `\_\_`).
    pub punct_changes: f64,
    /// Punctuation right after a backslash (escapes such as `\"`, `\_`).
    pub escaped_punct: f64,
    /// Punctuation that alternates with the character before it for four
    /// characters or more (`\_\_\_`, `-=-=`): such runs cost a token every
    /// two characters.
    pub alternations: f64,
    /// Backslashes (escapes such as `\"`, `\n`, `\_` rarely merge).
    pub backslashes: f64,
    /// Runs of line breaks (`\n`, `\r`).
    pub newline_runs: f64,
    /// Runs of two or more spaces or tabs (indentation, alignment).
    pub space_runs: f64,
    /// Two-byte characters, and the three-byte Latin and Greek letters of
    /// Vietnamese and polytonic Greek (U+1E00–U+1FFF); all count in words too.
    pub two_byte: f64,
    /// Han ideographs (CJK unified, extension A, compatibility).
    pub han: f64,
    /// Han ideographs that are not a single o200k token (rarer ones: two or
    /// three tokens each). One bit per ideograph says which (`han_o200k.bin`).
    pub rare_han_o200k: f64,
    /// Han ideographs that are not a single cl100k token (`han_cl100k.bin`).
    pub rare_han_cl100k: f64,
    /// Hiragana.
    pub hiragana: f64,
    /// Katakana.
    pub katakana: f64,
    /// Hangul syllables and jamo.
    pub hangul: f64,
    /// Hangul syllables that are not a single cl100k token (`hangul_cl100k.bin`).
    pub rare_hangul_cl100k: f64,
    /// CJK punctuation (U+3000–U+303F) and full-width forms (U+FF00–U+FFEF).
    pub cjk_punct: f64,
    /// Runs of Hangul characters (Korean words: about one token plus a share per syllable).
    pub hangul_runs: f64,
    /// Other three-byte characters (symbols, box drawing, other scripts).
    pub other3: f64,
    /// Four-byte characters (emoji, rare ideographs).
    pub four_byte: f64,
}

/// How many features there are.
const N: usize = 24;

/// One weight per feature, in the order of [`Features::to_array`].
type Weights = [f64; N];

/// Fitted on the corpus against o200k_base.
const O200K: Weights = [
    0.906, 0.086, 0.214, 1.240, 0.925, 0.049, 0.075, 0.722, 0.250, -0.137, 0.335, 0.838, 1.022,
    0.676, 1.068, 0.471, 0.639, 0.650, 0.223, 0.380, 0.401, 1.131, 1.271, 2.020,
];
/// Fitted on the corpus against cl100k_base.
const CL100K: Weights = [
    0.929, 0.055, 0.210, 1.275, 0.919, 0.046, 0.073, 0.765, 0.250, -0.172, 0.395, 0.652, 1.336,
    0.920, 0.351, 1.256, 0.832, 0.956, 0.538, 0.740, 0.755, 1.208, 1.368, 2.027,
];

impl Features {
    /// The features as a vector in weight order.
    pub fn to_array(self) -> [f64; N] {
        [
            self.words,
            self.long_word_letters,
            self.capitalized,
            self.digit_groups,
            self.punct_runs,
            self.punct_repeats,
            self.punct_changes,
            self.escaped_punct,
            self.alternations,
            self.backslashes,
            self.newline_runs,
            self.space_runs,
            self.two_byte,
            self.han,
            self.rare_han_o200k,
            self.rare_han_cl100k,
            self.hiragana,
            self.katakana,
            self.hangul,
            self.rare_hangul_cl100k,
            self.cjk_punct,
            self.hangul_runs,
            self.other3,
            self.four_byte,
        ]
    }

    fn from_counts(c: &[u64; N]) -> Features {
        let f = |i: usize| c[i] as f64;
        Features {
            words: f(0),
            long_word_letters: f(1),
            capitalized: f(2),
            digit_groups: f(3),
            punct_runs: f(4),
            punct_repeats: f(5),
            punct_changes: f(6),
            escaped_punct: f(7),
            alternations: f(8),
            backslashes: f(9),
            newline_runs: f(10),
            space_runs: f(11),
            two_byte: f(12),
            han: f(13),
            rare_han_o200k: f(14),
            rare_han_cl100k: f(15),
            hiragana: f(16),
            katakana: f(17),
            hangul: f(18),
            rare_hangul_cl100k: f(19),
            cjk_punct: f(20),
            hangul_runs: f(21),
            other3: f(22),
            four_byte: f(23),
        }
    }
}

// Positions of the counts (the order of `Features::to_array`).
const WORDS: usize = 0;
const LONG: usize = 1;
const CAPS: usize = 2;
const DIGIT_GROUPS: usize = 3;
const PUNCT_RUNS: usize = 4;
const PUNCT_REPEATS: usize = 5;
const PUNCT_CHANGES: usize = 6;
const ESCAPED_PUNCT: usize = 7;
const ALTERNATIONS: usize = 8;
const BACKSLASHES: usize = 9;
const NEWLINE_RUNS: usize = 10;
const SPACE_RUNS: usize = 11;
const TWO_BYTE: usize = 12;
const HAN: usize = 13;
const RARE_HAN_O200K: usize = 14;
const RARE_HAN_CL100K: usize = 15;
const HIRAGANA: usize = 16;
const KATAKANA: usize = 17;
const HANGUL: usize = 18;
const RARE_HANGUL_CL100K: usize = 19;
const CJK_PUNCT: usize = 20;
const HANGUL_RUNS: usize = 21;
const OTHER3: usize = 22;
const FOUR_BYTE: usize = 23;

/// Which ideographs U+4E00–U+9FFF are a single token of o200k and of cl100k:
/// bit `i % 8` of byte `i / 8` for U+4E00 + `i` (2,515 and 549 of 20,992;
/// written by `cargo run --release --example calibrate -- --tables`). Common
/// ideographs cost about one token, the rest two or three.
static HAN_O200K: &[u8; 2624] = include_bytes!("han_o200k.bin");
static HAN_CL100K: &[u8; 2624] = include_bytes!("han_cl100k.bin");
/// The same for the Hangul syllables U+AC00–U+D7A3 in cl100k (o200k has most
/// of the common ones as single tokens, and no table improves its estimate).
static HANGUL_CL100K: &[u8; 1397] = include_bytes!("hangul_cl100k.bin");

/// Whether character `cp` has its bit set in `table`, which starts at `first`.
fn single_token(table: &[u8], first: u32, cp: u32) -> bool {
    let i = cp.wrapping_sub(first) as usize;
    table.get(i / 8).is_some_and(|b| b >> (i % 8) & 1 == 1)
}

/// What a three-byte character counts as.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Wide {
    /// An ideograph, and whether it is a rare one for o200k and for cl100k.
    Han(bool, bool),
    Hiragana,
    Katakana,
    /// A Hangul syllable or jamo, and whether it is a rare one for cl100k.
    Hangul(bool),
    CjkPunct,
    Letter,
    Other,
}

/// Sorts the three-byte character whose lead byte is `b0`.
fn wide(b0: u8, b1: u8, b2: u8) -> Wide {
    let cp = u32::from(b0 & 0x0F) << 12 | u32::from(b1 & 0x3F) << 6 | u32::from(b2 & 0x3F);
    match cp {
        0x3000..=0x303F | 0xFF00..=0xFFEF => Wide::CjkPunct,
        0x3040..=0x309F => Wide::Hiragana,
        0x30A0..=0x30FF | 0x31F0..=0x31FF => Wide::Katakana,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF => Wide::Han(
            !single_token(HAN_O200K, 0x4E00, cp),
            !single_token(HAN_CL100K, 0x4E00, cp),
        ),
        0xAC00..=0xD7A3 => Wide::Hangul(!single_token(HANGUL_CL100K, 0xAC00, cp)),
        0x1100..=0x11FF | 0x3130..=0x318F | 0xD7A4..=0xD7FF => Wide::Hangul(true),
        0x1E00..=0x1FFF => Wide::Letter,
        _ => Wide::Other,
    }
}

/// The scan works on blocks of 64 bytes: it sorts every byte of a block into a
/// class, one bit a byte (bit `i` of a mask is byte `i` of the block), and
/// counts the features with bit operations on those masks. Every feature is
/// decided by a byte and the few bytes before it, so the masks of the previous
/// block carry over and blocks are independent otherwise.
///
/// Sorting 16 bytes at a time is the only part that differs between the wasm
/// `simd128` build and everything else; both go through [`Lanes`], and the
/// portable lanes are checked against a plain byte-by-byte scan in the tests.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct Masks {
    lower: u64,
    upper: u64,
    digit: u64,
    space: u64,
    newline: u64,
    /// Bytes ≥ 0x80 (parts of multi-byte characters).
    high: u64,
    /// Bytes equal to the byte before them.
    same: u64,
    backslash: u64,
}

/// Sorts the 64 bytes of `block` into class masks; `previous` holds the last
/// sixteen bytes before the block, and then the block's last sixteen.
#[inline(always)]
fn classify<V: Lanes>(block: &[u8; 64], previous: &mut V) -> Masks {
    let mut m = Masks::default();
    for (k, chunk) in block.chunks_exact(16).enumerate() {
        let v = V::load(chunk.try_into().unwrap_or(&[0; 16]));
        let at = 16 * k;
        m.same |= u64::from(v.same(*previous)) << at;
        *previous = v;
        m.lower |= u64::from(v.in_range(b'a', 26)) << at;
        m.upper |= u64::from(v.in_range(b'A', 26)) << at;
        m.digit |= u64::from(v.in_range(b'0', 10)) << at;
        m.space |= u64::from(v.either(b' ', b'\t')) << at;
        m.newline |= u64::from(v.either(b'\n', b'\r')) << at;
        m.high |= u64::from(v.high()) << at;
        m.backslash |= u64::from(v.either(b'\\', b'\\')) << at;
    }
    m
}

/// Lead bytes of multi-byte characters (≥ 0xC0) in `block`.
#[inline(always)]
fn leads<V: Lanes>(block: &[u8; 64]) -> u64 {
    block.chunks_exact(16).enumerate().fold(0, |m, (k, chunk)| {
        let v = V::load(chunk.try_into().unwrap_or(&[0; 16]));
        m | u64::from(v.in_range(0xC0, 0x40)) << (16 * k)
    })
}

/// `m` moved `k` bytes later, the last bytes of the previous block's `prev`
/// filling the gap (bit `i` of the result is byte `i - k`).
#[inline(always)]
fn back(m: u64, prev: u64, k: u32) -> u64 {
    (m << k) | (prev >> (64 - k))
}

/// The masks of the previous block that features look back into.
#[derive(Clone, Copy, Default)]
struct Carry {
    word: u64,
    lowerish: u64,
    cont: u64,
    digit: u64,
    groups: u64,
    punct: u64,
    change: u64,
    backslash: u64,
    newline: u64,
    space: u64,
    lead2: u64,
    letter3: u64,
    hangul: u64,
}

/// Counts the features of one block. `bytes[base..]` is where the block
/// starts in the text (multi-byte characters are read from there); `valid`
/// has a bit for every byte of the block that is part of the text.
#[inline(always)]
fn count_block(
    m: Masks,
    lead_bytes: u64,
    valid: u64,
    bytes: &[u8],
    base: usize,
    c: &mut Carry,
    n: &mut [u64; N],
) {
    let pop = |x: u64| u64::from(x.count_ones());
    let (mut lead2, mut letter3, mut hangul) = (0u64, 0u64, 0u64);
    if m.high != 0 {
        let mut rest = lead_bytes & valid;
        while rest != 0 {
            let i = rest.trailing_zeros();
            rest &= rest - 1;
            let at = base + i as usize;
            let byte = |k: usize| bytes.get(at + k).copied().unwrap_or(0);
            match byte(0) {
                0xC0..=0xDF => lead2 |= 1 << i,
                0xE0..=0xEF => match wide(byte(0), byte(1), byte(2)) {
                    Wide::Han(rare_o200k, rare_cl100k) => {
                        n[HAN] += 1;
                        n[RARE_HAN_O200K] += u64::from(rare_o200k);
                        n[RARE_HAN_CL100K] += u64::from(rare_cl100k);
                    }
                    Wide::Hiragana => n[HIRAGANA] += 1,
                    Wide::Katakana => n[KATAKANA] += 1,
                    Wide::Hangul(rare_cl100k) => {
                        n[HANGUL] += 1;
                        n[RARE_HANGUL_CL100K] += u64::from(rare_cl100k);
                        hangul |= 1 << i;
                    }
                    Wide::CjkPunct => n[CJK_PUNCT] += 1,
                    Wide::Letter => {
                        n[TWO_BYTE] += 1;
                        letter3 |= 1 << i;
                    }
                    Wide::Other => n[OTHER3] += 1,
                },
                _ => n[FOUR_BYTE] += 1,
            }
        }
        n[TWO_BYTE] += pop(lead2);
        n[HANGUL_RUNS] += pop(hangul & !back(hangul, c.hangul, 3));
    }
    // the other bytes of two- and three-byte letters
    let cont2 = back(lead2, c.lead2, 1) & m.high;
    let cont3 = (back(letter3, c.letter3, 1) | back(letter3, c.letter3, 2)) & m.high;
    let lowerish = m.lower | lead2 | cont2 | letter3 | cont3;
    let word = lowerish | m.upper;
    // a word byte that goes on with the word of the byte before it
    let cont = word & back(word, c.word, 1) & !(m.upper & back(lowerish, c.lowerish, 1));
    n[WORDS] += pop(word & !cont);
    n[CAPS] += pop(m.upper & !cont);
    let mut long = cont;
    for k in 1..6 {
        long &= back(cont, c.cont, k);
    }
    n[LONG] += pop(long);

    // digit groups start at every third digit of a run
    let digit = m.digit;
    let run3 = digit & back(digit, c.digit, 1) & back(digit, c.digit, 2);
    let mut next = (digit & !back(digit, c.digit, 1)) | ((c.groups >> 61) & run3);
    let mut groups = next;
    while next != 0 {
        next = (next << 3) & run3;
        groups |= next;
    }
    n[DIGIT_GROUPS] += pop(groups);

    let punct = valid & !(word | m.digit | m.space | m.newline | m.high);
    let after_punct = back(punct, c.punct, 1);
    n[PUNCT_RUNS] += pop(punct & !after_punct);
    n[PUNCT_REPEATS] += pop(punct & after_punct & m.same);
    let change = punct & after_punct & !m.same;
    n[PUNCT_CHANGES] += pop(change);
    // three changes in a row, then the bytes are checked for `abab`
    let mut threes = change & back(change, c.change, 1) & back(change, c.change, 2);
    while threes != 0 {
        let i = base + threes.trailing_zeros() as usize;
        threes &= threes - 1;
        let at = |k: usize| bytes.get(i.wrapping_sub(k)).copied();
        n[ALTERNATIONS] += u64::from(at(0) == at(2) && at(1) == at(3));
    }
    n[ESCAPED_PUNCT] += pop(punct & back(m.backslash, c.backslash, 1));
    n[BACKSLASHES] += pop(m.backslash);
    n[NEWLINE_RUNS] += pop(m.newline & !back(m.newline, c.newline, 1));
    n[SPACE_RUNS] += pop(m.space & back(m.space, c.space, 1) & !back(m.space, c.space, 2));

    *c = Carry {
        word,
        lowerish,
        cont,
        digit,
        groups,
        punct,
        change,
        backslash: m.backslash,
        newline: m.newline,
        space: m.space,
        lead2,
        letter3,
        hangul,
    };
}

/// The scan with the lanes `V`.
#[inline(always)]
fn scan<V: Lanes>(text: &str) -> [u64; N] {
    let bytes = text.as_bytes();
    let mut n = [0u64; N];
    let mut carry = Carry::default();
    let mut previous = V::load(&[0; 16]);
    // the last block, if short, is padded with zeros that `valid` leaves out
    let mut padded = [0u8; 64];
    let mut base = 0;
    while base < bytes.len() {
        let rest = &bytes[base..];
        let (block, valid) = match rest.first_chunk::<64>() {
            Some(block) => (block, u64::MAX),
            None => {
                padded[..rest.len()].copy_from_slice(rest);
                (&padded, (1u64 << rest.len()) - 1)
            }
        };
        let m = classify::<V>(block, &mut previous);
        let lead_bytes = if m.high != 0 { leads::<V>(block) } else { 0 };
        count_block(m, lead_bytes, valid, bytes, base, &mut carry, &mut n);
        base += 64;
    }
    n
}

/// Scans `text` once and counts the pieces the estimate weighs.
pub fn features(text: &str) -> Features {
    Features::from_counts(&scan::<Native>(text))
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
/// images by their size (see [`Image`]), plus the profile's framing overhead. UI-only notices
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
    // (an unnamed call stands for a Responses item_reference: nothing is sent for it)
    for c in m.calls.iter().filter(|c| !c.name.is_empty()) {
        t += profile.call_overhead() + counter.count(c.name) + counter.count(&c.args.text());
    }
    for r in &mut m.results {
        r.tokens = counter.count(&r.text);
        t += r.tokens
            + images_tokens(r.images, &r.image_sizes, profile)
            + (r.opaque_bytes / 3) as u64;
    }
    t += images_tokens(m.images, &m.image_sizes, profile);
    t += (m.opaque_bytes / 3) as u64;
    t
}

/// Tokens of `count` images, of which `known` were read (any others count the
/// fixed amount).
fn images_tokens(count: usize, known: &[Image], profile: Profile) -> u64 {
    let read: u64 = known.iter().map(|&i| profile.image_cost(i)).sum();
    read + count.saturating_sub(known.len()) as u64 * profile.image_tokens()
}

/// What the estimate needs of one image: its size in pixels when its data
/// says (0 × 0 when it does not: a URL, a file id, an unread format) and
/// whether OpenAI's `detail: "low"` was asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Image {
    pub width: u32,
    pub height: u32,
    pub low_detail: bool,
}

/// OpenAI's rule (GPT-4o and the other tile-based vision models): `low`
/// detail costs 85 tokens; otherwise the image is scaled down to fit in
/// 2048 × 2048, then down until its short side is at most 768, and costs 85
/// plus 170 for every 512-pixel tile it covers. Unknown sizes count
/// [`Profile::image_tokens`].
fn openai_image_tokens(image: Image) -> u64 {
    if image.low_detail {
        return 85;
    }
    if image.width == 0 || image.height == 0 {
        return Profile::O200k.image_tokens();
    }
    let (mut w, mut h) = (f64::from(image.width), f64::from(image.height));
    let fit = (2048.0 / w.max(h)).min(1.0);
    (w, h) = ((w * fit).floor(), (h * fit).floor());
    let short = (768.0 / w.min(h)).min(1.0);
    (w, h) = ((w * short).floor().max(1.0), (h * short).floor().max(1.0));
    let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
    85 + 170 * tiles as u64
}

/// Anthropic's rule: an image whose long edge is over 1568 pixels is scaled
/// down to that, and it costs width × height / 750 tokens, at most about 1,600
/// (larger images are scaled down to that). Unknown sizes count 1,600.
fn claude_image_tokens(image: Image) -> u64 {
    if image.width == 0 || image.height == 0 {
        return Profile::Claude.image_tokens();
    }
    let (w, h) = (f64::from(image.width), f64::from(image.height));
    let fit = (1568.0 / w.max(h)).min(1.0);
    let pixels = (w * fit).floor().max(1.0) * (h * fit).floor().max(1.0);
    ((pixels / 750.0).ceil() as u64).min(1_600)
}

/// Reads an image part of any format: its data (a `data:` URL, or base64 in
/// `source.data`, `inlineData.data`, `image`, `data`) and its `detail`. Only
/// the first bytes of the data are decoded, as far as the size is written.
pub(crate) fn image_of<'a, N: Node<'a>>(part: N) -> Image {
    let url_of = |n: N| n.as_str().or_else(|| n.get("url").and_then(Node::as_str));
    let data = part
        .get("image_url")
        .and_then(url_of)
        .or_else(|| {
            part.get("source")
                .and_then(|s| s.get("data"))
                .and_then(Node::as_str)
        })
        .or_else(|| {
            part.get("inlineData")
                .and_then(|s| s.get("data"))
                .and_then(Node::as_str)
        })
        .or_else(|| part.get("image").and_then(Node::as_str))
        .or_else(|| part.get("data").and_then(Node::as_str))
        .or_else(|| part.get("url").and_then(Node::as_str))
        .unwrap_or("");
    let detail = part
        .get("detail")
        .or_else(|| part.get("image_url").and_then(|u| u.get("detail")))
        .and_then(Node::as_str);
    let (width, height) = image_size(data).unwrap_or((0, 0));
    Image {
        width,
        height,
        low_detail: detail == Some("low"),
    }
}

/// The pixel size written in the header of a PNG, JPEG, GIF or WebP image
/// given as a `data:` URL or as bare base64; `None` for anything else.
pub(crate) fn image_size(data: &str) -> Option<(u32, u32)> {
    let payload = match data.strip_prefix("data:") {
        Some(rest) => {
            let (kind, payload) = rest.split_once(',')?;
            if !kind.ends_with(";base64") {
                return None;
            }
            payload
        }
        // a URL or a file id is no image data
        None if data.contains("://") || data.len() < 16 => return None,
        None => data,
    };
    let b = Base64(payload.as_bytes());
    let head: [u8; 4] = b.bytes(0)?;
    match head {
        [0x89, b'P', b'N', b'G'] => png_size(&b),
        [0xFF, 0xD8, 0xFF, _] => jpeg_size(&b),
        [b'G', b'I', b'F', b'8'] => gif_size(&b),
        [b'R', b'I', b'F', b'F'] => webp_size(&b),
        _ => None,
    }
}

/// Base64 text read at any byte offset without decoding what comes before
/// (every three bytes are four characters).
struct Base64<'a>(&'a [u8]);

impl Base64<'_> {
    fn sextet(c: u8) -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        }))
    }

    /// Byte `i` of the decoded data (from the two characters that hold it).
    fn byte(&self, i: usize) -> Option<u8> {
        let first = i / 3 * 4 + i % 3;
        let pair = self.0.get(first..first + 2)?;
        let v = Self::sextet(pair[0])? << 6 | Self::sextet(pair[1])?;
        Some((v >> (4 - 2 * (i % 3))) as u8)
    }

    /// `N` bytes from byte `at`.
    fn bytes<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        let mut out = [0; N];
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.byte(at + k)?;
        }
        Some(out)
    }

    fn u16_be(&self, at: usize) -> Option<u32> {
        self.bytes::<2>(at)
            .map(|b| u32::from(u16::from_be_bytes(b)))
    }
    fn u16_le(&self, at: usize) -> Option<u32> {
        self.bytes::<2>(at)
            .map(|b| u32::from(u16::from_le_bytes(b)))
    }
    fn u24_le(&self, at: usize) -> Option<u32> {
        self.bytes::<3>(at)
            .map(|[a, b, c]| u32::from_le_bytes([a, b, c, 0]))
    }
    fn u32_be(&self, at: usize) -> Option<u32> {
        self.bytes::<4>(at).map(u32::from_be_bytes)
    }
}

/// PNG: the IHDR chunk comes first; width and height are at bytes 16 and 20.
fn png_size(b: &Base64<'_>) -> Option<(u32, u32)> {
    (b.bytes::<4>(12)? == *b"IHDR").then_some(())?;
    Some((b.u32_be(16)?, b.u32_be(20)?))
}

/// GIF: the logical screen size, little-endian, at bytes 6 and 8.
fn gif_size(b: &Base64<'_>) -> Option<(u32, u32)> {
    Some((b.u16_le(6)?, b.u16_le(8)?))
}

/// WebP: `RIFF` size `WEBP`, then a `VP8 ` (lossy), `VP8L` (lossless) or
/// `VP8X` (extended) chunk, each with the size in its own layout.
fn webp_size(b: &Base64<'_>) -> Option<(u32, u32)> {
    (b.bytes::<4>(8)? == *b"WEBP").then_some(())?;
    match &b.bytes::<4>(12)? {
        b"VP8 " => Some((b.u16_le(26)? & 0x3FFF, b.u16_le(28)? & 0x3FFF)),
        b"VP8L" => {
            let bits = u32::from_le_bytes(b.bytes::<4>(21)?);
            Some(((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1))
        }
        b"VP8X" => Some((b.u24_le(24)? + 1, b.u24_le(27)? + 1)),
        _ => None,
    }
}

/// JPEG: walks the segments from the start (each says its length, so what is
/// in between is never decoded) to the first start-of-frame marker, which
/// holds the height and width.
fn jpeg_size(b: &Base64<'_>) -> Option<(u32, u32)> {
    let mut at = 2;
    for _ in 0..256 {
        let [ff, marker] = b.bytes::<2>(at)?;
        if ff != 0xFF {
            return None;
        }
        match marker {
            // padding before a marker
            0xFF => at += 1,
            // start of frame (not DHT C4, JPG C8, DAC CC)
            0xC0..=0xCF if !matches!(marker, 0xC4 | 0xC8 | 0xCC) => {
                return Some((b.u16_be(at + 7)?, b.u16_be(at + 5)?));
            }
            // markers without a length
            0x01 | 0xD0..=0xD7 => at += 2,
            // end of image or start of scan before any frame: give up
            0xD9 | 0xDA => return None,
            _ => at += 2 + b.u16_be(at + 2)? as usize,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::Portable;
    use proptest::prelude::*;

    /// The features by their definitions: byte by byte, looking back, and
    /// character by character for the multi-byte ones; no blocks, no masks.
    fn reference(text: &str) -> [u64; N] {
        let b = text.as_bytes();
        let byte = |i: usize, back: usize| i.checked_sub(back).map(|j| b[j]);
        let lead2 = |x: u8| (0xC0..=0xDF).contains(&x);
        let upper = |i: usize| b[i].is_ascii_uppercase();
        // leads of three-byte letters
        let mut letter3 = vec![false; b.len()];
        for (i, ch) in text.char_indices() {
            let mut utf8 = [0; 4];
            let e = ch.encode_utf8(&mut utf8).as_bytes();
            letter3[i] = e.len() == 3 && wide(e[0], e[1], e[2]) == Wide::Letter;
        }
        let lowerish = |i: usize| {
            b[i].is_ascii_lowercase()
                || lead2(b[i])
                || (0x80..=0xBF).contains(&b[i]) && byte(i, 1).is_some_and(lead2)
                || letter3[i]
                || (1..=2).any(|k| i >= k && letter3[i - k])
        };
        let word = |i: usize| lowerish(i) || upper(i);
        let cont = |i: usize| i > 0 && word(i) && word(i - 1) && !(upper(i) && lowerish(i - 1));
        let is = |i: usize, back: usize, f: &dyn Fn(u8) -> bool| byte(i, back).is_some_and(f);
        let digit = |x: u8| x.is_ascii_digit();
        let space = |x: u8| x == b' ' || x == b'\t';
        let newline = |x: u8| x == b'\n' || x == b'\r';
        let punct = |x: u8| x < 0x80 && !x.is_ascii_alphanumeric() && !space(x) && !newline(x);
        let mut n = [0u64; N];
        for i in 0..b.len() {
            if word(i) && !cont(i) {
                n[WORDS] += 1;
                n[CAPS] += u64::from(upper(i));
            }
            if (0..6).all(|k| i >= k && cont(i - k)) {
                n[LONG] += 1;
            }
            if digit(b[i]) {
                let before = (1..=i).take_while(|&k| digit(b[i - k])).count();
                n[DIGIT_GROUPS] += u64::from(before % 3 == 0);
            }
            if punct(b[i]) {
                n[ESCAPED_PUNCT] += u64::from(is(i, 1, &|x| x == b'\\'));
                let change = |i: usize| i > 0 && punct(b[i]) && punct(b[i - 1]) && b[i] != b[i - 1];
                if i >= 3
                    && (0..3).all(|k| change(i - k))
                    && b[i] == b[i - 2]
                    && b[i - 1] == b[i - 3]
                {
                    n[ALTERNATIONS] += 1;
                }
                if is(i, 1, &punct) && b[i - 1] == b[i] {
                    n[PUNCT_REPEATS] += 1;
                } else if is(i, 1, &punct) {
                    n[PUNCT_CHANGES] += 1;
                } else {
                    n[PUNCT_RUNS] += 1;
                }
            }
            n[BACKSLASHES] += u64::from(b[i] == b'\\');
            if newline(b[i]) && !is(i, 1, &newline) {
                n[NEWLINE_RUNS] += 1;
            }
            if space(b[i]) && is(i, 1, &space) && !is(i, 2, &space) {
                n[SPACE_RUNS] += 1;
            }
        }
        let mut previous = None;
        for ch in text.chars() {
            let mut utf8 = [0; 4];
            let e = ch.encode_utf8(&mut utf8).as_bytes();
            let kind = match e.len() {
                2 => {
                    n[TWO_BYTE] += 1;
                    None
                }
                3 => Some(wide(e[0], e[1], e[2])),
                4 => {
                    n[FOUR_BYTE] += 1;
                    None
                }
                _ => None,
            };
            let hangul = |k: Option<Wide>| matches!(k, Some(Wide::Hangul(_)));
            match kind {
                Some(Wide::Han(rare_o200k, rare_cl100k)) => {
                    n[HAN] += 1;
                    n[RARE_HAN_O200K] += u64::from(rare_o200k);
                    n[RARE_HAN_CL100K] += u64::from(rare_cl100k);
                }
                Some(Wide::Hiragana) => n[HIRAGANA] += 1,
                Some(Wide::Katakana) => n[KATAKANA] += 1,
                Some(Wide::Hangul(rare_cl100k)) => {
                    n[HANGUL] += 1;
                    n[RARE_HANGUL_CL100K] += u64::from(rare_cl100k);
                }
                Some(Wide::CjkPunct) => n[CJK_PUNCT] += 1,
                Some(Wide::Letter) => n[TWO_BYTE] += 1,
                Some(Wide::Other) => n[OTHER3] += 1,
                None => {}
            }
            if hangul(kind) && !hangul(previous) {
                n[HANGUL_RUNS] += 1;
            }
            previous = kind;
        }
        n
    }

    /// Runs of the kinds of text the scan distinguishes, long enough to cross
    /// block boundaries.
    fn mixed() -> impl Strategy<Value = String> {
        "([a-z]{1,70}|[A-Z]{1,6}|[0-9]{1,70}|[ \t]{1,70}|[\n\r]{1,3}|[-.,;:!?(){}_/\"'#\\[\\]\u{0}\u{7f}]{1,5}|(\\\\_|-=){1,40}|[éЖя©ß]{1,3}|[ỏấẠ]{1,3}|[中文字のカナ한국어。，（─ㅋ😀𠀀]{1,24}){0,40}"
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn block_scan_counts_exactly_what_the_definitions_say(text in mixed()) {
            prop_assert_eq!(scan::<Portable>(&text), reference(&text));
        }

        #[test]
        fn block_scan_agrees_on_any_unicode(text in any::<String>()) {
            prop_assert_eq!(scan::<Portable>(&text), reference(&text));
        }

        #[test]
        fn this_builds_lanes_agree_with_the_portable_ones(text in mixed()) {
            prop_assert_eq!(scan::<Native>(&text), scan::<Portable>(&text));
        }
    }

    #[test]
    fn counts_of_a_hand_made_text() {
        let n = reference("HTTPServer parseJson 1234567\n\n    x  中文字の한국어。");
        assert_eq!(
            n,
            scan::<Portable>("HTTPServer parseJson 1234567\n\n    x  中文字の한국어。")
        );
        assert_eq!(n[WORDS], 4); // `HTTPServer`, `parse`, `Json`, `x`
        assert_eq!(n[CAPS], 2);
        assert_eq!(n[LONG], 4); // `HTTPServer` has 10 letters
        assert_eq!(n[DIGIT_GROUPS], 3);
        assert_eq!(n[NEWLINE_RUNS], 1);
        assert_eq!(n[SPACE_RUNS], 2);
        assert_eq!((n[HAN], n[HIRAGANA], n[HANGUL], n[CJK_PUNCT]), (3, 1, 3, 1));
        assert_eq!(n[HANGUL_RUNS], 1);
    }

    /// Base64 of `bytes` (standard alphabet, padded).
    fn b64(bytes: &[u8]) -> String {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut b = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
        b.extend_from_slice(b"IHDR");
        b.extend_from_slice(&width.to_be_bytes());
        b.extend_from_slice(&height.to_be_bytes());
        b.extend_from_slice(&[8, 6, 0, 0, 0]);
        b
    }

    #[test]
    fn png_size_from_a_data_url_and_from_bare_base64() {
        let data = b64(&png(800, 600));
        assert_eq!(
            image_size(&format!("data:image/png;base64,{data}")),
            Some((800, 600))
        );
        assert_eq!(image_size(&data), Some((800, 600)));
        // a URL, a file id, text, or a data URL that is not base64 say nothing
        assert_eq!(image_size("https://example.com/a.png"), None);
        assert_eq!(image_size("file-abc123"), None);
        assert_eq!(image_size("data:image/svg+xml,<svg/>"), None);
        assert_eq!(image_size(&b64(b"just some text, not an image")), None);
    }

    #[test]
    fn gif_size() {
        let mut b = b"GIF89a".to_vec();
        b.extend_from_slice(&[0x40, 0x01, 0xF0, 0x00, 0, 0, 0]); // 320 × 240
        assert_eq!(image_size(&b64(&b)), Some((320, 240)));
    }

    #[test]
    fn webp_sizes_in_all_three_chunk_layouts() {
        let riff = |chunk: &[u8; 4], body: &[u8]| {
            let mut b = b"RIFF\0\0\0\0WEBP".to_vec();
            b.extend_from_slice(chunk);
            b.extend_from_slice(&[0; 4]); // chunk size
            b.extend_from_slice(body);
            b
        };
        // lossy: frame tag, start code, then 14-bit width and height
        let lossy = riff(
            b"VP8 ",
            &[0, 0, 0, 0x9D, 0x01, 0x2A, 0x80, 0x02, 0xE0, 0x01],
        );
        assert_eq!(image_size(&b64(&lossy)), Some((640, 480)));
        // lossless: signature 0x2F, then width − 1 and height − 1 in 14 bits each
        let bits: u32 = 99 | (49 << 14);
        let mut body = vec![0x2F];
        body.extend_from_slice(&bits.to_le_bytes());
        assert_eq!(image_size(&b64(&riff(b"VP8L", &body))), Some((100, 50)));
        // extended: flags, reserved, then width − 1 and height − 1 in 24 bits each
        let ext = riff(b"VP8X", &[0, 0, 0, 0, 0x7F, 0x07, 0, 0x37, 0x04, 0]);
        assert_eq!(image_size(&b64(&ext)), Some((1920, 1080)));
    }

    #[test]
    fn jpeg_size_past_metadata_segments_without_decoding_them() {
        let mut b = vec![0xFF, 0xD8];
        // APP0 (JFIF), then a large APP1 (Exif) whose contents are never read
        b.extend_from_slice(&[0xFF, 0xE0, 0x00, 0x10]);
        b.extend_from_slice(&[0; 14]);
        b.extend_from_slice(&[0xFF, 0xE1, 0x40, 0x00]);
        b.extend_from_slice(&vec![0x55; 0x4000 - 2]);
        // fill bytes, then a progressive start of frame: 1080 high, 1920 wide
        b.extend_from_slice(&[
            0xFF, 0xFF, 0xC2, 0x00, 0x11, 0x08, 0x04, 0x38, 0x07, 0x80, 3,
        ]);
        assert_eq!(image_size(&b64(&b)), Some((1920, 1080)));
        // DHT (C4) is not a frame; a scan before any frame gives up
        let no_frame = [0xFF, 0xD8, 0xFF, 0xC4, 0x00, 0x02, 0xFF, 0xDA, 0x00, 0x02];
        assert_eq!(image_size(&b64(&no_frame)), None);
        // cut short: no answer, no panic
        assert_eq!(image_size(&b64(&b[..30])), None);
    }

    #[test]
    fn openai_tiles_by_the_published_examples() {
        let img = |width, height| Image {
            width,
            height,
            low_detail: false,
        };
        // 1024 × 1024 → 768 × 768: 4 tiles
        assert_eq!(openai_image_tokens(img(1024, 1024)), 765);
        // 2048 × 4096 → 1024 × 2048 → 768 × 1536: 6 tiles
        assert_eq!(openai_image_tokens(img(2048, 4096)), 1105);
        // small images are not scaled up: one tile
        assert_eq!(openai_image_tokens(img(512, 512)), 255);
        assert_eq!(openai_image_tokens(img(4096, 8192)), 1105);
        let low = Image {
            low_detail: true,
            ..img(4096, 8192)
        };
        assert_eq!(openai_image_tokens(low), 85);
        assert_eq!(openai_image_tokens(Image::default()), 765);
    }

    #[test]
    fn claude_area_by_the_published_examples() {
        let img = |width, height| Image {
            width,
            height,
            low_detail: false,
        };
        assert_eq!(claude_image_tokens(img(200, 200)), 54);
        assert_eq!(claude_image_tokens(img(1000, 1000)), 1334);
        assert_eq!(claude_image_tokens(img(1092, 1092)), 1590);
        // long edge over 1568 is scaled down, and nothing costs more than ~1,600
        assert_eq!(claude_image_tokens(img(3000, 2000)), 1600);
        // 4000 × 400 → 1568 × 156: 244,608 pixels
        assert_eq!(claude_image_tokens(img(4000, 400)), 327);
        assert_eq!(claude_image_tokens(Image::default()), 1600);
    }

    #[test]
    fn image_parts_of_each_format_are_read() {
        let data = b64(&png(1024, 1024));
        let url = format!("data:image/png;base64,{data}");
        let parts = [
            serde_json::json!({"type": "image_url", "image_url": {"url": url, "detail": "high"}}),
            serde_json::json!({"type": "input_image", "image_url": url}),
            serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}),
            serde_json::json!({"type": "image", "image": data}),
            serde_json::json!({"type": "file", "mediaType": "image/png", "data": url}),
            serde_json::json!({"type": "file", "mediaType": "image/png", "url": url}),
            serde_json::json!({"inlineData": {"mimeType": "image/png", "data": data}}),
        ];
        for p in &parts {
            let tape = crate::json::serde::tape_of(p);
            assert_eq!(
                image_of(tape.open().unwrap().root()),
                Image {
                    width: 1024,
                    height: 1024,
                    low_detail: false
                },
                "{p}"
            );
        }
        let low = serde_json::json!({"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}});
        let low = crate::json::serde::tape_of(&low);
        assert_eq!(
            image_of(low.open().unwrap().root()),
            Image {
                width: 0,
                height: 0,
                low_detail: true
            }
        );
    }

    #[test]
    fn empty_text_is_zero_and_any_text_is_at_least_one() {
        assert_eq!(estimate("", Profile::O200k), 0);
        assert_eq!(estimate(" ", Profile::O200k), 1);
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
