//! The token estimator against the exact o200k tokenizer on the real corpus:
//! clearly better than chars/4 for prose, code/terminal output, JSON and CJK.
//! (`cargo run --release --example calibrate` prints the full table.)

mod common;

use chat_compaction::tokens::{estimate, Profile};
use common::corpus::{self, Category};

struct Score {
    bias: f64,
    mae: f64,
}

fn score(pairs: &[(f64, f64)]) -> Score {
    let (est, exact): (f64, f64) = pairs
        .iter()
        .fold((0.0, 0.0), |(a, b), (e, x)| (a + e, b + x));
    let mae = pairs.iter().map(|(e, x)| (e - x).abs() / x).sum::<f64>() / pairs.len() as f64;
    Score {
        bias: est / exact - 1.0,
        mae,
    }
}

#[test]
fn estimator_beats_chars_over_four_in_every_category() {
    let texts = corpus::texts();
    if texts.is_empty() {
        eprintln!("skipped: ../shared/corpus is not there");
        return;
    }
    let o200k = tiktoken_rs::o200k_base().unwrap();
    for cat in [
        Category::Prose,
        Category::Code,
        Category::Json,
        Category::Cjk,
    ] {
        let mut ours = Vec::new();
        let mut naive = Vec::new();
        for (_, t) in texts.iter().filter(|(c, _)| *c == cat) {
            let exact = o200k.encode_ordinary(t).len() as f64;
            if exact == 0.0 {
                continue;
            }
            ours.push((estimate(t, Profile::O200k) as f64, exact));
            naive.push(((t.chars().count() as f64 / 4.0).ceil(), exact));
        }
        let (a, b) = (score(&ours), score(&naive));
        eprintln!(
            "{cat:?}: {} texts; estimator bias {:+.1}% MAE {:.1}%; chars/4 bias {:+.1}% MAE {:.1}%",
            ours.len(),
            a.bias * 100.0,
            a.mae * 100.0,
            b.bias * 100.0,
            b.mae * 100.0
        );
        assert!(a.bias.abs() <= 0.06, "{cat:?}: bias {:+.3}", a.bias);
        assert!(a.bias >= -0.05, "{cat:?}: undercounts by {:+.3}", a.bias);
        assert!(
            a.mae < b.mae * 0.75,
            "{cat:?}: MAE {:.3} not clearly better than chars/4 {:.3}",
            a.mae,
            b.mae
        );
        assert!(a.mae <= 0.12, "{cat:?}: MAE {:.3}", a.mae);
    }
}
