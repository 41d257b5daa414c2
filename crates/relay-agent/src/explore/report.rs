//! The `submit_report` contract and the citation checks applied to it.

use relay_core::Citation;
use relay_tools::SandboxSet;
use relay_tools::citation::{CitationProblem, verify_in};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::llm::ToolDefinition;

/// Name of the terminating tool.
pub const SUBMIT_REPORT_TOOL: &str = "submit_report";

const SUBMIT_REPORT_DESCRIPTION: &str = "Finish: submit the answer with its evidence. Call it \
once you can answer, or when the budget runs out with what you have. Every claim in `answer` must \
be backed by a citation in `evidence` (path:start_line-end_line of a file you have seen, with an \
optional verbatim `quote`); citations are checked against the code and invalid ones are dropped. \
An answer without evidence must have confidence `low`. List what you could not find in `unanswered`.";

/// How sure the agent is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Verified by reading the code.
    High,
    /// Partly verified.
    Medium,
    /// Guessed or unverified.
    Low,
}

impl Confidence {
    /// Stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::High => "high",
            Self::Medium => "medium",
            Self::Low => "low",
        }
    }
}

/// The arguments of `submit_report` (and the schema of the forced-synthesis reply).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitReport {
    /// The answer to the question, concise, naming files and symbols.
    pub answer: String,
    /// Citations backing the answer: files and line ranges you have read.
    #[serde(default)]
    pub evidence: Vec<Citation>,
    /// `high` (verified by reading the code), `medium` or `low` (unverified).
    pub confidence: Confidence,
    /// Parts of the question you could not answer.
    #[serde(default)]
    pub unanswered: Vec<String>,
}

/// The `submit_report` tool definition.
pub fn submit_report_definition() -> ToolDefinition {
    ToolDefinition::from_schema::<SubmitReport>(SUBMIT_REPORT_TOOL, SUBMIT_REPORT_DESCRIPTION)
}

/// One rejected citation and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedCitation {
    /// The citation as the model sent it.
    pub citation: Citation,
    /// The problem.
    pub problem: CitationProblem,
}

/// A report after the citation checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedReport {
    /// The report with only verified citations (normalised) and the confidence rule applied.
    pub report: SubmitReport,
    /// The citations that failed.
    pub rejected: Vec<RejectedCitation>,
}

/// Verifies every citation of `report` against the snapshot (a place `label:path` against that
/// related repository's checkout); drops the invalid ones (and duplicates) and downgrades the
/// confidence to `low` when no citation is left.
pub fn check(sandboxes: &SandboxSet, report: SubmitReport) -> CheckedReport {
    let mut evidence: Vec<Citation> = Vec::new();
    let mut rejected = Vec::new();
    for citation in report.evidence {
        match verify_in(sandboxes, &citation) {
            Ok(verified) => {
                if !evidence.contains(&verified.citation) {
                    evidence.push(verified.citation);
                }
            }
            Err(problem) => rejected.push(RejectedCitation { citation, problem }),
        }
    }
    let confidence = if evidence.is_empty() {
        Confidence::Low
    } else {
        report.confidence
    };
    CheckedReport {
        report: SubmitReport {
            answer: report.answer,
            evidence,
            confidence,
            unanswered: report.unanswered,
        },
        rejected,
    }
}

/// What the agent is told (once) about rejected citations.
pub fn rejection_feedback(rejected: &[RejectedCitation]) -> String {
    let mut text = format!(
        "{} of your citations failed verification and would be dropped:\n",
        rejected.len()
    );
    for item in rejected {
        text.push_str(&format!("- {}\n", item.problem));
    }
    text.push_str(
        "Fix them (read the file to get the right lines and quote) or remove them, then call \
         submit_report again. This is the only warning: next time invalid citations are dropped.",
    );
    text
}

