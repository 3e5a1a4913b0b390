//! The one session the wasm build keeps (see [`crate::session`]): the value
//! tapes of the calls that read its history, which its views borrow from, and
//! the views. A session stands for one history; a call on another history
//! starts a new one (the JS layer sends a history it holds as `earlier`
//! nodes, and says when to start afresh).

use std::borrow::Cow;
use std::cell::RefCell;

use elsa::FrozenVec;
use self_cell::self_cell;

use super::{Pre, Run};
use crate::engine::Opened;
use crate::error::Result;
use crate::json::tape::{Tape, TapeNode};
use crate::memo::Memo;
use crate::options::ParsedOptions;
use crate::session::Held;
use crate::tokens::TokenCounter;

/// A call's value tape, owned by the session.
pub(super) struct Chunk {
    pub words: Vec<u32>,
    pub bytes: Vec<u8>,
}

type HeldTape<'a> = Held<'a, TapeNode<'a>>;

self_cell!(
    /// The tapes (an append-only list: a call adds its own while the views
    /// read from earlier ones stay) and what the session holds of them.
    struct Session {
        owner: FrozenVec<Box<Chunk>>,

        #[covariant]
        dependent: HeldTape,
    }
);

/// The session and its number, which the JS layer names to refer to it, and
/// how many tapes it holds.
struct Slot {
    id: u32,
    session: Option<Session>,
    tapes: usize,
}

/// The tapes a session holds at most: every call through it adds one (a warm
/// call's is small: one word a held message), whether or not it succeeds; the
/// session ends there, and the next call starts a new one.
const MAX_TAPES: usize = 32;

thread_local! {
    static SLOT: RefCell<Slot> = const { RefCell::new(Slot { id: 0, session: None, tapes: 0 }) };
}

/// Ends the session (before a call that starts a new one sends its tape: the
/// memory of the old one is free for it).
pub(super) fn end() {
    SLOT.with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            slot.session = None;
        }
    });
}

/// How a call stands to the session, as the JS layer says: the session it
/// refers to, and how many messages at the start of the history it sent as
/// `earlier` nodes (0: start a new session with this history).
#[derive(Debug, Clone, Copy)]
pub(super) struct Link {
    pub id: u32,
    pub prefix: usize,
}

/// What a call through the session came to: the answer, with what the JS
/// layer is to know of the session (`Some(n)`: it now holds this history as
/// number `n`; `Some(0)`: there is none; `None`: as before — a call that
/// failed leaves it holding the messages sent as `earlier` nodes); or, where it
/// could not stand for those, a call to make again with every message written.
pub(super) enum Ran {
    Answer(Result<String>, Option<u32>),
    Retry,
}

/// Runs `run` on the history of `chunk`, read through the session.
pub(super) fn run(
    chunk: Chunk,
    link: Link,
    config: &ParsedOptions,
    (counter, memo): (&dyn TokenCounter, &Memo<'_>),
    (pre, run): (&Pre<'_>, &Run<'_>),
) -> Ran {
    SLOT.with(|slot| {
        // (a call made while another runs, from the caller's counter, reads alone)
        let Ok(mut slot) = slot.try_borrow_mut() else {
            return Ran::Retry;
        };
        let slot = &mut *slot;
        let prefix = link.prefix;
        if prefix == 0 {
            slot.session = None; // its memory first
            slot.session = Some(Session::new(FrozenVec::new(), |_| Held::default()));
            slot.tapes = 0;
        } else if link.id != slot.id {
            return Ran::Retry;
        }
        slot.tapes += 1;
        let Some(session) = slot.session.as_mut() else {
            return Ran::Retry;
        };
        let (answer, fate) = session.with_dependent_mut(|tapes, held| {
            let chunk = tapes.push_get(Box::new(chunk));
            let root = match Tape::open(&chunk.words, &chunk.bytes) {
                Ok(tape) => tape.root(),
                Err(e) => return (Some(Err(e)), Fate::Truncate),
            };
            if let Some(answer) = pre(config, root, counter) {
                return (Some(answer), Fate::Truncate);
            }
            let read = (config.options.format, config.options.tokenizer);
            match held.open(root, prefix, read, memo, counter) {
                Ok(Some((doc, boundary_free))) => {
                    let opened = Opened::of(doc, Cow::Borrowed(held.views()), config, counter);
                    let answer = run(&opened, counter);
                    let doc = opened.into_doc();
                    held.give_back(doc);
                    // (a boundary changed the tokens of views held before it)
                    let fate = match (boundary_free, answer.is_ok() && !memo.missed()) {
                        (false, _) => Fate::Drop,
                        (true, true) => Fate::Keep,
                        (true, false) => Fate::Truncate,
                    };
                    (Some(answer), fate)
                }
                // A history no session stands for is read as it is.
                Ok(None) if prefix == 0 => {
                    let opened = Opened::read(root, config, counter, memo);
                    (Some(opened.and_then(|o| run(&o, counter))), Fate::Drop)
                }
                Ok(None) => (None, Fate::Drop),
                Err(e) => (Some(Err(e)), Fate::Truncate),
            }
        });
        let Some(answer) = answer else {
            slot.session = None;
            return Ran::Retry;
        };
        let fate = if slot.tapes >= MAX_TAPES {
            Fate::Drop
        } else {
            fate
        };
        match fate {
            Fate::Keep => {
                slot.id = slot.id.wrapping_add(1).max(1);
                Ran::Answer(answer, Some(slot.id))
            }
            Fate::Truncate if prefix > 0 => {
                session.with_dependent_mut(|_, held| held.truncate(prefix));
                Ran::Answer(answer, None)
            }
            Fate::Truncate | Fate::Drop => {
                slot.session = None;
                Ran::Answer(answer, Some(0))
            }
        }
    })
}

/// What becomes of the session after a call.
enum Fate {
    /// It holds the call's history.
    Keep,
    /// It holds the messages the call sent as `earlier` nodes (a session
    /// started by the call ends).
    Truncate,
    /// It ends.
    Drop,
}
