//! Fits the token estimator's weights against the exact o200k / cl100k tokenizers
//! on the corpus and prints them with the accuracy per kind of text, on
//! everything and on the texts held out of the fit.
//! Run: `cargo run --release --example calibrate` (the weights go into
//! `src/tokens.rs` by hand; the table is for the new weights and the shipped
//! ones, per kind of text and, for CJK, per source and language).
//! `-- --tables` rewrites the single-token tables `src/*.bin` instead.
//! `CALIBRATE_EXTRA_CJK=file.json` (an array of strings) adds more CJK text to
//! check the weights on, never to fit them.
// Index loops read best in this small linear-algebra kernel.
#![allow(clippy::needless_range_loop)]

#[path = "../tests/common/corpus.rs"]
mod corpus;

use chat_compaction::tokens::{estimate, features, Profile};
use corpus::Category;

/// Solves `a x = b` (Gauss–Jordan with partial pivoting); unused features get 0.
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

/// One text: its kind, whether it is held out, where it is from, its features
/// and its exact counts (o200k, cl100k).
struct Row {
    cat: Category,
    held_out: bool,
    source: &'static str,
    /// `zh`, `ja` or `ko` for CJK texts.
    lang: &'static str,
    x: Vec<f64>,
    exact: [f64; 2],
    /// What the shipped estimator says (o200k, cl100k profiles).
    shipped: [f64; 2],
}

/// Weighted least squares on the relative error of each text, every kind of
/// text weighing the same in all, then a few rounds of reweighting by the
/// inverse of each text's error (iteratively reweighted least squares), which
/// moves the fit from the squared error towards the mean absolute error that
/// the bounds are stated in.
fn fit(rows: &[&Row], pick: usize, fixed: &[(usize, f64)]) -> Vec<f64> {
    let k = rows[0].x.len();
    let fixed = |i: usize| fixed.iter().find(|(j, _)| *j == i).map(|(_, w)| *w);
    // the fixed weights' share comes off the exact counts; their columns are zeroed
    let free = |r: &Row| -> (Vec<f64>, f64) {
        let mut x = r.x.clone();
        let mut taken = 0.0;
        for (i, xi) in x.iter_mut().enumerate() {
            if let Some(w) = fixed(i) {
                taken += w * *xi;
                *xi = 0.0;
            }
        }
        (x, taken)
    };
    // every kind of text weighs the same, and within a kind every source
    let mut per_group = std::collections::BTreeMap::new();
    for r in rows {
        *per_group.entry((r.cat, r.source)).or_insert(0.0) += 1.0;
    }
    let mut groups_per_cat = std::collections::BTreeMap::new();
    for (cat, _) in per_group.keys() {
        *groups_per_cat.entry(*cat).or_insert(0.0) += 1.0;
    }
    let mut w = vec![0.0; k];
    for round in 0..12 {
        let mut a = vec![vec![0.0; k]; k];
        let mut b = vec![0.0; k];
        for r in rows {
            let (x, taken) = free(r);
            // `ceil` adds half a token on average: aim half a token lower
            let y = r.exact[pick] - 0.5 - taken;
            let scale = r.exact[pick].max(FLOOR);
            let mut weight =
                1.0 / (scale * scale) / per_group[&(r.cat, r.source)] / groups_per_cat[&r.cat]
                    * if r.source == "generated" {
                        GENERATED_SHARE
                    } else {
                        1.0
                    };
            if round > 0 {
                let e: f64 = x.iter().zip(&w).map(|(x, w)| x * w).sum();
                weight /= ((e - y).abs() / scale).max(0.01);
            }
            for i in 0..k {
                for j in 0..k {
                    a[i][j] += weight * x[i] * x[j];
                }
                b[i] += weight * x[i] * y;
            }
        }
        // each kind's total, weighted heavily: keeps the whole-kind bias near zero
        for cat in groups_per_cat.keys() {
            let mut x = vec![0.0; k];
            let mut y = 0.0;
            for r in rows.iter().filter(|r| r.cat == *cat) {
                let (xr, taken) = free(r);
                for i in 0..k {
                    x[i] += xr[i];
                }
                y += r.exact[pick] - 0.5 - taken;
            }
            let weight = LAMBDA / (y * y);
            for i in 0..k {
                for j in 0..k {
                    a[i][j] += weight * x[i] * x[j];
                }
                b[i] += weight * x[i] * y;
            }
        }
        // a little ridge towards plain prior weights keeps features that few
        // texts have (emoji, rare scripts) from taking extreme weights
        for i in 0..k {
            a[i][i] += RIDGE;
            b[i] += RIDGE * PRIOR[i];
        }
        w = solve(a, b);
        for (i, wi) in w.iter_mut().enumerate() {
            if let Some(f) = fixed(i) {
                *wi = f;
            }
        }
    }
    w
}

