//! `GET /ui/jobs/{id}`: one job: its attempts, the run trace as a timeline (live while the job
//! runs: `assets/live.js` follows `GET /api/jobs/{id}/events` from the last event shown, and
//! `EventSource` resumes with `Last-Event-ID`), and its LLM calls with tokens and cost.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use maud::{Markup, html};
use relay_store::llm_usage::LlmUsage;
use relay_store::trace::{Event, JobProgress};
use serde_json::Value;

use super::format;
use super::issues::css_word;
use super::layout::{Nav, page_with_script};
use crate::AppState;
use crate::error::ApiError;

/// Events the page renders; later ones arrive through the live stream.
const MAX_EVENTS: usize = 5_000;

pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<relay_core::JobId>,
) -> Result<Response, ApiError> {
    if super::session::signed_in(&state, &headers).await?.is_none() {
        return Ok(super::to_sign_in());
    }
    let loaded = crate::routes::api::with_timeout(&state, async {
        let Some(job) = relay_store::browse::job(&state.pool, id).await? else {
            return Ok(None);
        };
        let progress = relay_store::trace::job_progress(&state.pool, id).await?;
        let runs = relay_store::trace::runs(&state.pool, id).await?;
        let mut events: Vec<Event> = Vec::new();
        loop {
            let after = events.last().map_or(0, |e| e.cursor);
            let page = relay_store::trace::events_after(
                &state.pool,
                id,
                after,
                relay_store::trace::MAX_PAGE,
            )
            .await?;
            let full = page.len() as i64 == relay_store::trace::MAX_PAGE;
            events.extend(page);
            if !full || events.len() >= MAX_EVENTS {
                break;
            }
        }
        events.truncate(MAX_EVENTS);
        let calls = relay_store::llm_usage::for_job(&state.pool, id).await?;
        Ok(Some((job, progress, runs, events, calls)))
    })
    .await?;
    let Some((job, progress, runs, events, calls)) = loaded else {
        return Ok(super::not_found("No such job."));
    };
    let live = matches!(progress, Some(JobProgress::Live));
    let issue_id = job.payload["issue_id"].as_i64();
    let after = events.last().map_or(0, |e| e.cursor);
    let body = html! {
        p.crumbs {
            a href="/ui" { "Issues" }
            @if let Some(issue) = issue_id { " / " a href=(format!("/ui/issues/{issue}")) { "Issue" } }
        }
        h1 { "Job " (job.id) " · " (job.kind) }
        p.meta {
            span class=(format!("state {}", css_word(&job.status))) { (job.status) }
            " · attempt " (job.attempts) " of " (job.max_attempts)
            " · created " (format::time(job.created_at))
            @if let Some(finished) = job.finished_at { " · finished " (format::time(finished)) }
        }
        @if let Some(cause) = &job.last_cause {
            p.cause { "Cause: " (cause) }
        }
        @if let Some(error) = &job.last_error {
            pre.error { (format::clip(error, 4000)) }
        }
        @if !runs.is_empty() {
            h2 { "Attempts" }
            table {
                thead { tr { th { "Run" } th.num { "Attempt" } th { "Worker" } th { "Started" } th { "Outcome" } th.num { "Dropped events" } } }
                tbody { @for run in &runs {
                    tr {
                        td { (run.id) } td.num { (run.attempt) } td { (run.worker) }
                        td { (format::time(run.started_at)) }
                        td { (run.outcome.as_deref().unwrap_or("running")) }
                        td.num { (run.dropped) }
                    }
                } }
            }
        }
        h2 #trace { "Trace" }
        p #live-status .live-status data-live=(live) {
            @if live { "Running: new events appear here as they happen." } @else { "Finished." }
        }
        @if live { noscript { p { "The live timeline needs JavaScript; reload the page to see new events." } } }
        @if events.len() >= MAX_EVENTS {
            p.note { "Showing the first " (MAX_EVENTS) " events; " code { "relay trace " (job.id) } " prints them all." }
        }
        table.timeline {
            thead { tr { th { "Time (UTC)" } th { "Agent" } th { "Event" } th { "Detail" } th.num { "Tokens" } th.num { "ms" } } }
            tbody #timeline data-job=(job.id) data-after=(after) data-live=(live) {
                @for event in &events { (event_row(event)) }
            }
        }
        h2 { "LLM calls" }
        (llm_calls(&state, &calls))
    };
    let title = format!("Job {}", job.id);
    Ok(super::html(
        StatusCode::OK,
        page_with_script(&title, Nav::Detail, body, "/ui/assets/live.js"),
    ))
}

