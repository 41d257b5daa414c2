//! The explorer's evaluation harness (`relay eval`): a suite of questions about one repository,
//! each run through the [`ExploreAgent`] (quick, medium or thorough mode, per question) and scored
//! on what it cited, what its answer says and how it got there. This is how a team compares
//! models for Relay: the same suite, one run per configured model.
//!
//! A suite is TOML (parsed by the caller; the types here are plain serde):
//!
//! ```toml
//! [[question]]
//! id = "callers"
//! question = "Which functions call clamp_depth?"
//! mode = "quick"                     # quick | medium | thorough
//! facts = ["query.rs"]               # case-insensitive substrings of the answer
//! [[question.cite]]                  # a citation must cover this line of this file
//! path = "crates/relay-codegraph/src/ops/query.rs"
//! line = 201
//! contains = "clamp_depth("          # the line's text: the suite's own rot check
//! files = ["crates/relay-codegraph/src/ops/query.rs"]   # files a citation should name (no line)
//! [question.tools]                   # how the design expects the code graph to be used
//! codegraph = true                   # codegraph used (false: grep is the right tool)
//! operations = ["search", "callers"] # codegraph operations that should appear
//! depth = 2                          # callers/callees followed at least this deep
//! chain = true                       # a search, then callers or callees
//! grep_fallback = false              # grep after a codegraph answer that found nothing
//! history = true                     # the git history asked (why / since when questions)
//! [question.issue]                   # optional: start from a tracker issue (planner level)
//! title = "Claiming a job twice"      # the planner's context file (`relay plan --issue`)
//! body = "Two workers ran the same job. Where is a job claimed?"
//! ```
//!
//! A question with an `issue` is asked the way Relay is asked: the planner reads the issue,
//! explores and submits actions ([`PlannerEval`]); `question` then only describes it.

mod planner;
mod score;

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::context::IssueContext;
use crate::explore::{ExploreAgent, ExploreRequest, Thoroughness};

pub use planner::{PlannerEval, ValidatorFor};
pub use score::{QuestionScore, ScoredRun, ToolUse, score, score_run};

/// The suites shipped in `eval/`, relative to the repository root: each one's `cite` lines are
/// checked against the tree it names (`relay.toml`: this repository; `go-fixture.toml`:
/// `eval/fixtures/relaygo`).
pub const SHIPPED_SUITES: [(&str, &str); 2] = [
    ("eval/relay.toml", "."),
    ("eval/go-fixture.toml", "eval/fixtures/relaygo"),
];

/// A suite of questions about one repository.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    #[serde(rename = "question")]
    pub questions: Vec<Question>,
}

/// One question and what a good answer holds.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// A short stable name (`callers`, `kind-filter`, …).
    pub id: String,
    pub question: String,
    #[serde(default)]
    pub mode: Thoroughness,
    /// Lines a citation of the answer should cover.
    #[serde(default)]
    pub cite: Vec<ExpectedLine>,
    /// Texts the answer should contain (case-insensitive).
    #[serde(default)]
    pub facts: Vec<String>,
    /// Files a citation should name, any line (suites over code whose lines move between
    /// versions, such as a standard library).
    #[serde(default)]
    pub files: Vec<String>,
    /// How the tools should be used; unset keys are not scored.
    #[serde(default)]
    pub tools: ExpectedTools,
    /// Why the question is in the suite (the design's test issue or scenario it stands for).
    #[serde(default)]
    pub scenario: Option<String>,
    /// The tracker issue a planner-level question starts from (title, body, thread, …: the
    /// context file of `relay plan`).
    #[serde(default)]
    pub issue: Option<IssueContext>,
}

/// The tool use a question expects (each set key is one check, scored 1 or 0).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedTools {
    /// Whether the code graph should be used at all.
    #[serde(default)]
    pub codegraph: Option<bool>,
    /// Codegraph operations that should each appear (`search`, `callers`, …).
    #[serde(default)]
    pub operations: Vec<String>,
    /// The deepest `callers`/`callees` call should ask at least this `depth`.
    #[serde(default)]
    pub depth: Option<u8>,
    /// A `codegraph search` followed (later) by `callers` or `callees`.
    #[serde(default)]
    pub chain: Option<bool>,
    /// grep after a codegraph answer that found nothing.
    #[serde(default)]
    pub grep_fallback: Option<bool>,
    /// The `history` tool used ("why is this like this?", "since when?").
    #[serde(default)]
    pub history: Option<bool>,
}

/// A line of a file that a citation should cover; `contains` is the line's text, checked against
/// the tree by the suite's rot test so that the expectation moves with the code.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedLine {
    pub path: String,
    pub line: u32,
    pub contains: String,
}

/// A suite's run: one score per question, in suite order, and the totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    pub questions: Vec<QuestionScore>,
    /// Mean of the questions' scores (0 to 1).
    pub score: f64,
    /// Mean tool-use rate over the questions that expect any tool use (0 to 1).
    pub tool_score: f64,
    pub tokens_in: u64,
    pub tokens_out: u64,
}

/// Runs every question of `suite` with `agent`, one after the other (their token counts stay
/// apart). A question whose LLM call fails ends `llm_error: <kind>`, scored 0, and the suite goes
/// on. Errors when every question failed so (the LLM cannot be used at all), or when a question
/// starts from an issue (planner level: [`run_suite_with_planner`]).
pub async fn run_suite(agent: &ExploreAgent, suite: &Suite) -> Result<EvalReport, Error> {
    run_suite_with_planner(agent, suite, None).await
}

