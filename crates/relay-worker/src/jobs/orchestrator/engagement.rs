//! Engagement, as the diagram draws it: the pending events' actors → their roles on the project
//! ([`super::admission`], with the role cache) → the decision whether the job plans at all.
//!
//! A lookup that fails is retried (the job backs off), never read as "no". Nobody allowed → the
//! events are consumed as ignored, with the reasons, and no LLM is called.

use anyhow::Context as _;
use relay_agent::trace::TraceKind;
use relay_store::PgPool;
use relay_store::issues::IssueEventRow;
use serde_json::{Value, json};

use super::admission::Admission;
use super::setup::IssueJob;
use super::{JobRun, Orchestrator};
use crate::handler::JobError;

/// The decision for the job's pending events.
pub enum Engagement {
    /// Plan, with these authors' events able to make Relay act.
    Plan(Admission),
    /// Nobody pending may make Relay act and nothing else is left: the job's result.
    Done(Value),
}

impl Orchestrator {
    /// Decides whether the job plans; consumes the events when nobody pending may engage.
    pub(super) async fn engage(
        &self,
        pool: &PgPool,
        job: &IssueJob<'_>,
        run: &JobRun,
    ) -> Result<Engagement, JobError> {
        let events = &job.events;
        let admission = self.admission_of(job, run, events).await?;
        if events.is_empty() || admission.any_admitted(events) {
            return Ok(Engagement::Plan(admission));
        }
        let reasons = admission.ignored.clone();
        let last = events.last().map_or(0, |e| e.id);
        let mut conn = pool.acquire().await.context("no database connection")?;
        relay_store::issues::mark_events_handled(&mut conn, run.issue_id, last)
            .await
            .context("failed to mark ignored events handled")?;
        tracing::info!(issue.id = run.issue_id, reasons = ?reasons, "mention ignored");
        run.tracer.for_agent("orchestrator").event(
            TraceKind::Decision,
            json!({ "decision": "ignored", "reason": "engage_roles", "actors": reasons }),
        );
        // A go-ahead left pending by an earlier job is still retried.
        if job.spec_request.is_none() {
            return Ok(Engagement::Done(json!({ "cycles": 0, "ignored": reasons })));
        }
        Ok(Engagement::Plan(admission))
    }

    /// Events that arrived during the job: their authors are checked like the first.
    pub(super) async fn readmit(
        &self,
        pool: &PgPool,
        job: &IssueJob<'_>,
        run: &JobRun,
    ) -> Result<Admission, JobError> {
        let mut conn = pool.acquire().await.context("no database connection")?;
        let events = relay_store::issues::pending_events(&mut conn, run.issue_id)
            .await
            .context("failed to load pending events")?;
        drop(conn);
        self.admission_of(job, run, &events).await
    }

    async fn admission_of(
        &self,
        job: &IssueJob<'_>,
        run: &JobRun,
        events: &[IssueEventRow],
    ) -> Result<Admission, JobError> {
        self.admit(&job.tracker, &job.issue, &job.issue_ref, events)
            .await
            .map_err(|failure| failure.fail_job(run, &run.tracer.for_agent("orchestrator")))
    }
}
