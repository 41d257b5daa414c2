//! The related repositories a job explores beside the issue's own ([`check_out`]): the names the
//! repository's `.relay.toml` (`related`) and the server's table (`[[trackers]] related`) give,
//! judged by `relay_core::related` against what the tracker says of each, the admitted ones
//! checked out at their remote head with the same `RepoManager` (its locks, size limits and
//! retention) and a read-only credential. The judgement is recorded for the project page, the
//! API and `relay config check` once the job knows which graph it queried ([`record`]).
//!
//! Never ends the job: a repository that cannot be looked up or checked out is refused for this
//! job with the reason, and the job explores the others.

use std::sync::Arc;

use relay_core::ProjectVisibility;
use relay_core::related::{
    self, Admission, Lookup, Refusal, RelatedPolicy, RelatedRequest, RelatedSource, Verdict,
};
use relay_core::repo_config::ExcludeSet;
use relay_repo::{RepoSpec, SnapshotGuard};
use relay_store::PgPool;

use super::checkout::{CheckedOut, Repos};
use super::job::Job;

/// One admitted related repository, checked out for the job (leased until dropped).
pub struct RelatedCheckout {
    /// The path as the tracker spells it: the label every place in it is written with.
    pub label: String,
    pub project_id: String,
    pub visibility: ProjectVisibility,
    pub spec: RepoSpec,
    pub snapshot: SnapshotGuard,
    /// The paths its own `.relay.toml` excludes at that commit: its tools skip them and its
    /// graph is indexed without them, as for the issue's repository.
    pub excludes: Arc<ExcludeSet>,
}

/// What the job made of the named related repositories.
#[derive(Default)]
pub struct RelatedSet {
    /// Every name, in order, with its verdict (a failed checkout is refused with its reason).
    pub admissions: Vec<Admission>,
    /// The admitted ones, checked out, in the same order.
    pub checkouts: Vec<RelatedCheckout>,
    /// Repositories of the tracker the issue's repository depends on and does not name: "could
    /// be related", shown, never admitted.
    pub suggestions: Vec<Suggestion>,
}

/// A repository the issue's repository depends on (its `go.mod`, its Python dependencies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    /// The repository's path on the issue's tracker.
    pub path: String,
    /// The dependency as the manifest names it (`github.com/acme/sdk`).
    pub dependency: String,
}

impl RelatedSet {
    /// The labels of the repositories the job explores beside the issue's own.
    pub fn labels(&self) -> Vec<String> {
        self.checkouts.iter().map(|c| c.label.clone()).collect()
    }
}

/// Judges the named related repositories and checks out the admitted ones (see the module docs).
pub async fn check_out(
    from: Repos<'_>,
    pool: &PgPool,
    job: &Job,
    checkout: &CheckedOut,
) -> RelatedSet {
    let issue = &job.issue;
    let requests = related::requests(
        &checkout.config.effective.related,
        job.settings.related_of(&issue.project_path),
    );
    let suggestions = suggestions(job, checkout, &requests);
    if requests.is_empty() {
        return RelatedSet {
            suggestions,
            ..RelatedSet::default()
        };
    }
    let policy = RelatedPolicy {
        enabled: from.agent.related_repositories,
        own_path: &issue.project_path,
        issue_visibility: issue_visibility(job).await,
    };
    let mut set = RelatedSet {
        suggestions,
        ..RelatedSet::default()
    };
    for request in requests {
        let verdict = match related::precheck(&policy, &request, &set.admissions, |path| {
            job.settings.allows_project("", path)
        }) {
            Some(refusal) => Verdict::Refused(refusal),
            None => related::judge(&policy, lookup(job, &request).await),
        };
        let verdict = match verdict {
            Verdict::Admitted {
                project_id,
                visibility,
            } => match checkout_one(from, pool, job, &request, &project_id).await {
                Ok((spec, snapshot)) => {
                    // Its own configuration's exclusions (the rest of its file concerns its own
                    // issues, not this one's).
                    let policy = crate::jobs::repo_config::server_policy(from.agent, &job.settings);
                    let config = crate::jobs::repo_config::load(
                        from.repos,
                        &spec,
                        snapshot.commit(),
                        &policy,
                    )
                    .await;
                    set.checkouts.push(RelatedCheckout {
                        label: request.path.clone(),
                        project_id: project_id.clone(),
                        visibility,
                        spec,
                        snapshot,
                        excludes: config.excludes,
                    });
                    Verdict::Admitted {
                        project_id,
                        visibility,
                    }
                }
                Err(error) => {
                    tracing::warn!(related.path = %request.path, error.message = %error, "related repository not checked out");
                    Verdict::Refused(Refusal::CheckoutFailed { error })
                }
            },
            refused => refused,
        };
        if let Verdict::Refused(refusal) = &verdict {
            tracing::info!(related.path = %request.path, related.source = request.source.as_str(), reason = %refusal, "related repository refused");
        }
        set.admissions.push(Admission { request, verdict });
    }
    set
}

