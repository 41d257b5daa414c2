//! `relay jobs list|retry|discard` and `relay writes list|retry`: act on what the operations
//! page shows (dead jobs, tracker writes refused for good) without SQL. Each action is idempotent
//! (a second run reports there is nothing to do), safe while workers run (it changes a row only
//! from the state it is for), and recorded in `operator_actions` and the job's run trace
//! (`relay_store::operator`).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use relay_store::operator::{self, ActionOutcome, JobFilter};
use relay_store::outbox::{self, FailedWrite, FailedWrites};

/// Rows a list prints unless told otherwise.
const DEFAULT_LIST_LIMIT: i64 = 50;

#[derive(Debug, clap::Subcommand)]
pub enum JobsCommand {
    /// Jobs that used all their attempts (or failed for good, or were discarded), newest first.
    List {
        #[arg(long, value_enum, default_value_t = JobStatus::Dead)]
        status: JobStatus,
        #[arg(long, default_value_t = DEFAULT_LIST_LIMIT)]
        limit: i64,
    },
    /// Queue dead jobs again, attempts from zero (a job already queued or running is left alone).
    Retry {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
    /// Let dead jobs go: marked `discarded`, no longer listed as dead (retention deletes them).
    Discard {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum JobStatus {
    Dead,
    Failed,
    Discarded,
}

impl From<JobStatus> for JobFilter {
    fn from(status: JobStatus) -> JobFilter {
        match status {
            JobStatus::Dead => JobFilter::Dead,
            JobStatus::Failed => JobFilter::Failed,
            JobStatus::Discarded => JobFilter::Discarded,
        }
    }
}

#[derive(Debug, clap::Subcommand)]
pub enum WritesCommand {
    /// Tracker writes the tracker refused for good, newest first.
    List {
        #[arg(long, default_value_t = DEFAULT_LIST_LIMIT)]
        limit: i64,
    },
    /// Send refused writes again (pending, due now; the issue's job is queued to send them). Fix
    /// the cause first (the token's scope, a locked issue): a write refused again fails again.
    Retry {
        #[arg(required = true)]
        ids: Vec<i64>,
    },
}

/// Who ran the command, for the record.
fn actor() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .map(|user| format!("cli:{user}"))
        .unwrap_or_else(|_| "cli".to_owned())
}

pub async fn jobs(config: Option<&Path>, command: &JobsCommand) -> anyhow::Result<()> {
    let settings = super::load(config)?.settings;
    let pool = super::connect(&settings.database).await?;
    let result = async {
        match command {
            JobsCommand::List { status, limit } => {
                let jobs = operator::list_jobs(&pool, (*status).into(), *limit)
                    .await
                    .context("failed to list jobs")?;
                print!("{}", render_jobs(&jobs));
            }
            JobsCommand::Retry { ids } => {
                for id in ids {
                    let outcome = operator::retry_job(&pool, relay_core::JobId(*id), &actor())
                        .await
                        .with_context(|| format!("failed to retry job {id}"))?;
                    println!("{}", describe("job", *id, "retried", &outcome));
                }
            }
            JobsCommand::Discard { ids } => {
                for id in ids {
                    let outcome = operator::discard_job(&pool, relay_core::JobId(*id), &actor())
                        .await
                        .with_context(|| format!("failed to discard job {id}"))?;
                    println!("{}", describe("job", *id, "discarded", &outcome));
                }
            }
        }
        Ok(())
    }
    .await;
    pool.close().await;
    result
}

pub async fn writes(config: Option<&Path>, command: &WritesCommand) -> anyhow::Result<()> {
    let settings = super::load(config)?.settings;
    let pool = super::connect(&settings.database).await?;
    let result = async {
        match command {
            WritesCommand::List { limit } => {
                let writes = outbox::failed_writes(&pool, FailedWrites::All, *limit)
                    .await
                    .context("failed to list tracker writes")?;
                print!("{}", render_writes(&writes));
            }
            WritesCommand::Retry { ids } => {
                for id in ids {
                    let outcome = operator::retry_write(&pool, relay_core::OutboxId(*id), &actor())
                        .await
                        .with_context(|| format!("failed to retry write {id}"))?;
                    println!(
                        "{}",
                        describe("write", *id, "queued to be sent again", &outcome)
                    );
                }
            }
        }
        Ok(())
    }
    .await;
    pool.close().await;
    result
}

/// One line per action; "nothing to do" answers are not errors (the action is idempotent).
fn describe(what: &str, id: i64, done: &str, outcome: &ActionOutcome) -> String {
    match outcome {
        ActionOutcome::Done { job_id: Some(job) } if what == "write" => {
            format!("{what} {id}: {done} (job {job})")
        }
        ActionOutcome::Done { job_id: None } if what == "write" => {
            format!("{what} {id}: {done} (the issue's running or queued job sends it)")
        }
        ActionOutcome::Done { .. } => format!("{what} {id}: {done}"),
        ActionOutcome::NotApplicable { status } => {
            format!("{what} {id}: nothing to do (it is {status})")
        }
        ActionOutcome::Superseded { by_job } => {
            format!("{what} {id}: nothing to do (job {by_job} is queued for the same work)")
        }
        ActionOutcome::Replaced { by_write } => format!(
            "{what} {id}: nothing to do (the newer {by_write} replaces it; sending it would put older text over newer)"
        ),
        ActionOutcome::NotFound => format!("{what} {id}: not found"),
    }
}

/// Error texts are cut to one line of this many characters in lists.
const ERROR_PREVIEW_CHARS: usize = 100;

fn one_line(text: Option<&str>) -> String {
    let text = text.unwrap_or("-").replace(['\n', '\r'], " ");
    if text.chars().count() > ERROR_PREVIEW_CHARS {
        let cut: String = text.chars().take(ERROR_PREVIEW_CHARS).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// One line per job: why it failed — its root cause (the LLM's or the tracker's classified
/// error), then the last error's first characters — and the command that shows every step.
pub fn render_jobs(jobs: &[operator::FinishedJob]) -> String {
    if jobs.is_empty() {
        return "no jobs\n".to_owned();
    }
    let mut out = String::from("id\tkind\tstatus\tattempts\tfinished\tcause\tlast error\tsteps\n");
    for job in jobs {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}/{}\t{}\t{}\t{}\trelay trace {}",
            job.id,
            job.kind,
            job.status,
            job.attempts,
            job.max_attempts,
            job.finished_at.map_or("-".to_owned(), |at| at
                .format("%Y-%m-%d %H:%M:%S")
                .to_string()),
            job.last_cause.as_deref().unwrap_or("-"),
            one_line(job.last_error.as_deref()),
            job.id,
        );
    }
    out
}

pub fn render_writes(writes: &[FailedWrite]) -> String {
    if writes.is_empty() {
        return "no tracker writes refused for good\n".to_owned();
    }
    let mut out = String::from("id\tissue\tjob\tkind\tattempts\tlast error\n");
    for write in writes {
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}\t{}",
            write.id,
            write.issue_id,
            write.job_id.map_or("-".to_owned(), |j| j.to_string()),
            write.kind,
            write.attempts,
            one_line(write.last_error.as_deref())
        );
    }
    out
}
