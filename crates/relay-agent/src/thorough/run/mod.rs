//! One thorough query: Perception → Intent → stages (Navigator → Traverser → Synthesizer → Critic →
//! routing) → Integration. The LLM stages only propose; the deterministic code between them runs
//! the steps, verifies every citation, applies goal updates in order and decides the route, and
//! the answer holds only what completed stages verified. One stage attempt is [`attempt`].

mod attempt;

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::bounds::{QueryBudget, SESSION_CONTEXT_TOKENS};
use super::contracts::IntentReply;
use super::goals::{Deferred, Goal, GoalStatus, open_goals};
use super::integration::{Answer, Claim, StageEvidence, Unsettled, integrate};
use super::perception::{established, perceive};
use super::render;
use super::routing::{IntegrateReason, Route, RoutingInput, Verdict, route};
use super::stages::{INTENT_PROMPT, Stage, StageCaller, StageFailure};
use super::state::TraversalState;
use super::traverser::StepRecord;
use crate::Error;
use crate::llm::LlmClient;
use crate::toolbox::{ToolCallRecord, Toolbox};
use crate::trace::{TraceKind, Tracer, capped};
use relay_tools::output::estimate_tokens;

/// Steps of one plan at most; the rest are dropped (and said in the trace).
pub const MAX_STEPS_PER_PLAN: usize = 6;

/// The clarification asked when the question has nothing to explore.
pub const EMPTY_QUESTION: &str = "The question is empty or unreadable: what should be looked for \
in the code?";

/// One stage attempt, as it ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageRecord {
    /// The stage (1-based).
    pub stage: u32,
    /// Its plan: 0, then 1.. for each replan.
    pub attempt: u32,
    /// The targets taken, by priority, once their dependencies were settled.
    pub target_goals: Vec<String>,
    /// Targets the Navigator asked for whose dependencies were still open (the next Navigator is
    /// told why).
    pub deferred_goals: Vec<Deferred>,
    pub rationale: String,
    pub feasibility: f64,
    pub steps: Vec<StepRecord>,
    /// Claims that kept a verified citation.
    pub verified_claims: usize,
    pub dropped_claims: usize,
    /// Why citations were rejected.
    pub rejected_citations: Vec<String>,
    /// What the Synthesizer saw the code contradict (its words, unverified: kept for the
    /// report, never stated in the answer).
    pub contradictions: Vec<String>,
    /// The Critic's verdict (absent when the query ended before it).
    pub verdict: Option<Verdict>,
    /// Where routing sent the query next.
    pub route: Option<Route>,
    /// Whether the stage satisfied, refined or verified anything new.
    pub progress: bool,
}

/// The outcome of one thorough query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThoroughReport {
    /// The question after perception.
    pub question: String,
    pub primary_intent: Option<String>,
    pub constraints: Vec<String>,
    pub ambiguities: Vec<String>,
    /// The goals as they ended.
    pub goals: Vec<Goal>,
    pub stages: Vec<StageRecord>,
    /// The final answer (verified claims only, open goals listed).
    pub answer: Answer,
    /// Goal updates and statuses that named no goal, or claimed a goal without evidence.
    pub rejected_updates: Vec<String>,
    pub llm_calls: u32,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub agent_hops: u32,
    pub files_read: usize,
    pub code_tokens: u64,
    /// Wall-clock time of the whole query.
    pub total_time_ms: u64,
    /// Every goal the query ended with is satisfied (none open, dropped or blocked).
    pub all_goals_succeeded: bool,
    /// The files the steps read, first read first (distinct).
    pub files_examined: Vec<String>,
    /// A few lines for whoever carries the query on: the intent, what was verified where, what
    /// is open (at most `CONTEXT_SUMMARY_CHARS`, 600 characters).
    pub context_summary: String,
    /// The classified error of the LLM stage that failed, when one did.
    pub llm_error: Option<String>,
    /// Every tool call, in order.
    #[serde(skip)]
    pub tool_calls: Vec<ToolCallRecord>,
}

/// Runs one thorough query over `toolbox` with `llm`. `state` is the issue's traversal state: read
/// to plan, fed by the steps. No LLM stage starts after `time_limit`, and one still running then
/// is abandoned (the query integrates what is done). Errors only when the LLM cannot be used at
/// all.
pub async fn analyze(
    llm: &LlmClient,
    toolbox: &Toolbox,
    question: &str,
    state: &mut TraversalState,
    tracer: &Tracer,
    time_limit: Duration,
) -> Result<ThoroughReport, Error> {
    analyze_within(
        llm,
        toolbox,
        question,
        state,
        tracer,
        time_limit,
        QueryBudget::new(),
    )
    .await
}

