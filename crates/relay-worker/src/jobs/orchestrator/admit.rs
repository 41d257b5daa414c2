//! Admission, as the diagram draws it: the pending events' actors → their roles on the project
//! (the role cache, then the tracker) → `[agent.engage_roles]` → whether the job plans at all
//! ([`engage`]); then, at the checkout, the same narrowed by the repository's `.relay.toml`
//! ([`narrow`]); between cycles, for the events that arrived meanwhile ([`readmit`]).
//!
//! Only a definite answer (not a member, a role too low, a name the tracker cannot have) leaves an
//! author out; a lookup that failed (5xx, 429, 403, a missing scope) fails the job retryably, so
//! the queue backs off and tries again, and on the last attempt the trace and the log say why.
//! Nobody admitted → the events are consumed as ignored, with the reasons, and no LLM is called.
//! Once the job is going to plan, the first contact is acknowledged ([`acknowledge`]).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use relay_agent::agent_settings::{EngageDecision, EngageRoles, Visibility};
use relay_agent::trace::{TraceKind, Tracer};
use relay_core::engage::TRIGGER_LABEL;
use relay_core::repo_config::EffectiveConfig;
use relay_store::PgPool;
use relay_store::issues::{IssueEventRow, IssueRow};
use relay_tracker::{IssueRef, IssueTracker, TrackerError};
use serde_json::json;

use super::admission::Admission;
use super::job::{Attempt, Job, JobEnd, JobRun, JobStep};
use super::role_cache::{RoleCache, RoleKey};
use crate::handler::JobError;

/// Who decides whether an author may engage: the server's `[agent.engage_roles]`, with the
/// roles looked up recently.
#[derive(Clone, Copy)]
pub struct RoleLookup<'a> {
    pub cache: &'a RoleCache,
    pub policy: &'a EngageRoles,
}

/// Admits the pending events' authors by the server's roles; ends the job (the events consumed
/// as ignored) when nobody pending may engage.
pub async fn engage(roles: RoleLookup<'_>, pool: &PgPool, run: &JobRun, job: &mut Job) -> JobStep {
    let events = &job.pending.events;
    let admission = admission_of(roles, run, job, events).await?;
    let plan = events.is_empty() || admission.any_admitted(events);
    job.admission = admission;
    if plan {
        return Ok(());
    }
    ignore_all(pool, run, job, "engage_roles").await
}

/// Narrows the admission by the repository's configuration at the checkout: its `engage` roles,
/// and its trigger labels (an event engaged only by a label the repository does not keep is
/// context only). Nobody left: the events are consumed as ignored.
pub async fn narrow(
    pool: &PgPool,
    run: &JobRun,
    job: &mut Job,
    config: &EffectiveConfig,
) -> JobStep {
    let private = engage_visibility(&job.issue) == Visibility::Private;
    job.admission = std::mem::take(&mut job.admission).narrowed(config.engage_roles(private));
    // A label event engages only when the label it added is still a trigger here: another
    // trigger label the issue already carries is no reason to engage now.
    let engages = |event: &IssueEventRow| match (&event.kind[..], &event.trigger_labels) {
        (TRIGGER_LABEL, Some(added)) => added.iter().any(|l| config.triggers_on(l)),
        // Recorded before migration 0098: the issue's labels are all that is known.
        (TRIGGER_LABEL, None) => job.issue.labels.iter().any(|l| config.triggers_on(l)),
        _ => true,
    };
    let actionable = job
        .pending
        .events
        .iter()
        .any(|e| job.admission.admits(&e.actor) && engages(e));
    if job.pending.events.is_empty() || actionable {
        return Ok(());
    }
    ignore_all(pool, run, job, "repository_config").await
}

/// Admits the authors of what is pending now (events that arrived during the job) like the
/// first: the server's roles narrowed by the repository's.
pub async fn readmit(
    roles: RoleLookup<'_>,
    run: &JobRun,
    job: &mut Job,
    config: &EffectiveConfig,
) -> Result<(), JobError> {
    let private = engage_visibility(&job.issue) == Visibility::Private;
    job.admission = admission_of(roles, run, job, &job.pending.events)
        .await?
        .narrowed(config.engage_roles(private));
    Ok(())
}

async fn admission_of(
    roles: RoleLookup<'_>,
    run: &JobRun,
    job: &Job,
    events: &[IssueEventRow],
) -> Result<Admission, JobError> {
    admit(roles, &job.tracker, &job.issue, &job.issue_ref, events)
        .await
        .map_err(|failure| failure.fail_job(run, &run.tracer.for_agent("orchestrator")))
}

