//! Engagement, as the diagram draws it: the pending events' actors → their roles on the project
//! ([`super::admission`], with the role cache) → the decision whether the job plans at all.
//!
//! A lookup that fails is retried (the job backs off), never read as "no". Nobody allowed → the
//! events are consumed as ignored, with the reasons, and no LLM is called.

use anyhow::Context as _;
use relay_agent::agent_settings::Visibility;
use relay_agent::trace::TraceKind;
use relay_core::repo_config::EffectiveConfig;
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
        ignore_all(pool, job, run, admission, "engage_roles").await
    }

    /// The admission narrowed by the repository's configuration at the checkout: its `engage`
    /// roles, and its trigger labels (an event engaged only by a label the repository does not
    /// keep is context only). Nobody left: the events are consumed as ignored.
    pub(super) async fn narrow(
        &self,
        pool: &PgPool,
        job: &IssueJob<'_>,
        run: &JobRun,
        config: &EffectiveConfig,
        admission: Admission,
    ) -> Result<Engagement, JobError> {
        let private = super::admission::engage_visibility(&job.issue) == Visibility::Private;
        let admission = admission.narrowed(config.engage_roles(private));
        let label_triggers = job.issue.labels.iter().any(|l| config.triggers_on(l));
        let actionable = job
            .events
            .iter()
            .any(|e| admission.admits(&e.actor) && (e.kind != TRIGGER_LABEL || label_triggers));
        if job.events.is_empty() || actionable {
            return Ok(Engagement::Plan(admission));
        }
        ignore_all(pool, job, run, admission, "repository_config").await
    }

    /// Events that arrived during the job: their authors are checked like the first (the
    /// server's roles narrowed by the repository's).
    pub(super) async fn readmit(
        &self,
        pool: &PgPool,
        job: &IssueJob<'_>,
        run: &JobRun,
        config: &EffectiveConfig,
    ) -> Result<Admission, JobError> {
        let mut conn = pool.acquire().await.context("no database connection")?;
        let events = relay_store::issues::pending_events(&mut conn, run.issue_id)
            .await
            .context("failed to load pending events")?;
        drop(conn);
        let private = super::admission::engage_visibility(&job.issue) == Visibility::Private;
        Ok(self
            .admission_of(job, run, &events)
            .await?
            .narrowed(config.engage_roles(private)))
    }

    pub(super) async fn admission_of(
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

/// The event kind of a trigger label being added.
const TRIGGER_LABEL: &str = "trigger_label";

/// Consumes the pending events as ignored (nobody who may make Relay act), with the reasons.
/// A go-ahead left pending by an earlier job is still retried.
async fn ignore_all(
    pool: &PgPool,
    job: &IssueJob<'_>,
    run: &JobRun,
    admission: Admission,
    why: &str,
) -> Result<Engagement, JobError> {
    let reasons = admission.ignored.clone();
    let last = job.events.last().map_or(0, |e| e.id);
    let mut conn = pool.acquire().await.context("no database connection")?;
    relay_store::issues::mark_events_handled(&mut conn, run.issue_id, last)
        .await
        .context("failed to mark ignored events handled")?;
    tracing::info!(issue.id = run.issue_id.get(), reasons = ?reasons, "mention ignored");
    run.tracer.for_agent("orchestrator").event(
        TraceKind::Decision,
        json!({ "decision": "ignored", "reason": why, "actors": reasons }),
    );
    if job.spec_request.is_none() {
        return Ok(Engagement::Done(json!({ "cycles": 0, "ignored": reasons })));
    }
    Ok(Engagement::Plan(admission))
}