/// [`analyze`] under `budget` (its per-step timeout; the deadline is set from `time_limit`).
pub async fn analyze_within(
    llm: &LlmClient,
    toolbox: &Toolbox,
    question: &str,
    state: &mut TraversalState,
    tracer: &Tracer,
    time_limit: Duration,
    budget: QueryBudget,
) -> Result<ThoroughReport, Error> {
    // Emitted as the caller's agent (`explore#N` when dispatched from an explore), else as
    // `thorough`.
    let tracer = match (tracer.is_enabled(), tracer.agent()) {
        (false, _) => Tracer::noop(),
        (true, Some(_)) => tracer.clone(),
        (true, None) => tracer.for_agent("thorough"),
    };
    let llm = if tracer.is_enabled() {
        llm.clone().with_tracer(&tracer)
    } else {
        llm.clone()
    };
    let started = Instant::now();
    let deadline = tokio::time::Instant::now() + time_limit;
    let query = Query {
        caller: StageCaller::new(llm, tracer.clone(), deadline),
        toolbox,
        tracer,
        // The wall-clock limit is checked around tool steps as well as LLM stages.
        budget: budget.with_deadline(deadline),
        started,
        question: String::new(),
        established: None,
        intent: None,
        goals: Vec::new(),
        stages: Vec::new(),
        evidence: Vec::new(),
        unsettled: Unsettled::default(),
        rejected_updates: Vec::new(),
        llm_error: None,
    };
    let report = query.run(question, state).await?;
    // The next query on this issue starts from what this one established.
    if !report.context_summary.is_empty() {
        state.summaries.push(report.context_summary.clone());
    }
    Ok(report)
}

struct Query<'a> {
    caller: StageCaller,
    toolbox: &'a Toolbox,
    tracer: Tracer,
    budget: QueryBudget,
    started: Instant,
    question: String,
    /// What the loaded traversal state says earlier queries established (perception's summary,
    /// taken before this query adds to the state), carried by every stage's prompt.
    established: Option<String>,
    intent: Option<IntentReply>,
    goals: Vec<Goal>,
    stages: Vec<StageRecord>,
    evidence: Vec<StageEvidence>,
    unsettled: Unsettled,
    rejected_updates: Vec<String>,
    llm_error: Option<String>,
}

