//! Bounds a summary to a byte and line budget: lines are cut to a maximum
//! length, then plain lines are dropped first and bullets from the end, with one
//! `[... N lines omitted for brevity]` line. Headers go last (only when nothing
//! else is left to drop), and the surviving lines keep their order.

use crate::text::{count, truncate};

/// A budget for a block of lines.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Maximum total bytes (lines joined with `\n`).
    pub bytes: usize,
    /// Maximum number of lines.
    pub lines: usize,
    /// Maximum bytes of one line.
    pub line_bytes: usize,
}

/// The deterministic summary's budget (Moltis's 1200 bytes / 24 lines / 160 bytes).
pub(crate) const SUMMARY_BUDGET: Budget = Budget {
    bytes: 1200,
    lines: 24,
    line_bytes: 160,
};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Dropped first.
    Plain,
    /// Dropped from the end once no plain line is left.
    Bullet,
    /// Kept: `# …` lines and section lines such as `- Key timeline:`.
    Header,
}

fn kind(line: &str) -> Kind {
    let t = line.trim_start();
    let indented = t.len() != line.len();
    if t.starts_with('#') || (!indented && line.ends_with(':')) {
        Kind::Header
    } else if t.starts_with("- ") || t.starts_with("* ") || t.starts_with("• ") {
        Kind::Bullet
    } else {
        Kind::Plain
    }
}

fn omitted(n: usize) -> String {
    format!("[... {} omitted for brevity]", count(n as u64, "line"))
}

/// Bounds `lines` to `budget`; returns the surviving lines (notice included).
pub(crate) fn bound(lines: &[String], budget: Budget) -> Vec<String> {
    let lines: Vec<String> = lines
        .iter()
        .map(|l| truncate(l, budget.line_bytes))
        .collect();
    let joined = |n: usize, bytes: usize| bytes + n.saturating_sub(1);
    let total: usize = lines.iter().map(String::len).sum();
    if lines.len() <= budget.lines && joined(lines.len(), total) <= budget.bytes {
        return lines;
    }
    let kinds: Vec<Kind> = lines.iter().map(|l| kind(l)).collect();
    let mut keep = vec![true; lines.len()];
    let (mut count, mut bytes, mut dropped) = (lines.len(), total, 0usize);
    let fits = |count: usize, bytes: usize, dropped: usize| {
        let (c, b) = if dropped > 0 {
            (count + 1, bytes + omitted(dropped).len())
        } else {
            (count, bytes)
        };
        c <= budget.lines && joined(c, b) <= budget.bytes
    };
    'outer: for class in [Kind::Plain, Kind::Bullet, Kind::Header] {
        for i in (0..lines.len()).rev() {
            if fits(count, bytes, dropped) {
                break 'outer;
            }
            if keep[i] && kinds[i] == class {
                keep[i] = false;
                count -= 1;
                bytes -= lines[i].len();
                dropped += 1;
            }
        }
    }
    let mut out: Vec<String> = lines
        .into_iter()
        .zip(keep)
        .filter_map(|(l, k)| k.then_some(l))
        .collect();
    if dropped > 0 {
        out.push(omitted(dropped));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(String::from).collect()
    }

    #[test]
    fn under_budget_is_unchanged() {
        let l = lines("# Summary\n\n- Key point one\n- Key point two\nDone.");
        assert_eq!(bound(&l, SUMMARY_BUDGET), l);
    }

    #[test]
    fn plain_lines_go_before_bullets_and_headers_survive() {
        let mut l = vec!["# Head".to_string()];
        l.extend((0..20).map(|i| format!("plain line {i} {}", "p".repeat(40))));
        l.extend((0..10).map(|i| format!("- bullet {i}")));
        l.push("# Tail header".into());
        let out = bound(&l, SUMMARY_BUDGET);
        assert!(out.len() <= 24);
        assert!(out.join("\n").len() <= 1200);
        assert_eq!(out.iter().filter(|x| x.starts_with("- bullet")).count(), 10);
        assert!(out.contains(&"# Head".to_string()) && out.contains(&"# Tail header".to_string()));
        assert!(out.last().unwrap().ends_with("lines omitted for brevity]"));
        // order kept: the first header still comes first
        assert_eq!(out[0], "# Head");
    }

    #[test]
    fn bullets_drop_from_the_end_and_lines_are_cut_to_160_bytes() {
        let l: Vec<String> = (0..40)
            .map(|i| format!("- item {i} {}", "x".repeat(200)))
            .collect();
        let out = bound(&l, SUMMARY_BUDGET);
        assert!(out.iter().all(|x| x.len() <= 160));
        assert!(out[0].starts_with("- item 0 "));
        assert!(out.join("\n").len() <= 1200);
        let n: usize = out.last().unwrap()[5..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            n + out.len() - 1,
            40,
            "the notice counts exactly the dropped lines"
        );
    }
}
