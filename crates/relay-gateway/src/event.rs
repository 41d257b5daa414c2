//! The provider-neutral description of one webhook, produced by [`crate::providers`] and acted on by
//! [`crate::intake`]. Wire JSON ends at the providers; everything after works on these types.

pub use relay_core::engage::{BodyChange, IssueEvent, NoteEvent, Stamp};

/// What one delivery is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParsedEvent {
    /// A connectivity check (GitHub `ping`).
    Ping,
    /// Recorded, never acted on; the reason is stored with the delivery.
    Ignored { reason: &'static str },
    /// Something happened to an issue or its thread.
    Issue(Box<IssueEvent>),
    /// A push to the repository's default branch.
    Push(PushEvent),
}

/// A push to the default branch: the checkout (and code graph) should move to `commit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushEvent {
    pub project_id: String,
    pub project_path: String,
    pub commit: String,
}