impl Query<'_> {
    async fn run(
        mut self,
        raw_question: &str,
        state: &mut TraversalState,
    ) -> Result<ThoroughReport, Error> {
        self.transition("perception", json!({}));
        let Some(perceived) = perceive(raw_question) else {
            self.unsettled.clarification = Some(EMPTY_QUESTION.to_owned());
            return Ok(self.finish(IntegrateReason::NeedsClarification));
        };
        self.question = perceived.question;
        self.established = established(state);
        if perceived.truncated_chars > 0 {
            self.tracer.event(
                TraceKind::Decision,
                json!({"decision": "question_truncated", "cut_chars": perceived.truncated_chars}),
            );
        }

        self.transition("intent", json!({}));
        if let Some(reason) = self.intent().await? {
            return Ok(self.finish(reason));
        }

        let mut stage = 1_u32;
        let mut attempt = 0_u32;
        let mut clarified = false;
        let mut without_progress = 0_u32;
        let mut feedback: Option<String> = None;
        let reason = loop {
            self.transition("stage", json!({"number": stage, "attempt": attempt}));
            let (record, critique) = match self
                .stage(stage, attempt, feedback.as_deref(), state)
                .await?
            {
                Ok(done) => done,
                Err(reason) => break reason,
            };
            let progress = record.progress;
            without_progress = if progress { 0 } else { without_progress + 1 };
            let mut input = RoutingInput {
                verdict: critique.verdict,
                blocking_issues: !critique.blocking_issues.is_empty(),
                clarified,
                replans_in_stage: attempt,
                open_goals: open_goals(&self.goals).count(),
                stages_done: stage,
                stages_without_progress: without_progress,
            };
            let mut next = route(input);
            if next == Route::Clarify {
                clarified = true;
                // The Critic's question, else its blocking issues, else (a CLARIFY with neither,
                // or a stuck query) one asked about the open goals: never a blank one.
                let question = critique
                    .clarification
                    .clone()
                    .filter(|q| !q.trim().is_empty())
                    .or_else(|| {
                        let issues: Vec<&str> = critique
                            .blocking_issues
                            .iter()
                            .map(|i| i.trim())
                            .filter(|i| !i.is_empty())
                            .collect();
                        (!issues.is_empty()).then(|| issues.join("; "))
                    })
                    .or_else(|| open_goals_question(&self.goals));
                self.unsettled.clarification = question.as_deref().map(capped_question);
                self.tracer.event(
                    TraceKind::Decision,
                    json!({
                        "decision": "clarify",
                        "question": question.as_deref().map(capped),
                        "stuck": without_progress >= super::routing::STUCK_STAGES,
                    }),
                );
                input.clarified = true;
                next = route(input);
            }
            self.tracer.event(
                TraceKind::Decision,
                json!({
                    "decision": "route", "stage": stage, "attempt": attempt,
                    "verdict": critique.verdict, "route": next, "progress": progress,
                    "open_goals": input.open_goals,
                }),
            );
            let mut record = record;
            record.route = Some(next);
            self.stages.push(record);
            match next {
                Route::Replan => {
                    attempt += 1;
                    feedback = critique.feedback.clone();
                }
                // Clarify was asked once and re-routed above; it is never the route here.
                Route::NextStage | Route::Clarify => {
                    stage += 1;
                    attempt = 0;
                    feedback = None;
                }
                Route::Integrate(reason) => break reason,
            }
        };
        Ok(self.finish(reason))
    }

    /// One LLM stage's reply; the inner `Err` ends the query (a bound, a failed call), the outer
    /// one is an LLM that cannot be used at all.
    async fn ask<T: JsonSchema + DeserializeOwned>(
        &mut self,
        stage: Stage,
        system: String,
        user: String,
    ) -> Result<Result<T, IntegrateReason>, Error> {
        match self
            .caller
            .ask::<T>(stage, system, user, &mut self.budget)
            .await
        {
            Ok(reply) => Ok(Ok(reply)),
            Err(failure) => self.failed(failure).map(Err),
        }
    }

    /// The Intent stage; `Some` ends the query before any stage.
    async fn intent(&mut self) -> Result<Option<IntegrateReason>, Error> {
        let mut user = render::question(&self.question);
        user.extend(self.established.clone());
        let reply = match self
            .ask::<IntentReply>(Stage::Intent, INTENT_PROMPT.to_owned(), user)
            .await?
        {
            Ok(reply) => reply,
            Err(reason) => {
                // The answer still lists what was asked as the one open goal.
                self.goals = vec![question_goal(&self.question)];
                return Ok(Some(reason));
            }
        };
        self.goals = normalise_goals(&reply);
        let clarification = reply.clarification.clone().filter(|q| !q.trim().is_empty());
        if self.goals.is_empty() {
            if let Some(question) = clarification {
                self.unsettled.clarification = Some(capped_question(&question));
                self.intent = Some(reply);
                return Ok(Some(IntegrateReason::NeedsClarification));
            }
            self.goals = vec![question_goal(&self.question)];
        }
        self.tracer.event(
            TraceKind::Decision,
            json!({
                "decision": "goals",
                "goals": self.goals.iter().map(|g| json!({"id": g.id, "description": capped(&g.description)})).collect::<Vec<_>>(),
            }),
        );
        self.intent = Some(reply);
        Ok(None)
    }

    /// The part every stage's message starts with.
    fn context(&self, state: &TraversalState) -> String {
        let mut out = render::question(&self.question);
        // What earlier queries established; this query's own ground is in `render::state` below.
        out.extend(self.established.clone());
        if let Some(intent) = &self.intent {
            out.push_str(&format!("Intent: {}\n", intent.primary_intent));
            if !intent.constraints.is_empty() {
                out.push_str(&format!("Constraints: {}\n", intent.constraints.join("; ")));
            }
        }
        out.push_str(&render::goals(&self.goals));
        out.push_str(&render::state(state));
        let claims: Vec<&Claim> = self.claims().collect();
        bounded_context(out, &claims)
    }

    fn claims(&self) -> impl Iterator<Item = &Claim> {
        self.evidence.iter().flat_map(|s| &s.claims)
    }

    /// A stage failure: a bound or a failed call ends the query; an unusable LLM is an error.
    fn failed(&mut self, failure: StageFailure) -> Result<IntegrateReason, Error> {
        match failure {
            StageFailure::Bound(hit) => Ok(IntegrateReason::Bound(hit)),
            StageFailure::Failed(error) => {
                self.llm_error = Some(format!("{}: {error}", error.kind().as_str()));
                Ok(IntegrateReason::LlmFailed)
            }
            StageFailure::Fatal(source) => Err(Error::Llm { source }),
        }
    }

    fn transition(&self, to: &str, detail: Value) {
        self.tracer.event(
            TraceKind::Stage,
            json!({"stage": "thorough", "phase": to, "detail": detail}),
        );
    }

    fn finish(self, reason: IntegrateReason) -> ThoroughReport {
        let answer = integrate(&self.evidence, &self.goals, self.unsettled, reason);
        self.tracer.event(
            TraceKind::Stage,
            json!({
                "stage": "thorough", "phase": "end", "reason": reason.as_str(),
                "claims": answer.claims.len(), "open_goals": answer.open_goals.len(),
                "llm_calls": self.budget.llm_calls(),
            }),
        );
        let tool_calls = self
            .stages
            .iter()
            .flat_map(|s| &s.steps)
            .flat_map(|s| s.recovery_calls.iter().cloned().chain(s.call.clone()))
            .collect();
        let intent = self.intent;
        let all_goals_succeeded = !self.goals.is_empty()
            && answer.open_goals.is_empty()
            && answer.dropped_goals.is_empty()
            && self.goals.iter().all(|g| g.status == GoalStatus::Satisfied);
        let mut files_examined: Vec<String> = Vec::new();
        for step in self.stages.iter().flat_map(|s| &s.steps) {
            if step.tool == relay_tools::ToolName::Read
                && step.status == super::traverser::StepStatus::Ok
                && let Some(path) = step.call.as_ref().and_then(|c| read_path(&c.arguments))
                && !files_examined.contains(&path)
            {
                files_examined.push(path);
            }
        }
        let context_summary = context_summary(
            intent.as_ref().map(|i| i.primary_intent.as_str()),
            &answer,
            &files_examined,
        );
        ThoroughReport {
            question: self.question,
            primary_intent: intent.as_ref().map(|i| i.primary_intent.clone()),
            constraints: intent
                .as_ref()
                .map(|i| i.constraints.clone())
                .unwrap_or_default(),
            ambiguities: intent
                .as_ref()
                .map(|i| i.ambiguities.clone())
                .unwrap_or_default(),
            goals: self.goals,
            stages: self.stages,
            answer,
            rejected_updates: self.rejected_updates,
            llm_calls: self.budget.llm_calls(),
            tokens_in: self.caller.usage.prompt_tokens,
            tokens_out: self.caller.usage.completion_tokens,
            agent_hops: self.budget.agent_hops(),
            files_read: self.budget.files_read(),
            code_tokens: self.budget.code_tokens(),
            total_time_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            all_goals_succeeded,
            files_examined,
            context_summary,
            llm_error: self.llm_error,
            tool_calls,
        }
    }
}

