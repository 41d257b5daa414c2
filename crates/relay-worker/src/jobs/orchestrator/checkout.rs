//! The snapshot a job explores and the repository's configuration at its commit, once an admitted
//! author is pending ([`checkout`]); a failure here ends in one status comment on the last
//! attempt.
//!
//! [`clone_spec`]: the repository spec with the tracker's clone credential (in GitHub App mode an
//! installation access token for the issue's installation, minted and refreshed by the tracker
//! client; passed to git only through the environment by `relay-repo`).

use std::sync::Arc;

use relay_agent::agent_settings::AgentSettings;
use relay_repo::{RepoManager, RepoSpec, SnapshotGuard};
use relay_store::PgPool;
use relay_tracker::{IssueRef, IssueTracker};

use super::job::{Job, JobRun};
use super::pre_cycle::{self, PreCycleFailure, PreCycleStep};
use crate::handler::JobError;
use crate::jobs::RepoSpecs;
use crate::jobs::repo_config::LoadedConfig;

/// The snapshot a job explores and the repository's configuration at its commit; the snapshot is
/// leased until the checkout is dropped (the job's end).
pub struct CheckedOut {
    pub spec: RepoSpec,
    pub snapshot: SnapshotGuard,
    pub config: LoadedConfig,
}

/// Which commit the job checks out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// The default branch's checkout as the last push left it.
    Current,
    /// The remote's default-branch head, fetched now (`@bot refresh`).
    Fetch,
}

/// Where a job's checkout comes from: the repositories, their specs and the server's agent
/// settings (the policy the repository's configuration narrows).
#[derive(Clone, Copy)]
pub struct Repos<'a> {
    pub repos: &'a RepoManager,
    pub specs: &'a RepoSpecs,
    pub agent: &'a AgentSettings,
}

/// The snapshot of the default branch as it is now (cloned on first use when no push has
/// arrived yet; with [`Head::Fetch`], synced to the remote's head first) and the repository's
/// configuration at its commit (recorded for the status page).
pub async fn checkout(
    from: Repos<'_>,
    pool: &PgPool,
    run: &JobRun,
    job: &Job,
    head: Head,
) -> Result<CheckedOut, JobError> {
    let issue = &job.issue;
    let spec = from
        .specs
        .spec(&issue.tracker, &issue.project_path)
        .map_err(JobError::Permanent)?;
    let spec = match clone_spec(spec, &job.tracker, &job.issue_ref).await {
        Ok(spec) => spec,
        Err(failure) => return Err(pre_cycle::say(pool, run, job, failure).await),
    };
    if head == Head::Fetch
        && let Err(error) = from.repos.sync_to(&spec, None).await
    {
        let failure = PreCycleFailure::new(PreCycleStep::Snapshot, &error);
        return Err(pre_cycle::say(pool, run, job, failure).await);
    }
    let snapshot = match from.repos.snapshot(&spec, None).await {
        Ok(snapshot) => snapshot,
        Err(error) => {
            let failure = PreCycleFailure::new(PreCycleStep::Snapshot, &error);
            return Err(pre_cycle::say(pool, run, job, failure).await);
        }
    };
    let policy = crate::jobs::repo_config::server_policy(from.agent, &job.settings);
    let config =
        crate::jobs::repo_config::load(from.repos, &spec, snapshot.commit(), &policy).await;
    crate::jobs::repo_config::record(
        pool,
        &issue.tracker,
        &issue.project_id,
        &issue.project_path,
        &config,
    )
    .await;
    Ok(CheckedOut {
        spec,
        snapshot,
        config,
    })
}

/// `spec` with the tracker's clone credential, unless it is served from a local path.
pub async fn clone_spec(
    spec: RepoSpec,
    tracker: &Arc<dyn IssueTracker>,
    issue: &IssueRef,
) -> Result<RepoSpec, PreCycleFailure> {
    if spec.local_path.is_some() {
        return Ok(spec);
    }
    match tracker.clone_credential(issue).await {
        Ok(Some(token)) => Ok(spec.with_token(token)),
        Ok(None) => Ok(spec),
        Err(error) => Err(PreCycleFailure::new(PreCycleStep::CloneCredential, &error)),
    }
}
