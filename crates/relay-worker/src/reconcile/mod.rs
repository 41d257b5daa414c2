//! The reconciler: webhooks get lost (GitHub never redelivers on its own, GitLab disables a
//! failing hook), so every `[reconcile] interval_secs` one process per database (a Postgres
//! advisory lock) asks each tracker what changed on each project since its last successful pass,
//! and records what the webhooks did not bring through the same decision and the same intake
//! statement as a webhook (`relay_store::event_intake`), with origin `reconcile`. An event's
//! identity is its content, so one found here and its webhook arriving later are one event.
//!
//! Layout: [`settings`] (`[reconcile]`), [`events`] (changes → issue events, pure), this file
//! (the pass and the loop).
//!
//! Cost per pass: two statements to list the projects, one to record every project's outcome,
//! the lock's two, one `NOTIFY` when jobs were enqueued; per project one or two tracker calls when nothing changed; per project with
//! changes one read of what is stored, then intake's statements per new event.

pub mod events;
pub mod settings;

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use relay_core::TrackerSettings;
use relay_core::engage::{Decision, Origin, event_key};
use relay_store::PgPool;
use relay_store::event_intake::{EventIntake, decide_issue_event, record_issue_event};
use relay_store::reconcile::{self as store, ListedProject, PassResult, ProjectState};
use relay_telemetry::metrics::{RECONCILE_EVENTS_TOTAL, RECONCILE_PASSES_TOTAL};
use relay_tracker::{ProjectRef, Trackers};
use serde_json::json;
use tokio_util::sync::CancellationToken;

pub use events::{FoundEvent, found_events};

pub use settings::ReconcileSettings;

/// The event type stored with reconciled events (a webhook stores its header's).
pub const EVENT_TYPE: &str = "reconcile";

/// `relay_reconcile_passes_total{outcome}` of a project the pass could ask, and of one it could
/// not.
const PASS_OK: &str = "ok";
const PASS_FAILED: &str = "failed";

/// Creates `relay_reconcile_passes_total` at 0 for both outcomes: the alert on passes that all
/// fail compares the failures with the successes, and needs both series even when every pass
/// since the start failed (see [`relay_telemetry::metrics::zero_counter`]).
pub fn zero_pass_counters() {
    for outcome in [PASS_OK, PASS_FAILED] {
        relay_telemetry::metrics::zero_counter(RECONCILE_PASSES_TOTAL, &[("outcome", outcome)]);
    }
}

/// Runs reconciliation passes.
#[derive(Clone)]
pub struct Reconciler {
    pool: PgPool,
    trackers: Trackers,
    tracker_settings: Vec<TrackerSettings>,
    settings: ReconcileSettings,
    /// `max_attempts` of the jobs reconciled events create (as the gateway's).
    max_attempts: i32,
}

/// How one pass runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct PassOptions {
    /// Decide and report, record nothing, move no watermark.
    pub dry_run: bool,
    /// Ask from `now - since` for every project instead of from its watermark.
    pub since: Option<chrono::Duration>,
}

/// What one pass did.
#[derive(Debug, Clone, Default)]
pub struct PassReport {
    /// Another process held the reconciler's lock: nothing was done.
    pub locked_out: bool,
    pub projects: Vec<ProjectReport>,
}

/// One project's part of a pass.
#[derive(Debug, Clone)]
pub struct ProjectReport {
    pub tracker: String,
    pub project_path: String,
    pub since: DateTime<Utc>,
    /// The tracker's error, when the project failed (its watermark stays).
    pub error: Option<String>,
    pub events: Vec<EventReport>,
}

/// One event a pass found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventReport {
    pub issue_number: i64,
    pub event_key: String,
    pub actor: String,
    pub decision: Decision,
    /// Recorded (`Some(job)` when it engaged), or `None`: a duplicate, or a dry run.
    pub recorded: Option<Option<relay_core::JobId>>,
}

impl Reconciler {
    pub fn new(
        pool: PgPool,
        trackers: Trackers,
        tracker_settings: Vec<TrackerSettings>,
        settings: ReconcileSettings,
        max_attempts: i32,
    ) -> Reconciler {
        Reconciler {
            pool,
            trackers,
            tracker_settings,
            settings,
            max_attempts,
        }
    }

