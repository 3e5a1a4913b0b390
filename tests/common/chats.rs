//! Small synthetic chats the integration tests build their cases on.
#![allow(dead_code)]

use serde_json::{json, Value};

/// A system prompt and `rounds` user/assistant turns of about 200 words each
/// (`q0 …`, `a0 …`): long enough that a few thousand tokens hold only part.
pub fn long_turns(rounds: usize) -> Vec<Value> {
    let mut h = vec![json!({"role": "system", "content": "sys"})];
    for k in 0..rounds {
        h.push(json!({"role": "user", "content": format!("q{k} {}", "word ".repeat(200))}));
        h.push(json!({"role": "assistant", "content": format!("a{k} {}", "word ".repeat(200))}));
    }
    h
}
