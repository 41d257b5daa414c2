//! `GET /metrics`: Prometheus text format.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use relay_telemetry::metrics::QUEUE_DEPTH;

use crate::AppState;

/// Refreshes the queue-depth gauges from the database (skipped if it is unreachable) and renders
/// every metric recorded in this process.
pub async fn render(State(state): State<AppState>) -> impl IntoResponse {
    match tokio::time::timeout(state.db_timeout(), relay_store::queue::depth(&state.pool)).await {
        Ok(Ok(depths)) => {
            for (status, count) in depths {
                metrics::gauge!(QUEUE_DEPTH, "status" => status).set(count as f64);
            }
        }
        Ok(Err(e)) => tracing::debug!(error.message = %e, "queue depth unavailable"),
        Err(_) => tracing::debug!("queue depth timed out"),
    }
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}
