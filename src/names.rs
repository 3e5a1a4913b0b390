//! A set of names (tool-call ids, tool names, option keys) with a number for
//! each: the one lookup table the crate uses. Open addressing over a seeded
//! FNV-1a hash, the names kept in one string; not generic, so the `.wasm` holds
//! one copy of it where `HashMap`s of five key and value types held five of
//! hashbrown's and SipHash besides (−4 KB gzipped, DESIGN.md).

use std::sync::atomic::{AtomicU64, Ordering};

/// The hash's secret start, so that ids written to collide in a table (one
/// request of 20,000 such tool calls took 5 s) cannot be written: the JS layer
/// sets it from `crypto.getRandomValues` (wasm has no entropy of its own);
/// natively, and until then, it comes from the standard library's random
/// hash keys.
static SEED: AtomicU64 = AtomicU64::new(0);

/// Sets the hash's seed (see [`SEED`]).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub(crate) fn set_seed(seed: u64) {
    SEED.store(seed | 1, Ordering::Relaxed);
}

fn seed() -> u64 {
    match SEED.load(Ordering::Relaxed) {
        0 => {
            use std::hash::{BuildHasher, Hasher};
            let fresh = std::collections::hash_map::RandomState::new()
                .build_hasher()
                .finish()
                | 1;
            SEED.store(fresh, Ordering::Relaxed);
            fresh
        }
        s => s,
    }
}

/// Names and their numbers.
#[derive(Debug)]
pub(crate) struct Names {
    /// Every name, one after another.
    text: String,
    /// `(start, length, number)` of a name in `text`, or `u32::MAX` in `start`
    /// for a free slot; the length is a power of two.
    slots: Vec<(u32, u32, u64)>,
    len: usize,
    seed: u64,
}

const FREE: u32 = u32::MAX;

impl Names {
    /// No names.
    pub(crate) fn new() -> Self {
        Names {
            text: String::new(),
            slots: Vec::new(),
            len: 0,
            seed: seed(),
        }
    }

    /// The slot `name` hashes to in `size` slots: FNV-1a from the seed, then
    /// the top bits of a multiplication (which every bit of the hash moves).
    fn home(&self, name: &str, size: usize) -> usize {
        let mut h = 0xcbf2_9ce4_8422_2325 ^ self.seed;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - size.trailing_zeros())) as usize
    }

    /// The slot of `name`, or of the free slot where it would go.
    fn slot(&self, name: &str) -> usize {
        let mask = self.slots.len() - 1;
        let mut at = self.home(name, self.slots.len());
        loop {
            let (start, len, _) = self.slots[at];
            if start == FREE {
                return at;
            }
            if self.text.get(start as usize..start as usize + len as usize) == Some(name) {
                return at;
            }
            at = (at + 1) & mask;
        }
    }

    /// The number of `name`.
    pub(crate) fn get(&self, name: &str) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let (start, _, number) = self.slots[self.slot(name)];
        (start != FREE).then_some(number)
    }

    /// Adds `name` with `number` unless it is there: `true` when it was added.
    pub(crate) fn insert(&mut self, name: &str, number: u64) -> bool {
        self.entry(name, number).1
    }

    /// The slot of `name`, added with `number` unless it is there, and whether
    /// it was added (one probe for both).
    fn entry(&mut self, name: &str, number: u64) -> (usize, bool) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let at = self.slot(name);
        if self.slots[at].0 != FREE {
            return (at, false);
        }
        self.slots[at] = (self.text.len() as u32, name.len() as u32, number);
        self.text.push_str(name);
        self.len += 1;
        (at, true)
    }

    /// Adds `name` (number 0) unless it is there.
    pub(crate) fn add(&mut self, name: &str) {
        self.insert(name, 0);
    }

    /// Adds one to the number of `name` (from 0); the number before.
    pub(crate) fn count(&mut self, name: &str) -> u64 {
        match self.entry(name, 1) {
            (_, true) => 0,
            (at, false) => {
                let before = self.slots[at].2;
                self.slots[at].2 = before.saturating_add(1);
                before
            }
        }
    }

    /// Forgets every name (keeping the room they took, unless it is far more
    /// than they needed: clearing costs the room, and one turn of thousands of
    /// calls must not make every later turn's clear cost as much).
    pub(crate) fn clear(&mut self) {
        if self.len > 0 {
            if self.slots.len() > 64 && self.len * 8 < self.slots.len() {
                self.slots = Vec::new();
            } else {
                self.slots.fill((FREE, 0, 0));
            }
            self.text.clear();
            self.len = 0;
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(8);
        let old = std::mem::replace(&mut self.slots, vec![(FREE, 0, 0); size]);
        let mask = self.slots.len() - 1;
        for (start, len, number) in old.into_iter().filter(|s| s.0 != FREE) {
            let name = self
                .text
                .get(start as usize..start as usize + len as usize)
                .unwrap_or("");
            let mut at = self.home(name, size);
            while self.slots[at].0 != FREE {
                at = (at + 1) & mask;
            }
            self.slots[at] = (start, len, number);
        }
    }
}

/// A pair of indices as a number (and back): where a call is, message and call.
pub(crate) fn pair(a: usize, b: usize) -> u64 {
    (a as u64) << 32 | (b as u64 & 0xffff_ffff)
}

/// The pair [`pair`] made.
pub(crate) fn unpair(n: u64) -> (usize, usize) {
    ((n >> 32) as usize, (n & 0xffff_ffff) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_many_names_and_the_first_number_of_each() {
        let mut names = Names::new();
        assert_eq!(names.get("a"), None);
        for i in 0..1000u64 {
            assert!(names.insert(&format!("call_{i}"), i));
        }
        assert!(!names.insert("call_7", 99), "a name is added once");
        assert_eq!(names.get("call_7"), Some(7));
        assert_eq!(names.get("call_999"), Some(999));
        assert_eq!(names.get("call_1000"), None);
        assert!(names.insert("", 5));
        assert_eq!(names.get(""), Some(5));
        names.clear();
        assert_eq!(names.get("call_7"), None);
        assert!(names.insert("call_7", 1));
        assert_eq!(unpair(pair(3, 4_000_000_000)), (3, 4_000_000_000));
        assert_eq!(
            (names.count("x"), names.count("x"), names.count("y")),
            (0, 1, 0)
        );
    }

    #[test]
    fn where_a_name_lands_depends_on_the_seed() {
        let table = |seed| Names {
            seed,
            ..Names::new()
        };
        let (one, other) = (table(1), table(0x5eed_0000_0001));
        let moved = (0..256)
            .filter(|i| {
                let name = format!("call_{i}");
                one.home(&name, 1 << 16) != other.home(&name, 1 << 16)
            })
            .count();
        assert!(moved > 250, "only {moved} of 256 names moved");
    }
}
