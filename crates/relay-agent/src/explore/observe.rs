//! What explores teach about a repository: a finished explore's successful tool
//! calls, in order, go to an [`ExploreObserver`] (the worker's updates the repository's tool
//! graph), and the strongest sequences seen before come back as a [`ToolHint`] in the prompt.
//!
//! Only explores that produced a report of their own (not Relay's "insufficient evidence"
//! fallback) and made at least one successful call are observed; failed calls are left out.

use std::fmt::Write as _;

use super::{ExploreReport, ReportOrigin};
use crate::toolbox::ToolCallRecord;
use relay_tools::ToolName;

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
    /// The run's own id (unique in the process and across processes).
    pub run_id: String,
    /// What kind of question it answered ([`QueryClass::of`]).
    pub query_class: QueryClass,
    /// `quick`, `medium` or `thorough`.
    pub mode: &'static str,
    /// Wall-clock time of the run.
    pub duration_ms: u64,
}

/// The kind of question an explore answers, from its words: what a hint is chosen by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum QueryClass {
    /// Who calls X, where X is used.
    Callers,
    /// What breaks or changes if X changes.
    Impact,
    /// How data or control goes from A to B.
    Flow,
    /// Where X is defined or implemented.
    Definition,
    /// Why something fails, an error, an edge case.
    Bug,
    /// How the code is laid out, an overview.
    Overview,
    /// Anything else.
    Other,
}

impl QueryClass {
    pub const ALL: [QueryClass; 7] = [
        QueryClass::Callers,
        QueryClass::Impact,
        QueryClass::Flow,
        QueryClass::Definition,
        QueryClass::Bug,
        QueryClass::Overview,
        QueryClass::Other,
    ];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Callers => "callers",
            Self::Impact => "impact",
            Self::Flow => "flow",
            Self::Definition => "definition",
            Self::Bug => "bug",
            Self::Overview => "overview",
            Self::Other => "other",
        }
    }

    /// Parses a stored name.
    pub fn parse(name: &str) -> Option<QueryClass> {
        Self::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// The class of `question`: the first whose words it uses, in the order of [`Self::ALL`]
    /// (lower-cased words; only the first 2,000 characters are read).
    pub fn of(question: &str) -> QueryClass {
        let text: String = question
            .chars()
            .take(2_000)
            .collect::<String>()
            .to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| text.contains(w));
        if has(&[
            "who calls",
            "callers",
            "called from",
            "calls to",
            "where is it called",
            "usages",
            "who uses",
        ]) || (text.contains("where") && text.contains(" used"))
        {
            Self::Callers
        } else if has(&[
            "impact",
            "break",
            "affected",
            "what changes if",
            "refactor",
            "rename",
            "depend on",
        ]) {
            Self::Impact
        } else if has(&[
            "flow",
            "become",
            "end to end",
            "end-to-end",
            "from the webhook",
            "path from",
            "how does a",
            "lifecycle",
            "chain",
        ]) {
            Self::Flow
        } else if has(&[
            "where is",
            "defined",
            "definition",
            "implement",
            "which file",
        ]) {
            Self::Definition
        } else if has(&[
            "bug",
            "error",
            "fail",
            "crash",
            "wrong",
            "why does",
            "edge case",
            "lost",
            "race",
            "slow",
            "hot path",
        ]) {
            Self::Bug
        } else if has(&[
            "overview",
            "architecture",
            "how is",
            "structure",
            "onboard",
            "explain",
            "what does",
        ]) {
            Self::Overview
        } else {
            Self::Other
        }
    }
}

/// Told about every observed explore. Implementations must not fail the explore: they log their
/// own errors.
#[async_trait::async_trait]
pub trait ExploreObserver: Send + Sync + std::fmt::Debug {
    async fn observe(&self, run: &ObservedRun);
}

/// The run to observe from `report`, or `None` when it does not qualify. `question`, `mode` and
/// `duration_ms` describe the run ([`ObservedRun`]).
pub fn observed_run(
    report: &ExploreReport,
    question: &str,
    mode: &'static str,
    duration_ms: u64,
) -> Option<ObservedRun> {
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
    (!calls.is_empty()).then(|| ObservedRun {
        calls,
        grounded: !report.evidence.is_empty(),
        run_id: uuid::Uuid::new_v4().to_string(),
        query_class: QueryClass::of(question),
        mode,
        duration_ms,
    })
}

/// `grep`, `read`, …; `codegraph <operation>` for the code graph (its operations are different
/// moves). The recorded arguments are capped, so a cut-off JSON falls back to a text search.
pub fn tool_label(record: &ToolCallRecord) -> String {
    if record.tool != ToolName::Codegraph {
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
            format!("{} {op}", ToolName::Codegraph)
        }
        _ => ToolName::Codegraph.to_string(),
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
    fn questions_are_classed_by_their_words() {
        for (question, class) in [
            ("Who calls Plan, and with what?", QueryClass::Callers),
            ("Where is ValidateGap used?", QueryClass::Callers),
            (
                "What breaks if I change the gap id format?",
                QueryClass::Impact,
            ),
            ("How does a webhook become a comment?", QueryClass::Flow),
            ("Where is the executor defined?", QueryClass::Definition),
            (
                "Why does the worker crash on an empty body?",
                QueryClass::Bug,
            ),
            ("Give me an overview of the planner", QueryClass::Overview),
            ("hello", QueryClass::Other),
        ] {
            assert_eq!(QueryClass::of(question), class, "{question}");
            assert_eq!(QueryClass::parse(class.as_str()), Some(class));
        }
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
