//! Token estimates carried between calls. A chat UI calls the library on every
//! turn of a growing conversation; the JS layer keeps each message's estimate
//! (per message object, guarded by a fingerprint) and hands it back, so a call
//! estimates only the messages that are new or changed.
//!
//! A record is `[format, message tokens, tokens of result 0, result 1, …]` (the
//! format the message was read as, by its place in `FORMATS`: the same object
//! reads differently as another format). `known` holds one entry per message in
//! input order: its length, then the record (length 0: not known). Records of
//! the messages estimated in this call are noted in `fresh` as
//! `[index, length, record…]`, for the JS layer to keep.

use std::cell::RefCell;

use crate::formats::{Format, FORMATS};
use crate::message::Message;
use crate::tokens::{message_tokens, TokenCounter};

/// Estimates known from earlier calls, and the ones made in this call.
#[derive(Debug, Default)]
pub(crate) struct Memo<'k> {
    known: &'k [f64],
    fresh: RefCell<Vec<f64>>,
}

impl<'k> Memo<'k> {
    /// A memo over the JS layer's `known` records.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn new(known: &'k [f64]) -> Self {
        Memo {
            known,
            fresh: RefCell::default(),
        }
    }

    /// Sets every view's tokens (and its results'), from a known record where one
    /// fits the message as read, else by counting (and noting the record).
    pub(crate) fn estimate(
        &self,
        views: &mut [Message<'_>],
        counter: &dyn TokenCounter,
        format: Format,
    ) {
        let tag = FORMATS.iter().position(|(_, f)| *f == format).unwrap_or(0) as f64;
        let mut at = 0;
        for (i, v) in views.iter_mut().enumerate() {
            let len = self.known.get(at).map_or(0, |n| *n as usize);
            let record = self.known.get(at + 1..at.saturating_add(1 + len));
            at = at.saturating_add(1 + len);
            match record {
                Some(r) if len == 2 + v.results.len() && r[0] == tag => {
                    v.tokens = r[1] as u64;
                    for (res, t) in v.results.iter_mut().zip(&r[2..]) {
                        res.tokens = *t as u64;
                    }
                }
                _ => {
                    v.tokens = message_tokens(v, counter);
                    let mut fresh = self.fresh.borrow_mut();
                    fresh.extend([i as f64, (2 + v.results.len()) as f64, tag]);
                    fresh.push(v.tokens as f64);
                    fresh.extend(v.results.iter().map(|r| r.tokens as f64));
                }
            }
        }
    }

    /// The records noted in this call.
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
    pub(crate) fn fresh(self) -> Vec<f64> {
        self.fresh.into_inner()
    }
}
