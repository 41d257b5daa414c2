//! What the read API and the status page show per project and per issue of the repository's
//! own configuration: the `.relay.toml` in effect (each key with its origin, the refused
//! widenings, the errors), the learnings with their provenance, use and review mark, and an
//! issue's cap, spend and stop state.

use chrono::Utc;
use relay_core::IssueId;
use relay_core::learning_review::{self, LearningFacts, RepositoryNow, Review};
use relay_core::repo_config::{EffectiveConfig, ExcludeSet, Recorded, ServerPolicy, in_effect_now};
use relay_store::PgPool;
use relay_store::issue_controls::{Raises, Stopped};
use relay_store::learnings::LearningRow;
use relay_store::repo_configs::RepoConfigRow;
use serde::Serialize;

/// One project as the API and the status page show it.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectView {
    pub tracker: String,
    pub project_id: String,
    pub project_path: String,
    /// The configuration in effect as last read (`None`: no job or push read it yet).
    pub config: Option<ConfigView>,
    pub learnings: Vec<LearningView>,
    /// The related repositories as the last job judged them, in the order named: admitted (with
    /// the commit explored and its graph snapshot) or refused with the reason.
    pub related: Vec<relay_store::related::RelatedRow>,
}

/// The configuration in effect, and when and where it was read.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigView {
    pub commit: String,
    pub read_at: chrono::DateTime<Utc>,
    pub effective: EffectiveConfig,
    /// `true`: `effective` is the file as read at `commit` narrowed by the server's settings as
    /// they run now; `false`: as the last job or push recorded it at `read_at` (its file's text
    /// was not kept, or this process does not know the tracker's settings).
    pub computed_now: bool,
    /// `[{origin, commit, chars, truncated}]`.
    pub guidance: serde_json::Value,
}

/// A learning with its review mark.
#[derive(Debug, Clone, Serialize)]
pub struct LearningView {
    #[serde(flatten)]
    pub row: LearningRow,
    /// Why a person should look at it again (`None`: nothing to review).
    pub review: Option<Review>,
}

impl LearningView {
    pub fn review_text(&self) -> Option<String> {
        self.review.as_ref().map(Review::describe)
    }
}

/// The id of the project `id_or_path` names on `tracker`: a project id as given, or a path
/// (`acme/app`, which no id contains) as the CLI names projects, matched without case against the
/// projects Relay has issues of. `None`: a path of no known project.
pub async fn project_id(
    pool: &PgPool,
    tracker: &str,
    id_or_path: &str,
) -> Result<Option<String>, relay_store::Error> {
    if !id_or_path.contains('/') {
        return Ok(Some(id_or_path.to_owned()));
    }
    let mut conn = pool.acquire().await?;
    relay_store::repo_configs::project_id_of(&mut conn, tracker, id_or_path).await
}

/// Loads project (tracker, project id); `None` when Relay knows no issue of it. `policy`: the
/// tracker's server settings as they run, which the recorded file is narrowed by.
pub async fn load(
    pool: &PgPool,
    policy: Option<&ServerPolicy>,
    tracker: &str,
    project_id: &str,
) -> Result<Option<ProjectView>, relay_store::Error> {
    let mut conn = pool.acquire().await?;
    let path = relay_store::repo_configs::project_path(&mut conn, tracker, project_id).await?;
    let Some(project_path) = path else {
        return Ok(None);
    };
    let row = relay_store::repo_configs::get(&mut conn, tracker, project_id).await?;
    let rows = relay_store::learnings::for_project(&mut conn, tracker, project_id).await?;
    let related = relay_store::related::list(&mut conn, tracker, project_id).await?;
    let digest = row.as_ref().and_then(|row| row.guidance_digest.clone());
    let config = row.and_then(|row| config_view(row, policy));
    let excludes = config
        .as_ref()
        .and_then(|c| ExcludeSet::new(&c.effective.exclude).ok())
        .unwrap_or_default();
    let now = Utc::now();
    let learnings = rows
        .into_iter()
        .map(|row| {
            let review = row.forgotten_at.is_none().then(|| {
                learning_review::review(
                    &LearningFacts {
                        content: &row.content,
                        created_at: row.created_at,
                        last_used_at: row.last_used_at,
                        guidance_digest: row.guidance_digest.as_deref(),
                    },
                    &RepositoryNow {
                        excludes: &excludes,
                        guidance_digest: digest.as_deref(),
                        now,
                    },
                )
            });
            LearningView {
                row,
                review: review.flatten(),
            }
        })
        .collect();
    Ok(Some(ProjectView {
        tracker: tracker.to_owned(),
        project_id: project_id.to_owned(),
        project_path,
        config,
        learnings,
        related,
    }))
}

