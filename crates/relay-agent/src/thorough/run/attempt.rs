//! One stage attempt: Navigator → Traverser → Synthesizer → Critic, then the Critic's goal statuses
//! and updates applied. Routing between attempts is the caller's (`run`).

use serde_json::{Value, json};

/// Contradictions shown to the Critic at most.
const MAX_CONTRADICTIONS_SHOWN: usize = 5;

use super::super::bounds;
use super::super::contracts::{CriticReply, GoalAssessment, NavigatorReply, SynthesizerReply};
use super::super::evidence::{first_showing, verified_entities, verify_reply};
use super::super::goals::{GoalStatus, GoalUpdate, apply_updates, order_targets};
use super::super::integration::{StageEvidence, StepRef};
use super::super::render;
use super::super::routing::IntegrateReason;
use super::super::stages::{CRITIC_PROMPT, NAVIGATOR_PROMPT, SYNTHESIZER_PROMPT, Stage};
use super::super::state::TraversalState;
use super::super::traverser::{Step, StepStatus, traverse};
use super::{MAX_STEPS_PER_PLAN, Query, StageRecord};
use crate::Error;
use crate::trace::{TraceKind, capped};

impl Query<'_> {
    /// One stage attempt up to the Critic's reply. The outer `Err` is a fatal LLM error; the inner
    /// one ends the query.
    pub(super) async fn stage(
        &mut self,
        stage: u32,
        attempt: u32,
        feedback: Option<&str>,
        state: &mut TraversalState,
    ) -> Result<Result<(StageRecord, CriticReply), IntegrateReason>, Error> {
        // Navigator.
        let mut user = self.context(state);
        user.push_str(&render::tools(self.toolbox.definitions()));
        for deferred in self
            .stages
            .last()
            .map(|s| &s.deferred_goals[..])
            .unwrap_or_default()
        {
            user.push_str(&format!("Goal order: {}.\n", deferred.explain()));
        }
        if let Some(previous) = self.stages.last().filter(|s| s.stage == stage) {
            user.push_str("\nThe previous plan of this stage ran:\n");
            user.push_str(&render::step_summaries(&previous.steps));
            if let Some(feedback) = feedback {
                user.push_str(&format!("The Critic asks for a new plan: {feedback}\n"));
            }
        }
        let system = NAVIGATOR_PROMPT
            .replace("{max_steps}", &MAX_STEPS_PER_PLAN.to_string())
            .replace("{files}", &bounds::QUERY_FILES.to_string())
            .replace("{code_tokens}", &bounds::QUERY_CODE_TOKENS.to_string())
            .replace("{depth}", &bounds::QUERY_DEPTH.to_string());
        let plan = match self
            .ask::<NavigatorReply>(Stage::Navigator, system, user)
            .await?
        {
            Ok(plan) => plan,
            Err(reason) => return Ok(Err(reason)),
        };
        // The goals' order is enforced here, not only shown to the Navigator.
        let targets = order_targets(&self.goals, &plan.target_goals);
        if !targets.deferred.is_empty() {
            self.tracer.event(
                TraceKind::Decision,
                json!({"decision": "targets_deferred", "deferred": targets.deferred, "taken": targets.taken}),
            );
        }
        let target_goals = targets.taken;
        if plan.steps.len() > MAX_STEPS_PER_PLAN {
            self.tracer.event(
                TraceKind::Decision,
                json!({"decision": "steps_dropped", "planned": plan.steps.len(), "kept": MAX_STEPS_PER_PLAN}),
            );
        }
        let steps: Vec<Step> = plan
            .steps
            .iter()
            .take(MAX_STEPS_PER_PLAN)
            .map(|s| Step {
                tool: s.tool.clone(),
                arguments: Value::Object(s.arguments.clone()),
            })
            .collect();

        // Traverser.
        self.transition(
            "traverser",
            json!({"number": stage, "attempt": attempt, "steps": steps.len()}),
        );
        crate::trace::log(&self.tracer, "rationale", &plan.rationale);
        let records = traverse(self.toolbox, &steps, &mut self.budget, state, &self.tracer).await;
        let mut record = StageRecord {
            stage,
            attempt,
            target_goals: target_goals.clone(),
            deferred_goals: targets.deferred,
            rationale: plan.rationale.clone(),
            feasibility: plan.feasibility,
            steps: records,
            verified_claims: 0,
            dropped_claims: 0,
            rejected_citations: Vec::new(),
            contradictions: Vec::new(),
            verdict: None,
            route: None,
            progress: false,
        };

        // Synthesizer (only over output there is).
        let mut new_claims = 0;
        if record.steps.iter().any(|s| s.status == StepStatus::Ok) {
            let mut user = self.context(state);
            user.push_str("\nTool output of this stage:\n");
            user.push_str(&render::step_outputs(&record.steps));
            let reply = match self
                .ask::<SynthesizerReply>(Stage::Synthesizer, SYNTHESIZER_PROMPT.to_owned(), user)
                .await?
            {
                Ok(reply) => reply,
                Err(reason) => {
                    self.stages.push(record);
                    return Ok(Err(reason));
                }
            };
            // Every step of the query so far: earlier attempts' records and this one's.
            let steps = self
                .stages
                .iter()
                .chain(std::iter::once(&record))
                .flat_map(|s| {
                    s.steps.iter().enumerate().map(|(step, r)| {
                        let at = StepRef {
                            stage: s.stage,
                            attempt: s.attempt,
                            step,
                        };
                        (at, r)
                    })
                });
            let sandboxes = self.toolbox.sandboxes();
            let verified = verify_reply(&sandboxes, &reply, &target_goals, |path| {
                first_showing(steps.clone(), path)
            });
            for name in verified_entities(&sandboxes, &reply) {
                state.symbols.push(name);
            }
            for problem in &verified.rejected {
                self.tracer.event(
                    TraceKind::ValidationFailure,
                    json!({"stage": "synthesizer", "citation": capped(problem)}),
                );
            }
            let known: Vec<&str> = self.claims().map(|c| c.text.as_str()).collect();
            new_claims = verified
                .claims
                .iter()
                .filter(|c| !known.contains(&c.text.as_str()))
                .count();
            record.verified_claims = verified.claims.len();
            record.dropped_claims = verified.dropped_claims;
            record.rejected_citations = verified.rejected.clone();
            record.contradictions = reply.contradictions.clone();
            self.unsettled
                .open_questions
                .extend(reply.open_questions.iter().cloned());
            self.evidence.push(StageEvidence {
                stage,
                claims: verified.claims,
            });
        }

        // Critic.
        let mut user = self.context(state);
        user.push_str("\nSteps of this stage:\n");
        user.push_str(&render::step_summaries(&record.steps));
        if !record.contradictions.is_empty() {
            // One of the three reasons to ask a human (see the Critic's prompt).
            user.push_str(
                "\nContradictions the Synthesizer saw (its words, unverified: CLARIFY if a human must settle one):\n",
            );
            for contradiction in record.contradictions.iter().take(MAX_CONTRADICTIONS_SHOWN) {
                user.push_str(&format!("- {}\n", capped(contradiction)));
            }
        }
        let critique = match self
            .ask::<CriticReply>(Stage::Critic, CRITIC_PROMPT.to_owned(), user)
            .await?
        {
            Ok(critique) => critique,
            Err(reason) => {
                self.stages.push(record);
                return Ok(Err(reason));
            }
        };
        if let Some(feedback) = &critique.feedback {
            crate::trace::log(&self.tracer, "feedback", feedback);
        }
        let improved = self.assess(&critique.goal_status);
        let applied = apply_updates(&mut self.goals, &critique.goal_updates);
        let rejected = applied.rejected;
        self.unsettled.dropped_goals.extend(applied.dropped);
        for update in &critique.goal_updates {
            let refused = rejected.iter().find(|r| &r.update == update);
            self.tracer.event(
                TraceKind::Decision,
                json!({
                    "decision": "goal_update", "update": update,
                    "applied": refused.is_none(), "why": refused.map(|r| r.why),
                }),
            );
        }
        let reshaped = critique.goal_updates.iter().any(|u| {
            matches!(u, GoalUpdate::New { .. } | GoalUpdate::Refined { .. })
                && !rejected.iter().any(|r| &r.update == u)
        });
        self.rejected_updates.extend(rejected.iter().map(|r| {
            format!(
                "{}: {}",
                serde_json::to_string(&r.update).unwrap_or_default(),
                r.why
            )
        }));
        record.verdict = Some(critique.verdict);
        record.progress = improved || reshaped || new_claims > 0;
        Ok(Ok((record, critique)))
    }

    /// Applies the Critic's goal statuses; a goal is satisfied only when a verified claim answers
    /// it. Returns whether any goal moved forward.
    fn assess(&mut self, statuses: &[GoalAssessment]) -> bool {
        fn rank(status: GoalStatus) -> u8 {
            match status {
                GoalStatus::Satisfied => 2,
                GoalStatus::Partial => 1,
                _ => 0,
            }
        }
        let mut improved = false;
        for assessment in statuses {
            let evidenced = self
                .claims()
                .any(|c| c.goals.iter().any(|g| g == &assessment.id));
            let Some(goal) = self.goals.iter_mut().find(|g| g.id == assessment.id) else {
                self.rejected_updates
                    .push(format!("status of {}: no goal has this id", assessment.id));
                continue;
            };
            let mut status = assessment.status;
            if status == GoalStatus::Satisfied && !evidenced {
                self.rejected_updates.push(format!(
                    "{} satisfied: no verified claim answers it",
                    assessment.id
                ));
                status = if goal.status == GoalStatus::Partial {
                    GoalStatus::Partial
                } else {
                    GoalStatus::Unmet
                };
            }
            if status == GoalStatus::Pending {
                continue;
            }
            improved |= rank(status) > rank(goal.status);
            goal.status = status;
            if status == GoalStatus::Blocked {
                goal.blocked_reason = assessment.reason.clone();
            }
            self.tracer.event(
                TraceKind::Decision,
                json!({"decision": "goal_status", "id": goal.id, "status": status}),
            );
        }
        improved
    }
}
