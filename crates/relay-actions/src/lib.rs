//! Write-back: the Validator and the idempotent ActionExecutor.
//!
//! The planner's [`relay_core::ActionBatch`] goes through three steps, each its own call so the
//! orchestrator decides what shares a transaction:
//!
//! 1. [`ValidationContext::load`] then [`validate()`]: every rule checked against this issue's state,
//!    batch-aware (a gap closed earlier in the batch counts). A [`ValidationReport`] is text for the
//!    planner (`FAILED: update_gaps.close[0] | gap 9 is not a gap of this issue | permanent`); it
//!    never fails the job. Only [`validate()`] can build a [`ValidatedBatch`].
//! 2. [`Executor::apply`] inside the caller's transaction (state changes + outbox rows), then the
//!    caller raises its watermark in the same transaction and commits — or [`Executor::execute`],
//!    which does exactly that with a [`WatermarkRaise`]. Nothing reaches a tracker in this step.
//! 3. [`Executor::drain_outbox`]: the tracker writes, in order, each carrying
//!    `<!-- relay:write:KEY -->`; a write that may already have reached the tracker is looked up by
//!    its marker before it is tried again. Waits longer than [`RetryPolicy::max_inline_wait`] come
//!    back as [`DrainReport::reschedule_after`] for the job queue; nothing sleeps that long.
//!
//! Layout: [`action`] (one file per planner action: its validated form, rules and application),
//! [`authority`], [`context`], [`validate`](mod@validate) (the batch walk), [`report`], [`execute`](mod@execute),
//! [`validated`], [`drain`], [`retry`], [`keys`] (every outbox key format), [`outbox`] (a
//! [`relay_tracker::TrackerWrite`] as an outbox row and back), [`notices`] (Relay's
//! own notices: acknowledgement, budget note, status comments), [`spec`], [`summary`] (the living
//! summary comment per issue), [`error`].
//!
//! Sources may be places of related repositories (`acme/sdk:pkg/x.go`, verified in that
//! repository's checkout, [`RelatedSnapshot`], and stored with its commit); nothing written may
//! name a place of one more private than the issue ([`action::privacy`], [`validate_spec`]).
//!
//! Only this crate enqueues outbox rows: a batch's writes ([`Executor::apply`]), the summary's and
//! the [`notices`].

pub mod action;
pub mod authority;
pub mod context;
pub mod drain;
pub mod error;
pub mod execute;
pub mod keys;
pub mod notices;
pub mod outbox;
pub mod report;
pub mod retry;
pub mod spec;
pub mod summary;
pub mod validate;
pub mod validated;

pub use action::{
    CommentToPost, FindingChanges, GapChanges, GapToOpen, LearningsToPropose, SpecVerdictToSet,
    ValidatedAction, VerifiedSource,
};
pub use authority::{Authority, PendingNote};
pub use context::{
    Existing, GapState, IssueRows, KnownFinding, KnownGap, LearningProvenance, RelatedSnapshot,
    Snapshot, SpecState, ThreadRef, ValidationContext,
};
pub use drain::{DrainReport, SentWrite};
pub use error::{Error, Result};
pub use execute::{Applied, Executor, Lease, WatermarkRaise};
pub use keys::BatchId;
pub use report::{Failure, Retry, ValidationReport};
pub use retry::{Jitter, RetryPolicy, Wait};
pub use validate::{validate, validate_spec};
pub use validated::ValidatedBatch;
