//! `GET /api/jobs/{id}/events`: the job's run trace as Server-Sent Events — everything so far,
//! then live events while the job runs, then a final `end` event once it has finished.
//!
//! Each event's `id` is its cursor: a client that reconnects with `Last-Event-ID` (or
//! `?after=CURSOR`) gets only later events. The stream ends only when the job is finished AND a
//! read after that found nothing new; the worker finishes a run's trace before it records the
//! job's outcome, so nothing is written after the job reads as finished. A stream also ends (without
//! `end`) when the gateway shuts down or the session that opened it signs out.

use relay_core::JobId;
use std::collections::VecDeque;
use std::convert::Infallible;

use axum::Extension;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt as _};
use relay_store::PgPool;
use relay_store::trace::{self as store, JobProgress};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::OwnedSemaphorePermit;
use tokio::sync::broadcast::{self, error::RecvError};

use super::Authenticated;
use crate::AppState;
use crate::error::ApiError;
use crate::trace_feed::POLL_INTERVAL;

/// Events read per query while catching up.
const PAGE: i64 = 500;

#[derive(Debug, Default, Deserialize)]
pub struct After {
    /// Resume after this cursor (the `Last-Event-ID` header wins when both are given).
    pub after: Option<i64>,
}

pub async fn stream(
    State(state): State<AppState>,
    Path(id): Path<relay_core::JobId>,
    Query(query): Query<After>,
    authenticated: Option<Extension<Authenticated>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let progress = super::with_timeout(&state, async {
        Ok(store::job_progress(&state.pool, id).await?)
    })
    .await?;
    if progress.is_none() {
        return Ok(super::not_found("job"));
    }
    let Some(permit) = state.trace_feed.admit() else {
        return Ok((
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({ "error": "too many open event streams; retry later" })),
        )
            .into_response());
    };
    let cursor = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok())
        .or(query.after)
        .unwrap_or(0)
        .max(0);
    // Subscribed before the first read, so an event written between the read and the wait
    // still wakes the stream.
    let reader = Reader {
        pool: state.pool.clone(),
        job_id: id,
        cursor,
        pending: VecDeque::new(),
        wake: state.trace_feed.subscribe(),
        ended: false,
        _permit: permit,
    };
    let until = closed(state, authenticated.map(|Extension(a)| a));
    Ok(Sse::new(events(reader).take_until(until))
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// Resolves when the stream must end before its job does: the gateway shuts down (a stream must
/// not hold the shutdown beyond its grace), or the session that opened it ends. The client
/// reconnects with `Last-Event-ID`, to another gateway or after signing in again.
async fn closed(state: AppState, authenticated: Option<Authenticated>) {
    match authenticated {
        Some(Authenticated::Session(session)) => {
            tokio::select! {
                () = state.shutdown.cancelled() => {}
                () = crate::ui::session::ended(&state, session) => {}
            }
        }
        Some(Authenticated::Token) | None => state.shutdown.cancelled().await,
    }
}

struct Reader {
    pool: PgPool,
    job_id: JobId,
    cursor: i64,
    pending: VecDeque<store::Event>,
    wake: broadcast::Receiver<i64>,
    ended: bool,
    /// Held for the stream's life (the per-process stream bound).
    _permit: OwnedSemaphorePermit,
}

fn events(reader: Reader) -> impl Stream<Item = Result<Event, Infallible>> {
    futures::stream::unfold(reader, |mut reader| async move {
        let event = reader.next().await?;
        Some((Ok(event), reader))
    })
}

impl Reader {
    /// The next SSE event, or `None` after `end`.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if self.ended {
                return None;
            }
            if let Some(event) = self.pending.pop_front() {
                self.cursor = event.cursor;
                return Some(to_sse(&event));
            }
            // Progress first, then the events: "finished and nothing new" is then final.
            let progress = store::job_progress(&self.pool, self.job_id).await;
            let page = store::events_after(&self.pool, self.job_id, self.cursor, PAGE).await;
            match (progress, page) {
                (_, Ok(page)) if !page.is_empty() => self.pending.extend(page),
                (Ok(Some(JobProgress::Live)), Ok(_)) => self.wait().await,
                (Ok(_), Ok(_)) => {
                    self.ended = true;
                    return Some(self.end().await);
                }
                (Err(error), _) | (_, Err(error)) => {
                    tracing::warn!(job.id = self.job_id.get(), error.message = %error, "trace read failed; retrying");
                    tokio::time::sleep(POLL_INTERVAL).await;
                }
            }
        }
    }

    /// Until this job's trace changes, or the poll interval passes.
    async fn wait(&mut self) {
        let poll = tokio::time::sleep(POLL_INTERVAL);
        tokio::pin!(poll);
        loop {
            tokio::select! {
                woke = self.wake.recv() => match woke {
                    Ok(job_id) if job_id == self.job_id => return,
                    Ok(_) => {}
                    // Missed some: read again to be sure.
                    Err(RecvError::Lagged(_)) => return,
                    Err(RecvError::Closed) => {
                        (&mut poll).await;
                        return;
                    }
                },
                _ = &mut poll => return,
            }
        }
    }

    /// The final event: the job's runs with their outcomes and dropped counts.
    async fn end(&self) -> Event {
        let runs = store::runs(&self.pool, self.job_id)
            .await
            .unwrap_or_default();
        let data = json!({ "job_id": self.job_id, "runs": runs });
        Event::default().event("end").data(data.to_string())
    }
}

fn to_sse(event: &store::Event) -> Event {
    Event::default()
        .id(event.cursor.to_string())
        .event(&event.kind)
        .data(serde_json::to_string(event).unwrap_or_else(|_| "{}".to_owned()))
}
