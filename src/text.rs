//! Small text helpers shared by the summary, the digest and the placeholders:
//! byte-bounded truncation, key-file extraction, pending-work keywords.

/// Prefix of a summary message; lets a later compaction find it.
pub(crate) const SUMMARY_PREFIX: &str = "[Conversation Summary]\n\n";
/// Prefix of a recency marker message.
pub(crate) const MARKER_PREFIX: &str = "[Conversation Compacted]\n\n";

/// Whether `text` is a summary or marker the library wrote.
pub(crate) fn is_synthetic(text: &str) -> bool {
    text.starts_with(SUMMARY_PREFIX.trim_end()) || text.starts_with(MARKER_PREFIX.trim_end())
}

/// Cuts `s` to at most `max` UTF-8 bytes on a character boundary, ending with `…`
/// when something was cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// `n` and the noun, singular or plural: `1 message`, `2 messages`.
pub(crate) fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// The largest char boundary of `s` at or below `at`.
fn floor_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Cuts `s` to about `max` UTF-8 bytes by removing its middle, which a visible
/// marker stands for: the start (two thirds) and the end (a third) survive, since
/// a tool's output tends to open with what ran and close with how it ended.
pub(crate) fn cut_middle(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let marker_room = 48;
    let keep = max.saturating_sub(marker_room);
    let head = floor_boundary(s, keep * 2 / 3);
    let mut tail = s.len() - (keep - keep * 2 / 3);
    while !s.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n[… {} cut …]\n{}",
        &s[..head],
        count(tail as u64 - head as u64, "byte"),
        &s[tail..]
    )
}

/// Collapses every whitespace run (newlines included) to one space and trims,
/// reading at most about `max` bytes of `s` so huge texts cost nothing.
pub(crate) fn one_line(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(max.min(s.len()) + 4);
    let mut pending_space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
        if out.len() > max {
            break;
        }
    }
    truncate(&out, max)
}

/// File extensions that mark a token as a source path.
const SOURCE_EXTENSIONS: &[&str] = &[
    "rs", "ts", "tsx", "js", "jsx", "mjs", "cjs", "json", "jsonc", "md", "py", "toml", "yaml",
    "yml", "go", "css", "scss", "html", "sql", "sh", "cfg", "ini", "c", "h", "cc", "cpp", "hpp",
    "java", "kt", "rb", "php", "swift", "cs", "vue", "svelte", "txt", "xml", "lock",
];

/// Whether `b` ends a path-like token.
fn is_separator(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b'"' | b'\''
                | b'`'
                | b'('
                | b')'
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'<'
                | b'>'
                | b','
                | b';'
                | b'='
        )
}

/// Every path-like token of `text`, as a slice of it: it contains `/` and ends
/// in a known source extension (`src/main.rs`, `./a/b.py:12` → `./a/b.py`).
/// Only the tokens around a `/` are looked at, so long texts without paths cost
/// one scan.
pub(crate) fn paths(text: &str) -> impl Iterator<Item = &str> {
    let b = text.as_bytes();
    let mut from = 0;
    std::iter::from_fn(move || {
        while let Some(slash) = b[from..].iter().position(|&c| c == b'/').map(|p| from + p) {
            let start = b[..slash]
                .iter()
                .rposition(|&c| is_separator(c))
                .map_or(0, |p| p + 1);
            let end = b[slash..]
                .iter()
                .position(|&c| is_separator(c))
                .map_or(b.len(), |p| slash + p);
            from = end.max(slash + 1);
            // separators are ASCII, so both ends are character boundaries
            if let Some(path) = text
                .get(start..end)
                .filter(|raw| raw.len() <= 300)
                .and_then(as_path)
            {
                return Some(path);
            }
        }
        None
    })
}

/// The path a token around a `/` names, if it names a source file.
fn as_path(raw: &str) -> Option<&str> {
    let token = raw
        .trim_end_matches(['.', ':', '*', '!', '?'])
        .trim_start_matches(['*', ':']);
    // `path.rs:12` or `path.rs:12:5` → `path.rs`
    let token = token
        .split_once(':')
        .filter(|(_, rest)| {
            rest.split(':')
                .all(|p| p.chars().all(|c| c.is_ascii_digit()))
        })
        .map_or(token, |(p, _)| p);
    let file = token.rsplit('/').next()?;
    let (stem, ext) = file.rsplit_once('.')?;
    (!stem.is_empty()
        && SOURCE_EXTENSIONS
            .iter()
            .any(|e| e.eq_ignore_ascii_case(ext))
        // (a byte scan: `contains("://")` sets up a substring searcher per call)
        && !token.as_bytes().windows(3).any(|w| w == b"://"))
    .then_some(token)
}

