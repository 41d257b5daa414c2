//! One question's score: the expected lines its citations cover (and their files), the facts its
//! answer contains, the tool use the design expects (codegraph used, operations, depth, the
//! search → callers/callees chain, the grep fallback, the history asked), and how it worked (tokens, iterations,
//! the tool sequence, qname errors and their refinements).

use serde::Serialize;

use super::Question;
use crate::explore::ExploreReport;
use crate::explore::observe::tool_label;
use crate::toolbox::ToolCallRecord;
use relay_codegraph::ops::MAX_SEARCH_RESULTS;
use relay_tools::ToolName;

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
    /// Tool-use checks the question sets ([`super::ExpectedTools`]), and those met.
    pub tool_checks: usize,
    pub tool_checks_hit: usize,
    /// The checks missed (`codegraph`, `operation callers`, `depth 2`, `chain`, `grep fallback`,
    /// `history`).
    pub tool_checks_missed: Vec<String>,
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
    /// A `codegraph search` followed by `callers` or `callees` (the design's basic chain).
    pub chained_search_then_calls: bool,
    /// The git history asked (the `history` tool called).
    pub used_history: bool,
    /// The deepest `depth` a `callers`/`callees` call asked (0: none).
    pub max_depth: u8,
    /// Codegraph calls whose qname the graph did not know.
    pub qname_errors: usize,
    /// Of those, how many were followed by a successful call of the same operation (the model
    /// refined the qname, by `search`/`resolve` or the suggestions).
    pub qname_refinements: usize,
    /// `codegraph search` answers that found more symbols than one answer shows
    /// ([`MAX_SEARCH_RESULTS`]: "Found 37 symbols matching …").
    pub search_truncations: usize,
    /// Of those, how many a later, narrower search refined (it found fewer symbols, at least one).
    /// An unrefined truncation is a missed tool check, as in the design's test setup.
    pub search_refinements: usize,
}

/// What a run produced, whoever ran it: an explore's report, or a planning cycle and its explores.
#[derive(Debug, Clone, Copy)]
pub struct ScoredRun<'a> {
    /// The text the user reads (an explore's answer; the accepted actions' texts).
    pub answer: &'a str,
    /// The verified citations it gives.
    pub evidence: &'a [relay_core::Citation],
    /// Every tool call, in order.
    pub tool_calls: &'a [ToolCallRecord],
    pub iterations: u32,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// How it ended (`submitted`, `time_limit`, `accepted`, `stopped`, …).
    pub stop: &'a str,
}

/// Scores `report` against `question`.
pub fn score(question: &Question, report: &ExploreReport) -> QuestionScore {
    score_run(
        question,
        &ScoredRun {
            answer: &report.answer,
            evidence: &report.evidence,
            tool_calls: &report.tool_calls,
            iterations: report.iterations,
            tokens_in: report.tokens_in,
            tokens_out: report.tokens_out,
            stop: report.stop.as_str(),
        },
    )
}

/// Scores one run against `question`.
pub fn score_run(question: &Question, report: &ScoredRun<'_>) -> QuestionScore {
    let mut files: Vec<&str> = question
        .cite
        .iter()
        .map(|c| c.path.as_str())
        .chain(question.files.iter().map(String::as_str))
        .collect();
    files.sort_unstable();
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
    let tools = tool_use(report.tool_calls);
    let checks = tool_checks(&question.tools, &tools);
    let tool_checks_hit = checks.iter().filter(|(_, hit)| *hit).count();
    let tool_checks_missed: Vec<String> = checks
        .iter()
        .filter(|(_, hit)| !hit)
        .map(|(name, _)| name.clone())
        .collect();
    let rates: Vec<f64> = [
        (files_hit, files.len()),
        (lines_hit, question.cite.len()),
        (facts_hit, question.facts.len()),
        (tool_checks_hit, checks.len()),
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
        tool_checks: checks.len(),
        tool_checks_hit,
        tool_checks_missed,
        facts_missed,
        iterations: report.iterations,
        tokens_in: report.tokens_in,
        tokens_out: report.tokens_out,
        stop: report.stop.to_owned(),
        tools,
    }
}

