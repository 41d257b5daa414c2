//! What the read API and the status page show per project and per issue of the repository's
//! own configuration: the `.relay.toml` in effect (each key with its origin, the refused
//! widenings, the errors), the learnings with their provenance, use and review mark, and an
//! issue's cap, spend and stop state.

use chrono::Utc;
use relay_core::IssueId;
use relay_core::learning_review::{self, LearningFacts, RepositoryNow, Review};
use relay_core::repo_config::{EffectiveConfig, ExcludeSet};
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
}

/// The configuration in effect, and when and where it was read.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigView {
    pub commit: String,
    pub read_at: chrono::DateTime<Utc>,
    pub effective: EffectiveConfig,
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

/// Loads project (tracker, project id); `None` when Relay knows no issue of it.
pub async fn load(
    pool: &PgPool,
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
    let digest = row.as_ref().and_then(|row| row.guidance_digest.clone());
    let config = row.and_then(config_view);
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
    }))
}

fn config_view(row: RepoConfigRow) -> Option<ConfigView> {
    Some(ConfigView {
        effective: serde_json::from_value(row.effective).ok()?,
        commit: row.commit_sha,
        read_at: row.read_at,
        guidance: row.guidance,
    })
}

/// An issue's cap (from the configuration in effect, plus raises), spend and stop state.
#[derive(Debug, Clone, Serialize)]
pub struct IssueBudget {
    /// Tokens allowed (`None`: no cap, or not known until a job read the configuration).
    pub cap_tokens: Option<u64>,
    pub cap_usd: Option<f64>,
    pub raised_tokens: u64,
    pub raised_usd: f64,
    pub raises: u32,
    pub spent_tokens: u64,
    pub stopped: Option<Stopped>,
}

/// The issue's budget and stop state.
pub async fn issue_budget(
    pool: &PgPool,
    issue_id: IssueId,
    tracker: &str,
    project_id: &str,
) -> Result<IssueBudget, relay_store::Error> {
    let mut conn = pool.acquire().await?;
    let config = relay_store::repo_configs::get(&mut conn, tracker, project_id)
        .await?
        .and_then(config_view);
    let Raises { tokens, usd, count } =
        relay_store::issue_controls::raises(&mut conn, issue_id).await?;
    let stopped = relay_store::issue_controls::stopped(&mut conn, issue_id).await?;
    drop(conn);
    let spent_tokens = relay_store::browse::spend_by_role(pool, issue_id)
        .await?
        .iter()
        .map(|r| u64::try_from(r.prompt_tokens.saturating_add(r.completion_tokens)).unwrap_or(0))
        .sum();
    let effective = config.map(|c| c.effective);
    Ok(IssueBudget {
        cap_tokens: effective
            .as_ref()
            .map(|e| e.issue_token_budget)
            .filter(|t| *t > 0)
            .map(|t| t.saturating_add(tokens)),
        cap_usd: effective
            .as_ref()
            .map(|e| e.issue_cost_budget_usd)
            .filter(|u| *u > 0.0)
            .map(|u| u + usd),
        raised_tokens: tokens,
        raised_usd: usd,
        raises: count,
        spent_tokens,
        stopped,
    })
}
