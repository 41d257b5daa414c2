//! `POST /webhooks/{tracker}`.

use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use relay_telemetry::metrics::{WEBHOOK_DELIVERIES_TOTAL, WEBHOOK_REQUEST_DURATION_SECONDS};
use secrecy::ExposeSecret;
use serde_json::{Value, json};

use crate::AppState;
use crate::error::ApiError;
use crate::intake::{self, Delivery, Recorded};
use crate::limits::client::ClientAddr;
use crate::limits::{Refusal, refuse};
use crate::providers::{self, DeliveryHeaders, FailedSecret};

/// Verifies, parses, records and answers one webhook delivery.
pub async fn receive(
    State(state): State<AppState>,
    Path(tracker_name): Path<String>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let started = Instant::now();
    let Some(tracker) = state.trackers.get(&tracker_name).cloned() else {
        count("unknown", UNVERIFIED, REJECTED);
        return Err(ApiError::UnknownTracker);
    };
    let span = tracing::Span::current();
    span.record("tracker", tracker.name.as_str());

    let format = providers::format(tracker.provider);
    // A client past its allowance of wrong secrets is refused without a comparison.
    let guesses = format.failed_secret() == FailedSecret::Guess;
    let client = client.map(|Extension(client)| client);
    let ip = client.map(|c| c.ip);
    if guesses && !state.webhook_throttle.allows(ip) {
        count(tracker.name.as_str(), UNVERIFIED, REJECTED);
        tracing::warn!(client = ?client.map(|c| c.to_string()), "webhook refused: too many wrong secrets");
        return Ok(refuse(Refusal::WebhookThrottled));
    }
    // Authenticate before looking at anything else in the request.
    let secret = tracker.webhook_secret.expose_secret().as_bytes();
    if let Err(rejection) = format.verify(&headers, &body, secret) {
        if guesses {
            state.webhook_throttle.failed(ip);
        }
        count(tracker.name.as_str(), UNVERIFIED, REJECTED);
        tracing::warn!(reason = %rejection, client = ?client.map(|c| c.to_string()), "webhook rejected");
        return Err(ApiError::Unauthorized(rejection.to_string()));
    }
    if guesses {
        state.webhook_throttle.succeeded(ip);
    }

    let delivery: DeliveryHeaders = format.delivery(&headers, &body).map_err(|e| {
        count(tracker.name.as_str(), "unknown", REJECTED);
        ApiError::BadRequest(e.to_string())
    })?;
    span.record("event", delivery.event.as_str());
    let event_label = delivery.event.clone();

    // NULs are replaced here, before parsing, so every stored copy agrees (see `crate::payload`).
    let payload: Value = crate::payload::parse(&body).map_err(|e| {
        count(tracker.name.as_str(), &event_label, REJECTED);
        ApiError::BadRequest(format!("body is not valid JSON: {e}"))
    })?;
    if !payload.is_object() {
        count(tracker.name.as_str(), &event_label, REJECTED);
        return Err(ApiError::BadRequest("body must be a JSON object".into()));
    }
    let parsed = format.parse(&delivery.event, &payload);

    let recorded = tokio::time::timeout(
        state.db_timeout(),
        intake::record(
            &state.pool,
            &Delivery {
                tracker: &tracker,
                event_type: &delivery.event,
                action: format.action(&payload),
                delivery_key: &delivery.delivery_key,
                payload: &payload,
                parsed: &parsed,
                max_attempts: state.job_max_attempts,
            },
        ),
    )
    .await
    .map_err(|_| ApiError::Unavailable(None))??;

    metrics::histogram!(WEBHOOK_REQUEST_DURATION_SECONDS, "tracker" => tracker.name.to_string())
        .record(started.elapsed().as_secs_f64());
    let response = match recorded {
        Recorded::Duplicate => {
            count(tracker.name.as_str(), &event_label, "duplicate");
            tracing::info!(delivery.id = %delivery.delivery_id, "duplicate delivery");
            (StatusCode::OK, Json(json!({ "outcome": "duplicate" })))
        }
        Recorded::Ignored {
            delivery_id,
            reason,
            ping,
        } => {
            count(tracker.name.as_str(), &event_label, "ignored");
            tracing::info!(delivery.id = %delivery.delivery_id, delivery.row = delivery_id.get(), reason, "delivery ignored");
            let status = if ping {
                StatusCode::OK
            } else {
                StatusCode::ACCEPTED
            };
            (
                status,
                Json(json!({ "outcome": "ignored", "reason": reason, "delivery": delivery_id })),
            )
        }
        Recorded::Accepted {
            delivery_id,
            issue_id,
            job_id,
            reason,
        } => {
            count(tracker.name.as_str(), &event_label, "accepted");
            // Full means a wake-up is already pending; that one covers this job too.
            let _ = state.wake_workers.try_send(());
            tracing::info!(delivery.id = %delivery.delivery_id, delivery.row = delivery_id.get(), issue.id = ?issue_id.map(relay_core::IssueId::get), job.id = job_id.get(), reason, "delivery accepted");
            (
                StatusCode::ACCEPTED,
                Json(
                    json!({ "outcome": "accepted", "reason": reason, "delivery": delivery_id, "job": job_id }),
                ),
            )
        }
    };
    Ok(response.into_response())
}

/// The outcome of a delivery refused (401, 400).
const REJECTED: &str = "rejected";

/// The event label of a delivery refused before its event could be read: the signature or token
/// did not verify (a wrong webhook secret).
const UNVERIFIED: &str = "unverified";

/// Creates the refused-delivery series of each configured tracker at 0 (`{tracker, event =
/// "unverified", outcome = "rejected"}`), so the first refused webhook after a start is an
/// increase the alert sees (see [`relay_telemetry::metrics::zero_counter`]). Other events' names
/// are the trackers' and not known before they arrive; the alert rule copes with those.
pub fn zero_counters<'a>(trackers: impl IntoIterator<Item = &'a str>) {
    for tracker in trackers {
        relay_telemetry::metrics::zero_counter(
            WEBHOOK_DELIVERIES_TOTAL,
            &[
                ("tracker", tracker),
                ("event", UNVERIFIED),
                ("outcome", REJECTED),
            ],
        );
    }
}

fn count(tracker: &str, event: &str, outcome: &'static str) {
    metrics::counter!(
        WEBHOOK_DELIVERIES_TOTAL,
        "tracker" => tracker.to_owned(),
        "event" => event.to_owned(),
        "outcome" => outcome
    )
    .increment(1);
}