/// [`run_suite`], with the planner that planner-level questions (those with an `issue`) need.
pub async fn run_suite_with_planner(
    agent: &ExploreAgent,
    suite: &Suite,
    planner: Option<&PlannerEval>,
) -> Result<EvalReport, Error> {
    let mut questions = Vec::with_capacity(suite.questions.len());
    let mut last_failure = None;
    for question in &suite.questions {
        let scored = match (&question.issue, planner) {
            (Some(issue), Some(planner)) => {
                planner::run_issue(agent, planner, question, issue).await
            }
            (Some(_), None) => {
                return Err(Error::PlannerNeeded {
                    question: question.id.clone(),
                });
            }
            (None, _) => {
                match agent
                    .explore(ExploreRequest::new(&question.question, question.mode))
                    .await
                {
                    Ok(report) => score(question, &report),
                    // One question's failed call (a timeout, a server error after the retries) is
                    // that question's ending, counted; the suite goes on.
                    Err(Error::Llm { source }) => {
                        let stop = format!("llm_error: {}", source.kind().as_str());
                        last_failure = Some(source);
                        failed_score(question, &stop)
                    }
                    Err(other) => return Err(other),
                }
            }
        };
        questions.push(scored);
    }
    // Every question failed on the LLM: it cannot be used at all (an address, a key, a model).
    if let Some(source) = last_failure
        && questions.iter().all(|q| q.stop.starts_with("llm_error"))
    {
        return Err(Error::Llm { source });
    }
    Ok(EvalReport::new(questions))
}

/// The score of a question whose LLM call failed: nothing cited, nothing answered.
fn failed_score(question: &Question, stop: &str) -> QuestionScore {
    score_run(
        question,
        &ScoredRun {
            answer: "",
            evidence: &[],
            tool_calls: &[],
            iterations: 0,
            tokens_in: 0,
            tokens_out: 0,
            stop,
        },
    )
}

impl EvalReport {
    /// The report of scored questions.
    pub fn new(questions: Vec<QuestionScore>) -> EvalReport {
        let score = if questions.is_empty() {
            0.0
        } else {
            questions.iter().map(|q| q.score).sum::<f64>() / questions.len() as f64
        };
        let tooled: Vec<f64> = questions
            .iter()
            .filter(|q| q.tool_checks > 0)
            .map(|q| q.tool_checks_hit as f64 / q.tool_checks as f64)
            .collect();
        let tool_score = if tooled.is_empty() {
            0.0
        } else {
            tooled.iter().sum::<f64>() / tooled.len() as f64
        };
        EvalReport {
            score,
            tool_score,
            tokens_in: questions.iter().map(|q| q.tokens_in).sum(),
            tokens_out: questions.iter().map(|q| q.tokens_out).sum(),
            questions,
        }
    }

    /// A table for a terminal: one line per question, then the totals.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::from(
            "question             score  cited   lines   facts   tools   iter  tokens in/out  sequence\n",
        );
        for q in &self.questions {
            let _ = writeln!(
                out,
                "{:<20} {:>5.2}  {:>6}  {:>6}  {:>6}  {:>6}  {:>4}  {:>13}  {}",
                q.id,
                q.score,
                ratio(q.files_hit, q.files_expected),
                ratio(q.lines_hit, q.lines_expected),
                ratio(q.facts_hit, q.facts_expected),
                ratio(q.tool_checks_hit, q.tool_checks),
                q.iterations,
                format!("{}/{}", q.tokens_in, q.tokens_out),
                q.tools.sequence.join(" → "),
            );
            let mut notes = Vec::new();
            if q.tools.used_codegraph {
                notes.push("used codegraph");
            }
            if q.tools.used_history {
                notes.push("asked the history");
            }
            if q.tools.chained_search_callers_callees {
                notes.push("chained search → callers → callees");
            }
            if q.tools.fell_back_to_grep {
                notes.push("fell back to grep");
            }
            let depth = format!("depth {}", q.tools.max_depth);
            if q.tools.max_depth > 0 {
                notes.push(&depth);
            }
            let qname = format!(
                "{} qname errors, {} refined",
                q.tools.qname_errors, q.tools.qname_refinements
            );
            if q.tools.qname_errors > 0 {
                notes.push(&qname);
            }
            let searches = format!(
                "{} searches cut short, {} refined",
                q.tools.search_truncations, q.tools.search_refinements
            );
            if q.tools.search_truncations > 0 {
                notes.push(&searches);
            }
            let missed = format!("tool checks missed: {}", q.tool_checks_missed.join(", "));
            if !q.tool_checks_missed.is_empty() {
                notes.push(&missed);
            }
            if !notes.is_empty() {
                let _ = writeln!(out, "{:<20} {}", "", notes.join("; "));
            }
        }
        let _ = writeln!(
            out,
            "{:<20} {:>5.2}  tool use {:.2}  tokens {}/{}",
            "suite", self.score, self.tool_score, self.tokens_in, self.tokens_out
        );
        out
    }
}

fn ratio(hit: usize, expected: usize) -> String {
    if expected == 0 {
        "-".to_owned()
    } else {
        format!("{hit}/{expected}")
    }
}
