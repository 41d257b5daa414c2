//! The run trace's Postgres sink: events from the agents of one job run go into a
//! bounded buffer and a background flusher writes them in batches (one statement per batch).
//!
//! Invariants:
//! - `emit` never blocks and never fails: when the buffer is full the event is dropped and counted
//!   (`relay_trace_events_dropped_total{reason="buffer_full"}` and the run's `dropped` column).
//! - A failed write is logged and counted (`reason="write_failed"`), never fails the job.
//! - Batches are written in emission order by one task, so within a run `seq` and the cursor grow
//!   together; a crash loses at most the events not yet flushed (≤ [`FLUSH_EVENTS`] or
//!   [`FLUSH_INTERVAL`] worth), and the run stays unfinished.

use relay_core::{IssueId, JobId};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use relay_agent::trace::{TraceEvent, TraceSink, Tracer};
use relay_store::PgPool;
use relay_store::trace::{self as store, Finish, NewEvent, NewRun, RunOutcome, RunRef};
use relay_telemetry::metrics as m;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Events a run may have waiting for the flusher; past it new events are dropped.
pub const TRACE_BUFFER_EVENTS: usize = 8192;
/// A batch is written as soon as it holds this many events...
pub const FLUSH_EVENTS: usize = 64;
/// ...or this long after the previous write, whichever comes first.
pub const FLUSH_INTERVAL: Duration = Duration::from_millis(200);

/// Why an event did not reach the store (the metric's `reason` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DropReason {
    BufferFull,
    WriteFailed,
}

impl DropReason {
    fn as_str(self) -> &'static str {
        match self {
            Self::BufferFull => "buffer_full",
            Self::WriteFailed => "write_failed",
        }
    }
}

fn count_dropped(reason: DropReason, n: u64) {
    metrics::counter!(m::TRACE_EVENTS_DROPPED_TOTAL, "reason" => reason.as_str()).increment(n);
}

/// The sink half: what [`Tracer`]s hold.
#[derive(Debug)]
struct PgTraceSink {
    events: mpsc::Sender<TraceEvent>,
    dropped: Arc<AtomicU64>,
}

impl TraceSink for PgTraceSink {
    fn emit(&self, event: TraceEvent) {
        // Full, or closed after `finish` (a late event from a task that outlived its job).
        if self.events.try_send(event).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            count_dropped(DropReason::BufferFull, 1);
        }
    }
}

/// One job run's trace: hand out [`TraceRun::tracer`], then [`TraceRun::finish`].
///
/// Starting costs no round trip: the flusher creates the run's row with its first batch, and a
/// job shorter than one flush interval writes its whole trace — run, events, outcome — in the
/// single statement of [`TraceRun::finish`].
#[derive(Debug)]
pub struct TraceRun {
    sink: Arc<PgTraceSink>,
    finish: Option<oneshot::Sender<Option<RunOutcome>>>,
    flusher: Option<JoinHandle<()>>,
}

/// The run's row, until the flusher has stored it.
#[derive(Debug, Clone)]
struct PendingRun {
    job_id: JobId,
    issue_id: Option<IssueId>,
    attempt: i32,
    worker: String,
    started_at: chrono::DateTime<chrono::Utc>,
}

impl TraceRun {
    /// Starts the run's flusher (on the current tokio runtime); nothing is written yet.
    pub fn start(pool: &PgPool, run: &NewRun<'_>) -> TraceRun {
        let (events, receiver) = mpsc::channel(TRACE_BUFFER_EVENTS);
        let (finish, finished) = oneshot::channel();
        let dropped = Arc::new(AtomicU64::new(0));
        let flusher = Flusher {
            pool: pool.clone(),
            run: PendingRun {
                job_id: run.job_id,
                issue_id: run.issue_id,
                attempt: run.attempt,
                worker: run.worker.to_owned(),
                started_at: chrono::Utc::now(),
            },
            run_id: None,
            next_seq: 0,
            dropped: dropped.clone(),
        };
        let flusher = tokio::spawn(flusher.run(receiver, finished));
        TraceRun {
            sink: Arc::new(PgTraceSink { events, dropped }),
            finish: Some(finish),
            flusher: Some(flusher),
        }
    }

    /// A tracer writing to this run.
    pub fn tracer(&self) -> Tracer {
        Tracer::new(self.sink.clone())
    }

    /// Writes what is buffered and marks the run finished with `outcome` (one statement), and
    /// waits for it. Errors are logged: the trace never fails the job.
    pub async fn finish(mut self, outcome: RunOutcome) {
        if let Some(finish) = self.finish.take() {
            let _ = finish.send(Some(outcome));
        }
        if let Some(flusher) = self.flusher.take()
            && let Err(error) = flusher.await
        {
            tracing::warn!(error = %error, "trace flusher failed");
        }
    }

