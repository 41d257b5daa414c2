//! The ExploreAgent: answers one question about a repository at one commit with an answer and
//! verified `path:start-end` citations, inside a bounded tool loop.
//!
//! Invariants:
//! - a fresh context per question: the system prompt ([`SYSTEM_PROMPT`]), the question, then the
//!   loop's own turns — nothing from other explores;
//! - every run ends in an [`ExploreReport`]: the model's `submit_report`, a forced synthesis (one
//!   last call without tools) or an "insufficient evidence" report listing what was tried. Only an
//!   LLM that cannot be used at all (unreachable, key refused) is an [`crate::Error`];
//! - the report holds only citations that passed [`relay_tools::citation::verify_in`]; an answer
//!   without any is at most `low` confidence;
//! - bounded: iterations, this explore's tokens (soft → one nudge, hard → forced synthesis), a
//!   wall-clock limit, loop detection, and observation masking keeps each prompt bounded.
//!
//! Layout: [`report`] (the `submit_report` contract and citation checks), `run` (the loop),
//! `context` (messages and masking), `guard` (loop detection), `budget` (limits by thoroughness),
//! `synthesis` (the forced last answer without tools), [`observe`] (what a finished explore
//! tells the tool-sequence learning, and the hint it gives back).

mod budget;
mod context;
mod guard;
pub mod observe;
pub mod report;
mod run;
mod synthesis;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::Error;
use crate::llm::LlmClient;
use crate::thorough::state::TraversalState;
use crate::toolbox::{ToolCallRecord, Toolbox};
use crate::trace::{TraceKind, Tracer, capped};

pub use budget::{ExploreBudget, Thoroughness};
pub use observe::{ExploreObserver, ObservedCall, ObservedRun, ToolHint};
pub use report::{Confidence, SUBMIT_REPORT_TOOL, SubmitReport};

/// The system prompt (its own file so it can be read and reviewed as prose).
pub const SYSTEM_PROMPT: &str = include_str!("prompt.md");

/// Default wall-clock limit of one explore.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(5 * 60);
/// Default time granted to the forced-synthesis call after the time limit.
pub const DEFAULT_SYNTHESIS_TIME: Duration = Duration::from_secs(60);
/// Default tool calls of one turn run at once.
pub const DEFAULT_MAX_PARALLEL_TOOLS: usize = 4;
/// Default explores run at once by [`ExploreAgent::explore_all`] (the planner's fan-out).
pub const DEFAULT_MAX_PARALLEL_EXPLORES: usize = 4;
/// Default number of recent assistant turns whose tool outputs stay verbatim in the prompt.
pub const DEFAULT_KEEP_TURNS: usize = 6;

/// Settings of the ExploreAgent (the `[agent]` configuration section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExploreConfig {
    /// Budget of a `quick` explore.
    pub quick: ExploreBudget,
    /// Budget of a `medium` explore. (`thorough` runs the multi-stage mode of
    /// [`crate::thorough`], bounded by its own query bounds.)
    pub medium: ExploreBudget,
    /// Wall-clock limit of one explore (`time_limit_secs`).
    #[serde(rename = "time_limit_secs", with = "seconds")]
    pub time_limit: Duration,
    /// Time granted to the forced-synthesis call (`synthesis_secs`).
    #[serde(rename = "synthesis_secs", with = "seconds")]
    pub synthesis_time: Duration,
    /// Tool calls of one turn run at once.
    pub max_parallel_tools: usize,
    /// Explores run at once by [`ExploreAgent::explore_all`].
    pub max_parallel_explores: usize,
    /// Tool outputs of the last this-many assistant turns stay verbatim; older ones are replaced by
    /// a one-line summary. `0` turns masking off (benchmarks only).
    pub keep_turns: usize,
}

impl Default for ExploreConfig {
    fn default() -> Self {
        Self {
            quick: Thoroughness::Quick.default_budget(),
            medium: Thoroughness::Medium.default_budget(),
            time_limit: DEFAULT_TIME_LIMIT,
            synthesis_time: DEFAULT_SYNTHESIS_TIME,
            max_parallel_tools: DEFAULT_MAX_PARALLEL_TOOLS,
            max_parallel_explores: DEFAULT_MAX_PARALLEL_EXPLORES,
            keep_turns: DEFAULT_KEEP_TURNS,
        }
    }
}

impl ExploreConfig {
    /// The wall-clock limit of one thorough query: twice one explore's (`time_limit_secs`).
    pub fn thorough_time_limit(&self) -> Duration {
        self.time_limit.saturating_mul(2)
    }

