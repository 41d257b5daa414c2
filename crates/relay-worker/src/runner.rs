//! The worker: claims jobs, runs them under a renewed lease, and records how they ended.

use relay_core::IssueId;
use relay_core::JobId;
use std::sync::Arc;
use std::time::{Duration, Instant};

use relay_agent::trace::{ArgumentValues, TraceKind, TraceSettings, Tracer};
use relay_store::PgPool;
use relay_store::outbox::SweepScope;
use relay_store::queue::{self, ClaimedJob, Failed, FailureKind, Notifications};
use relay_store::trace::{NewRun, RunOutcome};
use relay_telemetry::metrics::{
    JOB_DURATION_SECONDS, JOBS_RUNNING, JOBS_TOTAL, OUTBOX_SWEEPS_TOTAL,
};
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::cause::Cause;
use crate::handler::{JobContext, JobError, Registry};
use crate::settings::WorkerSettings;
use crate::trace_sink::TraceRun;

/// How one step of the worker ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing was runnable.
    Empty,
    Succeeded {
        job_id: JobId,
    },
    /// Failed and queued again (or folded into the queued follow-up job).
    Retried {
        job_id: JobId,
    },
    /// Failed permanently.
    Failed {
        job_id: JobId,
    },
    /// Failed on its last attempt.
    Dead {
        job_id: JobId,
    },
    /// Given back unfinished at shutdown.
    Released {
        job_id: JobId,
    },
    /// Another worker holds the job now; this attempt's result was discarded.
    LeaseLost {
        job_id: JobId,
    },
}

/// A job runner bound to one database.
#[derive(Clone)]
pub struct Worker {
    pool: PgPool,
    registry: Registry,
    settings: Arc<WorkerSettings>,
    /// Identifies this worker in leases and run records (`host:pid:random`).
    name: Arc<str>,
    /// The trackers whose pending writes the sweeper drains; `None`: every issue's.
    sweep_trackers: Option<Arc<[String]>>,
    /// What the run trace keeps of tool arguments (`[trace] record_argument_values`).
    trace_arguments: ArgumentValues,
}

