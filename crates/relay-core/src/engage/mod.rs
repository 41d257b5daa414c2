//! Engagement: which issue events create work for the bot, and what makes two events one.
//!
//! Shared by the two paths an event can take into Relay — a webhook (the gateway) and the
//! reconciler (the worker, polling the tracker for what webhooks missed) — so both decide the same
//! way and name an event the same way. Pure functions over provider-neutral facts; the store
//! supplies [`Context`], the gateway and `relay-tracker` supply the [`IssueEvent`]s.
//!
//! Layout: [`event`] (the facts of one event), [`decide`](mod@decide) (the rules), [`mention`] (`@bot`
//! detection in Markdown), [`identity`] (the content identity of an event and its [`Origin`]).

pub mod decide;
pub mod event;
pub mod identity;
pub mod mention;

pub use decide::{Context, Decision, TRIGGER_LABEL, decide, needs_context, trigger_labels_added};
pub use event::{BodyChange, IssueEvent, NoteEvent, Stamp};
pub use identity::{Origin, content_identity, event_key};
pub use mention::mentions;
