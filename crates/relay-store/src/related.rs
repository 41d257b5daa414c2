//! The related repositories of each repository (migration 0099): what the last job's admission
//! made of the names the repository and the server gave, for the project page, the API and
//! `relay config check`. Replaced whole by each job's admission.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use crate::Result;

/// One named related repository, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct RelatedRow {
    pub related_path: String,
    /// `file`, `server`, or `suggested` (not named: the repository depends on it).
    pub source: String,
    pub admitted: bool,
    /// Why it was refused (`None` when admitted).
    pub reason: Option<String>,
    pub related_project_id: Option<String>,
    /// `public`, `internal` or `private`, when the tracker said.
    pub visibility: Option<String>,
    /// The commit the last job explored.
    pub head_commit: Option<String>,
    /// The commit of the code graph's snapshot the last job queried.
    pub graph_commit: Option<String>,
    pub checked_at: DateTime<Utc>,
}

/// One named related repository to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRelated<'a> {
    pub related_path: &'a str,
    pub source: &'a str,
    /// `None`: admitted; `Some(reason)`: refused.
    pub refusal: Option<&'a str>,
    pub related_project_id: Option<&'a str>,
    pub visibility: Option<&'a str>,
    pub head_commit: Option<&'a str>,
    pub graph_commit: Option<&'a str>,
}

/// Replaces what is recorded for the repository `project_id` of `tracker` with `rows`, in order.
pub async fn replace<'a>(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
    rows: &[NewRelated<'a>],
) -> Result<()> {
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    sqlx::query("DELETE FROM related_repositories WHERE tracker = $1 AND project_id = $2")
        .bind(tracker)
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
    // One statement for every row, in order (`WITH ORDINALITY` numbers them from 1).
    let column = |f: fn(&NewRelated<'a>) -> Option<&'a str>| -> Vec<Option<&'a str>> {
        rows.iter().map(f).collect()
    };
    sqlx::query(
        "INSERT INTO related_repositories (tracker, project_id, position, related_path, source,
                                           admitted, reason, related_project_id, visibility,
                                           head_commit, graph_commit)
         SELECT $1, $2, (r.n - 1)::int, r.path, r.source, r.reason IS NULL, r.reason, r.id,
                r.visibility, r.head, r.graph
         FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                     $9::text[]) WITH ORDINALITY
              AS r(path, source, reason, id, visibility, head, graph, n)",
    )
    .bind(tracker)
    .bind(project_id)
    .bind(column(|r| Some(r.related_path)))
    .bind(column(|r| Some(r.source)))
    .bind(column(|r| r.refusal))
    .bind(column(|r| r.related_project_id))
    .bind(column(|r| r.visibility))
    .bind(column(|r| r.head_commit))
    .bind(column(|r| r.graph_commit))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// What is recorded for the repository `project_id` of `tracker`, in the order named.
pub async fn list(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
) -> Result<Vec<RelatedRow>> {
    Ok(sqlx::query_as(
        "SELECT related_path, source, admitted, reason, related_project_id, visibility,
                head_commit, graph_commit, checked_at
         FROM related_repositories WHERE tracker = $1 AND project_id = $2
         ORDER BY position",
    )
    .bind(tracker)
    .bind(project_id)
    .fetch_all(conn)
    .await?)
}

/// Records the related repositories job `job_id` explored beside the issue's own (their labels,
/// in order; empty: none).
pub async fn record_explored(
    conn: &mut PgConnection,
    job_id: relay_core::JobId,
    labels: &[String],
) -> Result<()> {
    sqlx::query("UPDATE jobs SET explored_related = $2 WHERE id = $1")
        .bind(job_id)
        .bind((!labels.is_empty()).then_some(labels))
        .execute(conn)
        .await?;
    Ok(())
}