    /// The budget of one single-loop explore at `thoroughness` (a `thorough` request runs the
    /// multi-stage mode instead; were it run as one loop, it would get twice the medium budget).
    pub fn budget(&self, thoroughness: Thoroughness) -> ExploreBudget {
        match thoroughness {
            Thoroughness::Quick => self.quick,
            Thoroughness::Medium => self.medium,
            Thoroughness::Thorough => self.medium.doubled(),
        }
    }
}

/// Durations in configuration files are seconds.
mod seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(value.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
        let seconds = f64::deserialize(deserializer)?;
        Duration::try_from_secs_f64(seconds).map_err(serde::de::Error::custom)
    }
}

/// One question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExploreRequest {
    /// The question, e.g. "who calls `Planner.Plan`?".
    pub question: String,
    /// How much effort to spend.
    pub thoroughness: Thoroughness,
}

impl ExploreRequest {
    /// A question at `thoroughness`.
    pub fn new(question: impl Into<String>, thoroughness: Thoroughness) -> Self {
        Self {
            question: question.into(),
            thoroughness,
        }
    }
}

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model called `submit_report`.
    Submitted,
    /// This explore's hard token limit.
    TokenLimit,
    /// The iteration cap.
    IterationCap,
    /// The wall-clock limit.
    TimeLimit,
    /// The same call or the same result kept coming back after the nudge.
    LoopDetected,
    /// The model kept replying without a usable tool call (empty replies, text, unknown tools).
    NoProgress,
    /// The job's token budget (shared by all its LLM calls) is spent.
    JobBudget,
    /// The LLM failed mid-run (after retries); the kind is in `llm_error`.
    LlmError,
    /// Thorough mode: every goal is settled (satisfied, blocked or dropped).
    GoalsDone,
    /// Thorough mode: the question cannot be explored before a human answers.
    NeedsClarification,
}

impl StopReason {
    /// Stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Submitted => "submitted",
            Self::TokenLimit => "token_limit",
            Self::IterationCap => "iteration_cap",
            Self::TimeLimit => "time_limit",
            Self::LoopDetected => "loop_detected",
            Self::NoProgress => "no_progress",
            Self::JobBudget => "job_budget",
            Self::LlmError => "llm_error",
            Self::GoalsDone => "goals_done",
            Self::NeedsClarification => "needs_clarification",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the report came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportOrigin {
    /// The model's own `submit_report` in the loop.
    Submitted,
    /// The forced-synthesis call (tools removed).
    ForcedSynthesis,
    /// Relay's "insufficient evidence" report: no usable report could be obtained.
    InsufficientEvidence,
    /// Thorough mode's Integration: the verified claims of its completed stages.
    Integrated,
}

/// The outcome of one explore.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExploreReport {
    /// The answer.
    pub answer: String,
    /// Verified citations only, paths normalised relative to the snapshot root.
    pub evidence: Vec<relay_core::Citation>,
    /// The model's confidence, downgraded to `low` when no citation survived.
    pub confidence: Confidence,
    /// Parts of the question left open.
    pub unanswered: Vec<String>,
    /// Citations of the final report that failed verification and were dropped.
    pub dropped_citations: usize,
    /// Why the loop ended.
    pub stop: StopReason,
    /// Where the report came from.
    pub origin: ReportOrigin,
    /// LLM calls made (including the forced synthesis).
    pub iterations: u32,
    /// Prompt tokens over all calls.
    pub tokens_in: u64,
    /// Completion tokens over all calls.
    pub tokens_out: u64,
    /// The classified LLM error when `stop` is `llm_error`.
    pub llm_error: Option<String>,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCallRecord>,
}

/// Runs explores over one toolbox. Cheap to clone; clones share the client and toolbox.
#[derive(Debug, Clone)]
pub struct ExploreAgent {
    llm: LlmClient,
    toolbox: Arc<Toolbox>,
    config: ExploreConfig,
    tracer: Tracer,
    /// Explores started by this agent and its clones: the N of `explore#N` in the trace.
    started: Arc<AtomicUsize>,
    /// Told about each finished explore (tool-sequence learning).
    observer: Option<Arc<dyn ExploreObserver>>,
    /// The repository's strongest tool sequences, added to the system prompt.
    hint: Option<ToolHint>,
    /// Hints drawn from earlier runs of the same kind of question, preferred over `hint`.
    class_hints: std::collections::BTreeMap<observe::QueryClass, ToolHint>,
    /// The repository's guidance as one turn below the system prompt (rendered, bounded).
    guidance: Option<Arc<String>>,
    /// The thoroughness of a planner's `explore` call that names none.
    default_thoroughness: Thoroughness,
    /// What this agent's thorough explores have explored (an agent serves one job, so one
    /// issue): each thorough query starts from it and adds to it.
    traversal: Arc<Mutex<TraversalState>>,
}