/// Each expectation the question sets, named, with whether the run met it.
fn tool_checks(expected: &super::ExpectedTools, used: &ToolUse) -> Vec<(String, bool)> {
    let mut checks = Vec::new();
    if let Some(codegraph) = expected.codegraph {
        let name = if codegraph {
            ToolName::Codegraph.as_str()
        } else {
            "no codegraph"
        };
        checks.push((name.to_owned(), used.used_codegraph == codegraph));
    }
    for operation in &expected.operations {
        let label = format!("codegraph {operation}");
        checks.push((
            format!("operation {operation}"),
            used.sequence.contains(&label),
        ));
    }
    if let Some(depth) = expected.depth {
        checks.push((format!("depth {depth}"), used.max_depth >= depth));
    }
    if let Some(chain) = expected.chain {
        checks.push(("chain".to_owned(), used.chained_search_then_calls == chain));
    }
    if let Some(fallback) = expected.grep_fallback {
        checks.push((
            "grep fallback".to_owned(),
            used.fell_back_to_grep == fallback,
        ));
    }
    if let Some(history) = expected.history {
        let name = if history {
            ToolName::History.as_str()
        } else {
            "no history"
        };
        checks.push((name.to_owned(), used.used_history == history));
    }
    // Whatever the question expects, a search cut short and never narrowed is a miss.
    for truncation in 0..used.search_truncations {
        checks.push((
            "refined search".to_owned(),
            truncation < used.search_refinements,
        ));
    }
    checks
}

/// The symbol count a `codegraph search` answer reports ("Found 37 symbols matching …").
fn search_total(call: &ToolCallRecord) -> Option<usize> {
    let rest = call.result_head.trim_start().strip_prefix("Found ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// How many searches were cut short (more symbols than one answer shows), and how many of those
/// a later search narrowed (fewer symbols found, at least one).
fn search_refinement(calls: &[ToolCallRecord], sequence: &[String]) -> (usize, usize) {
    let totals: Vec<Option<usize>> = calls
        .iter()
        .zip(sequence)
        .map(|(call, label)| {
            (label == "codegraph search" && call.is_ok())
                .then(|| search_total(call))
                .flatten()
        })
        .collect();
    let mut truncations = 0;
    let mut refinements = 0;
    for (at, total) in totals.iter().enumerate() {
        let Some(total) = *total else { continue };
        if total <= MAX_SEARCH_RESULTS {
            continue;
        }
        truncations += 1;
        if totals[at + 1..]
            .iter()
            .flatten()
            .any(|later| (1..total).contains(later))
        {
            refinements += 1;
        }
    }
    (truncations, refinements)
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
        call.tool == ToolName::Codegraph
            && (!call.is_ok() || call.result_tokens == 0 || found_nothing(call))
    };
    let fell_back_to_grep = calls
        .iter()
        .position(missed_graph)
        .is_some_and(|at| calls[at..].iter().any(|c| c.tool == ToolName::Grep));
    let searched = sequence.iter().position(|s| s == "codegraph search");
    let chained_search_then_calls = searched.is_some_and(|at| {
        sequence[at..]
            .iter()
            .any(|s| s == "codegraph callers" || s == "codegraph callees")
    });
    let arguments = |call: &ToolCallRecord| {
        serde_json::from_str::<serde_json::Value>(&call.arguments).unwrap_or_default()
    };
    let max_depth = calls
        .iter()
        .zip(&sequence)
        .filter(|(_, label)| *label == "codegraph callers" || *label == "codegraph callees")
        .map(|(call, _)| arguments(call)["depth"].as_u64().unwrap_or(1).clamp(1, 3) as u8)
        .max()
        .unwrap_or(0);
    let unknown = |call: &ToolCallRecord| {
        call.tool == ToolName::Codegraph && call.result_head.trim_start().starts_with("Symbol \"")
    };
    let mut qname_errors = 0;
    let mut qname_refinements = 0;
    for (at, call) in calls.iter().enumerate() {
        if !unknown(call) {
            continue;
        }
        qname_errors += 1;
        let operation = &sequence[at];
        if calls[at + 1..]
            .iter()
            .zip(&sequence[at + 1..])
            .any(|(later, label)| label == operation && later.is_ok() && !found_nothing(later))
        {
            qname_refinements += 1;
        }
    }
    let (search_truncations, search_refinements) = search_refinement(calls, &sequence);
    ToolUse {
        used_codegraph: calls.iter().any(|c| c.tool == ToolName::Codegraph),
        used_history: calls.iter().any(|c| c.tool == ToolName::History),
        chained_search_callers_callees: next.is_none(),
        fell_back_to_grep,
        chained_search_then_calls,
        max_depth,
        qname_errors,
        qname_refinements,
        search_truncations,
        search_refinements,
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
