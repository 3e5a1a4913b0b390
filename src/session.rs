//! The history the last call read, kept for the next call on the same
//! conversation (the wasm build keeps one session: `src/wasm/session.rs`).
//!
//! A chat UI calls again and again with the same messages and a few more. The
//! JS layer sends the messages the session holds that are still the same
//! objects, unchanged, in the same places at the start of the history, as
//! one-word `earlier` nodes (tape tag 9): their views, read, linked and
//! estimated by an earlier call, are taken as they are, and only the messages
//! after them are read. Linking runs again from the turn the first new message
//! belongs to: it only looks back, so the views held stay as they were —
//! except for Responses item references (a later output adds a call to the
//! reference item): a Responses history has no session. Nor is one kept for a
//! history with a provider's compaction boundary: what comes before one counts
//! nothing, a rule over the whole history that changes views already held.

use std::mem::take;

use crate::error::Result;
use crate::formats::{self, Document, Evidence, Format};
use crate::json::Node;
use crate::memo::Memo;
use crate::message::Message;
use crate::tokens::{Profile, TokenCounter};

/// What the session holds of the history it read last: each message's node,
/// view and format evidence, in order, and how they were read.
#[derive(Debug)]
pub(crate) struct Held<'a, N: Node<'a>> {
    nodes: Vec<N>,
    views: Vec<Message<'a>>,
    evidence: Vec<Evidence>,
    format: Format,
    tokenizer: Profile,
    /// The first view a meter's stub stands for (role and tokens only, nothing
    /// to plan on): a compaction takes no view from there on.
    first_stub: Option<usize>,
}

impl<'a, N: Node<'a>> Default for Held<'a, N> {
    fn default() -> Self {
        Held {
            nodes: Vec::new(),
            views: Vec::new(),
            evidence: Vec::new(),
            format: Format::Openai,
            tokenizer: Profile::O200k,
            first_stub: None,
        }
    }
}

impl<'a, N: Node<'a>> Held<'a, N> {
    /// Opens `root`, whose first `prefix` messages are the session's (sent as
    /// `earlier` nodes): reads the messages after them into the session and
    /// answers the document, and whether the session may keep what it now
    /// holds (not with a boundary). `None` where the session cannot stand for
    /// them (a prefix it does not hold, or holds as stubs for a call that
    /// takes none; another format or tokenizer than they were read with; a
    /// Responses history): the caller sends every message again.
    pub(crate) fn open(
        &mut self,
        root: N,
        prefix: usize,
        (forced, tokenizer): (Option<Format>, Profile),
        memo: &Memo<'_>,
        counter: &dyn TokenCounter,
    ) -> Result<Option<(Document<'a, N>, bool)>> {
        let (messages, is_request) = formats::locate(root)?;
        let earlier = messages.iter().take_while(|m| m.is_earlier()).count();
        let stubbed = self.first_stub.is_some_and(|s| s < prefix) && !memo.takes_stubs();
        let held = prefix <= self.views.len() && (prefix == 0 || tokenizer == self.tokenizer);
        if earlier != prefix
            || !held
            || stubbed
            || messages[prefix..].iter().any(|m| m.is_earlier())
        {
            return Ok(None);
        }
        self.truncate(prefix);
        self.nodes.extend_from_slice(&messages[prefix..]);
        for (i, m) in messages.iter().enumerate().skip(prefix) {
            let evidence = memo.evidence(i).unwrap_or_else(|| Evidence::of(*m));
            self.evidence.push(evidence);
        }
        let format = formats::settle(root, &self.nodes, &self.evidence, forced)?;
        if prefix > 0 && format != self.format || format == Format::OpenaiResponses {
            return Ok(None);
        }
        (self.format, self.tokenizer) = (format, tokenizer);
        let stubs: Vec<_> = (messages.iter().enumerate())
            .map(|(i, m)| (i >= prefix).then(|| memo.stub(i, *m)).flatten())
            .collect();
        self.first_stub = self
            .first_stub
            .or_else(|| stubs.iter().position(Option::is_some));
        // The document borrows the nodes and evidence for the call (`give_back`).
        let (nodes, evidence) = (take(&mut self.nodes), take(&mut self.evidence));
        let doc = Document::new(format, root, nodes, is_request, evidence, stubs);
        let read = doc
            .read_from(&mut self.views, memo)
            .and_then(|()| doc.link(&mut self.views, prefix));
        if let Err(e) = read {
            self.give_back(doc);
            return Err(e);
        }
        memo.estimate(&doc, &mut self.views, prefix, counter);
        self.views[prefix..].iter_mut().for_each(|v| v.held = true);
        // A boundary changes the tokens of the views before it: for this call,
        // and then the session ends.
        let boundary = crate::engine::uncount_behind_boundary(&mut self.views);
        Ok(Some((doc, !boundary)))
    }

    /// Takes back the nodes and evidence of the document [`Held::open`] answered.
    pub(crate) fn give_back(&mut self, doc: Document<'a, N>) {
        (self.nodes, self.evidence) = (doc.messages, doc.evidence);
    }

    /// The views of the history held.
    pub(crate) fn views(&self) -> &[Message<'a>] {
        &self.views
    }

    /// Keeps the first `len` messages only (a call that failed after reading
    /// more leaves the session holding what the JS layer knows it holds).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.first_stub = self.first_stub.filter(|&s| s < len);
        self.nodes.truncate(len);
        self.views.truncate(len);
        self.evidence.truncate(len);
    }
}
