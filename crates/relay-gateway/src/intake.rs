//! Durable intake: the delivery, the issue and its thread, the pending event and the job are written
//! in one atomic statement (see `relay_store::intake`). The HTTP answer is sent only after it commits.
//! Issue events go through `relay_store::event_intake`, the path the reconciler's finds take too.

use relay_core::engage::{Decision, Origin};
use relay_core::{DeliveryId, IssueId, JobId};
use relay_core::{JobKind, TrackerSettings, UpdateCheckout};
use relay_store::PgPool;
use relay_store::event_intake::{EventIntake, record_issue_event};
use relay_store::intake as store;
use relay_telemetry::metrics::RECONCILE_EVENTS_TOTAL;
use serde_json::Value;

use crate::event::ParsedEvent;

/// The reason recorded for a delivery from a project outside `[[trackers]] projects`.
pub const PROJECT_NOT_ALLOWED: &str = "project_not_allowed";

/// What intake did with a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recorded {
    /// Seen before; nothing new was created.
    Duplicate,
    /// Recorded as ignored (with the reason).
    Ignored {
        delivery_id: DeliveryId,
        reason: &'static str,
        ping: bool,
    },
    /// Recorded and work was created or joined.
    Accepted {
        delivery_id: DeliveryId,
        /// The issue, for issue work (`None` for repository work such as a push).
        issue_id: Option<IssueId>,
        job_id: JobId,
        reason: &'static str,
    },
}

/// The delivery being recorded.
pub struct Delivery<'a> {
    pub tracker: &'a TrackerSettings,
    pub event_type: &'a str,
    /// The payload's action word, as the tracker's webhook format finds it.
    pub action: Option<&'a str>,
    pub delivery_key: &'a str,
    pub payload: &'a Value,
    pub parsed: &'a ParsedEvent,
    /// `max_attempts` for jobs this delivery creates.
    pub max_attempts: i32,
}

/// Why a delivery could not be recorded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IntakeError {
    #[error(transparent)]
    Store(#[from] relay_store::Error),
    /// The intake statement recorded an engaging delivery but returned no job: a broken invariant
    /// of the statement, answered 500 rather than a panic in the request.
    #[error("intake recorded engaging delivery {delivery_id} without a job")]
    JobMissing { delivery_id: DeliveryId },
}

pub async fn record(pool: &PgPool, delivery: &Delivery<'_>) -> Result<Recorded, IntakeError> {
    let tracker = delivery.tracker.name.as_str();
    let action = delivery.action;
    let (reason, ping) = match delivery.parsed {
        ParsedEvent::Push(push)
            if !delivery
                .tracker
                .allows_project(&push.project_id, &push.project_path) =>
        {
            (PROJECT_NOT_ALLOWED, false)
        }
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
        ParsedEvent::Issue(event)
            if !delivery
                .tracker
                .allows_project(&event.issue.project_id, &event.issue.project_path) =>
        {
            (PROJECT_NOT_ALLOWED, false)
        }
        ParsedEvent::Issue(event) => {
            let outcome = record_issue_event(
                pool,
                &EventIntake {
                    tracker: delivery.tracker,
                    event,
                    origin: Origin::Webhook,
                    event_type: delivery.event_type,
                    action,
                    delivery_key: delivery.delivery_key,
                    payload: delivery.payload,
                    max_attempts: delivery.max_attempts,
                },
            )
            .await?;
            if let (Some(_), Decision::Engage(_)) = (outcome.recorded, outcome.decision) {
                metrics::counter!(RECONCILE_EVENTS_TOTAL, "origin" => Origin::Webhook.as_str())
                    .increment(1);
            }
            return Ok(match (outcome.recorded, outcome.decision) {
                (None, _) => Recorded::Duplicate,
                (Some(r), Decision::Engage(kind)) => Recorded::Accepted {
                    delivery_id: r.delivery_id,
                    issue_id: Some(r.issue_id),
                    job_id: r.job_id.ok_or(IntakeError::JobMissing {
                        delivery_id: r.delivery_id,
                    })?,
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
