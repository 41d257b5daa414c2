//! Read-only queries of the status page (`/ui`): listings across tables for people, never on a
//! job's hot path. Every listing is bounded by a page size.

use chrono::{DateTime, Utc};
use relay_core::{DeliveryId, IssueId, JobId};
use sqlx::PgPool;

use crate::Result;

/// Most rows one status-page listing returns.
pub const MAX_ROWS: i64 = 200;

/// One issue in the status page's listing.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct IssueLine {
    pub id: IssueId,
    pub tracker: String,
    pub project_path: String,
    pub number: i64,
    pub title: String,
    pub state: String,
    pub url: String,
    pub open_gaps: i64,
    /// Live (not removed) findings.
    pub findings: i64,
    /// Of those, the ones with a stale source: the cited code changed after a push.
    pub stale_findings: i64,
    pub spec_status: Option<String>,
    /// The latest of the issue's tracker update and Relay's last LLM call on it.
    pub last_activity: DateTime<Utc>,
    /// Prompt and completion tokens of every LLM call on the issue.
    pub tokens: i64,
}

/// Which issues a listing page shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IssuePage {
    /// `(tracker, project path or id)`.
    pub project: Option<(String, String)>,
    pub offset: i64,
    pub limit: i64,
}

/// Issues, newest activity first. Activity is stored per issue (`issues.last_activity`, kept by
/// `migrations/0070_issue_last_activity.sql`) and indexed in the page's order, so a page reads its
/// own rows (plus the offset's), not every issue; the per-row figures run only for the page's rows.
pub async fn issues(pool: &PgPool, page: &IssuePage) -> Result<Vec<IssueLine>> {
    let (tracker, project) = page.project.clone().unzip();
    Ok(sqlx::query_as(ISSUES_PAGE)
        .bind(tracker)
        .bind(project)
        .bind(page.offset.max(0))
        .bind(page.limit.clamp(1, MAX_ROWS))
        .fetch_all(pool)
        .await?)
}

/// The listing's statement: `$1` tracker, `$2` project path or id, `$3` offset, `$4` limit.
const ISSUES_PAGE: &str =
        // Paged through `issues_last_activity_idx` (the page's order): only the page's rows are
        // read, and their tokens summed through `llm_usage_issue_id_idx`.
        "WITH page AS (
             SELECT i.id, i.tracker, i.project_path, i.number, i.title, i.state, i.url,
                    i.last_activity
             FROM issues i
             WHERE ($1::text IS NULL OR i.tracker = $1)
               AND ($2::text IS NULL OR i.project_path = $2 OR i.project_id = $2)
             ORDER BY i.last_activity DESC, i.id DESC
             OFFSET $3 LIMIT $4
         )
         SELECT p.*,
                (SELECT coalesce(sum(u.prompt_tokens + u.completion_tokens), 0)::BIGINT
                 FROM llm_usage u WHERE u.issue_id = p.id) AS tokens,
                (SELECT count(*) FROM gaps g WHERE g.issue_id = p.id AND g.status = 'open') AS open_gaps,
                (SELECT count(*) FROM findings f WHERE f.issue_id = p.id AND NOT f.removed) AS findings,
                (SELECT count(*) FROM findings f
                  WHERE f.issue_id = p.id AND NOT f.removed
                    AND EXISTS (SELECT 1 FROM finding_sources s
                                WHERE s.finding_id = f.id AND s.status = 'stale')) AS stale_findings,
                (SELECT s.status FROM specs s WHERE s.issue_id = p.id ORDER BY s.version DESC LIMIT 1)
                    AS spec_status
         FROM page p ORDER BY p.last_activity DESC, p.id DESC";

/// A project Relay knows issues of.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ProjectRef {
    pub tracker: String,
    pub project_path: String,
}

/// Projects with issues, for the listing's filter (at most [`MAX_ROWS`]).
pub async fn projects(pool: &PgPool) -> Result<Vec<ProjectRef>> {
    Ok(sqlx::query_as(
        "SELECT DISTINCT tracker, project_path FROM issues ORDER BY tracker, project_path LIMIT $1",
    )
    .bind(MAX_ROWS)
    .fetch_all(pool)
    .await?)
}

/// Every version of an issue's spec, newest first.
pub async fn spec_versions(pool: &PgPool, issue_id: IssueId) -> Result<Vec<crate::specs::SpecRow>> {
    Ok(sqlx::query_as(
        "SELECT id, issue_id, version, body, status, note, note_ids, created_by_run, created_at,
                updated_at
         FROM specs WHERE issue_id = $1 ORDER BY version DESC LIMIT $2",
    )
    .bind(issue_id)
    .bind(MAX_ROWS)
    .fetch_all(pool)
    .await?)
}

/// Tokens of an issue's LLM calls per role and model (the model decides the price).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RoleModelSpend {
    pub role: String,
    pub model: String,
    pub calls: i64,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub cached_tokens: i64,
}