/// Characters of [`ThoroughReport::context_summary`] at most.
pub const CONTEXT_SUMMARY_CHARS: usize = 600;

/// The `path` of a recorded `read` call's arguments.
fn read_path(arguments: &str) -> Option<String> {
    serde_json::from_str::<Value>(arguments)
        .ok()?
        .get("path")?
        .as_str()
        .map(str::to_owned)
}

/// `Intent: …. Verified: N claims in a.go, b.go. Open: goal, goal.`, capped.
fn context_summary(intent: Option<&str>, answer: &Answer, files: &[String]) -> String {
    let mut out = String::new();
    if let Some(intent) = intent.filter(|i| !i.trim().is_empty()) {
        out.push_str(&format!(
            "Intent: {}. ",
            intent.trim().trim_end_matches('.')
        ));
    }
    out.push_str(&format!(
        "Verified: {} claim{} over {} file{} read",
        answer.claims.len(),
        if answer.claims.len() == 1 { "" } else { "s" },
        files.len(),
        if files.len() == 1 { "" } else { "s" },
    ));
    if !files.is_empty() {
        let shown: Vec<&str> = files.iter().take(5).map(String::as_str).collect();
        out.push_str(&format!(" ({})", shown.join(", ")));
    }
    out.push('.');
    if !answer.open_goals.is_empty() {
        let open: Vec<&str> = answer
            .open_goals
            .iter()
            .map(|g| g.description.as_str())
            .collect();
        out.push_str(&format!(" Open: {}.", open.join("; ")));
    }
    if out.chars().count() > CONTEXT_SUMMARY_CHARS {
        out = out.chars().take(CONTEXT_SUMMARY_CHARS - 1).collect();
        out.push('…');
    }
    out
}

