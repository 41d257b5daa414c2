//! What explores teach about a repository: a finished explore's successful tool
//! calls, in order, go to an [`ExploreObserver`] (the worker's updates the repository's tool
//! graph), and the strongest sequences seen before come back as a [`ToolHint`] in the prompt.
//!
//! Only explores that produced a report of their own (not Relay's "insufficient evidence"
//! fallback) and made at least one successful call are observed; failed calls are left out.

use std::fmt::Write as _;

use super::{ExploreReport, ReportOrigin};
use crate::toolbox::ToolCallRecord;

/// Lines of a hint at most.
pub const MAX_HINT_LINES: usize = 3;
/// Characters of one hint line at most.
pub const MAX_HINT_LINE_CHARS: usize = 160;

/// One successful call of an observed explore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedCall {
    /// A normalised label: the tool, and for `codegraph` its operation (`codegraph callers`).
    pub tool: String,
    /// Estimated tokens of the result the model received.
    pub result_tokens: usize,
}

/// What one finished explore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedRun {
    /// Its successful calls, in order.
    pub calls: Vec<ObservedCall>,
    /// Its report kept at least one verified citation.
    pub grounded: bool,
}

/// Told about every observed explore. Implementations must not fail the explore: they log their
/// own errors.
#[async_trait::async_trait]
pub trait ExploreObserver: Send + Sync + std::fmt::Debug {
    async fn observe(&self, run: &ObservedRun);
}

/// The run to observe from `report`, or `None` when it does not qualify.
pub fn observed_run(report: &ExploreReport) -> Option<ObservedRun> {
    if report.origin == ReportOrigin::InsufficientEvidence {
        return None;
    }
    let calls: Vec<ObservedCall> = report
        .tool_calls
        .iter()
        .filter(|record| record.is_ok())
        .map(|record| ObservedCall {
            tool: tool_label(record),
            result_tokens: record.result_tokens,
        })
        .collect();
    (!calls.is_empty()).then_some(ObservedRun {
        calls,
        grounded: !report.evidence.is_empty(),
    })
}

/// `grep`, `read`, …; `codegraph <operation>` for the code graph (its operations are different
/// moves). The recorded arguments are capped, so a cut-off JSON falls back to a text search.
pub fn tool_label(record: &ToolCallRecord) -> String {
    if record.tool != "codegraph" {
        return record.tool.clone();
    }
    let operation = serde_json::from_str::<serde_json::Value>(&record.arguments)
        .ok()
        .and_then(|v| v["operation"].as_str().map(str::to_owned))
        .or_else(|| {
            let (_, rest) = record.arguments.split_once("\"operation\"")?;
            let rest = rest.trim_start().strip_prefix(':')?.trim_start();
            let rest = rest.strip_prefix('"')?;
            rest.split_once('"').map(|(op, _)| op.to_owned())
        });
    match operation {
        Some(op) if !op.is_empty() && op.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
            format!("codegraph {op}")
        }
        _ => "codegraph".to_owned(),
    }
}

/// The strongest tool sequences of this repository, for the explore prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolHint {
    lines: Vec<String>,
}

impl ToolHint {
    /// A hint from at most [`MAX_HINT_LINES`] lines, each cut at [`MAX_HINT_LINE_CHARS`]
    /// characters; `None` when there is nothing to say.
    pub fn new(lines: impl IntoIterator<Item = String>) -> Option<ToolHint> {
        let lines: Vec<String> = lines
            .into_iter()
            .map(|line| line.replace(['\n', '\r'], " "))
            .filter(|line| !line.trim().is_empty())
            .take(MAX_HINT_LINES)
            .map(|line| line.chars().take(MAX_HINT_LINE_CHARS).collect())
            .collect();
        (!lines.is_empty()).then_some(ToolHint { lines })
    }

    /// Its lines.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The section appended to the explore's system prompt.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "\n\n## What worked in this repository before\n\
             Tool sequences that led to grounded answers here (a hint, not a rule; the question \
             decides):\n",
        );
        for line in &self.lines {
            let _ = writeln!(out, "- {line}");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::toolbox::CallStatus;

    fn record(tool: &str, arguments: &str) -> ToolCallRecord {
        ToolCallRecord {
            tool: tool.into(),
            argument_keys: Vec::new(),
            arguments: arguments.into(),
            duration: Duration::ZERO,
            status: CallStatus::Ok,
            result_tokens: 1,
            result_head: String::new(),
        }
    }

    #[test]
    fn codegraph_calls_are_labelled_by_operation() {
        assert_eq!(tool_label(&record("grep", "{}")), "grep");
        assert_eq!(
            tool_label(&record(
                "codegraph",
                r#"{"operation": "callers", "name": "X"}"#
            )),
            "codegraph callers"
        );
        // Cut off by the record's cap: still found.
        assert_eq!(
            tool_label(&record(
                "codegraph",
                r#"{"operation":"search","name":"aaaaaaaa"#
            )),
            "codegraph search"
        );
        assert_eq!(
            tool_label(&record("codegraph", r#"{"operation": "bad op!"}"#)),
            "codegraph"
        );
    }

    #[test]
    fn a_hint_has_at_most_three_short_lines() {
        assert_eq!(ToolHint::new(Vec::new()), None);
        let hint = ToolHint::new((0..5).map(|i| format!("{i}{}", "x".repeat(300)))).unwrap();
        assert_eq!(hint.lines().len(), MAX_HINT_LINES);
        assert!(
            hint.lines()
                .iter()
                .all(|l| l.chars().count() == MAX_HINT_LINE_CHARS)
        );
        let one = ToolHint::new(["grep → read: 4 of 6 runs\nignore all".to_owned()]).unwrap();
        assert_eq!(one.lines(), ["grep → read: 4 of 6 runs ignore all"]);
        assert!(
            one.render()
                .ends_with("- grep → read: 4 of 6 runs ignore all\n")
        );
    }
}
