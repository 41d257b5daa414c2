//! The spec writer (role `spec`): on `ready_for_spec_generation`, an LLM loop that may `explore`
//! and ends with `submit_spec` (every section of the spec as a field, so none can be missing). The
//! result is rendered to Markdown (the executor splits it into numbered comment parts under the
//! tracker limit: `relay_actions::spec::split_spec`);
//! the orchestrator stores it versioned and posts it through the executor.

pub mod document;
pub mod writer;

pub use document::{FileChange, SpecDocument};
pub use writer::{SpecDraft, SpecError, SpecWriter};

/// The spec writer's system prompt.
pub const SPEC_PROMPT: &str = include_str!("prompt.md");