impl Worker {
    pub fn new(pool: PgPool, registry: Registry, settings: WorkerSettings) -> Worker {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".to_owned());
        let name = format!(
            "{host}:{}:{}",
            std::process::id(),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        Worker {
            pool,
            registry,
            settings: Arc::new(settings),
            name: name.into(),
            sweep_trackers: None,
            trace_arguments: ArgumentValues::default(),
        }
    }

    /// Applies `[trace]`: by default the run trace keeps tool-argument names only.
    pub fn with_trace_settings(mut self, trace: &TraceSettings) -> Worker {
        self.trace_arguments = trace.argument_values();
        self
    }

    /// Limits the outbox sweeper to the issues of these (the configured) trackers: a write whose
    /// tracker was removed from the configuration stays pending instead of getting a drain job
    /// that fails on every tick.
    pub fn with_sweep_trackers(mut self, trackers: Vec<String>) -> Worker {
        self.sweep_trackers = Some(trackers.into());
        self
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Claims one job and runs it to its end. The single step tests drive.
    pub async fn run_next_job(&self) -> relay_store::Result<Outcome> {
        self.run_next_job_until(&CancellationToken::new()).await
    }

    /// One tick of the outbox sweeper: queues a `process_issue` job (which drains the issue's due
    /// writes before anything else) for every issue with a due pending write and no queued or
    /// running job. One statement. Returns the issues it queued a job for.
    pub async fn sweep_outbox(&self) -> relay_store::Result<Vec<i64>> {
        let issues = {
            let mut conn = self.pool.acquire().await?;
            let scope = match &self.sweep_trackers {
                Some(trackers) => SweepScope::Trackers(trackers),
                None => SweepScope::AllTrackers,
            };
            relay_store::outbox::sweep(
                &mut conn,
                relay_core::JobKind::ProcessIssue.as_str(),
                self.settings.max_attempts,
                scope,
            )
            .await?
        };
        if !issues.is_empty() {
            metrics::counter!(OUTBOX_SWEEPS_TOTAL).increment(issues.len() as u64);
            tracing::info!(issues = ?issues, "outbox sweeper queued drain jobs for stranded writes");
        }
        Ok(issues)
    }

    /// Runs jobs until none is runnable.
    pub async fn drain(&self) -> relay_store::Result<Vec<Outcome>> {
        let mut outcomes = Vec::new();
        loop {
            match self.run_next_job().await? {
                Outcome::Empty => return Ok(outcomes),
                outcome => outcomes.push(outcome),
            }
        }
    }

    /// Like [`Worker::run_next_job`], but gives the job back when `hard_stop` is cancelled.
    async fn run_next_job_until(
        &self,
        hard_stop: &CancellationToken,
    ) -> relay_store::Result<Outcome> {
        match queue::claim(&self.pool, &self.name, self.settings.lease()).await? {
            None => Ok(Outcome::Empty),
            Some(job) => self.run_claimed(job, hard_stop).await,
        }
    }

    async fn run_claimed(
        &self,
        job: ClaimedJob,
        hard_stop: &CancellationToken,
    ) -> relay_store::Result<Outcome> {
        let has_key = job.concurrency_key.is_some();
        let outcome = self.run_claimed_in_span(job, hard_stop).await;
        // After a failure or release, a follow-up job with the same key may be runnable now.
        // (Success notifies by itself, and only when a follow-up is queued.)
        if has_key
            && matches!(outcome, Ok(ref o) if !matches!(o, Outcome::Succeeded { .. }))
            && let Err(e) = queue::notify_workers(&self.pool).await
        {
            tracing::debug!(error.message = %e, "failed to notify workers");
        }
        outcome
    }

    async fn run_claimed_in_span(
        &self,
        job: ClaimedJob,
        hard_stop: &CancellationToken,
    ) -> relay_store::Result<Outcome> {
        let span = tracing::info_span!(
            "job",
            job.id = job.id.get(),
            job.kind = %job.kind,
            job.attempt = job.attempt,
            issue.id = tracing::field::Empty,
        );
        self.run_claimed_inner(job, hard_stop)
            .instrument(span)
            .await
    }

    async fn run_claimed_inner(
        &self,
        job: ClaimedJob,
        hard_stop: &CancellationToken,
    ) -> relay_store::Result<Outcome> {
        let started = Instant::now();
        let kind = job.kind.clone();
        let job_id = job.id;
        metrics::gauge!(JOBS_RUNNING).increment(1.0);
        let _running = scopeguard(|| metrics::gauge!(JOBS_RUNNING).decrement(1.0));
        tracing::debug!("job claimed");

        let Some(handler) = self.registry.get(&job.kind) else {
            let error = format!("no handler for job kind {:?}", job.kind);
            let failure = Failure { error, cause: None };
            return self
                .finish_failed(&job, failure, FailureKind::Permanent, started)
                .await;
        };
        let cancel = CancellationToken::new();
        let trace = self.start_trace(&job);
        let tracer = trace
            .as_ref()
            .map_or_else(Tracer::noop, TraceRun::tracer)
            .with_argument_values(self.trace_arguments);
        let job_tracer = tracer.for_agent("worker");
        job_tracer.event(
            TraceKind::Stage,
            json!({ "stage": "job", "phase": "begin", "kind": job.kind, "attempt": job.attempt }),
        );
        let context = JobContext {
            job: job.clone(),
            pool: self.pool.clone(),
            cancel: cancel.clone(),
            tracer,
        };
        // The handler runs in its own task so that a panic fails the attempt, not the worker.
        let mut task = tokio::spawn(
            async move { handler.run(context).await }.instrument(tracing::Span::current()),
        );
        let mut heartbeat = tokio::time::interval(self.settings.heartbeat_interval());
        heartbeat.tick().await;
        let deadline = tokio::time::sleep(self.settings.job_timeout());
        tokio::pin!(deadline);

        let result: Result<Value, JobError> = loop {
            tokio::select! {
                joined = &mut task => {
                    break match joined {
                        Ok(result) => result,
                        Err(join_error) if join_error.is_panic() => {
                            let panic = join_error.into_panic();
                            let message = panic
                                .downcast_ref::<&str>()
                                .map(|s| (*s).to_owned())
                                .or_else(|| panic.downcast_ref::<String>().cloned())
                                .unwrap_or_else(|| "non-string panic payload".to_owned());
                            Err(JobError::Retryable(anyhow::anyhow!("job panicked: {message}")))
                        }
                        Err(join_error) => Err(JobError::Retryable(anyhow::anyhow!("job task failed: {join_error}"))),
                    };
                }
                _ = heartbeat.tick() => {
                    match queue::heartbeat(&self.pool, &job, self.settings.lease()).await {
                        Ok(true) => {}
                        Ok(false) => {
                            tracing::warn!("lease lost; abandoning the attempt");
                            cancel.cancel();
                            task.abort();
                            // Dropped unfinished: another worker owns the job now.
                            drop(trace);
                            return Ok(Outcome::LeaseLost { job_id });
                        }
                        // The database blinked: keep running; the lease has slack for this.
                        Err(e) => tracing::warn!(error.message = %e, "heartbeat failed"),
                    }
                }
                _ = &mut deadline => {
                    cancel.cancel();
                    task.abort();
                    break Err(JobError::Retryable(anyhow::anyhow!(
                        "job exceeded its timeout of {}s", self.settings.job_timeout().as_secs()
                    )));
                }
                _ = hard_stop.cancelled() => {
                    cancel.cancel();
                    task.abort();
                    job_tracer.event(TraceKind::Decision, json!({ "decision": "released", "reason": "shutdown" }));
                    if let Some(trace) = trace {
                        trace.finish(RunOutcome::Retrying).await;
                    }
                    let released = queue::release(&self.pool, &job).await?;
                    tracing::info!(released, "job given back at shutdown");
                    return Ok(if released { Outcome::Released { job_id } } else { Outcome::LeaseLost { job_id } });
                }
            }
        };

        // The trace is finished before the job's outcome is recorded, so a reader that sees the
        // job finished has every event (the SSE stream ends on that).
        let run_outcome = match &result {
            Ok(_) => RunOutcome::Succeeded,
            Err(JobError::Retryable(_)) if job.attempt < job.max_attempts => RunOutcome::Retrying,
            Err(_) => RunOutcome::Failed,
        };
        job_tracer.event(
            TraceKind::Stage,
            match &result {
                Ok(_) => json!({ "stage": "job", "phase": "end", "outcome": run_outcome.as_str() }),
                Err(error) => json!({
                    "stage": "job", "phase": "end", "outcome": run_outcome.as_str(),
                    "error": relay_agent::trace::capped(&scrubbed(error)),
                }),
            },
        );
        if let Some(trace) = trace {
            trace.finish(run_outcome).await;
        }

        match result {
            Ok(detail) => {
                if let Some(follow_up) =
                    queue::complete(&mut *self.pool.acquire().await?, &job, &detail).await?
                {
                    record(&kind, Finished::Succeeded, started);
                    tracing::info!(
                        duration_ms = started.elapsed().as_millis() as u64,
                        "job succeeded"
                    );
                    // The queued follow-up of this key could not start while this job ran.
                    if follow_up && let Err(e) = queue::notify_workers(&self.pool).await {
                        tracing::debug!(error.message = %e, "failed to notify workers");
                    }
                    Ok(Outcome::Succeeded { job_id })
                } else {
                    tracing::warn!("lease lost before completion; result discarded");
                    Ok(Outcome::LeaseLost { job_id })
                }
            }
            Err(JobError::Retryable(error)) => {
                let failure = Failure::of(&error);
                self.finish_failed(&job, failure, FailureKind::Retryable, started)
                    .await
            }
            Err(JobError::Permanent(error)) => {
                let failure = Failure::of(&error);
                self.finish_failed(&job, failure, FailureKind::Permanent, started)
                    .await
            }
        }
    }

    /// Starts the attempt's trace run (no round trip: its row is written with its first batch);
    /// `None` when tracing is off.
    fn start_trace(&self, job: &ClaimedJob) -> Option<TraceRun> {
        if !self.settings.trace {
            return None;
        }
        let run = NewRun {
            job_id: job.id,
            issue_id: job
                .payload
                .get("issue_id")
                .and_then(Value::as_i64)
                .map(IssueId),
            attempt: job.attempt,
            worker: &self.name,
        };
        Some(TraceRun::start(&self.pool, &run))
    }

    async fn finish_failed(
        &self,
        job: &ClaimedJob,
        failure: Failure,
        kind: FailureKind,
        started: Instant,
    ) -> relay_store::Result<Outcome> {
        let job_id = job.id;
        let error = failure.error.as_str();
        let failed = queue::fail(
            &self.pool,
            job,
            &queue::Failure {
                error,
                cause: failure.cause.as_deref(),
            },
            kind,
            self.settings.backoff(),
        )
        .await?;
        let outcome = match failed {
            Failed::Retried { run_after } => {
                tracing::warn!(error.message = %error, retry_at = %run_after, "job failed; will retry");
                record(&job.kind, Finished::Retried, started);
                Outcome::Retried { job_id }
            }
            Failed::FoldedInto { job_id: sibling } => {
                tracing::warn!(error.message = %error, folded_into = sibling.get(), "job failed; retry folded into the queued follow-up");
                record(&job.kind, Finished::Retried, started);
                Outcome::Retried { job_id }
            }
            Failed::Dead => {
                tracing::error!(error.message = %error, error.cause = failure.cause.as_deref(), "job failed on its last attempt; dead-lettered");
                record(&job.kind, Finished::Dead, started);
                Outcome::Dead { job_id }
            }
            Failed::Failed => {
                tracing::error!(error.message = %error, error.cause = failure.cause.as_deref(), "job failed permanently");
                record(&job.kind, Finished::Failed, started);
                Outcome::Failed { job_id }
            }
            Failed::LeaseLost => Outcome::LeaseLost { job_id },
        };
        Ok(outcome)
    }

    /// Runs jobs with up to `concurrency` at a time until `shutdown` is cancelled; then stops
    /// claiming, waits up to the grace period for running jobs, and releases the rest.
    pub async fn run(self, shutdown: CancellationToken) {
        let concurrency = self.settings.concurrency.max(1);
        tracing::info!(worker = %self.name, concurrency, "worker started");
        let permits = Arc::new(Semaphore::new(concurrency));
        let hard_stop = CancellationToken::new();
        let mut running: JoinSet<()> = JoinSet::new();
        let mut notifications: Option<Notifications> = None;
        let mut error_backoff = Duration::from_millis(250);
        let mut last_reap: Option<Instant> = None;
        let mut last_sweep: Option<Instant> = None;

        'claiming: loop {
            while running.try_join_next().is_some() {}
            // The outbox sweeper: cheap (one statement), so every worker runs it on its timer.
            if let Some(every) = self.settings.sweep_interval()
                && last_sweep.is_none_or(|at: Instant| at.elapsed() >= every)
            {
                last_sweep = Some(Instant::now());
                if let Err(e) = self.sweep_outbox().await {
                    tracing::warn!(error.message = %e, "outbox sweep failed");
                }
            }
            let permit = tokio::select! {
                permit = permits.clone().acquire_owned() => permit.expect("semaphore is never closed"),
                _ = shutdown.cancelled() => break 'claiming,
            };
            if notifications.is_none() {
                match Notifications::connect(&self.pool).await {
                    Ok(listener) => notifications = Some(listener),
                    Err(e) => tracing::debug!(error.message = %e, "LISTEN unavailable; polling"),
                }
            }
            // Expired leases only appear after a lease period, so they are looked for on a timer
            // (every quarter lease) instead of before every claim.
            let reap_due =
                last_reap.is_none_or(|at: Instant| at.elapsed() >= self.settings.lease() / 4);
            let claimed = if reap_due {
                last_reap = Some(Instant::now());
                queue::claim(&self.pool, &self.name, self.settings.lease()).await
            } else {
                queue::claim_queued(&self.pool, &self.name, self.settings.lease()).await
            };
            match claimed {
                Ok(Some(job)) => {
                    error_backoff = Duration::from_millis(250);
                    let worker = self.clone();
                    let hard_stop = hard_stop.clone();
                    running.spawn(async move {
                        let _permit = permit;
                        if let Err(e) = worker.run_claimed(job, &hard_stop).await {
                            tracing::error!(error.message = %e, error.cause_chain = ?e, "failed to record a job outcome; its lease will expire and it will run again");
                        }
                    });
                    continue;
                }
                Ok(None) => {
                    error_backoff = Duration::from_millis(250);
                    drop(permit);
                }
                Err(e) => {
                    drop(permit);
                    tracing::warn!(error.message = %e, "failed to claim a job");
                    notifications = None;
                    tokio::select! {
                        _ = tokio::time::sleep(error_backoff) => {}
                        _ = shutdown.cancelled() => break 'claiming,
                    }
                    error_backoff = (error_backoff * 2).min(Duration::from_secs(10));
                    continue;
                }
            }
            // Nothing runnable now: sleep until notified, until the next job is due, or the poll interval.
            let mut wait = self.settings.poll_interval();
            if let Some(every) = self.settings.sweep_interval() {
                wait = wait.min(every);
            }
            if let Ok(Some(due)) = queue::next_due_in(&self.pool).await {
                wait = wait.min(due.max(Duration::from_millis(50)));
            }
            let notified = async {
                match notifications.as_mut() {
                    Some(listener) => listener.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                result = notified => {
                    if let Err(e) = result {
                        tracing::debug!(error.message = %e, "LISTEN connection lost");
                        notifications = None;
                    }
                }
                Some(_) = running.join_next(), if !running.is_empty() => {}
                _ = tokio::time::sleep(wait) => {}
                _ = shutdown.cancelled() => break 'claiming,
            }
        }

        let grace = self.settings.shutdown_grace();
        tracing::info!(
            running = running.len(),
            grace_secs = grace.as_secs(),
            "worker stopping; waiting for running jobs"
        );
        let drained = tokio::time::timeout(grace, async {
            while running.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            tracing::warn!(
                running = running.len(),
                "grace period over; releasing running jobs"
            );
            hard_stop.cancel();
            while running.join_next().await.is_some() {}
        }
        tracing::info!("worker stopped");
    }
}

/// A job's error as it is logged, traced and stored: every configured secret scrubbed (an error
/// may quote a URL or a response that echoes one).
/// A failed attempt as the queue records it: the error's whole chain, scrubbed, and its
/// classified root cause.
struct Failure {
    error: String,
    /// [`Cause::label`].
    cause: Option<String>,
}

impl Failure {
    fn of(error: &anyhow::Error) -> Failure {
        Failure {
            error: scrubbed(error),
            cause: Cause::of(error).map(Cause::label),
        }
    }
}

fn scrubbed(error: &impl std::fmt::Display) -> String {
    relay_core::secrets::scrub_secrets(&format!("{error:#}"))
        .body
        .into_owned()
}

/// How a job attempt finished, as `relay_jobs_total{outcome}` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Finished {
    Succeeded,
    Retried,
    Failed,
    Dead,
}

impl Finished {
    const ALL: [Finished; 4] = [
        Finished::Succeeded,
        Finished::Retried,
        Finished::Failed,
        Finished::Dead,
    ];

    fn label(self) -> &'static str {
        match self {
            Finished::Succeeded => "succeeded",
            Finished::Retried => "retried",
            Finished::Failed => "failed",
            Finished::Dead => "dead",
        }
    }
}

/// Creates `relay_jobs_total` at 0 for every job kind and outcome, so the first dead job after a
/// start is an increase the alert sees (see [`relay_telemetry::metrics::zero_counter`]).
pub fn zero_job_counters() {
    for kind in relay_core::JobKind::ALL {
        for outcome in Finished::ALL {
            relay_telemetry::metrics::zero_counter(
                JOBS_TOTAL,
                &[("kind", kind.as_str()), ("outcome", outcome.label())],
            );
        }
    }
}

fn record(kind: &str, outcome: Finished, started: Instant) {
    metrics::counter!(JOBS_TOTAL, "kind" => kind.to_owned(), "outcome" => outcome.label())
        .increment(1);
    metrics::histogram!(JOB_DURATION_SECONDS, "kind" => kind.to_owned())
        .record(started.elapsed().as_secs_f64());
}

/// Runs `f` on drop.
fn scopeguard(f: impl FnOnce()) -> impl Drop {
    struct Guard<F: FnOnce()>(Option<F>);
    impl<F: FnOnce()> Drop for Guard<F> {
        fn drop(&mut self) {
            if let Some(f) = self.0.take() {
                f();
            }
        }
    }
    Guard(Some(f))
}