/// The repositories of the issue's tracker its checkout depends on (Go `require`/`replace`
/// module paths, Python VCS requirements) that are not named already, at most
/// [`related::MAX_SUGGESTIONS`].
fn suggestions(job: &Job, checkout: &CheckedOut, named: &[RelatedRequest]) -> Vec<Suggestion> {
    let Some(host) = related::tracker_host(&job.settings.base_url) else {
        return Vec::new();
    };
    let mut out: Vec<Suggestion> = Vec::new();
    for dependency in relay_codegraph::related::suggested_dependencies(checkout.snapshot.path()) {
        if out.len() == related::MAX_SUGGESTIONS {
            break;
        }
        let Some(path) = related::repository_of(&dependency, &host, job.settings.provider) else {
            continue;
        };
        let known = path.eq_ignore_ascii_case(&job.issue.project_path)
            || named.iter().any(|r| r.path.eq_ignore_ascii_case(&path))
            || out.iter().any(|s| s.path.eq_ignore_ascii_case(&path));
        if !known {
            out.push(Suggestion { path, dependency });
        }
    }
    out
}

/// The issue's repository's visibility: as its webhooks said, else as the tracker says now;
/// `None` (counts as public) when neither can tell.
async fn issue_visibility(job: &Job) -> Option<ProjectVisibility> {
    if let Some(known) = job
        .issue
        .project_visibility
        .as_deref()
        .and_then(ProjectVisibility::parse)
    {
        return Some(known);
    }
    match job
        .tracker
        .repository(&job.issue_ref, &job.issue.project_path)
        .await
    {
        Ok(Some(info)) => Some(info.visibility),
        Ok(None) => None,
        Err(error) => {
            tracing::warn!(error.message = %error, "the issue's repository's visibility is not known: counted as public");
            None
        }
    }
}

/// What the tracker says of `request`'s repository with Relay's credentials.
async fn lookup(job: &Job, request: &RelatedRequest) -> Lookup {
    match job.tracker.repository(&job.issue_ref, &request.path).await {
        Ok(Some(info)) => Lookup::Readable {
            project_id: info.project_id,
            visibility: info.visibility,
        },
        Ok(None) => Lookup::NotFound,
        Err(error) => Lookup::Failed {
            error: relay_core::error::cause_chain(&error),
        },
    }
}

