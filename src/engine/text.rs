//! JSON text in, JSON text out: a request body (or a history) read from its
//! bytes in one pass ([`crate::json::parse`]), decided and compacted on the
//! views, and written back with every kept message and every other field
//! copied as the input's bytes (key order, spacing and escapes as they were).
//! Only the messages the library wrote or edited are written anew. A Worker
//! that forwards a request, or a server holding a body, never builds a JS
//! object of it.

use super::{IndexedCompaction, Opened};
use crate::error::{Error, Result};
use crate::formats::{self, OutputMessage};
use crate::json::parse::{self, Parsed};
use crate::json::tape::TapeNode;
use crate::json::{Node, WriteJson, Writer};
use crate::memo::Memo;
use crate::meter::Meter;
use crate::options::ParsedOptions;
use crate::request;
use crate::tokens::{Capped, Estimator, TokenCounter};

/// What a call on JSON text answers.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The meter of the input (what decided).
    pub meter: Meter,
    /// The compaction, when there was one.
    pub compaction: Option<IndexedCompaction>,
    /// The text written: the compacted input (when compacted), or the whole
    /// result as JSON (`{messages, notice, warnings, summary?, request?}`).
    pub text: Option<String>,
}

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answer {
    /// The meter only.
    Meter,
    /// The input with its messages compacted, only when the meter says it
    /// reaches the threshold (else nothing: the input stands).
    BodyIfOver,
    /// The input with its messages compacted, whatever the meter says.
    Body,
    /// The whole result: `{messages, notice, warnings, summary?, request?}`
    /// (what `JSON.stringify` of `compactSync`'s result gives).
    Result,
}

/// Reads `bytes` as JSON; `INVALID_INPUT` naming `what` (the input, the
/// history) and the byte, line and column where it is not JSON.
pub(crate) fn read(bytes: Vec<u8>, what: &str) -> Result<Parsed> {
    parse::parse_bytes(bytes).map_err(|e| not_json(what, e))
}

/// [`read`] for text already known to be UTF-8.
pub(crate) fn read_str(text: &str, what: &str) -> Result<Parsed> {
    parse::parse(text.to_owned()).map_err(|e| not_json(what, e))
}

fn not_json(what: &str, e: parse::ParseError) -> Error {
    Error::input(what, format!("not valid JSON: {e}"))
}

/// Meters and (as `answer` says) compacts the JSON text `parsed`, with the
/// built-in estimator (without a `tokenizer` given, a request's well-known
/// model picks its profile) or `counter`.
pub(crate) fn run(
    parsed: &Parsed,
    config: &ParsedOptions,
    counter: Option<&dyn TokenCounter>,
    answer: Answer,
) -> Result<Outcome> {
    let root = parsed.tape().root();
    let config = &request::for_input(config, root);
    let estimator = Estimator(config.options.tokenizer);
    let counter = &Capped(counter.unwrap_or(&estimator));
    let opened = Opened::read(root, config, counter, &Memo::default())?;
    let meter = opened.meter("", counter);
    if answer == Answer::Meter || answer == Answer::BodyIfOver && !meter.should_compact {
        return Ok(Outcome {
            meter,
            compaction: None,
            text: None,
        });
    }
    let planned = opened.compact(counter)?;
    let text = match answer {
        Answer::Result => result(parsed, &opened, &planned),
        _ => body(parsed, &opened, &planned.output),
    };
    Ok(Outcome {
        meter,
        compaction: Some(planned),
        text: Some(text),
    })
}

/// Writes a kept node as its input bytes (the parser notes where every node of
/// the first levels lies, so every message has them), else as JSON.
fn kept(w: &mut Writer, parsed: &Parsed, node: TapeNode<'_>) {
    match parsed
        .span(node)
        .and_then(|(s, e)| parsed.input().get(s..e))
    {
        Some(bytes) => w.raw(bytes),
        None => w.node(node),
    }
}