impl ExploreAgent {
    /// An agent asking `llm` and using `toolbox` (share one toolbox across a job's explores).
    pub fn new(llm: LlmClient, toolbox: Arc<Toolbox>, config: ExploreConfig) -> Self {
        Self {
            llm,
            toolbox,
            config,
            tracer: Tracer::noop(),
            started: Arc::new(AtomicUsize::new(0)),
            observer: None,
            hint: None,
            class_hints: Default::default(),
            guidance: None,
            default_thoroughness: Thoroughness::Medium,
            traversal: Arc::new(Mutex::new(TraversalState::default())),
        }
    }

    /// Tells `observer` about every explore that produced a report and made a successful call.
    #[must_use]
    pub fn with_observer(mut self, observer: Arc<dyn ExploreObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Adds the repository's tool-sequence hint to every explore's system prompt.
    #[must_use]
    pub fn with_hint(mut self, hint: Option<ToolHint>) -> Self {
        self.hint = hint;
        self
    }

    /// The hint, if any.
    pub fn hint(&self) -> Option<&ToolHint> {
        self.hint.as_ref()
    }

    /// Adds hints per kind of question ([`observe::QueryClass`]): an explore whose question is
    /// of a class with a hint gets that one instead of the repository-wide [`Self::with_hint`].
    #[must_use]
    pub fn with_class_hints(
        mut self,
        hints: std::collections::BTreeMap<observe::QueryClass, ToolHint>,
    ) -> Self {
        self.class_hints = hints;
        self
    }

    /// The hint an explore of `question` gets: its class's, else the repository's.
    pub fn hint_for(&self, question: &str) -> Option<&ToolHint> {
        self.class_hints
            .get(&observe::QueryClass::of(question))
            .or(self.hint.as_ref())
    }

    /// Shows the repository's guidance (`.relay.toml` instructions and guidance files) to every
    /// explore, fenced with its origin, right below the system prompt. Secret values registered
    /// for the outgoing scan are replaced.
    #[must_use]
    pub fn with_guidance(mut self, guidance: &relay_core::repo_config::GuidanceText) -> Self {
        self.guidance = crate::context::render_guidance(guidance, |text| {
            relay_core::secrets::scrub_secrets(text).body.into_owned()
        })
        .map(Arc::new);
        self
    }

    /// The guidance turn, if any.
    pub fn guidance(&self) -> Option<&str> {
        self.guidance.as_deref().map(String::as_str)
    }

    /// Explores the planner asks for without naming a thoroughness run at `thoroughness`.
    #[must_use]
    pub fn with_default_thoroughness(mut self, thoroughness: Thoroughness) -> Self {
        self.default_thoroughness = thoroughness;
        self
    }

    /// The thoroughness of an explore that names none.
    pub fn default_thoroughness(&self) -> Thoroughness {
        self.default_thoroughness
    }

    /// Where the explore's trace events go: a stage begin/end per explore, its LLM calls and a
    /// `tool_call` per tool call, emitted as `explore#N` for the N-th explore this agent (or a
    /// clone) started, so parallel explores stay apart in the trace.
    #[must_use]
    pub fn with_tracer(mut self, tracer: &Tracer) -> Self {
        self.tracer = tracer.clone();
        self
    }

    /// The configuration.
    pub fn config(&self) -> &ExploreConfig {
        &self.config
    }

    /// The toolbox.
    pub fn toolbox(&self) -> &Arc<Toolbox> {
        &self.toolbox
    }

    /// Answers one question. Errors only when the LLM cannot be used at all; every other ending
    /// (budgets, loops, malformed replies, mid-run LLM failures) is a report.
    pub async fn explore(&self, request: ExploreRequest) -> Result<ExploreReport, Error> {
        let n = self.started.fetch_add(1, Ordering::Relaxed) + 1;
        let tracer = if self.tracer.is_enabled() {
            self.tracer.for_agent(format!("explore#{n}"))
        } else {
            Tracer::noop()
        };
        tracer.event(
            TraceKind::Stage,
            json!({
                "stage": "explore",
                "phase": "begin",
                "question": capped(&request.question),
                "thoroughness": request.thoroughness.as_str(),
            }),
        );
        let started = std::time::Instant::now();
        let result = match request.thoroughness {
            Thoroughness::Thorough => self.thorough(&request, &tracer).await,
            Thoroughness::Quick | Thoroughness::Medium => {
                run::Run::new(self, &request, tracer.clone())
                    .execute()
                    .await
            }
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        if let (Some(observer), Ok(report)) = (&self.observer, &result)
            && let Some(run) = observe::observed_run(
                report,
                &request.question,
                request.thoroughness.as_str(),
                duration_ms,
            )
        {
            observer.observe(&run).await;
        }
        tracer.event(
            TraceKind::Stage,
            match &result {
                Ok(report) => json!({
                    "stage": "explore",
                    "phase": "end",
                    "stop": report.stop.as_str(),
                    "iterations": report.iterations,
                    "tool_calls": report.tool_calls.len(),
                    "tokens_in": report.tokens_in,
                    "tokens_out": report.tokens_out,
                    "citations": report.evidence.len(),
                    "dropped_citations": report.dropped_citations,
                    // The tools called, in order, and the explore's own wall time (seed 002).
                    "tools": report.tool_calls.iter().map(|c| c.tool.as_str()).collect::<Vec<_>>(),
                    "elapsed_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                }),
                Err(error) => json!({
                    "stage": "explore",
                    "phase": "end",
                    "error": capped(&error.to_string()),
                    "elapsed_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                }),
            },
        );
        result
    }

    /// A thorough request: the multi-stage mode, its report in the explore's shape.
    async fn thorough(
        &self,
        request: &ExploreRequest,
        tracer: &Tracer,
    ) -> Result<ExploreReport, Error> {
        let mut state = self
            .traversal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let report = crate::thorough::analyze(
            &self.llm,
            &self.toolbox,
            &request.question,
            &mut state,
            tracer,
            self.config.thorough_time_limit(),
        )
        .await?;
        self.traversal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .absorb(&state);
        Ok(thorough_report(report))
    }

    /// Starts this agent's thorough explores from `state` (the issue's, as an earlier job left
    /// it).
    #[must_use]
    pub fn with_traversal_state(self, state: TraversalState) -> Self {
        *self
            .traversal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = state;
        self
    }

    /// The traversal state this agent's thorough explores built.
    pub fn traversal_state(&self) -> TraversalState {
        self.traversal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Answers several questions, at most `max_parallel_explores` at once, each with its own
    /// budget; results are in request order.
    pub async fn explore_all(
        &self,
        requests: Vec<ExploreRequest>,
    ) -> Vec<Result<ExploreReport, Error>> {
        use futures::StreamExt;
        futures::stream::iter(requests)
            .map(|request| self.explore(request))
            .buffered(self.config.max_parallel_explores.max(1))
            .collect()
            .await
    }
}

/// A thorough query's report in the explore's shape: the integrated answer, the citations of its
/// claims, and the open goals (and any clarification) as `unanswered`.
fn thorough_report(report: crate::thorough::ThoroughReport) -> ExploreReport {
    use crate::thorough::bounds::BoundHit;
    use crate::thorough::routing::IntegrateReason;

    let answer = report.answer;
    let mut evidence: Vec<relay_core::Citation> = Vec::new();
    for citation in answer.claims.iter().flat_map(|c| &c.citations) {
        if !evidence.contains(citation) {
            evidence.push(citation.clone());
        }
    }
    let confidence = if answer.claims.is_empty() {
        Confidence::Low
    } else if answer.open_goals.is_empty() {
        Confidence::High
    } else {
        Confidence::Medium
    };
    let mut unanswered: Vec<String> = answer
        .open_goals
        .iter()
        .map(|goal| goal.description.clone())
        .collect();
    if let Some(question) = &answer.clarification {
        unanswered.push(format!("needs clarification: {question}"));
    }
    let stop = match answer.reason {
        IntegrateReason::GoalsDone => StopReason::GoalsDone,
        IntegrateReason::StageCap
        | IntegrateReason::Bound(BoundHit::LlmCalls | BoundHit::AgentHops) => {
            StopReason::IterationCap
        }
        IntegrateReason::Stuck | IntegrateReason::ReplanLimit => StopReason::NoProgress,
        IntegrateReason::Bound(BoundHit::JobTokens) => StopReason::JobBudget,
        IntegrateReason::Bound(BoundHit::WallTime) => StopReason::TimeLimit,
        IntegrateReason::Bound(BoundHit::Files | BoundHit::CodeTokens | BoundHit::Depth) => {
            StopReason::TokenLimit
        }
        IntegrateReason::NeedsClarification => StopReason::NeedsClarification,
        IntegrateReason::LlmFailed => StopReason::LlmError,
    };
    ExploreReport {
        answer: answer.text,
        evidence,
        confidence,
        unanswered,
        dropped_citations: report
            .stages
            .iter()
            .map(|s| s.rejected_citations.len())
            .sum(),
        stop,
        origin: ReportOrigin::Integrated,
        iterations: report.llm_calls,
        tokens_in: report.tokens_in,
        tokens_out: report.tokens_out,
        llm_error: report.llm_error,
        tool_calls: report.tool_calls,
    }
}