pub async fn spend_by_role_and_model(
    pool: &PgPool,
    issue_id: IssueId,
) -> Result<Vec<RoleModelSpend>> {
    Ok(sqlx::query_as(
        "SELECT role, model, count(*) AS calls,
                coalesce(sum(prompt_tokens), 0)::BIGINT AS prompt_tokens,
                coalesce(sum(completion_tokens), 0)::BIGINT AS completion_tokens,
                coalesce(sum(cached_tokens), 0)::BIGINT AS cached_tokens
         FROM llm_usage WHERE issue_id = $1 GROUP BY role, model ORDER BY role, model",
    )
    .bind(issue_id)
    .fetch_all(pool)
    .await?)
}

/// A dead job and why it died.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct DeadJob {
    pub id: JobId,
    pub kind: String,
    pub issue_id: Option<IssueId>,
    pub attempts: i32,
    pub last_error: Option<String>,
    /// The classified root cause of the last attempt (`llm server_error`), when known.
    pub last_cause: Option<String>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// The latest dead jobs, newest first.
pub async fn dead_jobs(pool: &PgPool, limit: i64) -> Result<Vec<DeadJob>> {
    Ok(sqlx::query_as(
        "SELECT id, kind, (payload->>'issue_id')::BIGINT AS issue_id, attempts, last_error,
                last_cause, finished_at
         FROM jobs WHERE status = 'dead' ORDER BY id DESC LIMIT $1",
    )
    .bind(limit.clamp(1, MAX_ROWS))
    .fetch_all(pool)
    .await?)
}

/// A webhook delivery and what Relay decided.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DeliveryLine {
    pub id: DeliveryId,
    pub tracker: String,
    pub event_type: String,
    pub action: Option<String>,
    pub received_at: DateTime<Utc>,
    /// `accepted` (engaged) or `ignored`.
    pub outcome: String,
    /// What it engaged on, or why it was ignored.
    pub reason: String,
    pub issue_id: Option<IssueId>,
    pub job_id: Option<JobId>,
}