/// One timeline row; `assets/live.js` builds the same cells for live events.
fn event_row(event: &Event) -> Markup {
    let p = &event.payload;
    html! {
        tr class=(format!("event {}", css_word(&event.kind))) data-cursor=(event.cursor) {
            td { (format::clock(event.at)) }
            td { (event.agent) }
            td { (event.kind) }
            td.detail { (format::clip(&detail(&event.kind, p), 300)) }
            td.num { (tokens(p)) }
            td.num { (duration(p)) }
        }
    }
}

/// What the event is about, in a few words (mirrored by `detail` in `assets/live.js`).
pub fn detail(kind: &str, p: &Value) -> String {
    let s = |key: &str| p[key].as_str().unwrap_or_default().to_owned();
    match kind {
        "llm_call" => format!("{} {} {}", s("role"), s("model"), s("outcome")),
        "tool_call" => {
            let status = if p["ok"].as_bool().unwrap_or(false) {
                "ok".to_owned()
            } else {
                format!("error: {}", s("error"))
            };
            format!("{} {} {status}", s("tool"), s("args"))
        }
        "stage" => format!("{} {}", s("stage"), s("phase")),
        "decision" => s("decision"),
        "action" => s("action"),
        "log" => format!("{}: {}", s("about"), s("note")),
        _ => p.to_string(),
    }
}

/// `in/out` tokens of an LLM call, result tokens of a tool call.
fn tokens(p: &Value) -> String {
    match (
        p["tokens_in"].as_u64(),
        p["tokens_out"].as_u64(),
        p["result_tokens"].as_u64(),
    ) {
        (Some(i), Some(o), _) => format!("{i}/{o}"),
        (_, _, Some(r)) => r.to_string(),
        _ => String::new(),
    }
}

fn duration(p: &Value) -> String {
    p["latency_ms"]
        .as_u64()
        .or_else(|| p["duration_ms"].as_u64())
        .map(|ms| ms.to_string())
        .unwrap_or_default()
}

fn llm_calls(state: &AppState, calls: &[LlmUsage]) -> Markup {
    if calls.is_empty() {
        return html! { p.empty { "No LLM calls." } };
    }
    let mut total = 0.0;
    let mut unpriced = false;
    let costs: Vec<Option<f64>> = calls
        .iter()
        .map(|c| {
            let cost = state.prices.get(&c.model).map(|price| {
                price.cost(
                    c.prompt_tokens.max(0) as u64,
                    c.cached_tokens.max(0) as u64,
                    c.completion_tokens.max(0) as u64,
                )
            });
            total += cost.unwrap_or(0.0);
            unpriced |= cost.is_none();
            cost
        })
        .collect();
    let sum = |f: fn(&LlmUsage) -> i64| calls.iter().map(f).sum::<i64>();
    html! {
        table.calls {
            thead { tr { th { "At" } th { "Role" } th { "Model" } th.num { "Prompt" } th.num { "Cached" } th.num { "Completion" } th.num { "ms" } th { "Outcome" } th.num { "Cost" } } }
            tbody { @for (call, cost) in calls.iter().zip(&costs) {
                tr {
                    td { (format::clock(call.created_at)) } td { (call.role) } td { (call.model) }
                    td.num { (format::count(call.prompt_tokens)) } td.num { (format::count(call.cached_tokens)) }
                    td.num { (format::count(call.completion_tokens)) } td.num { (call.latency_ms) }
                    td { (call.outcome) @if let Some(kind) = &call.error_kind { " (" (kind) ")" } }
                    td.num { (cost.map(format::usd).unwrap_or_else(|| "no price".into())) }
                }
            } }
            tfoot { tr {
                td colspan="3" { "Total: " (calls.len()) " calls" }
                td.num { (format::count(sum(|c| c.prompt_tokens))) }
                td.num { (format::count(sum(|c| c.cached_tokens))) }
                td.num { (format::count(sum(|c| c.completion_tokens))) }
                td {} td {}
                td.num { (format::usd(total)) @if unpriced { " + unpriced" } }
            } }
        }
    }
}
