//! `process_issue`: work on one issue.
//!
//! For now the handler takes stock: it loads the issue, its cached thread and the events that are
//! pending for it, records what it saw with the run, and marks exactly those events handled
//! (events that arrive meanwhile stay pending for the follow-up job). The planner replaces the
//! middle of this function; the bookkeeping around it stays.

use anyhow::Context as _;
use relay_core::ProcessIssue;
use relay_store::issues;
use serde_json::{Value, json};

use super::orchestrator::JobRun;
use crate::handler::{JobContext, JobError, JobHandler};

#[derive(Default)]
pub struct ProcessIssueJob {
    /// When present, the job orchestrates planning cycles instead of bookkeeping only.
    pub orchestrator: Option<Orchestration>,
}

/// The orchestrator and the checkouts it explores.
pub struct Orchestration {
    pub orchestrator: std::sync::Arc<super::orchestrator::Orchestrator>,
    pub repos: std::sync::Arc<relay_repo::RepoManager>,
    pub specs: std::sync::Arc<super::RepoSpecs>,
}

#[async_trait::async_trait]
impl JobHandler for ProcessIssueJob {
    async fn run(&self, context: JobContext) -> Result<Value, JobError> {
        let payload: ProcessIssue = serde_json::from_value(context.job.payload.clone())
            .context("process_issue payload is malformed")
            .map_err(JobError::Permanent)?;
        tracing::Span::current().record("issue.id", payload.issue_id.get());
        if let Some(orchestrator) = &self.orchestrator {
            return orchestrator
                .orchestrator
                .orchestrate(
                    &context.pool,
                    &orchestrator.repos,
                    &orchestrator.specs,
                    &JobRun::new(context.job.id, context.job.max_attempts, payload.issue_id)
                        .at_attempt(context.job.attempt, context.job.max_attempts)
                        .at_run(context.job.run)
                        .with_lease(relay_actions::Lease {
                            job_id: context.job.id,
                            token: context.job.lease_token,
                        })
                        .with_tracer(context.tracer.clone()),
                )
                .await;
        }

        let mut tx = context
            .pool
            .begin()
            .await
            .context("failed to begin a transaction")?;
        let issue = issues::get(&mut tx, payload.issue_id)
            .await
            .context("failed to load the issue")?
            .ok_or_else(|| anyhow::anyhow!("issue {} does not exist", payload.issue_id))
            .map_err(JobError::Permanent)?;
        let notes = issues::notes(&mut tx, issue.id)
            .await
            .context("failed to load the thread")?;
        let events = issues::pending_events(&mut tx, issue.id)
            .await
            .context("failed to load pending events")?;
        if let Some(last) = events.last() {
            issues::mark_events_handled(&mut tx, issue.id, last.id)
                .await
                .context("failed to mark events handled")?;
        }
        tx.commit().await.context("failed to commit")?;

        tracing::info!(
            issue.number = issue.number,
            issue.project = %issue.project_path,
            events = events.len(),
            notes = notes.len(),
            "issue processed"
        );
        Ok(json!({
            "issue": { "tracker": issue.tracker, "project": issue.project_path, "number": issue.number },
            "events": events.iter().map(|e| json!({ "id": e.id, "kind": e.kind, "actor": e.actor })).collect::<Vec<_>>(),
            "notes": notes.len(),
        }))
    }
}
