//! The one way an issue event enters Relay, whatever its path: a webhook (the gateway) or the
//! reconciler (the worker). Reads what the event may not say (only when the decision depends on
//! it), asks `relay_core::engage::decide`, and records the event with its origin and content
//! identity in intake's one statement ([`crate::intake::record_issue_delivery`]). Both paths call
//! this, so the worker cannot tell a reconciled event from a webhook.

use relay_core::engage::{self, Context, Decision, IssueEvent, Origin};
use relay_core::{JobKind, TrackerSettings};
use serde_json::Value;
use sqlx::PgPool;

use crate::Result;
use crate::intake::{self, Engagement, IssueDelivery, Recorded};

/// One issue event to decide on and record.
#[derive(Debug, Clone, Copy)]
pub struct EventIntake<'a> {
    pub tracker: &'a TrackerSettings,
    pub event: &'a IssueEvent,
    pub origin: Origin,
    /// The webhook's event type (`issue_comment`, `Note Hook`), or `reconcile`.
    pub event_type: &'a str,
    /// The provider's action word, when there is one.
    pub action: Option<&'a str>,
    /// Unique per tracker: the scoped webhook delivery key, or `reconcile:<event key>`.
    pub delivery_key: &'a str,
    /// Stored with the delivery: the webhook body, or a summary of what the reconciler found.
    pub payload: &'a Value,
    /// `max_attempts` of a job this event creates.
    pub max_attempts: i32,
}

/// What became of the event: `recorded` is `None` when it was a duplicate (same delivery key or
/// same content identity: nothing was written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventOutcome {
    pub decision: Decision,
    pub recorded: Option<Recorded>,
}

/// How `event` would be decided now, reading what the store knows only when the decision
/// depends on it. Writes nothing (`relay reconcile --dry-run`).
pub async fn decide_issue_event(
    pool: &PgPool,
    tracker: &TrackerSettings,
    event: &IssueEvent,
) -> Result<Decision> {
    let note = event.note.as_ref().map(|n| &n.note);
    let stored = if engage::needs_context(event, tracker) {
        let bot = tracker.bot_account();
        intake::issue_context(pool, tracker.name.as_str(), &event.issue, &bot, note).await?
    } else {
        intake::IssueContext::default()
    };
    let context = Context {
        bot_in_thread: stored.bot_in_thread,
        stored_body: stored.body,
        stored_note_body: stored.note_body,
    };
    Ok(engage::decide(event, tracker, &context))
}

/// Decides on `intake.event` and records it (see the module docs).
pub async fn record_issue_event(pool: &PgPool, intake: &EventIntake<'_>) -> Result<EventOutcome> {
    let event = intake.event;
    let tracker = intake.tracker;
    let note = event.note.as_ref().map(|n| &n.note);
    let decision = decide_issue_event(pool, tracker, event).await?;
    let (engagement, ignore_reason) = match decision {
        Decision::Engage(kind) => (
            Some(Engagement {
                kind,
                actor: &event.actor,
                job_kind: JobKind::ProcessIssue.as_str(),
                max_attempts: intake.max_attempts,
            }),
            None,
        ),
        Decision::Ignore(reason) => (None, Some(reason)),
    };
    let event_key = engage::content_identity(tracker.name.as_str(), event, intake.action);
    // What a label engagement engaged on: the job narrows by these, not the issue's labels.
    let trigger_labels = matches!(decision, Decision::Engage(engage::TRIGGER_LABEL))
        .then(|| engage::trigger_labels_added(event, tracker));
    let recorded = intake::record_issue_delivery(
        pool,
        &IssueDelivery {
            tracker: tracker.name.as_str(),
            event_type: intake.event_type,
            action: intake.action,
            delivery_key: intake.delivery_key,
            payload: intake.payload,
            issue: &event.issue,
            installation_id: event.installation_id,
            note,
            engage: engagement,
            ignore_reason,
            origin: intake.origin.as_str(),
            event_key: event_key.as_deref(),
            trigger_labels: trigger_labels.as_deref(),
        },
    )
    .await?;
    Ok(EventOutcome { decision, recorded })
}