    /// A pass every `interval_secs` until `shutdown` (the first one right away: a restart is when
    /// webhooks were most likely lost). Returns at once when the interval is 0.
    pub async fn run(self, shutdown: CancellationToken) {
        let Some(interval) = self.settings.interval() else {
            tracing::info!("reconciler off ([reconcile] interval_secs = 0)");
            return;
        };
        zero_pass_counters();
        loop {
            match self.pass(PassOptions::default()).await {
                Ok(report) => log_pass(&report),
                Err(error) => tracing::warn!(
                    error.message = %relay_core::error::cause_chain(&error),
                    "reconcile pass failed; retrying next interval"
                ),
            }
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(interval) => {}
            }
        }
    }

    /// One pass over every project, under the reconciler's lock.
    pub async fn pass(&self, options: PassOptions) -> relay_store::Result<PassReport> {
        let Some(lock) = store::try_lock(&self.pool).await? else {
            return Ok(PassReport {
                locked_out: true,
                ..PassReport::default()
            });
        };
        let result = self.pass_locked(options).await;
        if let Err(error) = lock.release().await {
            tracing::warn!(error.message = %error, "releasing the reconciler lock failed");
        }
        result
    }

    async fn pass_locked(&self, options: PassOptions) -> relay_store::Result<PassReport> {
        let names: Vec<String> = self
            .tracker_settings
            .iter()
            .filter(|t| self.trackers.get(&t.name).is_some())
            .map(|t| t.name.to_string())
            .collect();
        let listed: Vec<ListedProject> = self
            .tracker_settings
            .iter()
            .filter(|t| names.iter().any(|n| n == t.name.as_str()))
            .flat_map(|t| {
                t.projects.iter().flatten().map(|p| ListedProject {
                    tracker: t.name.to_string(),
                    project_path: p.clone(),
                })
            })
            .collect();
        let projects = store::projects(&self.pool, &names, &listed).await?;
        let started = Utc::now();
        let mut report = PassReport::default();
        let mut results = Vec::new();
        for project in projects {
            let Some(tracker) = self
                .tracker_settings
                .iter()
                .find(|t| t.name.as_str() == project.tracker)
            else {
                continue;
            };
            if !tracker.allows_project(
                project.project_id.as_deref().unwrap_or(""),
                &project.project_path,
            ) {
                continue;
            }
            let since = match options.since {
                Some(back) => started - back,
                None => self.since(&project),
            };
            let (project_report, result) = self.project(tracker, &project, since, options).await;
            report.projects.push(project_report);
            results.extend(result);
        }
        if !options.dry_run {
            store::finish_pass(&self.pool, &results).await?;
        }
        let enqueued = report
            .projects
            .iter()
            .flat_map(|p| &p.events)
            .any(|e| matches!(e.recorded, Some(Some(_))));
        if enqueued {
            // Wake the workers now rather than at their next poll, as the gateway does.
            relay_store::queue::notify_workers(&self.pool).await?;
        }
        Ok(report)
    }

    /// Where a project's next pass starts: the last successful pass's start minus the overlap,
    /// or, the first time, `lookback` before Relay first saw the project.
    fn since(&self, project: &ProjectState) -> DateTime<Utc> {
        match project.watermark {
            Some(mark) => mark - self.settings.overlap(),
            None => project.first_seen_at - self.settings.lookback(),
        }
    }

    async fn project(
        &self,
        tracker: &TrackerSettings,
        project: &ProjectState,
        since: DateTime<Utc>,
        options: PassOptions,
    ) -> (ProjectReport, Option<PassResult>) {
        let started = Utc::now();
        let mut report = ProjectReport {
            tracker: project.tracker.clone(),
            project_path: project.project_path.clone(),
            since,
            error: None,
            events: Vec::new(),
        };
        let outcome = self.poll(tracker, project, since, options).await;
        let (watermark, project_id, error) = match outcome {
            Ok((events, project_id)) => {
                report.events = events;
                metrics::counter!(RECONCILE_PASSES_TOTAL, "outcome" => PASS_OK).increment(1);
                (Some(started), project_id, None)
            }
            Err(error) => {
                metrics::counter!(RECONCILE_PASSES_TOTAL, "outcome" => PASS_FAILED).increment(1);
                tracing::warn!(
                    tracker = %project.tracker,
                    project.path = %project.project_path,
                    error.message = %error,
                    "reconcile: project failed; it is retried next pass"
                );
                report.error = Some(error.clone());
                (None, None, Some(error))
            }
        };
        let found = i32::try_from(
            report
                .events
                .iter()
                .filter(|e| matches!(e.recorded, Some(Some(_))))
                .count(),
        )
        .unwrap_or(i32::MAX);
        let result = PassResult {
            tracker: project.tracker.clone(),
            project_key: project.project_key.clone(),
            project_id,
            watermark,
            error,
            found,
        };
        (report, Some(result))
    }

    /// Asks the tracker and records what it says; `Err` is the message stored for the project.
    async fn poll(
        &self,
        tracker: &TrackerSettings,
        project: &ProjectState,
        since: DateTime<Utc>,
        options: PassOptions,
    ) -> Result<(Vec<EventReport>, Option<String>), String> {
        let client = self
            .trackers
            .get(&tracker.name)
            .ok_or_else(|| format!("no client for tracker {}", tracker.name))?;
        let changes = client
            .changes_since(
                &ProjectRef {
                    project_id: project.project_id.clone(),
                    project_path: project.project_path.clone(),
                },
                since,
            )
            .await
            .map_err(|e| relay_core::error::cause_chain(&e))?;
        if changes.issues.is_empty() && changes.notes.is_empty() {
            return Ok((Vec::new(), changes.project_id));
        }
        let project_id = changes.project_id.clone().unwrap_or_default();
        let numbers: Vec<i64> = changes.issues.iter().map(|i| i.issue.number).collect();
        let note_ids: Vec<String> = changes
            .notes
            .iter()
            .map(|n| n.note.note_id.clone())
            .collect();
        let known: HashMap<_, _> = store::known(
            &self.pool,
            tracker.name.as_str(),
            &project_id,
            &numbers,
            &note_ids,
        )
        .await
        .map_err(|e| relay_core::error::cause_chain(&e))?;
        let mut reports = Vec::new();
        for found in found_events(&changes, &known, since) {
            let report = self
                .record(tracker, &found, options)
                .await
                .map_err(|e| relay_core::error::cause_chain(&e))?;
            reports.push(report);
        }
        Ok((reports, changes.project_id))
    }

    async fn record(
        &self,
        tracker: &TrackerSettings,
        found: &FoundEvent,
        options: PassOptions,
    ) -> relay_store::Result<EventReport> {
        let key = event_key(tracker.name.as_str(), &found.event, Some(found.action));
        let mut report = EventReport {
            issue_number: found.event.issue.number,
            event_key: key.clone(),
            actor: found.event.actor.clone(),
            decision: Decision::Ignore("dry_run"),
            recorded: None,
        };
        if options.dry_run {
            report.decision = decide_issue_event(&self.pool, tracker, &found.event).await?;
            return Ok(report);
        }
        let payload = json!({
            "origin": Origin::Reconcile.as_str(),
            "event_key": key,
            "action": found.action,
            "issue": found.event.issue.number,
            "note_id": found.event.note.as_ref().map(|n| n.note.note_id.as_str()),
        });
        let outcome = record_issue_event(
            &self.pool,
            &EventIntake {
                tracker,
                event: &found.event,
                origin: Origin::Reconcile,
                event_type: EVENT_TYPE,
                action: Some(found.action),
                delivery_key: &format!("reconcile:{key}"),
                payload: &payload,
                max_attempts: self.max_attempts,
            },
        )
        .await?;
        report.decision = outcome.decision;
        report.recorded = outcome.recorded.map(|r| r.job_id);
        if let (Some(_), Decision::Engage(kind)) = (outcome.recorded, outcome.decision) {
            metrics::counter!(RECONCILE_EVENTS_TOTAL, "origin" => Origin::Reconcile.as_str())
                .increment(1);
            tracing::info!(
                tracker = %tracker.name,
                issue.number = found.event.issue.number,
                event.key = %key,
                event.kind = kind,
                "reconcile: recorded an event whose webhook never arrived"
            );
        }
        Ok(report)
    }
}

fn log_pass(report: &PassReport) {
    if report.locked_out {
        tracing::debug!("reconcile: another process is running a pass");
        return;
    }
    let failed = report.projects.iter().filter(|p| p.error.is_some()).count();
    let recorded = report
        .projects
        .iter()
        .flat_map(|p| &p.events)
        .filter(|e| e.recorded.is_some())
        .count();
    tracing::info!(
        projects = report.projects.len(),
        projects.failed = failed,
        events.recorded = recorded,
        "reconcile pass done"
    );
}