/// The input's message array: the root, or a request's messages member.
fn message_array<'p>(opened: &Opened<'_, 'p, TapeNode<'p>>) -> Option<TapeNode<'p>> {
    let root = opened.doc.root;
    match opened.doc.is_request {
        true => formats::messages_key(root).and_then(|k| root.get(k)),
        false => Some(root),
    }
}

/// Writes the output messages as a JSON array in `w`: kept ones as their input
/// bytes, with the input's own separators when `spaced`.
fn messages<'p>(
    w: &mut Writer,
    parsed: &Parsed,
    opened: &Opened<'_, 'p, TapeNode<'p>>,
    output: &[OutputMessage],
    spaced: bool,
) {
    let items = &opened.doc.messages;
    let input = parsed.input();
    let span = |i: usize| items.get(i).and_then(|m| parsed.span(*m));
    // "[\n  ", ",\n  ", "\n]" as the input has them
    let (mut open, mut comma, mut close) = ("[", ",", "]");
    if spaced {
        if let (Some((a0, a1)), Some((f0, _)), Some((_, l1))) = (
            message_array(opened).and_then(|a| parsed.span(a)),
            span(0),
            span(items.len().saturating_sub(1)),
        ) {
            open = input.get(a0..f0).unwrap_or("[");
            close = input.get(l1..a1).unwrap_or("]");
        }
        if let (Some((_, e0)), Some((s1, _))) = (span(0), span(1)) {
            comma = input.get(e0..s1).unwrap_or(",");
        }
    }
    w.raw(open);
    for (k, o) in output.iter().enumerate() {
        if k > 0 {
            w.raw(comma);
        }
        match o {
            OutputMessage::Kept(i) => match items.get(*i) {
                Some(m) => kept(w, parsed, *m),
                None => w.raw("null"),
            },
            OutputMessage::New(v) => w.value(v),
        }
    }
    w.raw(close);
}

/// The input with its message array replaced by `output`.
fn body<'p>(
    parsed: &Parsed,
    opened: &Opened<'_, 'p, TapeNode<'p>>,
    output: &[OutputMessage],
) -> String {
    let mut w = Writer::restoring(parsed.hidden());
    write_body(&mut w, parsed, opened, output);
    w.finish()
}

/// Writes [`body`] in `w`.
fn write_body<'p>(
    w: &mut Writer,
    parsed: &Parsed,
    opened: &Opened<'_, 'p, TapeNode<'p>>,
    output: &[OutputMessage],
) {
    let input = parsed.input();
    let (a0, a1) = message_array(opened)
        .and_then(|a| parsed.span(a))
        .unwrap_or((0, input.len()));
    w.raw(input.get(..a0).unwrap_or(""));
    messages(w, parsed, opened, output, true);
    w.raw(input.get(a1..).unwrap_or(""));
}

/// `{messages, notice, warnings, summary?, request?}`, as `JSON.stringify` of
/// `compactSync`'s result orders it; the request with its other fields as the
/// input's bytes.
fn result<'p>(
    parsed: &Parsed,
    opened: &Opened<'_, 'p, TapeNode<'p>>,
    planned: &IndexedCompaction,
) -> String {
    let mut w = Writer::restoring(parsed.hidden());
    w.open();
    w.key("messages");
    messages(&mut w, parsed, opened, &planned.output, false);
    w.field("notice", &planned.notice);
    w.field("warnings", &planned.warnings);
    w.field_some("summary", planned.summary.as_ref());
    if opened.doc.is_request {
        w.key("request");
        write_body(&mut w, parsed, opened, &planned.output);
    }
    w.close();
    w.finish()
}

impl WriteJson for Outcome {
    /// `{meter, compaction?}` (the compaction without its plan: the text holds it).
    fn write_json(&self, w: &mut Writer) {
        w.open();
        w.field("meter", &self.meter);
        if let Some(c) = &self.compaction {
            w.key("compaction");
            w.open();
            w.field("notice", &c.notice);
            w.field_some("summary", c.summary.as_ref());
            w.field("warnings", &c.warnings);
            w.close();
        }
        w.close();
    }
}
