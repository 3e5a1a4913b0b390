//! The check a structured summary passes before it replaces anything: every
//! template heading present and in order, every section filled (`(none)`
//! counts), and not much longer than the summarizer was asked for.

use crate::summary::prompts::TEMPLATE_HEADINGS;
use crate::tokens::TokenCounter;

/// The heading a line is, if it is one of the template's: trailing colons, `#`
/// and blanks and the letter case do not matter.
fn heading_of(line: &str) -> Option<usize> {
    let l = line.trim().trim_end_matches([':', '#', ' ']);
    TEMPLATE_HEADINGS
        .iter()
        .position(|h| h.eq_ignore_ascii_case(l))
}

/// What is wrong with `summary`, as reasons a retry can be told; empty when it
/// passes. A summary may be at most `2 × max_tokens` tokens.
pub(crate) fn check(summary: &str, max_tokens: u64, counter: &dyn TokenCounter) -> Vec<String> {
    let lines: Vec<&str> = summary.lines().collect();
    let found: Vec<Option<usize>> = (0..TEMPLATE_HEADINGS.len())
        .map(|h| lines.iter().position(|l| heading_of(l) == Some(h)))
        .collect();
    let in_order = longest_ordered_chain(&found);
    let mut problems = Vec::new();
    for (h, heading) in TEMPLATE_HEADINGS.iter().enumerate() {
        let Some(line) = found[h] else {
            problems.push(format!("heading \"{heading}\" is missing"));
            continue;
        };
        if !in_order[h] {
            problems.push(format!("heading \"{heading}\" is out of order"));
        }
        // "## Progress" holds its three sub-sections; every other section needs text.
        if *heading == "## Progress" {
            continue;
        }
        // A section runs to the next template heading: a line of its own that
        // starts with `#` (an issue number, a shell comment, a sub-heading) is text.
        let filled = lines[line + 1..]
            .iter()
            .take_while(|l| heading_of(l).is_none())
            .any(|l| !l.trim().is_empty());
        if !filled {
            problems.push(format!(
                "section \"{heading}\" is empty (write (none) when there is nothing to say)"
            ));
        }
    }
    let tokens = counter.count(summary);
    if tokens > max_tokens.saturating_mul(2) {
        problems.push(format!(
            "the summary is about {tokens} tokens, more than twice the {max_tokens} asked for"
        ));
    }
    problems
}

/// Which of the found headings form the longest run in template order (the rest
/// are the ones out of place).
fn longest_ordered_chain(found: &[Option<usize>]) -> Vec<bool> {
    let n = found.len();
    // best[h]: length of the longest ordered chain ending at heading h; from[h]: its predecessor.
    let mut best = vec![0usize; n];
    let mut from = vec![None; n];
    for h in 0..n {
        let Some(p) = found[h] else { continue };
        best[h] = 1;
        for g in 0..h {
            if found[g].is_some_and(|q| q < p) && best[g] + 1 > best[h] {
                best[h] = best[g] + 1;
                from[h] = Some(g);
            }
        }
    }
    let mut chain = vec![false; n];
    let mut at = (0..n)
        .filter(|h| best[*h] > 0)
        .max_by_key(|h| (best[*h], *h));
    while let Some(h) = at {
        chain[h] = true;
        at = from[h];
    }
    chain
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::{Estimator, Profile};

    fn full() -> String {
        TEMPLATE_HEADINGS
            .iter()
            .map(|h| format!("{h}\n(none)"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn a_complete_summary_passes() {
        assert!(check(&full(), 4096, &Estimator(Profile::O200k)).is_empty());
        // Progress itself needs no text of its own; trailing colons and case are fine.
        let loose = full()
            .replace("## Goal\n", "## goal:\n")
            .replace("## Progress\n(none)\n", "## Progress\n");
        assert!(check(&loose, 4096, &Estimator(Profile::O200k)).is_empty());
    }

    #[test]
    fn missing_reordered_empty_and_long_summaries_fail_with_reasons() {
        let c = Estimator(Profile::O200k);
        let missing = full().replace("## Key Decisions\n(none)\n", "");
        assert_eq!(
            check(&missing, 4096, &c),
            ["heading \"## Key Decisions\" is missing"]
        );
        let empty = full().replace("### Blocked\n(none)", "### Blocked\n  ");
        assert!(check(&empty, 4096, &c)[0].contains("\"### Blocked\" is empty"));
        let swapped = full().replace("## Goal\n(none)\n", "") + "\n## Goal\nlate";
        assert_eq!(
            check(&swapped, 4096, &c),
            ["heading \"## Goal\" is out of order"]
        );
        // Text that starts with `#` fills a section; only the next heading ends it.
        let hashes = full()
            .replace(
                "## Goal\n(none)",
                "## Goal\n#412: the login form rejects valid emails",
            )
            .replace(
                "### Blocked\n(none)",
                "### Blocked\n# run the tests first\n#### one more level",
            );
        assert!(
            check(&hashes, 4096, &c).is_empty(),
            "{:?}",
            check(&hashes, 4096, &c)
        );
        let long = full() + &" word".repeat(3000);
        assert!(check(&long, 1000, &c)[0].contains("more than twice the 1000"));
    }
}
