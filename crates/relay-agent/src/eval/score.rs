//! One question's score: the expected lines its citations cover (and their files), the facts its
//! answer contains, and how it worked (tokens, iterations, the tool sequence).

use serde::Serialize;

use super::Question;
use crate::explore::ExploreReport;
use crate::explore::observe::tool_label;
use crate::toolbox::{CODEGRAPH_TOOL, ToolCallRecord};

/// How one question went.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionScore {
    pub id: String,
    /// Mean of the file, line and fact hit rates that the question expects (0 to 1).
    pub score: f64,
    pub files_expected: usize,
    /// Expected files some citation names.
    pub files_hit: usize,
    pub lines_expected: usize,
    /// Expected lines some citation covers.
    pub lines_hit: usize,
    pub facts_expected: usize,
    pub facts_hit: usize,
    /// Facts the answer lacks.
    pub facts_missed: Vec<String>,
    pub iterations: u32,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// The explore's ending (`submitted`, `time_limit`, …).
    pub stop: String,
    pub tools: ToolUse,
}

/// The tool sequence and what it shows of the explorer's habits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolUse {
    /// Each call as `tool` or `codegraph <operation>`, in order.
    pub sequence: Vec<String>,
    pub used_codegraph: bool,
    /// A `codegraph search`, then `callers`, then `callees` (in that order, others between).
    pub chained_search_callers_callees: bool,
    /// `grep` after a `codegraph` call that failed or found nothing (a language the graph does
    /// not index, a store that went away): the fallback the prompt asks for.
    pub fell_back_to_grep: bool,
}

/// Scores `report` against `question`.
pub fn score(question: &Question, report: &ExploreReport) -> QuestionScore {
    let mut files: Vec<&str> = question.cite.iter().map(|c| c.path.as_str()).collect();
    files.dedup();
    let files_hit = files
        .iter()
        .filter(|path| report.evidence.iter().any(|c| c.path == **path))
        .count();
    let lines_hit = question
        .cite
        .iter()
        .filter(|expected| {
            report.evidence.iter().any(|c| {
                c.path == expected.path
                    && c.start_line <= expected.line
                    && expected.line <= c.end_line
            })
        })
        .count();
    let answer = report.answer.to_lowercase();
    let facts_missed: Vec<String> = question
        .facts
        .iter()
        .filter(|fact| !answer.contains(&fact.to_lowercase()))
        .cloned()
        .collect();
    let facts_hit = question.facts.len() - facts_missed.len();
    let rates: Vec<f64> = [
        (files_hit, files.len()),
        (lines_hit, question.cite.len()),
        (facts_hit, question.facts.len()),
    ]
    .into_iter()
    .filter(|(_, expected)| *expected > 0)
    .map(|(hit, expected)| hit as f64 / expected as f64)
    .collect();
    let score = if rates.is_empty() {
        0.0
    } else {
        rates.iter().sum::<f64>() / rates.len() as f64
    };
    QuestionScore {
        id: question.id.clone(),
        score,
        files_expected: files.len(),
        files_hit,
        lines_expected: question.cite.len(),
        lines_hit,
        facts_expected: question.facts.len(),
        facts_hit,
        facts_missed,
        iterations: report.iterations,
        tokens_in: report.tokens_in,
        tokens_out: report.tokens_out,
        stop: report.stop.as_str().to_owned(),
        tools: tool_use(&report.tool_calls),
    }
}

/// What the calls show: the sequence, codegraph use, the search → callers → callees chain and the
/// fallback to grep.
fn tool_use(calls: &[ToolCallRecord]) -> ToolUse {
    let sequence: Vec<String> = calls.iter().map(tool_label).collect();
    let mut chain = ["codegraph search", "codegraph callers", "codegraph callees"].iter();
    let mut next = chain.next();
    for step in &sequence {
        if next.is_some_and(|want| step == want) {
            next = chain.next();
        }
    }
    let missed_graph = |call: &ToolCallRecord| {
        call.tool == CODEGRAPH_TOOL
            && (!call.is_ok() || call.result_tokens == 0 || found_nothing(call))
    };
    let fell_back_to_grep = calls
        .iter()
        .position(missed_graph)
        .is_some_and(|at| calls[at..].iter().any(|c| c.tool == "grep"));
    ToolUse {
        used_codegraph: calls.iter().any(|c| c.tool == CODEGRAPH_TOOL),
        chained_search_callers_callees: next.is_none(),
        fell_back_to_grep,
        sequence,
    }
}

/// A codegraph answer that found nothing (the tool's "No … found", "not available", "not
/// indexed", unknown-symbol answers all start so).
fn found_nothing(call: &ToolCallRecord) -> bool {
    let head = call.result_head.trim_start();
    ["No ", "Codegraph is not available", "Symbol \""]
        .iter()
        .any(|start| head.starts_with(start))
}
