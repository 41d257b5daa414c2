//! `GET /api/jobs/{id}`: one job and the outcome of each of its attempts.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::AppState;
use crate::error::ApiError;

pub async fn show(
    State(state): State<AppState>,
    Path(id): Path<relay_core::JobId>,
) -> Result<Response, ApiError> {
    super::with_timeout(&state, async {
        let Some(job) = relay_store::browse::job(&state.pool, id).await? else {
            return Ok(super::not_found("job"));
        };
        let runs = relay_store::browse::job_runs(&state.pool, id).await?;
        Ok(Json(json!({ "job": with_events_url(&job, id), "runs": runs })).into_response())
    })
    .await
}

/// `job` as JSON with `events_url`: where its run trace streams (`GET /api/jobs/{id}/events`).
pub(crate) fn with_events_url(
    job: &impl serde::Serialize,
    id: relay_core::JobId,
) -> serde_json::Value {
    let mut value = serde_json::to_value(job).unwrap_or_default();
    if let Some(object) = value.as_object_mut() {
        object.insert("events_url".into(), json!(format!("/api/jobs/{id}/events")));
    }
    value
}