    /// Stops the flusher without writing what is buffered: what a crash does (tests only).
    #[cfg(test)]
    fn crash(mut self) {
        if let Some(flusher) = self.flusher.take() {
            flusher.abort();
        }
    }
}

impl Drop for TraceRun {
    fn drop(&mut self) {
        // Not finished (the lease was lost, or the task was cancelled): the flusher writes what
        // it has and stops; the run stays unfinished, like after a crash.
        if let Some(finish) = self.finish.take() {
            let _ = finish.send(None);
        }
    }
}

struct Flusher {
    pool: PgPool,
    run: PendingRun,
    /// Set once the run's row is stored.
    run_id: Option<i64>,
    next_seq: i32,
    dropped: Arc<AtomicU64>,
}

impl Flusher {
    async fn run(
        mut self,
        mut events: mpsc::Receiver<TraceEvent>,
        mut finish: oneshot::Receiver<Option<RunOutcome>>,
    ) {
        let mut batch: Vec<TraceEvent> = Vec::with_capacity(FLUSH_EVENTS);
        let mut tick = tokio::time::interval(FLUSH_INTERVAL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        let outcome = loop {
            tokio::select! {
                biased;
                outcome = &mut finish => break outcome.ok().flatten(),
                event = events.recv() => match event {
                    Some(event) => {
                        batch.push(event);
                        if batch.len() >= FLUSH_EVENTS {
                            self.write(&mut batch, None).await;
                        }
                    }
                    None => break None,
                },
                _ = tick.tick(), if !batch.is_empty() => self.write(&mut batch, None).await,
            }
        };
        // Finishing: take what is already buffered (later emits find the channel closed).
        events.close();
        while let Some(event) = events.recv().await {
            batch.push(event);
            if batch.len() >= FLUSH_EVENTS {
                self.write(&mut batch, None).await;
            }
        }
        match outcome {
            Some(outcome) => self.write(&mut batch, Some(outcome)).await,
            None if !batch.is_empty() => self.write(&mut batch, None).await,
            None => {}
        }
    }

    /// Writes `batch` (possibly empty when finishing) in one statement.
    async fn write(&mut self, batch: &mut Vec<TraceEvent>, outcome: Option<RunOutcome>) {
        let rows: Vec<NewEvent<'_>> = batch
            .iter()
            .enumerate()
            .map(|(i, event)| NewEvent {
                seq: self.next_seq + i as i32,
                at: event.at,
                kind: event.kind.as_str(),
                agent: &event.agent,
                payload: &event.payload,
            })
            .collect();
        let n = rows.len();
        // Seq advances even when the write fails, so the lost batch shows as a gap.
        self.next_seq += n as i32;
        let run = match self.run_id {
            Some(id) => RunRef::Stored(id),
            None => RunRef::New {
                run: NewRun {
                    job_id: self.run.job_id,
                    issue_id: self.run.issue_id,
                    attempt: self.run.attempt,
                    worker: &self.run.worker,
                },
                started_at: self.run.started_at,
            },
        };
        let finish = outcome.map(|outcome| Finish {
            outcome,
            // The events of this very batch count if it fails, but then nothing is recorded.
            dropped: i64::try_from(self.dropped.load(Ordering::Relaxed)).unwrap_or(i64::MAX),
        });
        match store::write_batch(&self.pool, self.run.job_id, &run, &rows, finish).await {
            Ok(id) => {
                self.run_id = Some(id);
                metrics::counter!(m::TRACE_EVENTS_WRITTEN_TOTAL).increment(n as u64);
            }
            Err(error) => {
                tracing::warn!(job.id = self.run.job_id.get(), events = n, error = %error, "failed to write trace events");
                self.dropped.fetch_add(n as u64, Ordering::Relaxed);
                count_dropped(DropReason::WriteFailed, n as u64);
                // The last batch failed: still try to record how the run ended and what it lost.
                if let Some(finish) = finish
                    && n > 0
                {
                    let finish = Finish {
                        dropped: finish.dropped.saturating_add(n as i64),
                        ..finish
                    };
                    match store::write_batch(&self.pool, self.run.job_id, &run, &[], Some(finish))
                        .await
                    {
                        Ok(id) => self.run_id = Some(id),
                        Err(error) => {
                            tracing::warn!(job.id = self.run.job_id.get(), error = %error, "failed to finish the trace run")
                        }
                    }
                }
            }
        }
        batch.clear();
    }
}

#[cfg(test)]
mod tests {
    use relay_agent::trace::TraceKind;
    use serde_json::json;

    use super::*;

    fn new_run(job_id: JobId) -> NewRun<'static> {
        NewRun {
            job_id,
            issue_id: None,
            attempt: 1,
            worker: "test-worker",
        }
    }

