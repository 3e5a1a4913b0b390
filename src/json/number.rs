//! JSON numbers kept as their text. A number is read only where the library
//! needs its value (an option, a token count, a timestamp); everywhere else it
//! is copied as it was written, so an edited message keeps `1712345678.123456`
//! digit for digit, with no float printing or correctly rounded parsing in the
//! `.wasm` (core's parser alone is 10 KB gzipped of tables).

/// Exact powers of ten as `f64` (10^22 is the last one an `f64` holds exactly).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The parts of a number's text: sign, up to 19 significant digits, the power
/// of ten they are scaled by, and whether digits beyond them were dropped.
struct Parts {
    negative: bool,
    digits: u64,
    exponent: i64,
    truncated: bool,
}

/// Splits `text` into [`Parts`] if it follows JSON's number grammar:
/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn parts(text: &str) -> Option<Parts> {
    let b = text.as_bytes();
    let mut i = 0;
    let negative = b.first() == Some(&b'-');
    i += usize::from(negative);
    let (mut digits, mut exponent, mut truncated) = (0u64, 0i64, false);
    let mut take = |d: u8, fraction: bool, exponent: &mut i64| {
        if digits < 1_000_000_000_000_000_000 {
            digits = digits * 10 + u64::from(d - b'0');
            *exponent -= i64::from(fraction);
        } else {
            truncated |= d != b'0';
            *exponent += i64::from(!fraction);
        }
    };
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while let Some(d @ b'0'..=b'9') = b.get(i) {
                take(*d, false, &mut exponent);
                i += 1;
            }
        }
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while let Some(d @ b'0'..=b'9') = b.get(i) {
            take(*d, true, &mut exponent);
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        let minus = b.get(i) == Some(&b'-');
        i += usize::from(matches!(b.get(i), Some(b'+' | b'-')));
        let start = i;
        let mut e: i64 = 0;
        while let Some(d @ b'0'..=b'9') = b.get(i) {
            e = (e * 10 + i64::from(d - b'0')).min(1_000_000);
            i += 1;
        }
        if i == start {
            return None;
        }
        exponent += if minus { -e } else { e };
    }
    (i == b.len()).then_some(Parts {
        negative,
        digits,
        exponent,
        truncated,
    })
}

/// Whether `text` is a JSON number.
pub(crate) fn is_number(text: &str) -> bool {
    parts(text).is_some()
}

/// The value of a JSON number. Correctly rounded when its significant digits
/// fit 2^53 and its power of ten is at most 22 (every number a person writes in
/// an option, every integer a JS number holds exactly); otherwise within a few
/// units in the last place, which no option or count can tell apart.
pub(crate) fn to_f64(text: &str) -> Option<f64> {
    let p = parts(text)?;
    let m = p.digits as f64;
    let value = if p.digits < 1 << 53 && !p.truncated && p.exponent.unsigned_abs() <= 22 {
        let scale = POW10[p.exponent.unsigned_abs() as usize];
        if p.exponent < 0 {
            m / scale
        } else {
            m * scale
        }
    } else if p.digits == 0 {
        0.0
    } else {
        // 10^e by squaring, in the direction that keeps the most precision
        let mut scale = 1.0f64;
        let (mut base, mut e) = (10.0f64, p.exponent.unsigned_abs().min(400));
        while e > 0 {
            if e & 1 == 1 {
                scale *= base;
            }
            base *= base;
            e >>= 1;
        }
        if p.exponent < 0 {
            // (below 1e-308 the scale overflows: the number is as good as zero)
            if scale.is_finite() {
                m / scale
            } else {
                0.0
            }
        } else {
            m * scale
        }
    };
    Some(if p.negative { -value } else { value })
}

/// The value of a JSON number that is a whole number from 0 to `u64::MAX`
/// (`3`, `3.0`, `3e2`); `None` for anything else.
pub(crate) fn to_u64(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    if !b.is_empty()
        && b.len() <= 19
        && b.iter().all(u8::is_ascii_digit)
        && (b[0] != b'0' || b.len() == 1)
    {
        return Some(b.iter().fold(0, |n, d| n * 10 + u64::from(d - b'0')));
    }
    let n = to_f64(text)?;
    (n >= 0.0 && n.fract() == 0.0 && n < 1.8e19).then_some(n as u64)
}

/// The JSON text of `n`: whole numbers below 2^53 as integers, others as the
/// shortest text that reads back as the same `f64` (ryu, its small tables);
/// NaN and infinities as `null`, as `JSON.stringify` writes them.
pub(crate) fn write_f64(n: f64, out: &mut String) {
    if !n.is_finite() {
        out.push_str("null");
    } else if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        out.push_str(itoa::Buffer::new().format(n as i64));
    } else {
        out.push_str(ryu::Buffer::new().format_finite(n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_json_allows_and_nothing_else() {
        for (text, want) in [
            ("0", 0.0),
            ("-0", -0.0),
            ("0.95", 0.95),
            ("80", 80.0),
            ("1e3", 1000.0),
            ("1E+3", 1000.0),
            ("2.5e-3", 0.0025),
            ("-12.75", -12.75),
            ("9007199254740993", 9_007_199_254_740_992.0),
            ("0.30000000000000004", 0.1 + 0.2),
            ("1e400", f64::INFINITY),
            ("1e-400", 0.0),
        ] {
            assert_eq!(to_f64(text), Some(want), "{text}");
        }
        for bad in [
            "", "-", "01", "1.", ".5", "1e", "1e+", "+1", "0x10", "1 ", "NaN", "--1",
        ] {
            assert_eq!(to_f64(bad), None, "{bad:?}");
            assert!(!is_number(bad), "{bad:?}");
        }
    }

    #[test]
    fn whole_numbers_in_any_spelling() {
        assert_eq!(to_u64("1712345678123"), Some(1_712_345_678_123));
        assert_eq!(to_u64("3.0"), Some(3));
        assert_eq!(to_u64("3e2"), Some(300));
        assert_eq!(
            to_u64("18446744073709551615"),
            None,
            "20 digits: through f64, past 1.8e19"
        );
        for bad in ["-1", "1.5", "abc", "01"] {
            assert_eq!(to_u64(bad), None, "{bad}");
        }
    }

    #[test]
    fn writes_what_reads_back() {
        for n in [
            0.0,
            0.95,
            0.1 + 0.2,
            1.0 / 3.0,
            1e21,
            -2.5,
            123_456_789.0,
            5e-324,
        ] {
            let mut out = String::new();
            write_f64(n, &mut out);
            assert_eq!(out.parse::<f64>().ok(), Some(n), "{out}");
        }
        let mut out = String::new();
        write_f64(f64::NAN, &mut out);
        assert_eq!(out, "null");
    }
}
