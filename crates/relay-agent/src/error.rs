//! The crate's error: an agent run (an explore, a thorough query, an eval suite) that could not
//! run at all. Everything short of that ends in a report (an "insufficient evidence" one at
//! worst); the LLM layer's own classified error is [`crate::llm::LlmError`].

use crate::llm::LlmError;

/// An agent run that could not run at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The LLM cannot be used: unreachable, key refused, model unknown, misconfigured.
    #[error("llm unavailable ({kind}): {source}", kind = source.kind().as_str())]
    Llm {
        /// The classified error.
        #[source]
        source: LlmError,
    },
    /// An eval question starts from an issue, and the run was given no planner to read it.
    #[error(
        "eval question {question} starts from an issue: it needs the planner (relay eval runs it)"
    )]
    PlannerNeeded {
        /// The question's id.
        question: String,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