/// The recorded row as what is in effect now: narrowed by `policy` when the file's text was
/// kept, else as recorded.
fn config_view(row: RepoConfigRow, policy: Option<&ServerPolicy>) -> Option<ConfigView> {
    let recorded: EffectiveConfig = serde_json::from_value(row.effective).ok()?;
    let now = policy.and_then(|policy| {
        in_effect_now(
            policy,
            Recorded {
                effective: &recorded,
                file_text: row.file_text.as_deref(),
            },
        )
    });
    Some(ConfigView {
        computed_now: now.is_some(),
        effective: now.unwrap_or(recorded),
        commit: row.commit_sha,
        read_at: row.read_at,
        guidance: row.guidance,
    })
}

/// An issue's cap (from the configuration in effect, plus raises), spend and stop state.
#[derive(Debug, Clone, Serialize)]
pub struct IssueBudget {
    /// Tokens allowed: the configuration in effect now (the repository's file narrowed by the
    /// server's settings as they run; the server's alone until a job read the file), plus the
    /// raises. `None`: no cap, or neither the file nor the server's settings are known here.
    pub cap_tokens: Option<u64>,
    pub cap_usd: Option<f64>,
    pub raised_tokens: u64,
    pub raised_usd: f64,
    pub raises: u32,
    pub spent_tokens: u64,
    pub stopped: Option<Stopped>,
}

/// The issue's budget and stop state, under the tracker's server settings as they run
/// (`policy`).
pub async fn issue_budget(
    pool: &PgPool,
    policy: Option<&ServerPolicy>,
    issue_id: IssueId,
    tracker: &str,
    project_id: &str,
) -> Result<IssueBudget, relay_store::Error> {
    let mut conn = pool.acquire().await?;
    let config = relay_store::repo_configs::get(&mut conn, tracker, project_id)
        .await?
        .and_then(|row| config_view(row, policy));
    let Raises { tokens, usd, count } =
        relay_store::issue_controls::raises(&mut conn, issue_id).await?;
    let stopped = relay_store::issue_controls::stopped(&mut conn, issue_id).await?;
    drop(conn);
    let spent_tokens = relay_store::browse::spend_by_role(pool, issue_id)
        .await?
        .iter()
        .map(|r| u64::try_from(r.prompt_tokens.saturating_add(r.completion_tokens)).unwrap_or(0))
        .sum();
    // Until a job read the repository's file, the server's caps are what is known to apply
    // (a file can only lower them).
    let caps = match (&config, policy) {
        (Some(config), _) => Some((
            config.effective.issue_token_budget,
            config.effective.issue_cost_budget_usd,
        )),
        (None, Some(policy)) => Some((policy.issue_token_budget, policy.issue_cost_budget_usd)),
        (None, None) => None,
    };
    Ok(IssueBudget {
        cap_tokens: caps
            .map(|(t, _)| t)
            .filter(|t| *t > 0)
            .map(|t| t.saturating_add(tokens)),
        cap_usd: caps.map(|(_, u)| u).filter(|u| *u > 0.0).map(|u| u + usd),
        raised_tokens: tokens,
        raised_usd: usd,
        raises: count,
        spent_tokens,
        stopped,
    })
}
