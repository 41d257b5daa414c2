//! `[worker]` settings.

use std::time::Duration;

use serde::Deserialize;

/// `[worker]`: how this process runs jobs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkerSettings {
    /// Jobs run at the same time in this process.
    #[serde(default = "default_concurrency")]
    pub concurrency: usize,
    /// Lease length in seconds; a heartbeat renews it every third of it. A job whose worker died is
    /// claimed again after at most this long.
    #[serde(default = "default_lease_secs")]
    pub lease_secs: u64,
    /// Fallback poll interval in seconds, for when a notification is missed.
    #[serde(default = "default_poll_interval_secs")]
    pub poll_interval_secs: u64,
    /// Attempts per job before it is dead-lettered (also used for jobs the gateway enqueues).
    #[serde(default = "default_max_attempts")]
    pub max_attempts: i32,
    /// Retry delay after the first failure, in seconds; doubles per attempt, with ±25% jitter.
    #[serde(default = "default_backoff_base_secs")]
    pub backoff_base_secs: u64,
    /// Longest retry delay, in seconds.
    #[serde(default = "default_backoff_max_secs")]
    pub backoff_max_secs: u64,
    /// Longest a single attempt may run, in seconds, before it is failed (and retried).
    #[serde(default = "default_job_timeout_secs")]
    pub job_timeout_secs: u64,
    /// On shutdown, how long running jobs may take to finish before they are released.
    #[serde(default = "default_shutdown_grace_secs")]
    pub shutdown_grace_secs: u64,
    /// Record each job run's trace (LLM calls, tool calls, decisions) in Postgres for
    /// `GET /api/jobs/{id}/events` and `relay trace`.
    #[serde(default = "default_trace")]
    pub trace: bool,
    /// How often, in seconds, this worker's outbox sweeper looks for issues with a tracker write
    /// that is due and no queued or running job, and queues a drain job for them (one statement
    /// per tick). 0 turns the sweeper off (not recommended: a write whose job died then waits for
    /// the next event).
    #[serde(default = "default_sweep_interval_secs")]
    pub sweep_interval_secs: u64,
}

impl Default for WorkerSettings {
    fn default() -> Self {
        WorkerSettings {
            concurrency: default_concurrency(),
            lease_secs: default_lease_secs(),
            poll_interval_secs: default_poll_interval_secs(),
            max_attempts: default_max_attempts(),
            backoff_base_secs: default_backoff_base_secs(),
            backoff_max_secs: default_backoff_max_secs(),
            job_timeout_secs: default_job_timeout_secs(),
            shutdown_grace_secs: default_shutdown_grace_secs(),
            trace: default_trace(),
            sweep_interval_secs: default_sweep_interval_secs(),
        }
    }
}

impl WorkerSettings {
    pub fn lease(&self) -> Duration {
        Duration::from_secs(self.lease_secs.max(1))
    }
    pub fn heartbeat_interval(&self) -> Duration {
        self.lease() / 3
    }
    pub fn poll_interval(&self) -> Duration {
        Duration::from_secs(self.poll_interval_secs.max(1))
    }
    pub fn backoff(&self) -> relay_store::queue::Backoff {
        relay_store::queue::Backoff {
            base: Duration::from_secs(self.backoff_base_secs),
            max: Duration::from_secs(self.backoff_max_secs.max(self.backoff_base_secs)),
        }
    }
    pub fn job_timeout(&self) -> Duration {
        Duration::from_secs(self.job_timeout_secs.max(1))
    }
    /// `None`: the sweeper is off.
    pub fn sweep_interval(&self) -> Option<Duration> {
        (self.sweep_interval_secs > 0).then(|| Duration::from_secs(self.sweep_interval_secs))
    }
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_secs)
    }
}

fn default_sweep_interval_secs() -> u64 {
    15
}
fn default_trace() -> bool {
    true
}
fn default_concurrency() -> usize {
    4
}
fn default_lease_secs() -> u64 {
    60
}
fn default_poll_interval_secs() -> u64 {
    10
}
fn default_max_attempts() -> i32 {
    5
}
fn default_backoff_base_secs() -> u64 {
    10
}
fn default_backoff_max_secs() -> u64 {
    3600
}
fn default_job_timeout_secs() -> u64 {
    1800
}
fn default_shutdown_grace_secs() -> u64 {
    30
}
