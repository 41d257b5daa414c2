//! Usage for a response that carries none (some compatible servers omit it, streams may lose the
//! last chunk): estimated from the bytes sent and received, so a budget never counts a real call
//! as free. The received bytes include the JSON envelope, so the estimate errs high.

use serde_json::Value;

use super::types::Usage;

/// Bytes per estimated token (the rule of thumb used for every token estimate in Relay).
pub const BYTES_PER_TOKEN: usize = 4;

/// Whether a provider response body lacks its usage object.
pub fn usage_missing(response: &Value) -> bool {
    response.get("usage").is_none_or(Value::is_null)
}

/// The estimated usage of a call that sent `sent_bytes` and received `received_bytes`.
pub fn from_bytes(sent_bytes: usize, received_bytes: usize) -> Usage {
    Usage {
        prompt_tokens: tokens(sent_bytes),
        completion_tokens: tokens(received_bytes),
        cached_tokens: 0,
        estimated: true,
    }
}

fn tokens(bytes: usize) -> u64 {
    u64::try_from(bytes.div_ceil(BYTES_PER_TOKEN)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn missing_usage_is_estimated_never_zero() {
        assert!(usage_missing(&json!({"choices": []})));
        assert!(usage_missing(&json!({"usage": null})));
        assert!(!usage_missing(&json!({"usage": {"prompt_tokens": 1}})));
        let usage = from_bytes(4001, 8);
        assert_eq!(usage.prompt_tokens, 1001);
        assert_eq!(usage.completion_tokens, 2);
        assert!(usage.estimated);
        assert_eq!(from_bytes(1, 0).total(), 1);
    }
}
