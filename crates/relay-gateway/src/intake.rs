//! Durable intake: one transaction records the delivery, refreshes the issue and its thread, and
//! enqueues work. The HTTP answer is sent only after it commits.

use relay_core::{JobKind, ProcessIssue, TrackerSettings};
use relay_store::PgPool;
use relay_store::deliveries::{self, NewDelivery, Outcome};
use relay_store::issues::{self, NewIssueEvent};
use relay_store::queue::{self, NewJob};
use serde_json::Value;

use crate::engage::{self, Context, Decision};
use crate::event::ParsedEvent;

/// What intake did with a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// Seen before; nothing new was created.
    Duplicate,
    /// Recorded as ignored (with the reason).
    Ignored {
        delivery_id: i64,
        reason: &'static str,
        ping: bool,
    },
    /// Recorded and work was created or joined.
    Accepted {
        delivery_id: i64,
        issue_id: i64,
        job_id: i64,
        reason: &'static str,
    },
}

/// The delivery being recorded.
pub struct Delivery<'a> {
    pub tracker: &'a TrackerSettings,
    pub event_type: &'a str,
    pub delivery_key: &'a str,
    pub payload: &'a Value,
    pub parsed: &'a ParsedEvent,
    /// `max_attempts` for jobs this delivery creates.
    pub max_attempts: i32,
}

pub async fn record(pool: &PgPool, delivery: &Delivery<'_>) -> relay_store::Result<Recorded> {
    let tracker_name = delivery.tracker.name.as_str();
    let mut tx = pool.begin().await?;
    let action = delivery
        .payload
        .get("action")
        .and_then(Value::as_str)
        .or_else(|| {
            delivery
                .payload
                .pointer("/object_attributes/action")
                .and_then(Value::as_str)
        });
    let Some(delivery_id) = deliveries::insert(
        &mut tx,
        &NewDelivery {
            tracker: tracker_name,
            event_type: delivery.event_type,
            action,
            delivery_key: delivery.delivery_key,
            payload: delivery.payload,
        },
    )
    .await?
    else {
        // Nothing written; the transaction rolls back on drop.
        return Ok(Recorded::Duplicate);
    };

    let recorded = match delivery.parsed {
        ParsedEvent::Ping => {
            deliveries::set_outcome(&mut tx, delivery_id, Outcome::Ignored, "ping", None, None)
                .await?;
            Recorded::Ignored {
                delivery_id,
                reason: "ping",
                ping: true,
            }
        }
        ParsedEvent::Ignored { reason } => {
            deliveries::set_outcome(&mut tx, delivery_id, Outcome::Ignored, reason, None, None)
                .await?;
            Recorded::Ignored {
                delivery_id,
                reason,
                ping: false,
            }
        }
        ParsedEvent::Issue(event) => {
            let issue = &event.issue;
            let mut context = Context::default();
            if event.body_change.is_some() {
                context.stored_body =
                    issues::stored_body(&mut tx, tracker_name, &issue.project_id, issue.number)
                        .await?;
            }
            let issue_id = issues::upsert(&mut tx, tracker_name, issue).await?;
            if let Some(note) = &event.note {
                context.bot_in_thread = issues::has_posted_in_thread(
                    &mut tx,
                    issue_id,
                    note.note.discussion_id.as_deref(),
                    delivery.tracker.bot(),
                )
                .await?;
                if note.edited {
                    context.stored_note_body =
                        issues::stored_note_body(&mut tx, issue_id, &note.note.note_id).await?;
                }
                issues::upsert_note(&mut tx, issue_id, &note.note).await?;
            }
            match engage::decide(event, delivery.tracker, &context) {
                Decision::Engage(kind) => {
                    issues::insert_event(
                        &mut tx,
                        &NewIssueEvent {
                            issue_id,
                            delivery_id,
                            kind,
                            actor: &event.actor,
                            note_id: event.note.as_ref().map(|n| n.note.note_id.as_str()),
                        },
                    )
                    .await?;
                    let payload = ProcessIssue { issue_id };
                    let key = payload.concurrency_key();
                    let payload = serde_json::to_value(&payload).expect("job payloads serialize");
                    let job_id = queue::enqueue(
                        &mut tx,
                        &NewJob {
                            kind: JobKind::ProcessIssue.as_str(),
                            payload: &payload,
                            concurrency_key: Some(&key),
                            max_attempts: delivery.max_attempts,
                        },
                    )
                    .await?
                    .job_id();
                    deliveries::set_outcome(
                        &mut tx,
                        delivery_id,
                        Outcome::Accepted,
                        kind,
                        Some(issue_id),
                        Some(job_id),
                    )
                    .await?;
                    Recorded::Accepted {
                        delivery_id,
                        issue_id,
                        job_id,
                        reason: kind,
                    }
                }
                Decision::Ignore(reason) => {
                    deliveries::set_outcome(
                        &mut tx,
                        delivery_id,
                        Outcome::Ignored,
                        reason,
                        Some(issue_id),
                        None,
                    )
                    .await?;
                    Recorded::Ignored {
                        delivery_id,
                        reason,
                        ping: false,
                    }
                }
            }
        }
    };
    tx.commit().await?;
    Ok(recorded)
}