/// Finds a `submit_report`-shaped JSON object in free text (models that answer in text instead
/// of calling the tool, or wrap the JSON in a code fence or a `{"name":…,"arguments":…}` object).
pub fn report_in_text(text: &str) -> Option<SubmitReport> {
    for candidate in json_objects(text) {
        if let Ok(report) = serde_json::from_value::<SubmitReport>(candidate.clone()) {
            return Some(report);
        }
        let nested = candidate
            .get("arguments")
            .or_else(|| candidate.get("parameters"))
            .or_else(|| candidate.get("input"));
        if let Some(nested) = nested {
            let nested = match nested {
                serde_json::Value::String(text) => serde_json::from_str(text).ok(),
                other => Some(other.clone()),
            };
            if let Some(report) = nested.and_then(|v| serde_json::from_value(v).ok()) {
                return Some(report);
            }
        }
    }
    None
}

/// Tool calls written as JSON text (`{"name": "grep", "arguments": {...}}`, also with
/// `parameters`/`input`, or arguments as a JSON string) for tools in `known`. Small local models
/// often do this instead of a real tool call; running them beats ignoring them.
pub fn tool_calls_in_text(text: &str, known: &[&str]) -> Vec<crate::llm::ToolCall> {
    json_objects(text)
        .into_iter()
        .filter_map(|candidate| {
            let name = candidate.get("name")?.as_str()?;
            if !known.contains(&name) {
                return None;
            }
            let arguments = candidate
                .get("arguments")
                .or_else(|| candidate.get("parameters"))
                .or_else(|| candidate.get("input"))
                .cloned()
                .unwrap_or_else(|| serde_json::json!({}));
            let arguments = match arguments {
                serde_json::Value::String(text) => text,
                other => other.to_string(),
            };
            Some((name.to_owned(), arguments))
        })
        .enumerate()
        .map(|(index, (name, arguments))| crate::llm::ToolCall {
            id: format!("text_call_{index}"),
            name,
            arguments,
        })
        .collect()
}

/// Every top-level JSON object embedded in `text`, in order.
fn json_objects(text: &str) -> Vec<serde_json::Value> {
    let mut found = Vec::new();
    let mut start = 0;
    while let Some(offset) = text[start..].find('{') {
        let begin = start + offset;
        let mut stream =
            serde_json::Deserializer::from_str(&text[begin..]).into_iter::<serde_json::Value>();
        match stream.next() {
            Some(Ok(value)) => {
                start = begin + stream.byte_offset();
                if value.is_object() {
                    found.push(value);
                }
            }
            _ => start = begin + 1,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_found_in_text_and_fences() {
        let plain =
            r#"Here: {"answer": "a", "evidence": [], "confidence": "low", "unanswered": []}"#;
        assert_eq!(report_in_text(plain).unwrap().answer, "a");
        let fenced = "```json\n{\"name\": \"submit_report\", \"arguments\": {\"answer\": \"b\", \"confidence\": \"high\"}}\n```";
        assert_eq!(report_in_text(fenced).unwrap().answer, "b");
        let stringly = r#"{"name": "submit_report", "arguments": "{\"answer\": \"c\", \"confidence\": \"medium\"}"}"#;
        assert_eq!(report_in_text(stringly).unwrap().answer, "c");
        assert!(report_in_text("no json { here").is_none());
        assert!(report_in_text(r#"{"pattern": "x"}"#).is_none());
    }

    #[test]
    fn tool_calls_are_found_in_text() {
        let text = r#"I will search. {"name": "grep", "arguments": {"pattern": "Plan"}} then
            {"name": "read", "parameters": "{\"path\": \"a.go\"}"} and {"name": "fly", "arguments": {}}"#;
        let calls = tool_calls_in_text(text, &["grep", "read"]);
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].name.as_str(), calls[0].arguments.as_str()),
            ("grep", r#"{"pattern":"Plan"}"#)
        );
        assert_eq!(
            (calls[1].name.as_str(), calls[1].arguments.as_str()),
            ("read", r#"{"path": "a.go"}"#)
        );
        assert_ne!(calls[0].id, calls[1].id);
    }
}
