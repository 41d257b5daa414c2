//! The LLM usage ledger: one row per model tried by one LLM call (tokens, latency, attempts,
//! outcome), linked to the job and issue it served. Written by `relay_agent::llm`; read for cost
//! reports and job summaries.

use chrono::{DateTime, Utc};
use relay_core::{IssueId, JobId};
use sqlx::PgPool;

use crate::Result;

/// A usage row to insert. Plain data: the store knows nothing about LLM types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLlmUsage<'a> {
    /// `jobs.id` of the job the call served, if any.
    pub job_id: Option<JobId>,
    /// `issues.id` of the issue the call served, if any.
    pub issue_id: Option<IssueId>,
    /// `planner`, `explore`, `spec`, …
    pub role: &'a str,
    /// `openai` or `anthropic`.
    pub provider: &'a str,
    /// The model that was asked.
    pub model: &'a str,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cached_tokens: i64,
    /// Wall time of the call on this model, all attempts included.
    pub latency_ms: i64,
    /// HTTP attempts made on this model.
    pub attempts: i32,
    /// `ok` or `error`.
    pub outcome: &'a str,
    /// The classified error when `outcome` is `error`.
    pub error_kind: Option<&'a str>,
    /// The provider reported no usage: the tokens are estimated from the bytes exchanged.
    pub estimated: bool,
}

/// A stored usage row.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct LlmUsage {
    pub id: i64,
    pub job_id: Option<JobId>,
    pub issue_id: Option<IssueId>,
    pub role: String,
    pub provider: String,
    pub model: String,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cached_tokens: i64,
    pub latency_ms: i64,
    pub attempts: i32,
    pub outcome: String,
    pub error_kind: Option<String>,
    pub estimated: bool,
    pub created_at: DateTime<Utc>,
}

/// Token totals of one job, per model.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ModelTotals {
    pub model: String,
    pub calls: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cached_tokens: i64,
}

const COLUMNS: &str = "id, job_id, issue_id, role, provider, model, prompt_tokens, completion_tokens, \
     cached_tokens, latency_ms, attempts, outcome, error_kind, estimated, created_at";

/// Inserts one usage row and returns its id.
pub async fn insert(pool: &PgPool, usage: &NewLlmUsage<'_>) -> Result<i64> {
    let id = sqlx::query_scalar(
        "INSERT INTO llm_usage (job_id, issue_id, role, provider, model, prompt_tokens,
             completion_tokens, cached_tokens, latency_ms, attempts, outcome, error_kind, estimated)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
         RETURNING id",
    )
    .bind(usage.job_id)
    .bind(usage.issue_id)
    .bind(usage.role)
    .bind(usage.provider)
    .bind(usage.model)
    .bind(usage.prompt_tokens)
    .bind(usage.completion_tokens)
    .bind(usage.cached_tokens)
    .bind(usage.latency_ms)
    .bind(usage.attempts)
    .bind(usage.outcome)
    .bind(usage.error_kind)
    .bind(usage.estimated)
    .fetch_one(pool)
    .await?;
    Ok(id)
}

/// Every usage row of a job, oldest first.
pub async fn for_job(pool: &PgPool, job_id: JobId) -> Result<Vec<LlmUsage>> {
    let rows = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM llm_usage WHERE job_id = $1 ORDER BY created_at, id"
    )))
    .bind(job_id)
    .fetch_all(pool)
    .await?;
    Ok(rows)
}

/// Every usage row of an issue (across jobs), oldest first.
pub async fn for_issue(pool: &PgPool, issue_id: IssueId) -> Result<Vec<LlmUsage>> {
    let rows = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM llm_usage WHERE issue_id = $1 ORDER BY created_at, id"
    )))
    .bind(issue_id)
    .fetch_all(pool)
    .await?;
    Ok(rows)
}

