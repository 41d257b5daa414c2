//! The ContextBuilder: what the planner and the spec writer know about an issue, injected into the
//! prompt rather than fetched by tools (read data is cheap to inject and costly to discover).
//!
//! The input ([`IssueContext`]) is a plain, deserializable struct: the worker fills it from the
//! store and the tracker, `relay plan` reads it from a JSON file. It has no field that can hold a
//! Relay secret, and the builder additionally replaces any configured secret value it is given
//! ([`ContextBuilder::with_redactions`]) wherever it appears, so a human pasting one is not echoed.
//!
//! Layout: [`input`] (the struct), [`render`] (sections and chat turns), [`guidance`] (the
//! repository's own guidance, below the system rules), [`tokens`] (the estimate and truncation
//! helpers).

pub mod guidance;
pub mod input;
pub mod render;
pub mod tokens;

pub use guidance::render_guidance;
pub use input::{
    ClosedGapView, FindingView, IssueContext, LearningView, OpenGapView, SpecView, ThreadNoteView,
    TriggerView,
};
pub use render::{BuiltContext, ContextBuilder};
pub use tokens::estimate_tokens;