/// The latest deliveries, newest first.
pub async fn recent_deliveries(pool: &PgPool, limit: i64) -> Result<Vec<DeliveryLine>> {
    Ok(sqlx::query_as(
        "SELECT id, tracker, event_type, action, received_at, outcome, reason, issue_id, job_id
         FROM deliveries ORDER BY id DESC LIMIT $1",
    )
    .bind(limit.clamp(1, MAX_ROWS))
    .fetch_all(pool)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn issue(pool: &PgPool, project: &str, number: i64, updated: &str) -> i64 {
        sqlx::query_scalar(
            "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
             VALUES ('gh', $1, 'acme/' || $1, $2, 't', 'open', 'a', 'u', $3::timestamptz) RETURNING id",
        )
        .bind(project)
        .bind(number)
        .bind(updated)
        .fetch_one(pool)
        .await
        .unwrap()
    }

    fn usage(
        issue_id: IssueId,
        role: &'static str,
        model: &'static str,
    ) -> crate::llm_usage::NewLlmUsage<'static> {
        crate::llm_usage::NewLlmUsage {
            job_id: None,
            issue_id: Some(issue_id),
            role,
            provider: "openai",
            model,
            prompt_tokens: 100,
            completion_tokens: 10,
            estimated: false,
            cached_tokens: 5,
            latency_ms: 1,
            attempts: 1,
            outcome: "ok",
            error_kind: None,
        }
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn issues_newest_activity_first_filtered_and_paged(pool: PgPool) {
        let old = issue(&pool, "1", 1, "2026-01-01T00:00:00Z").await;
        let new = issue(&pool, "1", 2, "2026-06-01T00:00:00Z").await;
        let other = issue(&pool, "2", 3, "2026-03-01T00:00:00Z").await;
        // A recent LLM call makes the old issue the most recently active.
        crate::llm_usage::insert(&pool, &usage(relay_core::IssueId(old), "planner", "m"))
            .await
            .unwrap();
        let mut conn = pool.acquire().await.unwrap();
        let gap = crate::gaps::NewGapRow {
            question: "q",
            severity: "high",
            respondent: "reporter",
            evidence: None,
            run: None,
        };
        crate::gaps::open(&mut conn, relay_core::IssueId(new), &gap)
            .await
            .unwrap();
        crate::specs::insert_draft(&mut conn, relay_core::IssueId(new), "v1", None)
            .await
            .unwrap();
        crate::specs::insert_draft(&mut conn, relay_core::IssueId(new), "v2", None)
            .await
            .unwrap();
        drop(conn);

        let all = IssuePage {
            limit: 50,
            ..Default::default()
        };
        let rows = issues(&pool, &all).await.unwrap();
        assert_eq!(
            rows.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![old, new, other]
        );
        assert_eq!((rows[0].tokens, rows[1].open_gaps), (110, 1));
        assert_eq!(rows[1].spec_status.as_deref(), Some("draft"));
        let project = IssuePage {
            project: Some(("gh".into(), "acme/2".into())),
            ..all.clone()
        };
        assert_eq!(issues(&pool, &project).await.unwrap()[0].id, other);
        let second = IssuePage {
            offset: 1,
            limit: 1,
            ..Default::default()
        };
        assert_eq!(issues(&pool, &second).await.unwrap()[0].id, new);
        assert_eq!(projects(&pool).await.unwrap().len(), 2);
        let versions = spec_versions(&pool, relay_core::IssueId(new))
            .await
            .unwrap();
        assert_eq!(
            versions.iter().map(|s| s.version).collect::<Vec<_>>(),
            vec![2, 1]
        );
    }

    /// The listing reads a page through the index in its order: no sort of every issue, and no
    /// pass over the usage ledger (a plan check at 5,000 issues, not a timing).
    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn issues_page_reads_the_last_activity_index(pool: PgPool) {
        sqlx::query(
            "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
             SELECT 'gh', (n % 7)::text, 'acme/' || (n % 7), n, 't', 'open', 'a', 'u',
                    now() - n * interval '1 minute'
             FROM generate_series(1, 5000) AS n",
        )
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO llm_usage (issue_id, role, provider, model, latency_ms, attempts, outcome)
             SELECT id, 'planner', 'openai', 'm', 1, 1, 'ok' FROM issues WHERE number % 10 = 0",
        )
        .execute(&pool)
        .await
        .unwrap();
        sqlx::raw_sql("ANALYZE issues; ANALYZE llm_usage")
            .execute(&pool)
            .await
            .unwrap();
        let plan: serde_json::Value = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "EXPLAIN (FORMAT JSON) {ISSUES_PAGE}"
        )))
        .bind(None::<String>)
        .bind(None::<String>)
        .bind(0_i64)
        .bind(51_i64)
        .fetch_one(&pool)
        .await
        .unwrap();
        // Every plan node as (type, relation).
        fn nodes(plan: &serde_json::Value, out: &mut Vec<(String, String)>) {
            let text = |key: &str| plan[key].as_str().unwrap_or_default().to_owned();
            out.push((text("Node Type"), text("Relation Name")));
            for child in plan["Plans"].as_array().into_iter().flatten() {
                nodes(child, out);
            }
        }
        let mut all = Vec::new();
        nodes(&plan[0]["Plan"], &mut all);
        assert!(
            plan.to_string().contains("issues_last_activity_idx"),
            "{plan}"
        );
        assert!(!all.iter().any(|(kind, _)| kind == "Sort"), "{all:?}");
        assert!(
            !all.iter().any(|(kind, relation)| kind == "Seq Scan"
                && (relation == "issues" || relation == "llm_usage")),
            "{all:?}"
        );
        // Usage written after the issue moves it to the top.
        let last: i64 = sqlx::query_scalar("SELECT id FROM issues WHERE number = 4999")
            .fetch_one(&pool)
            .await
            .unwrap();
        crate::llm_usage::insert(&pool, &usage(relay_core::IssueId(last), "planner", "m"))
            .await
            .unwrap();
        let page = IssuePage {
            limit: 2,
            ..Default::default()
        };
        assert_eq!(issues(&pool, &page).await.unwrap()[0].id, last);
        assert_eq!(projects(&pool).await.unwrap().len(), 7);
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn operations_listings(pool: PgPool) {
        let id = issue(&pool, "1", 1, "2026-01-01T00:00:00Z").await;
        crate::llm_usage::insert(&pool, &usage(relay_core::IssueId(id), "planner", "a"))
            .await
            .unwrap();
        crate::llm_usage::insert(&pool, &usage(relay_core::IssueId(id), "planner", "b"))
            .await
            .unwrap();
        let spend = spend_by_role_and_model(&pool, relay_core::IssueId(id))
            .await
            .unwrap();
        assert_eq!(
            spend.iter().map(|s| s.model.as_str()).collect::<Vec<_>>(),
            vec!["a", "b"]
        );

        sqlx::query(
            "INSERT INTO jobs (kind, payload, max_attempts, status, last_error)
             VALUES ('process_issue', $1, 3, 'dead', 'boom')",
        )
        .bind(serde_json::json!({ "issue_id": id }))
        .execute(&pool)
        .await
        .unwrap();
        let dead = dead_jobs(&pool, 10).await.unwrap();
        assert_eq!(
            (dead[0].issue_id, dead[0].last_error.as_deref()),
            (Some(relay_core::IssueId(id)), Some("boom"))
        );

        sqlx::query(
            "INSERT INTO outbox (idempotency_key, issue_id, kind, body, status, last_error)
             VALUES ('k', $1, 'comment', 'b', 'failed', '403 forbidden')",
        )
        .bind(id)
        .execute(&pool)
        .await
        .unwrap();
        let failed = crate::outbox::failed_writes(&pool, crate::outbox::FailedWrites::All, 10)
            .await
            .unwrap();
        assert_eq!(failed[0].last_error.as_deref(), Some("403 forbidden"));

        sqlx::query(
            "INSERT INTO deliveries (tracker, event_type, delivery_key, outcome, reason, payload)
             VALUES ('gh', 'issues', 'd1', 'ignored', 'not_mentioned', '{}')",
        )
        .execute(&pool)
        .await
        .unwrap();
        let deliveries = recent_deliveries(&pool, 10).await.unwrap();
        assert_eq!(deliveries[0].reason, "not_mentioned");
    }
}
