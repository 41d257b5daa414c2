//! The job a stage works on, and how a stage ends it early.
//!
//! - [`JobRun`]: the queue's attempt the job serves (ids, trace, lease, whether a retry follows).
//! - [`Job`]: the issue and its tracker, and what the stages change on the way — what is
//!   pending, who is admitted, the commands answered, thorough mode's traversal state. What
//!   stays the same for every cycle is the cycles' `CycleEnv`.
//! - [`JobEnd`] and [`JobStep`]: a stage either goes on or ends the job (done with its result, or
//!   failed), so the job reads top to bottom with `?`.

use std::sync::Arc;

use relay_actions::{DrainReport, Executor};
use relay_agent::thorough::state::TraversalState;
use relay_agent::trace::{TraceKind, Tracer, capped};
use relay_core::TrackerSettings;
use relay_store::PgPool;
use relay_store::issues::IssueRow;
use relay_tracker::{IssueRef, IssueTracker};
use serde_json::{Value, json};

use super::admission::Admission;
use super::counts;
use super::pending::{AnsweredCommand, Pending};
use crate::handler::JobError;
use relay_core::{IssueId, JobId};

/// The job attempt the Orchestrator serves.
#[derive(Debug, Clone)]
pub struct JobRun {
    pub job_id: JobId,
    /// Attempts of the follow-up job, when events are left after the last cycle.
    pub max_attempts: i32,
    pub issue_id: IssueId,
    /// The queue's claim of the job this run is (`jobs.runs`, from 1, never reset): what the run
    /// decides is keyed by it, so a later run's writes never take an earlier run's keys.
    pub run: i32,
    /// Where the run's trace events go.
    pub tracer: Tracer,
    /// The claim's lease: the executor's transactions are fenced by it (`None`: unfenced, for
    /// runs outside the queue).
    pub lease: Option<relay_actions::Lease>,
    /// Whether the queue retries the job if a cycle stops ([`Attempt::Last`] unless told).
    pub attempt: Attempt,
}

impl JobRun {
    /// An untraced first run.
    pub fn new(job_id: JobId, max_attempts: i32, issue_id: IssueId) -> JobRun {
        JobRun {
            job_id,
            max_attempts,
            issue_id,
            run: 1,
            tracer: Tracer::noop(),
            attempt: Attempt::Last,
            lease: None,
        }
    }

    /// The same run, fenced by the claim's lease.
    #[must_use]
    pub fn with_lease(mut self, lease: relay_actions::Lease) -> JobRun {
        self.lease = Some(lease);
        self
    }

    /// The same run, as attempt `attempt` of `max_attempts` of its job.
    #[must_use]
    pub fn at_attempt(mut self, attempt: i32, max_attempts: i32) -> JobRun {
        self.attempt = if attempt < max_attempts {
            Attempt::Retryable
        } else {
            Attempt::Last
        };
        self
    }

    /// The same run, as the queue's claim number `run` of its job.
    #[must_use]
    pub fn at_run(mut self, run: i32) -> JobRun {
        self.run = run;
        self
    }

    /// The same run, traced to `tracer`.
    #[must_use]
    pub fn with_tracer(mut self, tracer: Tracer) -> JobRun {
        self.tracer = tracer;
        self
    }
}

/// Whether a job attempt is its last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// A failed cycle is retried after a backoff: a transient stop (the LLM unavailable) says
    /// nothing yet.
    Retryable,
    /// No retry follows: every stop posts its status comment.
    Last,
}

/// One job on one issue, as the stages leave it for the next.
pub struct Job {
    pub issue: IssueRow,
    /// The issue's tracker as configured (the bot's name, the trigger labels).
    pub settings: TrackerSettings,
    pub tracker: Arc<dyn IssueTracker>,
    pub issue_ref: IssueRef,
    /// What is pending: read at the start, and again after each cycle.
    pub pending: Pending,
    /// Whose pending events may make Relay act (nobody until the job admits them).
    pub admission: Admission,
    /// The pending commands the job answered: shown to the next cycle's planner as answered.
    pub answered: Vec<AnsweredCommand>,
    /// Thorough mode's traversal state as last saved (a cycle saves it when it changed).
    pub traversal: TraversalState,
}

impl Job {
    /// The job of `issue` before anything is pending, admitted or answered.
    pub fn new(issue: IssueRow, settings: TrackerSettings, tracker: Arc<dyn IssueTracker>) -> Job {
        let issue_ref = IssueRef {
            project_id: issue.project_id.clone(),
            project_path: issue.project_path.clone(),
            number: issue.number,
            installation_id: issue.installation_id,
        };
        Job {
            issue,
            settings,
            tracker,
            issue_ref,
            pending: Pending::default(),
            admission: Admission::default(),
            answered: Vec::new(),
            traversal: TraversalState::default(),
        }
    }

    /// The bot's username on the issue's tracker.
    pub fn bot(&self) -> &str {
        &self.settings.bot_username
    }

    /// Sends the issue's pending tracker writes, in order. The job drains at its start, once per
    /// cycle, and once at its end when it queued something after its last drain: every notice
    /// and command answer in between is only queued.
    pub async fn drain(&self, pool: &PgPool) -> relay_actions::Result<DrainReport> {
        counts::drained();
        Executor::new(pool.clone(), self.tracker.clone())
            .drain_outbox(self.issue.id, &self.issue_ref)
            .await
    }
}

/// How a stage ends the job before its last one.
#[derive(Debug)]
pub enum JobEnd {
    /// Nothing more to do: the job's result.
    Done(Value),
    Failed(JobError),
}

/// What a stage returns: go on with `T`, or the job ends here.
pub type JobStep<T = ()> = Result<T, JobEnd>;

impl From<JobError> for JobEnd {
    fn from(error: JobError) -> Self {
        JobEnd::Failed(error)
    }
}

impl From<anyhow::Error> for JobEnd {
    fn from(error: anyhow::Error) -> Self {
        JobEnd::Failed(error.into())
    }
}

impl JobEnd {
    /// The job's outcome as the queue takes it.
    pub fn into_result(self) -> Result<Value, JobError> {
        match self {
            JobEnd::Done(result) => Ok(result),
            JobEnd::Failed(error) => Err(error),
        }
    }
}

/// One `action` event per tracker write a drain sent or gave up on.
pub fn trace_drain(tracer: &Tracer, drain: &DrainReport) {
    for sent in &drain.sent {
        tracer.event(
            TraceKind::Action,
            json!({
                "action": "tracker_write",
                "ok": true,
                "idempotency_key": sent.idempotency_key,
                "note_id": sent.note_id,
                "recovered": sent.recovered,
            }),
        );
    }
    for failure in &drain.failures {
        tracer.event(
            TraceKind::Action,
            json!({ "action": failure.location, "ok": false, "error": capped(&failure.to_string()) }),
        );
    }
}