    async fn stored(pool: &PgPool, job_id: JobId) -> Vec<store::Event> {
        store::events_after(pool, job_id, 0, store::MAX_PAGE)
            .await
            .unwrap()
    }

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn events_are_written_in_batches_in_order(pool: PgPool) {
        let run = TraceRun::start(&pool, &new_run(JobId(1)));
        let tracer = run.tracer().for_agent("explore#1");
        for n in 0..150 {
            tracer.event(TraceKind::ToolCall, json!({ "n": n }));
        }
        run.finish(RunOutcome::Succeeded).await;

        let events = stored(&pool, JobId(1)).await;
        assert_eq!(events.len(), 150);
        for (i, event) in events.iter().enumerate() {
            assert_eq!(event.seq, i as i32);
            assert_eq!(event.payload["n"], i);
            assert_eq!(event.agent, "explore#1");
            assert_eq!(event.kind, "tool_call");
        }
        // 150 events in batches of at most 64: at least 3 statements, so fewer runs of equal `at`
        // would not prove it; count distinct transaction ids instead.
        let batches: i64 = sqlx::query_scalar(
            "SELECT count(DISTINCT xmin::text) FROM trace_events WHERE job_id = 1",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        assert!(batches >= 3, "{batches} batches");
        let runs = store::runs(&pool, JobId(1)).await.unwrap();
        assert_eq!(runs[0].outcome.as_deref(), Some("succeeded"));
        assert_eq!(runs[0].dropped, 0);
    }

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn a_quiet_run_is_flushed_by_the_interval(pool: PgPool) {
        let run = TraceRun::start(&pool, &new_run(JobId(2)));
        run.tracer()
            .event(TraceKind::Stage, json!({ "stage": "cycle" }));
        // Fewer than FLUSH_EVENTS: only the interval can write it. Wait for it (bounded).
        let mut events = Vec::new();
        for _ in 0..100 {
            events = stored(&pool, JobId(2)).await;
            if !events.is_empty() {
                break;
            }
            tokio::time::sleep(FLUSH_INTERVAL / 4).await;
        }
        assert_eq!(events.len(), 1);
        let runs = store::runs(&pool, JobId(2)).await.unwrap();
        assert!(runs[0].finished_at.is_none(), "still running");
        run.finish(RunOutcome::Retrying).await;
    }

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn a_crash_keeps_every_flushed_batch(pool: PgPool) {
        let run = TraceRun::start(&pool, &new_run(JobId(3)));
        let tracer = run.tracer();
        for n in 0..FLUSH_EVENTS {
            tracer.event(TraceKind::ToolCall, json!({ "n": n }));
        }
        // Wait until the full batch is written, then emit a few more that never get flushed.
        for _ in 0..100 {
            if stored(&pool, JobId(3)).await.len() == FLUSH_EVENTS {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        run.crash();
        tracer.event(TraceKind::ToolCall, json!({ "n": "lost" }));

        let events = stored(&pool, JobId(3)).await;
        assert_eq!(events.len(), FLUSH_EVENTS);
        assert_eq!(events.last().unwrap().seq, FLUSH_EVENTS as i32 - 1);
        let runs = store::runs(&pool, JobId(3)).await.unwrap();
        assert!(
            runs[0].finished_at.is_none(),
            "a crashed run stays unfinished"
        );
    }

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn a_failed_write_is_counted_never_raised(pool: PgPool) {
        let run = TraceRun::start(&pool, &new_run(JobId(4)));
        // Refuse every event row: the batch fails, the run still records its end and its loss.
        sqlx::query("ALTER TABLE trace_events ADD CONSTRAINT refuse_all CHECK (seq < 0)")
            .execute(&pool)
            .await
            .unwrap();
        let tracer = run.tracer();
        for n in 0..3 {
            tracer.event(TraceKind::Decision, json!({ "n": n }));
        }
        run.finish(RunOutcome::Succeeded).await;
        let runs = store::runs(&pool, JobId(4)).await.unwrap();
        assert_eq!(runs[0].outcome.as_deref(), Some("succeeded"));
        assert_eq!(runs[0].dropped, 3);
    }

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn a_full_buffer_drops_and_counts(pool: PgPool) {
        let run = TraceRun::start(&pool, &new_run(JobId(5)));
        let tracer = run.tracer();
        // The flusher runs on this (current-thread) runtime only when we await, so emitting
        // without awaiting fills the buffer deterministically.
        let extra = 10;
        for n in 0..TRACE_BUFFER_EVENTS + extra {
            tracer.event(TraceKind::ToolCall, json!({ "n": n }));
        }
        run.finish(RunOutcome::Succeeded).await;
        assert_eq!(
            stored_count(&pool, JobId(5)).await,
            TRACE_BUFFER_EVENTS as i64
        );
        let runs = store::runs(&pool, JobId(5)).await.unwrap();
        assert_eq!(runs[0].dropped, extra as i64);
    }

    async fn stored_count(pool: &PgPool, job_id: JobId) -> i64 {
        sqlx::query_scalar("SELECT count(*) FROM trace_events WHERE job_id = $1")
            .bind(job_id)
            .fetch_one(pool)
            .await
            .unwrap()
    }
}
