//! The value tape comes from the JS layer; whatever it holds, reading it never
//! panics (a panic would kill the wasm instance), and a well-formed tape reads
//! back as the value it encodes.

use chat_compaction::json::Node;
use chat_compaction::tape::{encode, Tape};
use chat_compaction::{compact_planned, options, tokens::Estimator};
use proptest::prelude::*;
use serde_json::json;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn arbitrary_tapes_never_panic(
        words in prop::collection::vec(prop_oneof![0u32..8, 0u32..64, any::<u32>()], 0..64),
        numbers in prop::collection::vec(any::<f64>(), 0..4),
        bytes in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        if let Ok(tape) = Tape::open(&words, &numbers, &bytes) {
            let root = tape.root();
            let _ = root.to_value();
            let _ = root.json_len();
            let _ = root.get("messages");
            let _ = root.items().count();
            let config = options::from_json(&json!({"mode": "recency_preserving"})).unwrap();
            let _ = compact_planned(root, &config, &Estimator::default());
        }
    }

    #[test]
    fn well_formed_tapes_read_back(text in "\\PC{0,40}", n in any::<i32>(), b in any::<bool>()) {
        let v = json!([{"role": "user", "content": text, "n": n, "b": b, "nested": [null, {"k": [1.5]}]}]);
        let tape = encode(&v);
        prop_assert_eq!(tape.open().unwrap().root().to_value(), v);
    }
}
