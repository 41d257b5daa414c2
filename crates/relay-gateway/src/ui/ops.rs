//! `GET /ui/ops`: operations: queue depth by state, dead jobs with their root cause (the LLM's or
//! the tracker's classified error), last error and a link to their trace, tracker writes that
//! failed for good, and the latest deliveries with what Relay decided.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use maud::html;
use relay_telemetry::metrics::WEBHOOK_DELIVERIES_TOTAL;

use super::format;
use super::issues::css_word;
use super::layout::{Nav, page};
use crate::AppState;
use crate::error::ApiError;

/// Rows of each listing.
const ROWS: i64 = 50;
/// Job states, in the order a job moves through them.
const JOB_STATES: [&str; 5] = ["queued", "running", "succeeded", "failed", "dead"];

pub async fn show(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, ApiError> {
    if super::session::signed_in(&state, &headers).await?.is_none() {
        return Ok(super::to_sign_in());
    }
    let (depth, dead, failed, deliveries) = crate::routes::api::with_timeout(&state, async {
        Ok((
            relay_store::queue::depth(&state.pool).await?,
            relay_store::status::dead_jobs(&state.pool, ROWS).await?,
            relay_store::outbox::failed_writes(
                &state.pool,
                relay_store::outbox::FailedWrites::All,
                ROWS,
            )
            .await?,
            relay_store::status::recent_deliveries(&state.pool, ROWS).await?,
        ))
    })
    .await?;
    let duplicates = duplicate_deliveries(&state.metrics.render());
    // In the order a job moves through them.
    let depth: Vec<(String, i64)> = JOB_STATES
        .iter()
        .map(|s| {
            let n = depth
                .iter()
                .find(|(status, _)| status == s)
                .map_or(0, |(_, n)| *n);
            ((*s).to_owned(), n)
        })
        .collect();
    let body = html! {
        h1 { "Operations" }
        section #queue {
            h2 { "Queue" }
            table.depth {
                thead { tr { @for (status, _) in &depth { th.num { (status) } } } }
                tbody { tr { @for (_, n) in &depth { td.num { (format::count(*n)) } } } }
            }
        }
        section #dead {
            h2 { "Dead jobs" }
            @if dead.is_empty() { p.empty { "None." } } @else {
                table {
                    thead { tr { th { "Job" } th { "Kind" } th { "Issue" } th.num { "Attempts" } th { "Died" } th { "Cause" } th { "Last error" } } }
                    tbody { @for job in &dead {
                        tr {
                            td { a href=(format!("/ui/jobs/{}", job.id)) { "Job " (job.id) } }
                            td { (job.kind) }
                            td { @if let Some(issue) = job.issue_id { a href=(format!("/ui/issues/{issue}")) { "Issue " (issue) } } }
                            td.num { (job.attempts) }
                            td { (job.finished_at.map(format::time).unwrap_or_default()) }
                            td.cause { (job.last_cause.as_deref().unwrap_or("–")) }
                            td.error {
                                (job.last_error.as_deref().map(|e| format::clip(e, 300)).unwrap_or_default())
                                " " a href=(format!("/ui/jobs/{}#trace", job.id)) { "trace" }
                            }
                        }
                    } }
                }
            }
        }
        section #failed-writes {
            h2 { "Failed tracker writes" }
            @if failed.is_empty() { p.empty { "None." } } @else {
                table {
                    thead { tr { th { "Write" } th { "Issue" } th { "Kind" } th.num { "Attempts" } th { "Recorded" } th { "Last error" } } }
                    tbody { @for write in &failed {
                        tr {
                            td { (write.id) }
                            td { a href=(format!("/ui/issues/{}", write.issue_id)) { (write.tracker) " · " (write.project_path) " #" (write.number) } }
                            td { (write.kind) }
                            td.num { (write.attempts) }
                            td { (format::time(write.created_at)) }
                            td.error { (write.last_error.as_deref().map(|e| format::clip(e, 300)).unwrap_or_default()) }
                        }
                    } }
                }
            }
        }
        section #deliveries {
            h2 { "Recent deliveries" }
            p.note {
                "Duplicate deliveries answered since this process started: " (format::count(duplicates))
                " (a redelivery writes no row, so it is not listed)."
            }
            @if deliveries.is_empty() { p.empty { "None yet." } } @else {
                table {
                    thead { tr { th { "Received" } th { "Tracker" } th { "Event" } th { "Decision" } th { "Why" } th { "Issue" } th { "Job" } } }
                    tbody { @for d in &deliveries {
                        tr {
                            td { (format::time(d.received_at)) }
                            td { (d.tracker) }
                            td { (d.event_type) @if let Some(action) = &d.action { " · " (action) } }
                            td { span class=(format!("state {}", css_word(&d.outcome))) {
                                (if d.outcome == "accepted" { "engaged" } else { d.outcome.as_str() })
                            } }
                            td { (d.reason) }
                            td { @if let Some(issue) = d.issue_id { a href=(format!("/ui/issues/{issue}")) { (issue) } } }
                            td { @if let Some(job) = d.job_id { a href=(format!("/ui/jobs/{job}")) { (job) } } }
                        }
                    } }
                }
            }
        }
    };
    Ok(super::html(
        StatusCode::OK,
        page("Operations", Nav::Operations, body),
    ))
}

/// The process's count of duplicate deliveries, read from its own metrics.
fn duplicate_deliveries(metrics: &str) -> i64 {
    metrics
        .lines()
        .filter(|line| line.starts_with(WEBHOOK_DELIVERIES_TOTAL))
        .filter(|line| line.contains("outcome=\"duplicate\""))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as i64
}

#[cfg(test)]
mod tests {
    #[test]
    fn duplicates_are_summed_from_the_metrics() {
        let text = "relay_webhook_deliveries_total{tracker=\"gh\",event=\"issues\",outcome=\"duplicate\"} 2\n\
                    relay_webhook_deliveries_total{tracker=\"gh\",event=\"note\",outcome=\"duplicate\"} 1\n\
                    relay_webhook_deliveries_total{tracker=\"gh\",event=\"issues\",outcome=\"accepted\"} 9\n";
        assert_eq!(super::duplicate_deliveries(text), 3);
    }
}
