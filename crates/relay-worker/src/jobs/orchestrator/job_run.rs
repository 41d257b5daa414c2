//! The job attempt the [`super::Orchestrator`] serves.

use relay_agent::trace::Tracer;
use relay_core::{IssueId, JobId};

use super::cycle::Attempt;

/// The job attempt [`super::Orchestrator::orchestrate`] serves.
#[derive(Debug, Clone)]
pub struct JobRun {
    pub job_id: JobId,
    /// Attempts of the follow-up job, when events are left after the last cycle.
    pub max_attempts: i32,
    pub issue_id: IssueId,
    /// Where the run's trace events go.
    pub tracer: Tracer,
    /// The claim's lease: the executor's transactions are fenced by it (`None`: unfenced, for
    /// runs outside the queue).
    pub lease: Option<relay_actions::Lease>,
    /// Whether the queue retries the job if a cycle stops ([`Attempt::Last`] unless told).
    pub attempt: Attempt,
}

impl JobRun {
    /// An untraced run.
    pub fn new(job_id: JobId, max_attempts: i32, issue_id: IssueId) -> JobRun {
        JobRun {
            job_id,
            max_attempts,
            issue_id,
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

    /// The same run, traced to `tracer`.
    #[must_use]
    pub fn with_tracer(mut self, tracer: Tracer) -> JobRun {
        self.tracer = tracer;
        self
    }
}