/// Token totals of a job per model, successful and failed calls alike.
pub async fn totals_for_job(pool: &PgPool, job_id: JobId) -> Result<Vec<ModelTotals>> {
    let rows = sqlx::query_as(
        "SELECT model,
                count(*) AS calls,
                coalesce(sum(prompt_tokens), 0)::BIGINT AS prompt_tokens,
                coalesce(sum(completion_tokens), 0)::BIGINT AS completion_tokens,
                coalesce(sum(cached_tokens), 0)::BIGINT AS cached_tokens
         FROM llm_usage WHERE job_id = $1 GROUP BY model ORDER BY model",
    )
    .bind(job_id)
    .fetch_all(pool)
    .await?;
    Ok(rows)
}

/// Tokens (prompt + completion) spent since `since` on the issues of `tracker`: the daily budget's
/// reading, once per cycle. It reads only the rows since `since` (`llm_usage_created_at_idx`) and
/// looks each one's issue up by key (a join would hash every issue of the instance).
pub async fn tracker_spend_since(
    pool: &PgPool,
    tracker: &str,
    since: DateTime<Utc>,
) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COALESCE(sum(u.prompt_tokens + u.completion_tokens), 0)::int8
         FROM llm_usage u
         WHERE u.created_at >= $2
           AND (SELECT i.tracker FROM issues i WHERE i.id = u.issue_id) = $1",
    )
    .bind(tracker)
    .bind(since)
    .fetch_one(pool)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row<'a>(model: &'a str, outcome: &'a str, error_kind: Option<&'a str>) -> NewLlmUsage<'a> {
        NewLlmUsage {
            job_id: Some(relay_core::JobId(7)),
            issue_id: Some(relay_core::IssueId(3)),
            role: "planner",
            provider: "openai",
            model,
            prompt_tokens: 100,
            completion_tokens: 20,
            cached_tokens: 5,
            latency_ms: 1234,
            attempts: 2,
            outcome,
            error_kind,
            estimated: false,
        }
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn insert_and_query_by_job_and_issue(pool: PgPool) {
        let first = insert(&pool, &row("gpt-4o", "error", Some("rate_limited")))
            .await
            .unwrap();
        let second = insert(&pool, &row("gpt-4o-mini", "ok", None))
            .await
            .unwrap();
        let unrelated = NewLlmUsage {
            job_id: None,
            issue_id: None,
            ..row("gpt-4o", "ok", None)
        };
        insert(&pool, &unrelated).await.unwrap();

        let rows = for_job(&pool, relay_core::JobId(7)).await.unwrap();
        assert_eq!(
            rows.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![first, second]
        );
        assert_eq!(rows[0].error_kind.as_deref(), Some("rate_limited"));
        assert_eq!(rows[0].latency_ms, 1234);
        assert_eq!(rows[0].attempts, 2);
        assert_eq!(rows[1].outcome, "ok");
        assert_eq!(
            for_issue(&pool, relay_core::IssueId(3))
                .await
                .unwrap()
                .len(),
            2
        );
        assert!(
            for_job(&pool, relay_core::JobId(8))
                .await
                .unwrap()
                .is_empty()
        );
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn totals_group_by_model(pool: PgPool) {
        insert(&pool, &row("gpt-4o", "ok", None)).await.unwrap();
        insert(&pool, &row("gpt-4o", "ok", None)).await.unwrap();
        insert(&pool, &row("gpt-4o-mini", "ok", None))
            .await
            .unwrap();

        let totals = totals_for_job(&pool, relay_core::JobId(7)).await.unwrap();
        assert_eq!(
            totals,
            vec![
                ModelTotals {
                    model: "gpt-4o".into(),
                    calls: 2,
                    prompt_tokens: 200,
                    completion_tokens: 40,
                    cached_tokens: 10
                },
                ModelTotals {
                    model: "gpt-4o-mini".into(),
                    calls: 1,
                    prompt_tokens: 100,
                    completion_tokens: 20,
                    cached_tokens: 5
                },
            ]
        );
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn rejects_unknown_outcome(pool: PgPool) {
        let error = insert(&pool, &row("gpt-4o", "maybe", None))
            .await
            .unwrap_err();
        assert!(matches!(error, crate::Error::Database(_)), "{error:?}");
    }
}
