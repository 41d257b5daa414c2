//! Idempotency keys and the hidden marker every tracker write carries.
//!
//! A key is derived only from (issue, job, planner cycle, action index, part): replaying the same
//! batch of the same job maps to the same keys, so the outbox's unique key turns the replay into a
//! no-op and the tracker lookup finds what an interrupted attempt already posted.

use crate::execute::BatchId;

/// The marker prefix. The validator refuses planner content containing it, so a model cannot
/// pre-empt (and so suppress) a later write by posting its marker.
pub const MARKER_PREFIX: &str = "<!-- relay:write:";

/// The key of part `part` of action `action_index` of a batch.
pub fn action_key(issue_id: i64, batch: BatchId, action_index: usize, part: usize) -> String {
    format!(
        "i{issue_id}-j{}-c{}-a{action_index}-p{part}",
        batch.job_id, batch.cycle
    )
}

/// The key of part `part` of spec version `version`.
pub fn spec_key(issue_id: i64, batch: BatchId, version: i32, part: usize) -> String {
    format!(
        "i{issue_id}-j{}-c{}-spec{version}-p{part}",
        batch.job_id, batch.cycle
    )
}

/// `<!-- relay:write:KEY -->`.
pub fn marker(key: &str) -> String {
    format!("{MARKER_PREFIX}{key} -->")
}

/// The body as sent: the content, a blank line, the marker (invisible in rendered Markdown).
pub fn with_marker(body: &str, key: &str) -> String {
    format!("{body}\n\n{}", marker(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_deterministic_and_distinct() {
        let batch = BatchId {
            job_id: 7,
            cycle: 1,
        };
        assert_eq!(action_key(3, batch, 2, 0), "i3-j7-c1-a2-p0");
        assert_eq!(action_key(3, batch, 2, 0), action_key(3, batch, 2, 0));
        assert_ne!(action_key(3, batch, 2, 0), action_key(3, batch, 2, 1));
        assert_ne!(
            action_key(3, batch, 2, 0),
            action_key(
                3,
                BatchId {
                    job_id: 7,
                    cycle: 2
                },
                2,
                0
            )
        );
        assert_eq!(spec_key(3, batch, 2, 1), "i3-j7-c1-spec2-p1");
        assert_eq!(with_marker("hi", "k"), "hi\n\n<!-- relay:write:k -->");
    }
}
