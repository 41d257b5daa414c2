//! Turning a verified body into JSON that Postgres can store.
//!
//! Postgres rejects U+0000 twice over: `\u0000` inside `jsonb` ("unsupported Unicode escape
//! sequence") and a NUL byte inside `text`. A correctly signed delivery whose issue body or comment
//! contains one would fail on every redelivery, and GitLab disables a webhook after a few failures in
//! a row, so one such comment could cut Relay off a whole project. Intake therefore replaces every
//! NUL in strings (values and keys) with U+FFFD before anything is parsed or stored: the stored
//! payload, the issue and the note all see the same replaced text.
//!
//! The raw body is not kept. The replacement is the only change, nothing downstream can tell a NUL
//! from U+FFFD apart in a meaningful way (both are "a character that should not be there"), and a
//! second, lossless copy of every body would add a column's worth of heap and WAL to every delivery
//! on the intake path, whose throughput is bounded by Postgres' work per delivery.

use serde_json::{Map, Value};

/// What a NUL becomes: the Unicode replacement character, which says "something was here".
pub const NUL_REPLACEMENT: char = '\u{FFFD}';

/// The JSON escape a raw NUL byte is rewritten to before a second parse (see [`parse`]).
const NUL_ESCAPE: &[u8] = b"\\u0000";

/// Parses a webhook body and replaces every NUL in its strings with [`NUL_REPLACEMENT`].
///
/// JSON forbids raw control characters inside strings, but a raw NUL byte inside a string is
/// unambiguous, so a body that fails to parse and contains one is parsed a second time with each
/// raw NUL written as the `\u0000` escape. A raw NUL outside a string stays invalid JSON (400).
pub fn parse(body: &[u8]) -> Result<Value, serde_json::Error> {
    let mut value = match serde_json::from_slice::<Value>(body) {
        Ok(value) => value,
        Err(error) => {
            if !body.contains(&0) {
                return Err(error);
            }
            serde_json::from_slice(&escape_raw_nuls(body)).map_err(|_| error)?
        }
    };
    replace_nuls(&mut value);
    Ok(value)
}

fn escape_raw_nuls(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + NUL_ESCAPE.len());
    for &byte in body {
        if byte == 0 {
            out.extend_from_slice(NUL_ESCAPE);
        } else {
            out.push(byte);
        }
    }
    out
}

/// Replaces NUL with [`NUL_REPLACEMENT`] in every string and object key of `value`. Returns how
/// many strings or keys changed.
pub fn replace_nuls(value: &mut Value) -> usize {
    match value {
        Value::String(text) => usize::from(replace_in(text)),
        Value::Array(items) => items.iter_mut().map(replace_nuls).sum(),
        Value::Object(map) => {
            let mut changed: usize = map.values_mut().map(replace_nuls).sum();
            if map.keys().any(|key| key.contains('\0')) {
                // Keys cannot be changed in place; rebuild the map (rare: only hostile payloads).
                let old = std::mem::take(map);
                let mut rebuilt = Map::with_capacity(old.len());
                for (mut key, item) in old {
                    changed += usize::from(replace_in(&mut key));
                    rebuilt.insert(key, item);
                }
                *map = rebuilt;
            }
            changed
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

fn replace_in(text: &mut String) -> bool {
    if !text.contains('\0') {
        return false;
    }
    *text = text.replace('\0', NUL_REPLACEMENT.encode_utf8(&mut [0; 4]));
    true
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn escaped_nuls_are_replaced_in_values_and_keys() {
        let value = parse(br#"{"a\u0000": ["x\u0000y", {"b": "\u0000"}], "n": 1}"#).unwrap();
        assert_eq!(
            value,
            json!({ "a\u{FFFD}": ["x\u{FFFD}y", { "b": "\u{FFFD}" }], "n": 1 })
        );
    }

    #[test]
    fn raw_nul_inside_a_string_is_replaced() {
        let value = parse(b"{\"body\": \"a\0b\"}").unwrap();
        assert_eq!(value, json!({ "body": "a\u{FFFD}b" }));
    }

    #[test]
    fn raw_nul_outside_a_string_is_still_invalid() {
        assert!(parse(b"{\"body\": 1\0}").is_err());
        assert!(parse(b"\0").is_err());
    }

    #[test]
    fn clean_payloads_are_untouched() {
        let mut value = json!({ "body": "fine \u{FFFD} text", "list": [1, true, null] });
        let before = value.clone();
        assert_eq!(replace_nuls(&mut value), 0);
        assert_eq!(value, before);
    }
}
