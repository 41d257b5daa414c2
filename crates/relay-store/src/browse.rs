//! Read-only queries of the read API (`/api/issues`, `/api/issues/{id}`, `/api/jobs/{id}`):
//! listings and summaries across tables, never on a job's hot path.

use chrono::{DateTime, Utc};
use relay_core::{IssueId, JobId};
use sqlx::PgPool;

use crate::Result;

/// Most issues one listing returns.
pub const MAX_PAGE: i64 = 200;

/// Filters of an issue listing; pages are keyed by id (`after` = the last id of the previous page).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssueFilter {
    pub tracker: Option<String>,
    /// Project id or path.
    pub project: Option<String>,
    pub number: Option<i64>,
    pub after: Option<i64>,
    pub limit: i64,
}

/// One issue in a listing.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct IssueSummary {
    pub id: IssueId,
    pub tracker: String,
    pub project_id: String,
    pub project_path: String,
    pub number: i64,
    pub title: String,
    pub state: String,
    pub url: String,
    pub updated_at: DateTime<Utc>,
    pub open_gaps: i64,
    /// Status of the latest spec version, if any.
    pub spec_status: Option<String>,
}

/// Issues matching `filter`, by id.
pub async fn issues(pool: &PgPool, filter: &IssueFilter) -> Result<Vec<IssueSummary>> {
    Ok(sqlx::query_as(
        "SELECT i.id, i.tracker, i.project_id, i.project_path, i.number, i.title, i.state, i.url,
                i.updated_at,
                (SELECT count(*) FROM gaps g WHERE g.issue_id = i.id AND g.status = 'open') AS open_gaps,
                (SELECT s.status FROM specs s WHERE s.issue_id = i.id ORDER BY s.version DESC LIMIT 1)
                    AS spec_status
         FROM issues i
         WHERE ($1::text IS NULL OR i.tracker = $1)
           AND ($2::text IS NULL OR i.project_id = $2 OR i.project_path = $2)
           AND ($3::bigint IS NULL OR i.number = $3)
           AND i.id > coalesce($4, 0)
         ORDER BY i.id
         LIMIT $5",
    )
    .bind(&filter.tracker)
    .bind(&filter.project)
    .bind(filter.number)
    .bind(filter.after)
    .bind(filter.limit.clamp(1, MAX_PAGE))
    .fetch_all(pool)
    .await?)
}

/// Tokens an issue's LLM calls spent, per role.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct RoleSpend {
    pub role: String,
    pub calls: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cached_tokens: i64,
}

pub async fn spend_by_role(pool: &PgPool, issue_id: IssueId) -> Result<Vec<RoleSpend>> {
    Ok(sqlx::query_as(
        "SELECT role, count(*) AS calls,
                coalesce(sum(prompt_tokens), 0)::BIGINT AS prompt_tokens,
                coalesce(sum(completion_tokens), 0)::BIGINT AS completion_tokens,
                coalesce(sum(cached_tokens), 0)::BIGINT AS cached_tokens
         FROM llm_usage WHERE issue_id = $1 GROUP BY role ORDER BY role",
    )
    .bind(issue_id)
    .fetch_all(pool)
    .await?)
}

/// Most refused writes the read API lists per issue (the newest).
pub const MAX_FAILED_WRITES_LISTED: i64 = 50;

/// A job as the read API shows it.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow, serde::Serialize)]
pub struct JobSummary {
    pub id: JobId,
    pub kind: String,
    pub payload: serde_json::Value,
    pub status: String,
    pub attempts: i32,
    pub max_attempts: i32,
    pub run_after: DateTime<Utc>,
    pub last_error: Option<String>,
    /// The classified root cause of the last failed attempt (`llm server_error`,
    /// `tracker forbidden`); `last_error` has the whole story, the run trace every step.
    pub last_cause: Option<String>,
    pub created_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// The related repositories the job explored beside the issue's own (migration 0099).
    pub explored_related: Option<Vec<String>>,
}

const JOB_COLUMNS: &str = "id, kind, payload, status, attempts, max_attempts, run_after, \
     last_error, last_cause, created_at, started_at, finished_at, explored_related";

/// The `process_issue` jobs of an issue, newest first.
pub async fn jobs_of_issue(pool: &PgPool, issue_id: IssueId) -> Result<Vec<JobSummary>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {JOB_COLUMNS} FROM jobs
         WHERE kind = 'process_issue' AND payload->>'issue_id' = $1::bigint::text
         ORDER BY id DESC LIMIT {MAX_PAGE}"
    )))
    .bind(issue_id)
    .fetch_all(pool)
    .await?)
}

pub async fn job(pool: &PgPool, job_id: JobId) -> Result<Option<JobSummary>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1"
    )))
    .bind(job_id)
    .fetch_optional(pool)
    .await?)
}

/// One attempt outcome of a job.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow, serde::Serialize)]
pub struct JobRunSummary {
    pub attempt: i32,
    pub worker: String,
    pub outcome: String,
    pub detail: serde_json::Value,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
}