/// Texts count their error relative to at least this many tokens (a one-token
/// miss on a three-token text is not a 33% problem).
const FLOOR: f64 = 5.0;

/// How much each kind's total (its bias) weighs against the error of one
/// average text of that kind.
const LAMBDA: f64 = 10.0;

/// The generated CJK messages weigh half as much as a real source: their
/// vocabulary is small, so they teach the fit that words merge more than in
/// real text.
const GENERATED_SHARE: f64 = 0.5;

/// How strongly the fit is drawn to [`PRIOR`].
const RIDGE: f64 = 1e-3;

/// What the fit is drawn to where the corpus says little: about a token per
/// word, digit group, punctuation run or character of a script without merges.
const PRIOR: [f64; 24] = [
    1.0, 0.1, 0.2, 1.2, 0.9, 0.0, 0.1, 0.5, 0.25, 0.0, 0.4, 0.8, 1.0, 0.8, 1.0, 0.5, 0.8, 0.5, 0.6,
    0.5, 0.5, 1.0, 1.2, 2.0,
];

/// Weights set by hand, not fitted: (feature, weight). Alternating punctuation
/// (`\_\_\_`: `_\` is one o200k token) costs a token every two characters;
/// only one document of the corpus has much of it, so a fit would follow that
/// document rather than the rule.
const FIXED: &[(usize, f64)] = &[(8, 0.25)];

/// The katakana feature (its weight is measured, see `main`).
const KATAKANA: usize = 17;

fn estimate_with(x: &[f64], w: &[f64]) -> f64 {
    let s: f64 = x.iter().zip(w).map(|(x, w)| x * w).sum();
    s.ceil().max(1.0)
}

/// Bias (Σ est / Σ exact − 1) and per-text mean absolute error.
fn score(pairs: impl Iterator<Item = (f64, f64)>) -> (f64, f64, usize) {
    let (mut se, mut sx, mut ae, mut n) = (0.0, 0.0, 0.0, 0);
    for (e, x) in pairs {
        se += e;
        sx += x;
        ae += (e - x).abs() / x;
        n += 1;
    }
    (se / sx - 1.0, ae / n.max(1) as f64, n)
}

fn table(rows: &[Row], pick: usize, est: &dyn Fn(&Row) -> f64) {
    println!("  {:<24} {:>6} {:>9} {:>9}", "kind", "texts", "bias", "MAE");
    let cats = [
        Category::Prose,
        Category::Code,
        Category::Json,
        Category::Cjk,
    ];
    for held_out in [false, true] {
        for cat in cats {
            let (bias, mae, n) = score(
                rows.iter()
                    .filter(|r| r.cat == cat && r.source != "extra" && (r.held_out || !held_out))
                    .map(|r| (est(r), r.exact[pick])),
            );
            println!(
                "  {:<24} {:>6} {:>+8.1}% {:>8.1}%",
                format!("{cat:?}{}", if held_out { " (held out)" } else { "" }),
                n,
                bias * 100.0,
                mae * 100.0
            );
        }
    }
    for source in ["sharegpt", "generated", "udhr", "extra"] {
        for lang in ["zh", "ja", "ko", "all"] {
            let (bias, mae, n) = score(
                rows.iter()
                    .filter(|r| {
                        r.cat == Category::Cjk
                            && r.source == source
                            && (lang == "all" || r.lang == lang)
                    })
                    .map(|r| (est(r), r.exact[pick])),
            );
            if n == 0 {
                continue;
            }
            println!(
                "  {:<24} {:>6} {:>+8.1}% {:>8.1}%",
                format!("Cjk {source} {lang}"),
                n,
                bias * 100.0,
                mae * 100.0
            );
        }
    }
}

