//! `GET /metrics`: Prometheus text format.

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use relay_telemetry::metrics::{QUEUE_DEPTH, QUEUE_OLDEST_DUE_SECONDS};

use crate::AppState;

/// Refreshes the queue gauges (depth, age of the longest-waiting due job) from the database
/// (skipped if it is unreachable) and renders every metric recorded in this process.
pub async fn render(State(state): State<AppState>) -> impl IntoResponse {
    let queue = async {
        let depths = relay_store::queue::depth(&state.pool).await?;
        let oldest = relay_store::queue::oldest_due_age_secs(&state.pool).await?;
        Ok::<_, relay_store::Error>((depths, oldest))
    };
    match tokio::time::timeout(state.db_timeout(), queue).await {
        Ok(Ok((depths, oldest))) => {
            for (status, count) in depths {
                metrics::gauge!(QUEUE_DEPTH, "status" => status).set(count as f64);
            }
            metrics::gauge!(QUEUE_OLDEST_DUE_SECONDS).set(oldest);
        }
        Ok(Err(e)) => tracing::debug!(error.message = %e, "queue depth unavailable"),
        Err(_) => tracing::debug!("queue depth timed out"),
    }
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}