/// Decides, per author of `events`, whether their events may make Relay act.
pub async fn admit(
    roles: RoleLookup<'_>,
    tracker: &Arc<dyn IssueTracker>,
    issue: &IssueRow,
    issue_ref: &IssueRef,
    events: &[IssueEventRow],
) -> Result<Admission, RoleLookupFailed> {
    let mut admission = Admission::default();
    let mut seen = HashSet::new();
    for event in events {
        let actor = event.actor.as_str();
        if !seen.insert(actor.to_lowercase()) {
            continue;
        }
        if actor.is_empty() {
            // An issue change the reconciler found: the tracker's lists do not say who.
            admission.ignored.push(
                "an issue change found by polling names nobody who made it: context only"
                    .to_owned(),
            );
            continue;
        }
        let key = RoleKey {
            tracker: issue.tracker.clone(),
            project: issue.project_id.clone(),
            username: actor.to_owned(),
        };
        let role = match roles.cache.get(&key, Instant::now()) {
            Some(role) => Some(role),
            None => match tracker
                .author_role_by_id(issue_ref, actor, event.actor_id)
                .await
            {
                Ok(role) => {
                    roles.cache.insert(key, role, Instant::now());
                    Some(role)
                }
                // A name the tracker cannot have is a definite answer: nobody.
                Err(TrackerError::Validation(_)) => None,
                Err(error) => {
                    return Err(RoleLookupFailed {
                        actor: actor.to_owned(),
                        error,
                    });
                }
            },
        };
        admission.set_role(actor, role);
        match roles
            .policy
            .decide(&issue.tracker, engage_visibility(issue), role)
        {
            EngageDecision::Engage => admission.admit(actor),
            EngageDecision::Ignore { reason } => {
                admission.ignored.push(format!("@{actor}: {reason}"));
            }
        }
    }
    Ok(admission)
}

/// A role lookup that failed: not an answer, so the job is retried.
#[derive(Debug)]
pub struct RoleLookupFailed {
    pub actor: String,
    pub error: TrackerError,
}

impl RoleLookupFailed {
    /// The job's error (retryable), traced and logged; on the last attempt loudly, with why.
    pub fn fail_job(self, run: &JobRun, tracer: &Tracer) -> JobError {
        let last = run.attempt == Attempt::Last;
        tracer.event(
            TraceKind::Decision,
            json!({
                "decision": "role_lookup_failed", "actor": self.actor,
                "error": relay_agent::trace::capped(&self.error.to_string()),
                "last_attempt": last,
            }),
        );
        if last {
            tracing::error!(
                issue.id = run.issue_id.get(),
                actor = %self.actor,
                error.message = %self.error,
                "could not look up who mentioned Relay on the job's last attempt; the events stay pending"
            );
        } else {
            tracing::warn!(
                issue.id = run.issue_id.get(),
                actor = %self.actor,
                error.message = %self.error,
                "role lookup failed; the job backs off and tries again"
            );
        }
        // The tracker's error stays the source: the operator's list shows it as the cause.
        let why = format!("role lookup for @{} failed", self.actor);
        JobError::Retryable(anyhow::Error::new(self.error).context(why))
    }
}

/// Which engage policy applies to the issue's project. Only a project the webhooks said is private
/// gets the private policy: an internal project (any signed-in user of the instance can comment)
/// and one whose visibility is not known yet get the stricter public rule.
pub fn engage_visibility(issue: &IssueRow) -> Visibility {
    match issue
        .project_visibility
        .as_deref()
        .and_then(relay_core::ProjectVisibility::parse)
    {
        Some(relay_core::ProjectVisibility::Private) => Visibility::Private,
        _ => Visibility::Public,
    }
}

/// Consumes the pending events as ignored (nobody who may make Relay act), with the reasons, and
/// ends the job — unless a go-ahead left pending by an earlier job is still to be retried.
async fn ignore_all(pool: &PgPool, run: &JobRun, job: &Job, why: &str) -> JobStep {
    let reasons = job.admission.ignored.clone();
    let last = job.pending.last_event().unwrap_or(0);
    let mut conn = pool.acquire().await.context("no database connection")?;
    relay_store::issues::mark_events_handled(&mut conn, run.issue_id, last)
        .await
        .context("failed to mark ignored events handled")?;
    tracing::info!(issue.id = run.issue_id.get(), reasons = ?reasons, "mention ignored");
    run.tracer.for_agent("orchestrator").event(
        TraceKind::Decision,
        json!({ "decision": "ignored", "reason": why, "actors": reasons }),
    );
    if job.pending.spec_request.is_none() {
        return Err(JobEnd::Done(json!({ "cycles": 0, "ignored": reasons })));
    }
    Ok(())
}

/// First contact: queues the acknowledgement (an "eyes" reaction on the first admitted author's
/// triggering comment, or the issue) once the job is going to plan. Keyed per issue, so it is
/// sent once whatever happens to the job: with the first cycle's drain.
pub async fn acknowledge(pool: &PgPool, run: &JobRun, job: &Job) -> anyhow::Result<()> {
    let Some(first) = job
        .pending
        .events
        .iter()
        .find(|e| job.admission.admits(&e.actor))
    else {
        return Ok(());
    };
    let mut conn = pool.acquire().await.context("no database connection")?;
    relay_actions::notices::enqueue_acknowledgement(
        &mut conn,
        run.issue_id,
        run.job_id,
        first.note_id.as_deref(),
    )
    .await?;
    Ok(())
}