/// Writes `src/han_o200k.bin`, `src/han_cl100k.bin` and
/// `src/hangul_cl100k.bin`: one bit per ideograph U+4E00–U+9FFF or Hangul
/// syllable U+AC00–U+D7A3 (bit `i % 8` of byte `i / 8` for the first + `i`),
/// set when the character is a single token of that tokenizer.
fn write_tables() {
    let o200k = tiktoken_rs::o200k_base().unwrap();
    let cl100k = tiktoken_rs::cl100k_base().unwrap();
    for (file, bpe, first, last) in [
        ("han_o200k", &o200k, 0x4E00u32, 0x9FFFu32),
        ("han_cl100k", &cl100k, 0x4E00, 0x9FFF),
        ("hangul_cl100k", &cl100k, 0xAC00, 0xD7A3),
    ] {
        let count = (last - first + 1) as usize;
        let mut table = vec![0u8; count.div_ceil(8)];
        let mut ones = 0;
        for cp in first..=last {
            let c = char::from_u32(cp).unwrap().to_string();
            if bpe.encode_ordinary(&c).len() == 1 {
                let i = (cp - first) as usize;
                table[i / 8] |= 1 << (i % 8);
                ones += 1;
            }
        }
        let path = format!("{}/src/{file}.bin", env!("CARGO_MANIFEST_DIR"));
        std::fs::write(&path, &table).unwrap();
        println!("wrote {path}: {ones} of {count} characters are one token");
    }
}

fn main() {
    if std::env::args().any(|a| a == "--tables") {
        write_tables();
        return;
    }
    let mut texts = corpus::texts();
    if texts.is_empty() {
        eprintln!("corpus not found (../shared/corpus): nothing to calibrate");
        return;
    }
    // More CJK text to check the fit on (never fitted on): a JSON array of strings.
    if let Ok(path) = std::env::var("CALIBRATE_EXTRA_CJK") {
        let extra: Vec<String> =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        texts.extend(extra.into_iter().map(|text| corpus::Text {
            category: Category::Cjk,
            text,
            held_out: true,
            source: "extra",
        }));
    }

    let o200k = tiktoken_rs::o200k_base().unwrap();
    let cl100k = tiktoken_rs::cl100k_base().unwrap();
    let rows: Vec<Row> = texts
        .iter()
        .map(|t| Row {
            cat: t.category,
            held_out: t.held_out,
            source: t.source,
            lang: {
                let f = features(&t.text);
                if f.hangul > f.han + f.hiragana + f.katakana {
                    "ko"
                } else if (f.hiragana + f.katakana) * 5.0 > f.han {
                    "ja"
                } else {
                    "zh"
                }
            },
            x: features(&t.text).to_array().to_vec(),
            exact: [
                o200k.encode_ordinary(&t.text).len() as f64,
                cl100k.encode_ordinary(&t.text).len() as f64,
            ],
            shipped: [
                estimate(&t.text, Profile::O200k) as f64,
                estimate(&t.text, Profile::Cl100k) as f64,
            ],
        })
        .filter(|r| r.exact[0] > 0.0)
        .collect();
    // Held-out texts stay out of the fit: their accuracy is measured on text
    // the weights never saw.
    let fitted_on: Vec<&Row> = rows
        .iter()
        .filter(|r| !r.held_out && r.source != "extra")
        .collect();
    for (name, pick, bpe) in [("o200k", 0, &o200k), ("cl100k", 1, &cl100k)] {
        // katakana: what a katakana loanword costs a character, measured on
        // the generator's list (the generated messages alone would say too
        // little: their few common words are single tokens)
        let (tokens, chars) = corpus::cjk::KATAKANA.iter().fold((0, 0), |(t, c), w| {
            (t + bpe.encode_ordinary(w).len(), c + w.chars().count())
        });
        let mut fixed = FIXED.to_vec();
        fixed.push((KATAKANA, tokens as f64 / chars as f64));
        let w = fit(&fitted_on, pick, &fixed);
        println!(
            "\n{name} weights: [{}]",
            w.iter()
                .map(|w| format!("{w:.3}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        println!("{name}, these weights (bias = Σest/Σexact − 1; MAE = mean |est−exact|/exact per text):");
        table(&rows, pick, &|r| estimate_with(&r.x, &w));
        println!("{name}, the shipped estimator:");
        table(&rows, pick, &|r| r.shipped[pick]);
    }
}