/// The remote head of `request`'s repository, fetched now (one fetch that transfers nothing when
/// it has not moved; the snapshot of an unchanged head is reused) and leased for the job. When
/// the head moved since the checkout was last synced (a push Relay had no webhook for), the places
/// cited in it are re-verified at the new head first, as a push would.
async fn checkout_one(
    from: Repos<'_>,
    pool: &PgPool,
    job: &Job,
    request: &RelatedRequest,
    project_id: &str,
) -> Result<(RepoSpec, SnapshotGuard), String> {
    let spec = from
        .specs
        .spec(&job.issue.tracker, &request.path)
        .map_err(|e| format!("{e:#}"))?;
    let spec = if spec.local_path.is_some() {
        spec
    } else {
        match job
            .tracker
            .read_credential(&job.issue_ref, &request.path)
            .await
        {
            Ok(Some(token)) => spec.with_token(token),
            Ok(None) => spec,
            Err(error) => return Err(relay_core::error::cause_chain(&error)),
        }
    };
    let before = from.repos.current_commit(&spec).await.ok().flatten();
    let head = from
        .repos
        .sync_to(&spec, None)
        .await
        .map_err(|e| relay_core::error::cause_chain(&e))?;
    let snapshot = from
        .repos
        .snapshot(&spec, Some(&head.commit))
        .await
        .map_err(|e| relay_core::error::cause_chain(&e))?;
    if before.is_some_and(|before| before != head.commit) {
        let target = crate::jobs::reverify::PushTarget {
            tracker: &job.issue.tracker,
            project_id,
            project_path: &request.path,
            commit: &head.commit,
        };
        match crate::jobs::reverify::reverify_project(
            pool,
            from.repos,
            &spec,
            target,
            snapshot.path(),
        )
        .await
        {
            Ok(outcome) => {
                tracing::info!(related.path = %request.path, sources = outcome.sources, stale = outcome.stale, reanchored = outcome.reanchored, "related repository moved: its cited places re-verified")
            }
            Err(error) => {
                tracing::warn!(related.path = %request.path, error.message = %format!("{error:#}"), "related repository moved: re-verification failed")
            }
        }
    }
    Ok((spec, snapshot))
}

/// Records what the job made of the named repositories (and, on job `job_id`, the ones it
/// explores), with the graph commit each admitted one was queried at (`graphs[i]` for
/// `set.checkouts[i]`; `None` without a graph). A failure is logged: the record is for people,
/// the job goes on.
pub async fn record(
    pool: &PgPool,
    job_id: relay_core::JobId,
    job: &Job,
    set: &RelatedSet,
    graphs: &[Option<String>],
) {
    let issue = &job.issue;
    let reasons: Vec<Option<String>> = set
        .admissions
        .iter()
        .map(|a| match &a.verdict {
            Verdict::Admitted { .. } => None,
            Verdict::Refused(refusal) => Some(refusal.to_string()),
        })
        .collect();
    let mut checkouts = set.checkouts.iter().zip(graphs);
    let mut rows = Vec::with_capacity(set.admissions.len());
    for (admission, reason) in set.admissions.iter().zip(&reasons) {
        let (project_id, visibility) = match &admission.verdict {
            Verdict::Admitted {
                project_id,
                visibility,
            } => (Some(project_id.as_str()), Some(visibility.as_str())),
            Verdict::Refused(Refusal::MorePrivate { related, .. }) => {
                (None, Some(related.as_str()))
            }
            Verdict::Refused(_) => (None, None),
        };
        let (head, graph) = if admission.admitted() {
            match checkouts.next() {
                Some((checkout, graph)) => (Some(checkout.snapshot.commit()), graph.as_deref()),
                None => (None, None),
            }
        } else {
            (None, None)
        };
        rows.push(relay_store::related::NewRelated {
            related_path: &admission.request.path,
            source: admission.request.source.as_str(),
            refusal: reason.as_deref(),
            related_project_id: project_id,
            visibility,
            head_commit: head,
            graph_commit: graph,
        });
    }
    let suggested: Vec<String> = set
        .suggestions
        .iter()
        .map(|s| {
            format!(
                "the repository depends on it ({}); name it in .relay.toml `related` to explore it",
                s.dependency
            )
        })
        .collect();
    for (suggestion, reason) in set.suggestions.iter().zip(&suggested) {
        rows.push(relay_store::related::NewRelated {
            related_path: &suggestion.path,
            source: RelatedSource::Suggested.as_str(),
            refusal: Some(reason),
            related_project_id: None,
            visibility: None,
            head_commit: None,
            graph_commit: None,
        });
    }
    let recorded = async {
        let mut conn = pool.acquire().await?;
        relay_store::related::replace(&mut conn, &issue.tracker, &issue.project_id, &rows).await?;
        relay_store::related::record_explored(&mut conn, job_id, &set.labels()).await
    };
    if let Err(error) = recorded.await {
        tracing::warn!(error.message = %error, "cannot record the related repositories");
    }
}