/// Keywords that mark pending work, matched as whole words.
const PENDING_WORDS: &[&str] = &[
    "todo",
    "next",
    "pending",
    "follow up",
    "follow-up",
    "remaining",
];

/// Whether `text` mentions pending work (`TODO`, `next`, `follow up` …) as a word:
/// `nextjs` and `Next.js` do not count. One pass, no allocation.
pub(crate) fn mentions_pending_work(text: &str) -> bool {
    let b = text.as_bytes();
    let word_char = |i: usize| {
        b.get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    };
    // A dot followed by a letter joins words (`next.js`).
    let joined_by_dot = |dot: usize, letter: usize| {
        b.get(dot) == Some(&b'.') && b.get(letter).is_some_and(u8::is_ascii_alphabetic)
    };
    let matches_at = |start: usize, w: &str| {
        b.get(start..start + w.len())
            .is_some_and(|s| s.eq_ignore_ascii_case(w.as_bytes()))
            && !word_char(start + w.len())
            && !joined_by_dot(start + w.len(), start + w.len() + 1)
    };
    (0..b.len()).any(|i| {
        matches!(b[i] | 0x20, b't' | b'n' | b'p' | b'f' | b'r')
            && (i == 0 || !(word_char(i - 1) || (i >= 2 && joined_by_dot(i - 1, i - 2))))
            && PENDING_WORDS.iter().any(|w| matches_at(i, w))
    })
}

/// Text in double quotes, escaped as JSON escapes it: what error messages
/// quote (not `{:?}`, whose escaping brings core's Unicode tables into the
/// `.wasm`).
pub(crate) struct Quoted<'a>(pub(crate) &'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut w = crate::json::Writer::default();
        w.string(self.0);
        f.write_str(&w.finish())
    }
}

/// Joins at most `max` items with ", " and says how many more there were.
pub(crate) fn list(items: impl IntoIterator<Item = impl AsRef<str>>, max: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    for item in items {
        if n < max {
            if n > 0 {
                out.push_str(", ");
            }
            out.push_str(item.as_ref());
        }
        n += 1;
    }
    if n > max {
        out.push_str(&format!(" (+{} more)", n - max));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_respects_bytes_and_char_boundaries() {
        assert_eq!(truncate("hello", 10), "hello");
        let t = truncate(&"é".repeat(100), 11);
        assert!(t.len() <= 11 && t.ends_with('…'));
        let long = truncate(&"x".repeat(200), 160);
        assert_eq!(long.len(), 160);
    }

    #[test]
    fn cut_middle_keeps_both_ends_within_the_limit() {
        let s = format!("{}{}{}", "start ", "é".repeat(1000), " end");
        let cut = cut_middle(&s, 200);
        assert!(cut.len() <= 200, "{}", cut.len());
        assert!(cut.starts_with("start ") && cut.ends_with(" end"));
        assert!(cut.contains("bytes cut"));
        assert_eq!(cut_middle("short", 200), "short");
    }

    #[test]
    fn pending_keywords_match_whole_words_only() {
        assert!(mentions_pending_work("Next: update the tests"));
        assert!(mentions_pending_work("TODO fix this"));
        assert!(mentions_pending_work("we should follow up later"));
        assert!(!mentions_pending_work("migrate to nextjs"));
        assert!(!mentions_pending_work("a Next.js app"));
        assert!(!mentions_pending_work("the todos_table"));
    }

    #[test]
    fn paths_need_a_slash_and_a_known_extension() {
        let text = r#"see crates/chat/src/compaction.rs and src/main.rs. {"file_path":"./a/b.py:12"} README.md https://x.io/a.js notes/x.bin"#;
        let got: Vec<_> = paths(text).collect();
        assert_eq!(
            got,
            ["crates/chat/src/compaction.rs", "src/main.rs", "./a/b.py"]
        );
    }
}
