//! Sixteen bytes at a time: the byte classes the token estimator's scan
//! (`tokens.rs`) and the JSON text parser (`json/parse.rs`) sort text into,
//! with wasm `simd128` instructions in the package and plain Rust on two 64-bit
//! words ("SIMD within a register") everywhere else.

/// Sixteen bytes, sorted into classes at once: one bit a byte.
pub(crate) trait Lanes: Copy {
    fn load(bytes: &[u8; 16]) -> Self;
    /// One bit per byte `b` with `lo <= b < lo + len`.
    fn in_range(self, lo: u8, len: u8) -> u16;
    /// One bit per byte that equals `a` or `b`.
    fn either(self, a: u8, b: u8) -> u16;
    /// One bit per byte ≥ 0x80.
    fn high(self) -> u16;
    /// One bit per byte equal to the byte before it (`previous` holds the
    /// sixteen bytes before these).
    fn same(self, previous: Self) -> u16;
}

/// Plain Rust lanes for every other target: two 64-bit words, eight bytes
/// each, classified with carry-free word arithmetic ("SIMD within a register").
#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
#[derive(Clone, Copy)]
pub(crate) struct Portable([u64; 2]);

/// A byte repeated eight times in a word.
#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
const fn splat(b: u8) -> u64 {
    b as u64 * 0x0101_0101_0101_0101
}
#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
const TOPS: u64 = splat(0x80);

#[cfg_attr(
    all(target_arch = "wasm32", target_feature = "simd128"),
    allow(dead_code)
)]
impl Portable {
    /// The top bit of every byte gathered into the low eight bits (byte `j`'s
    /// top bit lands in bit `56 + j` of the product; no two products meet).
    #[inline(always)]
    fn gather(tops: [u64; 2]) -> u16 {
        let g = |w: u64| ((w & TOPS).wrapping_mul(0x0002_0408_1020_4081) >> 56) as u16;
        g(tops[0]) | (g(tops[1]) << 8)
    }
    /// Top bit set in every byte that is ≥ `c` (`c` ≤ 0x80; exact for bytes < 0x80).
    #[inline(always)]
    fn at_least(w: u64, c: u8) -> u64 {
        (w | TOPS).wrapping_sub(splat(c)) & TOPS
    }
    /// Top bit set in every zero byte.
    #[inline(always)]
    fn zero(w: u64) -> u64 {
        !(((w & !TOPS).wrapping_add(!TOPS)) | w) & TOPS
    }
}

impl Lanes for Portable {
    #[inline(always)]
    fn load(b: &[u8; 16]) -> Self {
        let mut lo = [0; 8];
        let mut hi = [0; 8];
        lo.copy_from_slice(&b[..8]);
        hi.copy_from_slice(&b[8..]);
        Portable([u64::from_le_bytes(lo), u64::from_le_bytes(hi)])
    }
    #[inline(always)]
    fn in_range(self, lo: u8, len: u8) -> u16 {
        // only ASCII ranges are asked for, or the top half (0xC0..)
        Self::gather(self.0.map(|w| {
            if lo >= 0x80 {
                let x = w & !TOPS;
                w & Self::at_least(x, lo & 0x7F) & !Self::at_least(x, (lo & 0x7F) + len)
            } else {
                !w & Self::at_least(w, lo) & !Self::at_least(w, lo + len)
            }
        }))
    }
    #[inline(always)]
    fn either(self, a: u8, b: u8) -> u16 {
        Self::gather(
            self.0
                .map(|w| Self::zero(w ^ splat(a)) | Self::zero(w ^ splat(b))),
        )
    }
    #[inline(always)]
    fn high(self) -> u16 {
        Self::gather(self.0)
    }
    #[inline(always)]
    fn same(self, previous: Self) -> u16 {
        let [lo, hi] = self.0;
        let before = [lo << 8 | previous.0[1] >> 56, hi << 8 | lo >> 56];
        Self::gather([Self::zero(lo ^ before[0]), Self::zero(hi ^ before[1])])
    }
}

/// wasm `simd128` lanes: each method is a couple of vector instructions.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[derive(Clone, Copy)]
pub(crate) struct Simd(core::arch::wasm32::v128);

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl Lanes for Simd {
    #[inline(always)]
    fn load(b: &[u8; 16]) -> Self {
        // Two 8-byte reads: written byte by byte, the lanes were filled with
        // sixteen lane loads, the scan's largest cost (`unsafe` `v128_load`
        // is not ours to use).
        let (lo, hi) = b.split_at(8);
        let word = |half: &[u8]| u64::from_le_bytes(half.try_into().unwrap_or([0; 8]));
        Simd(core::arch::wasm32::u64x2(word(lo), word(hi)))
    }
    #[inline(always)]
    fn in_range(self, lo: u8, len: u8) -> u16 {
        use core::arch::wasm32::*;
        u8x16_bitmask(u8x16_lt(
            u8x16_sub(self.0, u8x16_splat(lo)),
            u8x16_splat(len),
        ))
    }
    #[inline(always)]
    fn either(self, a: u8, b: u8) -> u16 {
        use core::arch::wasm32::*;
        u8x16_bitmask(v128_or(
            u8x16_eq(self.0, u8x16_splat(a)),
            u8x16_eq(self.0, u8x16_splat(b)),
        ))
    }
    #[inline(always)]
    fn high(self) -> u16 {
        core::arch::wasm32::u8x16_bitmask(self.0)
    }
    #[inline(always)]
    fn same(self, previous: Self) -> u16 {
        use core::arch::wasm32::*;
        let before = i8x16_shuffle::<15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30>(
            previous.0, self.0,
        );
        u8x16_bitmask(u8x16_eq(self.0, before))
    }
}

/// The lanes this build uses.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) type Native = Simd;
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(crate) type Native = Portable;

/// The offset of the first byte from `i` on that JSON text cannot hold as it
/// is in a string (`"`, `\\`, a control byte), or that equals `also`; the
/// length when there is none. The JSON parser and writer both scan with it.
pub(crate) fn find_special(bytes: &[u8], mut i: usize, also: Option<u8>) -> usize {
    let extra = also.unwrap_or(b'"');
    while let Some(chunk) = bytes.get(i..i + 16) {
        let lanes = Native::load(chunk.try_into().unwrap_or(&[b'"'; 16]));
        let hits = lanes.either(b'"', b'\\') | lanes.in_range(0, 0x20) | lanes.either(extra, extra);
        if hits != 0 {
            return i + hits.trailing_zeros() as usize;
        }
        i += 16;
    }
    while let Some(&c) = bytes.get(i) {
        if c == b'"' || c == b'\\' || c < 0x20 || c == extra {
            return i;
        }
        i += 1;
    }
    i
}
