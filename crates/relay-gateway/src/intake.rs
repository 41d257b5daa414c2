//! Durable intake: the delivery, the issue and its thread, the pending event and the job are written
//! in one atomic statement (see `relay_store::intake`). The HTTP answer is sent only after it commits.

use relay_core::{JobKind, TrackerSettings, UpdateCheckout};
use relay_store::PgPool;
use relay_store::intake::{self as store, Engagement, IssueDelivery};
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
        /// The issue, for issue work (`None` for repository work such as a push).
        issue_id: Option<i64>,
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
    let tracker = delivery.tracker.name.as_str();
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
    let (reason, ping) = match delivery.parsed {
        ParsedEvent::Push(push) => {
            let job = UpdateCheckout {
                tracker: tracker.to_owned(),
                project_id: push.project_id.clone(),
                project_path: push.project_path.clone(),
                commit: push.commit.clone(),
            };
            let key = job.concurrency_key();
            let job_payload = serde_json::to_value(&job).expect("job payloads serialize");
            let recorded = store::record_job_delivery(
                pool,
                tracker,
                delivery.event_type,
                action,
                delivery.delivery_key,
                "default_branch_push",
                delivery.payload,
                &relay_store::queue::NewJob {
                    kind: JobKind::UpdateCheckout.as_str(),
                    payload: &job_payload,
                    concurrency_key: Some(&key),
                    max_attempts: delivery.max_attempts,
                },
            )
            .await?;
            return Ok(match recorded {
                None => Recorded::Duplicate,
                Some((delivery_id, job_id)) => Recorded::Accepted {
                    delivery_id,
                    issue_id: None,
                    job_id,
                    reason: "default_branch_push",
                },
            });
        }
        ParsedEvent::Ping => ("ping", true),
        ParsedEvent::Ignored { reason } => (*reason, false),
        ParsedEvent::Issue(event) => {
            let note = event.note.as_ref().map(|n| &n.note);
            let stored = if engage::needs_context(event, delivery.tracker) {
                store::issue_context(pool, tracker, &event.issue, delivery.tracker.bot(), note)
                    .await?
            } else {
                store::IssueContext::default()
            };
            let context = Context {
                bot_in_thread: stored.bot_in_thread,
                stored_body: stored.body,
                stored_note_body: stored.note_body,
            };
            let decision = engage::decide(event, delivery.tracker, &context);
            let (engage, ignore_reason) = match decision {
                Decision::Engage(kind) => (
                    Some(Engagement {
                        kind,
                        actor: &event.actor,
                        job_kind: JobKind::ProcessIssue.as_str(),
                        max_attempts: delivery.max_attempts,
                    }),
                    "",
                ),
                Decision::Ignore(reason) => (None, reason),
            };
            let recorded = store::record_issue_delivery(
                pool,
                &IssueDelivery {
                    tracker,
                    event_type: delivery.event_type,
                    action,
                    delivery_key: delivery.delivery_key,
                    payload: delivery.payload,
                    issue: &event.issue,
                    installation_id: event.installation_id,
                    note,
                    engage,
                    ignore_reason,
                },
            )
            .await?;
            return Ok(match (recorded, decision) {
                (None, _) => Recorded::Duplicate,
                (Some(r), Decision::Engage(kind)) => Recorded::Accepted {
                    delivery_id: r.delivery_id,
                    issue_id: Some(r.issue_id),
                    job_id: r
                        .job_id
                        .expect("an engaging delivery creates or joins a job"),
                    reason: kind,
                },
                (Some(r), Decision::Ignore(reason)) => Recorded::Ignored {
                    delivery_id: r.delivery_id,
                    reason,
                    ping: false,
                },
            });
        }
    };
    let recorded = store::record_plain_delivery(
        pool,
        tracker,
        delivery.event_type,
        action,
        delivery.delivery_key,
        reason,
        delivery.payload,
    )
    .await?;
    Ok(match recorded {
        None => Recorded::Duplicate,
        Some(delivery_id) => Recorded::Ignored {
            delivery_id,
            reason,
            ping,
        },
    })
}
