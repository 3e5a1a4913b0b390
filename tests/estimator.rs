//! The token estimator against the exact o200k tokenizer on the real corpus,
//! held to SPEC §4: whole-category bias within ±5% (never an undercount worse
//! than −5%) and per-message mean absolute error within 10%, for prose,
//! code/terminal output, JSON and CJK alike — on everything, and on the sessions
//! held out of the calibration (text the weights never saw).
//! (`cargo run --release --example calibrate` refits the weights and prints the table.)

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
fn estimator_meets_the_spec_bounds_in_every_category() {
    let texts = corpus::texts();
    if corpus::missing(texts.is_empty()) {
        return;
    }
    let o200k = tiktoken_rs::o200k_base().unwrap();
    for (cat, held_out_only) in [
        (Category::Prose, false),
        (Category::Code, false),
        (Category::Json, false),
        (Category::Cjk, false),
        (Category::Prose, true),
        (Category::Code, true),
        (Category::Json, true),
    ] {
        let mut ours = Vec::new();
        let mut naive = Vec::new();
        for t in texts
            .iter()
            .filter(|t| t.category == cat && (t.held_out || !held_out_only))
        {
            let exact = o200k.encode_ordinary(&t.text).len() as f64;
            if exact == 0.0 {
                continue;
            }
            ours.push((estimate(&t.text, Profile::O200k) as f64, exact));
            naive.push(((t.text.chars().count() as f64 / 4.0).ceil(), exact));
        }
        let what = format!("{cat:?}{}", if held_out_only { " (held out)" } else { "" });
        assert!(ours.len() >= 30, "{what}: only {} texts", ours.len());
        let (a, b) = (score(&ours), score(&naive));
        eprintln!(
            "{what}: {} texts; estimator bias {:+.1}% MAE {:.1}%; chars/4 bias {:+.1}% MAE {:.1}%",
            ours.len(),
            a.bias * 100.0,
            a.mae * 100.0,
            b.bias * 100.0,
            b.mae * 100.0
        );
        assert!(a.bias.abs() <= 0.05, "{what}: bias {:+.3}", a.bias);
        assert!(a.mae <= 0.10, "{what}: MAE {:.3}", a.mae);
        assert!(
            a.mae < b.mae,
            "{what}: MAE {:.3} not better than chars/4 {:.3}",
            a.mae,
            b.mae
        );
    }
}
