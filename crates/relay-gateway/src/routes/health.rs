//! `GET /healthz` and `GET /readyz`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::{AppState, ReadinessDetail};

/// The process is up and serving.
pub async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// Ready when the database answers within the timeout and every migration has been applied. Parts
/// running degraded (the code graph while its store is unavailable) do not make the process
/// unready (200): the status says `degraded` and `degraded` lists each part with what still
/// works, and on the admin listener the reason ([`ReadinessDetail`]). The other answers are
/// fixed texts: an error's own text goes only to the log.
pub async fn readyz(
    State(state): State<AppState>,
    detail: ReadinessDetail,
) -> (StatusCode, Json<Value>) {
    match tokio::time::timeout(state.db_timeout(), relay_store::readiness(&state.pool)).await {
        Ok(Ok(true)) => {
            let degraded = state.degraded.snapshot(detail);
            if degraded.is_empty() {
                (StatusCode::OK, Json(json!({ "status": "ready" })))
            } else {
                (
                    StatusCode::OK,
                    Json(json!({ "status": "degraded", "degraded": degraded })),
                )
            }
        }
        Ok(Ok(false)) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "not ready", "reason": "migrations pending" })),
        ),
        Ok(Err(e)) => {
            tracing::warn!(error.message = %e, "readiness check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "not ready", "reason": "database unavailable" })),
            )
        }
        Err(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "not ready", "reason": "database timed out" })),
        ),
    }
}
