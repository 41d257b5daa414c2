//! Thorough mode: goal-driven multi-stage analysis for questions that span many files.
//!
//! [`analyze`] runs one query: Perception ([`perception`], no LLM) → Intent → at most
//! [`routing::MAX_STAGES`] stages of Navigator → Traverser ([`traverser`], no LLM) → Synthesizer →
//! Critic → routing ([`routing`]) → Integration ([`integration`], no LLM). The LLM stages reply
//! with the typed contracts of [`contracts`] ([`stages`] makes those calls); everything between
//! them is deterministic: the steps run through the toolbox under the bounds of [`bounds`] and
//! [`step_caps`], claims keep only citations that [`evidence`] verified, goal updates apply in
//! order by id ([`goals`]), and the traversal state ([`state`]) is FIFO-bounded.
//!
//! It is what `explore(thoroughness: thorough)` runs ([`crate::explore::ExploreAgent`] dispatches
//! here) and what `relay analyze` prints.

pub mod bounds;
pub mod contracts;
pub mod evidence;
pub mod goals;
pub mod integration;
pub mod perception;
pub mod recovery;
mod render;
pub mod routing;
mod run;
pub mod stages;
pub mod state;
pub mod step_caps;
pub mod traverser;

pub use run::{
    EMPTY_QUESTION, MAX_STEPS_PER_PLAN, StageRecord, ThoroughReport, analyze, analyze_within,
};
