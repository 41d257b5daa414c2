//! `GET /api/issues/{id}`: one issue with everything Relay keeps about it: gaps, findings, the
//! repository's learnings, the spec, a status, token spend by role, and its jobs.

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::AppState;
use crate::error::ApiError;

pub async fn show(
    State(state): State<AppState>,
    Path(id): Path<relay_core::IssueId>,
) -> Result<Response, ApiError> {
    super::with_timeout(&state, async {
        let mut conn = state
            .pool
            .acquire()
            .await
            .map_err(relay_store::Error::from)?;
        let Some(relay_store::issue_state::IssueState {
            issue,
            gaps,
            gap_evidence: evidence,
            findings,
            spec,
        }) = relay_store::issue_state::load(&mut conn, id).await?
        else {
            return Ok(super::not_found("issue"));
        };
        let learnings =
            relay_store::learnings::for_project(&mut conn, &issue.tracker, &issue.project_id)
                .await?;
        drop(conn);
        let spend = relay_store::browse::spend_by_role(&state.pool, id).await?;
        let jobs = relay_store::browse::jobs_of_issue(&state.pool, id).await?;
        let failed_writes = relay_store::outbox::failed_writes(
            &state.pool,
            relay_store::outbox::FailedWrites::OfIssue(id),
            relay_store::browse::MAX_FAILED_WRITES_LISTED,
        )
        .await?;
        let budget =
            crate::projects::issue_budget(
                &state.pool,
                state.policy(&issue.tracker),
                id,
                &issue.tracker,
                &issue.project_id,
            )
                .await?;
        let open_gaps = gaps.iter().filter(|g| g.is_open()).count();
        let status = if budget.stopped.is_some() {
            "stopped".to_owned()
        } else {
            status(
                spec.as_ref().map(|s| s.status.as_str()),
                open_gaps,
                jobs.len(),
            )
        };
        Ok(Json(json!({
            "issue": {
                "id": issue.id,
                "tracker": issue.tracker,
                "project_id": issue.project_id,
                "project_path": issue.project_path,
                "number": issue.number,
                "title": issue.title,
                "state": issue.state,
                "labels": issue.labels,
                "author": issue.author,
                "assignees": issue.assignees,
                "url": issue.url,
                "updated_at": issue.updated_at,
            },
            "status": status,
            "gaps": with_evidence(&gaps, &evidence),
            "findings": findings,
            "learnings": learnings,
            "spec": spec,
            "spend_by_role": spend,
            // The cap in effect (the configuration plus maintainers' raises), the spend, and
            // whether `@bot stop` silenced Relay here.
            "budget": budget,
            "project_url": format!("/api/projects/{}/{}", issue.tracker, issue.project_id),
            // Tracker writes refused for good (a 4xx): the operator's view of what never landed.
            "failed_writes": failed_writes,
            "jobs": jobs.iter().map(|job| super::job::with_events_url(job, job.id)).collect::<Vec<_>>(),
        }))
        .into_response())
    })
    .await
}

/// Where the issue stands, in one word (`stopped` first, when `@bot stop` silenced Relay): the
/// spec's status once there is one
/// (`spec_draft`, `spec_posted`, `spec_approved`, `spec_rejected`), else `waiting_for_answers`
/// while gaps are open, `in_progress` once a job ran, `new` before.
fn status(spec: Option<&str>, open_gaps: usize, jobs: usize) -> String {
    match spec {
        Some(spec) => format!("spec_{spec}"),
        None if open_gaps > 0 => "waiting_for_answers".into(),
        None if jobs > 0 => "in_progress".into(),
        None => "new".into(),
    }
}

/// Each gap with the code places its evidence cites (`evidence_sources`, as a finding's
/// `sources`: status, commit, `moved_from`) and `evidence_stale` when any of them is stale.
fn with_evidence(
    gaps: &[relay_store::gaps::GapRow],
    evidence: &[relay_store::gaps::GapEvidence],
) -> Vec<serde_json::Value> {
    gaps.iter()
        .map(|gap| {
            let cited = relay_store::gaps::GapSources::of(evidence, gap.number);
            let mut value = json!(gap);
            value["evidence_stale"] = json!(cited.stale());
            value["evidence_sources"] = json!(cited.sources);
            value
        })
        .collect()
}
