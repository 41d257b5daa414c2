//! Loop detection: the same call (tool + normalised arguments) three times, or the same result
//! three times in a row. The first detection earns a nudge naming the repetition; the next one
//! ends the loop.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde_json::Value;

/// Repetitions that count as a loop.
pub(super) const LOOP_REPEATS: u32 = 3;

/// What the guard says after a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Carry on.
    Fine,
    /// First detection: tell the model what it repeats.
    Nudge(String),
    /// Detected again after the nudge: stop.
    Stop,
}

#[derive(Default)]
pub(super) struct LoopGuard {
    calls: HashMap<String, u32>,
    last_result: Option<u64>,
    result_streak: u32,
    nudged: bool,
}

impl LoopGuard {
    /// Observes the calls of one turn and their results, in order.
    pub(super) fn observe<'a>(
        &mut self,
        turn: impl IntoIterator<Item = (&'a str, &'a str, &'a str)>,
    ) -> Verdict {
        let mut repeated: Vec<String> = Vec::new();
        for (tool, arguments, result) in turn {
            let key = format!("{tool} {}", normalise(arguments));
            let count = self.calls.entry(key.clone()).or_insert(0);
            *count += 1;
            if *count >= LOOP_REPEATS {
                repeated.push(format!("the call `{key}` ({count} times)"));
            }
            let mut hasher = DefaultHasher::new();
            result.hash(&mut hasher);
            let hash = hasher.finish();
            if self.last_result == Some(hash) {
                self.result_streak += 1;
            } else {
                self.last_result = Some(hash);
                self.result_streak = 1;
            }
            if self.result_streak >= LOOP_REPEATS {
                repeated.push(format!(
                    "the same result {} times in a row (last from `{key}`)",
                    self.result_streak
                ));
            }
        }
        if repeated.is_empty() {
            Verdict::Fine
        } else if self.nudged {
            Verdict::Stop
        } else {
            self.nudged = true;
            Verdict::Nudge(format!(
                "You are repeating yourself: {}. Repeating it will not give new information. \
                 Try a different approach (another tool, another pattern or file), or call \
                 submit_report with what you have. Repeating again ends the exploration.",
                repeated.join("; ")
            ))
        }
    }
}

/// Arguments with sorted keys, trimmed strings and no whitespace, so `{"a": 1, "b":"x "}` and
/// `{"b":"x","a":1}` are the same call; text that is not JSON is only trimmed.
fn normalise(arguments: &str) -> String {
    match serde_json::from_str::<Value>(arguments) {
        Ok(value) => canonical(&value),
        Err(_) => arguments.trim().to_owned(),
    }
}

fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .filter(|key| !map[*key].is_null())
                .map(|key| format!("{key:?}:{}", canonical(&map[key])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        Value::String(text) => format!("{:?}", text.trim()),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_call_three_times_nudges_then_stops() {
        let mut guard = LoopGuard::default();
        let call = r#"{"pattern": "Plan"}"#;
        let other = r#"{ "pattern":"Plan " }"#;
        assert_eq!(guard.observe([("grep", call, "a")]), Verdict::Fine);
        assert_eq!(guard.observe([("grep", other, "b")]), Verdict::Fine);
        assert!(
            matches!(guard.observe([("grep", call, "c")]), Verdict::Nudge(text) if text.contains("grep"))
        );
        assert_eq!(guard.observe([("grep", call, "d")]), Verdict::Stop);
    }

    #[test]
    fn same_result_three_times_in_a_row() {
        let mut guard = LoopGuard::default();
        assert_eq!(
            guard.observe([("read", r#"{"path":"a"}"#, "x")]),
            Verdict::Fine
        );
        assert_eq!(
            guard.observe([("read", r#"{"path":"b"}"#, "x")]),
            Verdict::Fine
        );
        assert!(matches!(
            guard.observe([("read", r#"{"path":"c"}"#, "x")]),
            Verdict::Nudge(text) if text.contains("same result 3 times")
        ));
    }

    #[test]
    fn different_calls_are_fine() {
        let mut guard = LoopGuard::default();
        for index in 0..20 {
            let arguments = format!(r#"{{"path":"f{index}"}}"#);
            let result = format!("r{index}");
            assert_eq!(
                guard.observe([("read", arguments.as_str(), result.as_str())]),
                Verdict::Fine
            );
        }
    }
}