/// The Intent stage's goals with stable ids: an empty or repeated id becomes `gN` (N its place);
/// dependencies on unknown ids are dropped.
fn normalise_goals(reply: &IntentReply) -> Vec<Goal> {
    let mut goals: Vec<Goal> = Vec::new();
    for (i, goal) in reply.goals.iter().enumerate() {
        let mut id = goal.id.trim().to_owned();
        if id.is_empty() || goals.iter().any(|g| g.id == id) {
            id = format!("g{}", i + 1);
        }
        if goal.description.trim().is_empty() {
            continue;
        }
        goals.push(Goal {
            id,
            description: goal.description.trim().to_owned(),
            priority: goal.priority.clamp(1, 5),
            depends_on: goal.depends_on.clone(),
            status: GoalStatus::Pending,
            blocked_reason: None,
        });
    }
    let ids: Vec<String> = goals.iter().map(|g| g.id.clone()).collect();
    for goal in &mut goals {
        goal.depends_on.retain(|d| ids.contains(d) && *d != goal.id);
    }
    goals
}

/// The question itself as the one goal.
fn question_goal(question: &str) -> Goal {
    Goal {
        id: "g1".to_owned(),
        description: question.chars().take(300).collect(),
        priority: 1,
        depends_on: Vec::new(),
        status: GoalStatus::Pending,
        blocked_reason: None,
    }
}

/// `head` and the newest `claims` that keep the whole within [`SESSION_CONTEXT_TOKENS`] (the
/// oldest claims go first: the newest are what the next stage builds on).
fn bounded_context(head: String, claims: &[&Claim]) -> String {
    let mut skip = 0;
    loop {
        let text = format!("{head}{}", render::claims(&claims[skip..]));
        if skip >= claims.len() || estimate_tokens(&text) <= SESSION_CONTEXT_TOKENS {
            return text;
        }
        skip += 1;
    }
}

/// The question asked when the Critic asks none: where the open goals are to be found.
fn open_goals_question(goals: &[Goal]) -> Option<String> {
    let open: Vec<&str> = open_goals(goals).map(|g| g.description.as_str()).collect();
    (!open.is_empty()).then(|| {
        format!(
            "The code explored so far does not answer: {}. Where should Relay look (a file, \
             a package, a name)?",
            open.join("; ")
        )
    })
}

/// A clarification question kept to a readable length.
fn capped_question(question: &str) -> String {
    question.trim().chars().take(500).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use relay_core::Citation;

    #[test]
    fn the_carried_context_stays_within_its_bound_keeping_the_newest_claims() {
        let claims: Vec<Claim> = (0..200)
            .map(|i| Claim {
                text: format!(
                    "claim {i}: {}",
                    "the queue is drained by the worker ".repeat(50)
                ),
                citations: vec![Citation {
                    path: "queue/queue.go".into(),
                    start_line: 4,
                    end_line: 4,
                    quote: None,
                }],
                goals: vec!["g1".into()],
                seen_in: Vec::new(),
            })
            .collect();
        let refs: Vec<&Claim> = claims.iter().collect();
        let head = "Question: where is the queue drained?\n".to_owned();
        let unbounded = format!("{head}{}", render::claims(&refs));
        // Only meaningful when the claims shown would pass the bound without it.
        assert!(estimate_tokens(&unbounded) > SESSION_CONTEXT_TOKENS);
        let text = bounded_context(head, &refs);
        assert!(
            estimate_tokens(&text) <= SESSION_CONTEXT_TOKENS,
            "{}",
            estimate_tokens(&text)
        );
        assert!(text.contains("claim 199:"), "the newest claim is kept");
        assert!(
            !text.contains("claim 170:"),
            "the oldest shown claims go first"
        );
    }
}
