//! Fits the token estimator's weights against the exact o200k / cl100k tokenizers
//! on the corpus and prints them with per-category accuracy.
//! Run: `cargo run --release --example calibrate`.
// Index loops read best in this small linear-algebra kernel.
#![allow(clippy::needless_range_loop)]

#[path = "../tests/common/corpus.rs"]
mod corpus;

use chat_compaction::tokens::{features, Features};
use corpus::Category;

fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap();
        a.swap(col, piv);
        b.swap(col, piv);
        let p = a[col][col];
        if p.abs() < 1e-12 {
            continue;
        }
        for r in 0..n {
            if r != col {
                let k = a[r][col] / p;
                for c in col..n {
                    a[r][c] -= k * a[col][c];
                }
                b[r] -= k * b[col];
            }
        }
    }
    (0..n)
        .map(|i| {
            if a[i][i].abs() < 1e-12 {
                0.0
            } else {
                b[i] / a[i][i]
            }
        })
        .collect()
}

fn main() {
    let texts = corpus::texts();
    if texts.is_empty() {
        eprintln!("corpus not found (../shared/corpus): nothing to calibrate");
        return;
    }
    let o200k = tiktoken_rs::o200k_base().unwrap();
    let cl100k = tiktoken_rs::cl100k_base().unwrap();
    // Held-out sessions stay out of the fit: their accuracy is measured on text
    // the weights never saw.
    let rows: Vec<(Category, Features, f64, f64)> = texts
        .iter()
        .filter(|t| !t.held_out)
        .map(|t| {
            (
                t.category,
                features(&t.text),
                o200k.encode_ordinary(&t.text).len() as f64,
                cl100k.encode_ordinary(&t.text).len() as f64,
            )
        })
        .collect();
    let mut per_cat = std::collections::BTreeMap::new();
    for r in &rows {
        *per_cat.entry(r.0).or_insert(0.0) += 1.0;
    }
    for (name, pick) in [("o200k", 2usize), ("cl100k", 3usize)] {
        let k = Features::default().to_array().len();
        let mut a = vec![vec![0.0; k]; k];
        let mut b = vec![0.0; k];
        for (cat, f, y0, y1) in &rows {
            let y = if pick == 2 { *y0 } else { *y1 };
            let x = f.to_array();
            // relative error per message, each category weighted equally
            let w = 1.0 / (y.max(20.0) * y.max(20.0)) / per_cat[cat];
            for i in 0..k {
                for j in 0..k {
                    a[i][j] += w * x[i] * x[j];
                }
                b[i] += w * x[i] * y;
            }
        }
        for (i, row) in a.iter_mut().enumerate() {
            row[i] += 1e-9;
        }
        let wts = solve(a, b);
        println!(
            "{name} weights: [{}]",
            wts.iter()
                .map(|w| format!("{w:.3}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!("\naccuracy of the shipped estimator against o200k (bias = Σest/Σexact − 1; MAE = mean |est−exact|/exact per message):");
    println!(
        "{:<6} {:>6} {:>9} {:>9} {:>11} {:>11}",
        "kind", "texts", "est bias", "est MAE", "chars/4 bias", "chars/4 MAE"
    );
    for (cat, held_out) in [
        (Category::Prose, false),
        (Category::Code, false),
        (Category::Json, false),
        (Category::Cjk, false),
        (Category::Prose, true),
        (Category::Code, true),
        (Category::Json, true),
    ] {
        let (mut se, mut sx, mut sc, mut ae, mut ac, mut n) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for text in &texts {
            if text.category != cat || (held_out && !text.held_out) {
                continue;
            }
            let t = &text.text;
            let exact = o200k.encode_ordinary(t).len() as f64;
            if exact == 0.0 {
                continue;
            }
            let est = chat_compaction::tokens::estimate(t, chat_compaction::tokens::Profile::O200k)
                as f64;
            let c4 = (t.chars().count() as f64 / 4.0).ceil();
            se += est;
            sx += exact;
            sc += c4;
            ae += (est - exact).abs() / exact;
            ac += (c4 - exact).abs() / exact;
            n += 1.0;
        }
        println!(
            "{:<6} {:>6} {:>+8.1}% {:>8.1}% {:>+10.1}% {:>10.1}%",
            format!("{cat:?}{}", if held_out { " (held out)" } else { "" }),
            n,
            (se / sx - 1.0) * 100.0,
            ae / n * 100.0,
            (sc / sx - 1.0) * 100.0,
            ac / n * 100.0
        );
    }
}