pub async fn job_runs(pool: &PgPool, job_id: JobId) -> Result<Vec<JobRunSummary>> {
    Ok(sqlx::query_as(
        "SELECT attempt, worker, outcome, detail, started_at, finished_at
         FROM job_runs WHERE job_id = $1 ORDER BY id",
    )
    .bind(job_id)
    .fetch_all(pool)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn issue(pool: &PgPool, tracker: &str, project: &str, number: i64) -> i64 {
        sqlx::query_scalar(
            "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
             VALUES ($1, $2, 'acme/' || $2, $3, 't', 'open', 'a', 'u', now()) RETURNING id",
        )
        .bind(tracker)
        .bind(project)
        .bind(number)
        .fetch_one(pool)
        .await
        .unwrap()
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn issues_filter_and_page(pool: PgPool) {
        let a = issue(&pool, "gh", "1", 10).await;
        let b = issue(&pool, "gh", "1", 11).await;
        let c = issue(&pool, "gl", "2", 10).await;
        let mut conn = pool.acquire().await.unwrap();
        let gap = crate::gaps::NewGapRow {
            question: "q",
            severity: "low",
            respondent: "reporter",
            evidence: None,
            run: None,
        };
        crate::gaps::open(&mut conn, relay_core::IssueId(b), &gap)
            .await
            .unwrap();
        crate::specs::insert_draft(&mut conn, relay_core::IssueId(b), "s", None)
            .await
            .unwrap();

        let ids = |rows: Vec<IssueSummary>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
        let all = IssueFilter {
            limit: 50,
            ..Default::default()
        };
        assert_eq!(ids(issues(&pool, &all).await.unwrap()), vec![a, b, c]);
        let gh = IssueFilter {
            tracker: Some("gh".into()),
            ..all.clone()
        };
        assert_eq!(ids(issues(&pool, &gh).await.unwrap()), vec![a, b]);
        let by_path = IssueFilter {
            project: Some("acme/2".into()),
            ..all.clone()
        };
        assert_eq!(ids(issues(&pool, &by_path).await.unwrap()), vec![c]);
        let number = IssueFilter {
            number: Some(10),
            ..all.clone()
        };
        assert_eq!(ids(issues(&pool, &number).await.unwrap()), vec![a, c]);
        let page = IssueFilter {
            after: Some(a),
            limit: 1,
            ..Default::default()
        };
        let rows = issues(&pool, &page).await.unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!((rows[0].id.get(), rows[0].open_gaps), (b, 1));
        assert_eq!(rows[0].spec_status.as_deref(), Some("draft"));
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn spend_jobs_and_runs(pool: PgPool) {
        let id = issue(&pool, "gh", "1", 10).await;
        for role in ["planner", "planner", "explore"] {
            crate::llm_usage::insert(
                &pool,
                &crate::llm_usage::NewLlmUsage {
                    job_id: None,
                    issue_id: Some(relay_core::IssueId(id)),
                    role,
                    provider: "openai",
                    model: "m",
                    prompt_tokens: 10,
                    completion_tokens: 2,
                    cached_tokens: 1,
                    latency_ms: 5,
                    attempts: 1,
                    outcome: "ok",
                    error_kind: None,
                    estimated: false,
                },
            )
            .await
            .unwrap();
        }
        let spend = spend_by_role(&pool, relay_core::IssueId(id)).await.unwrap();
        assert_eq!(spend.len(), 2);
        assert_eq!(
            (
                spend[1].role.as_str(),
                spend[1].calls,
                spend[1].prompt_tokens
            ),
            ("planner", 2, 20)
        );

        let job_id: JobId = sqlx::query_scalar(
            "INSERT INTO jobs (kind, payload, max_attempts) VALUES ('process_issue', $1, 3) RETURNING id",
        )
        .bind(serde_json::json!({ "issue_id": id }))
        .fetch_one(&pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO jobs (kind, payload, max_attempts) VALUES ('update_checkout', '{}', 3)",
        )
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO job_runs (job_id, attempt, worker, outcome, started_at) VALUES ($1, 1, 'w1', 'succeeded', now())",
        )
        .bind(job_id)
        .execute(&pool)
        .await
        .unwrap();
        let jobs = jobs_of_issue(&pool, relay_core::IssueId(id)).await.unwrap();
        assert_eq!(jobs.iter().map(|j| j.id).collect::<Vec<_>>(), vec![job_id]);
        assert_eq!(job(&pool, job_id).await.unwrap().unwrap().status, "queued");
        assert!(
            job(&pool, JobId(job_id.get() + 100))
                .await
                .unwrap()
                .is_none()
        );
        let runs = job_runs(&pool, job_id).await.unwrap();
        assert_eq!(
            (runs[0].worker.as_str(), runs[0].outcome.as_str()),
            ("w1", "succeeded")
        );
    }
}
