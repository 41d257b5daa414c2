//! Thorough mode's LLM stages: one structured call each (Intent, Navigator, Synthesizer, Critic),
//! counted against the query's bounds before it is sent — a hop and an LLM call each, corrective
//! retries included — and abandoned at the query's wall-clock limit. The job's tokens are the
//! client's own budget (it refuses a call once they are spent). The prompts are prose files
//! beside this one.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::time::Instant;

use super::bounds::{BoundHit, QueryBudget};
use crate::llm::{ChatRequest, ErrorKind, LlmClient, LlmError, Message, StructuredOptions, Usage};
use crate::trace::{TraceKind, Tracer, capped};

pub const INTENT_PROMPT: &str = include_str!("prompts/intent.md");
pub const NAVIGATOR_PROMPT: &str = include_str!("prompts/navigator.md");
pub const SYNTHESIZER_PROMPT: &str = include_str!("prompts/synthesizer.md");
pub const CRITIC_PROMPT: &str = include_str!("prompts/critic.md");

/// Corrective retries of one stage's structured reply at most (each is an LLM call of the query).
pub const STAGE_RETRIES: u32 = 1;

/// Which LLM stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Intent,
    Navigator,
    Synthesizer,
    Critic,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Intent => "intent",
            Self::Navigator => "navigator",
            Self::Synthesizer => "synthesizer",
            Self::Critic => "critic",
        }
    }
}

/// Why a stage produced no reply.
#[derive(Debug)]
pub enum StageFailure {
    /// A query bound refused the call (it was not sent, or the job's tokens ran out).
    Bound(BoundHit),
    /// The LLM cannot be used at all (unreachable before anything answered, key refused, model
    /// unknown): the query is an error, as an explore would be.
    Fatal(LlmError),
    /// The call failed after its retries, or its reply stayed invalid: the query ends with what
    /// the stages before it verified.
    Failed(LlmError),
}

/// Makes the stages' calls for one query and keeps their totals.
pub struct StageCaller {
    llm: LlmClient,
    tracer: Tracer,
    /// Tokens over all calls.
    pub usage: Usage,
    /// Whether any call has been answered (an error before that means unreachable).
    answered: bool,
    /// The query's wall-clock limit: a call is not started past it and is abandoned at it.
    deadline: Instant,
}

impl StageCaller {
    pub fn new(llm: LlmClient, tracer: Tracer, deadline: Instant) -> StageCaller {
        StageCaller {
            llm,
            tracer,
            usage: Usage::default(),
            answered: false,
            deadline,
        }
    }

    /// One stage's call: `system` and `user` in, `T` out.
    pub async fn ask<T: JsonSchema + DeserializeOwned>(
        &mut self,
        stage: Stage,
        system: String,
        user: String,
        budget: &mut QueryBudget,
    ) -> Result<T, StageFailure> {
        let remaining = self.deadline.saturating_duration_since(Instant::now());
        let admitted = if remaining.is_zero() {
            Err(BoundHit::WallTime)
        } else {
            budget.hop().and_then(|()| budget.llm_call())
        };
        if let Err(hit) = admitted {
            self.tracer.event(
                TraceKind::Decision,
                json!({"decision": "stage_refused", "stage": stage.as_str(), "reason": hit.to_string()}),
            );
            return Err(StageFailure::Bound(hit));
        }
        self.tracer.event(
            TraceKind::Stage,
            json!({"stage": stage.as_str(), "phase": "begin"}),
        );
        let retries = STAGE_RETRIES.min(budget.llm_calls_left());
        let request = ChatRequest::new(vec![Message::system(system), Message::user(user)]);
        let call = self.llm.complete_structured_with::<T>(
            request,
            StructuredOptions {
                name: Some(format!("thorough_{}", stage.as_str())),
                retries: Some(retries),
            },
        );
        let Ok(result) = tokio::time::timeout(remaining, call).await else {
            self.tracer.event(
                TraceKind::Error,
                json!({"stage": stage.as_str(), "kind": "wall_time", "error": BoundHit::WallTime.to_string()}),
            );
            return Err(StageFailure::Bound(BoundHit::WallTime));
        };
        match result {
            Ok(structured) => {
                self.answered = true;
                budget.extra_llm_calls(structured.attempts.saturating_sub(1));
                self.usage.add(&structured.usage);
                self.tracer.event(
                    TraceKind::Stage,
                    json!({
                        "stage": stage.as_str(), "phase": "end", "attempts": structured.attempts,
                        "tokens_in": structured.usage.prompt_tokens,
                        "tokens_out": structured.usage.completion_tokens,
                    }),
                );
                Ok(structured.value)
            }
            Err(error) => {
                if let LlmError::InvalidOutput { attempts, .. } = &error {
                    budget.extra_llm_calls(attempts.saturating_sub(1));
                    self.answered = true;
                }
                self.tracer.event(
                    TraceKind::Error,
                    json!({
                        "stage": stage.as_str(), "kind": error.kind().as_str(),
                        "error": capped(&error.to_string()),
                    }),
                );
                Err(self.classify(error))
            }
        }
    }

    fn classify(&self, error: LlmError) -> StageFailure {
        match error.kind() {
            ErrorKind::Budget => StageFailure::Bound(BoundHit::JobTokens),
            ErrorKind::Authentication
            | ErrorKind::PermissionDenied
            | ErrorKind::NotFound
            | ErrorKind::Config
            | ErrorKind::Quota => StageFailure::Fatal(error),
            ErrorKind::InvalidOutput | ErrorKind::Refusal | ErrorKind::Truncated => {
                StageFailure::Failed(error)
            }
            _ if !self.answered => StageFailure::Fatal(error),
            _ => StageFailure::Failed(error),
        }
    }
}
