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
pub async fn replace(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
    rows: &[NewRelated<'_>],
) -> Result<()> {
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    sqlx::query("DELETE FROM related_repositories WHERE tracker = $1 AND project_id = $2")
        .bind(tracker)
        .bind(project_id)
        .execute(&mut *tx)
        .await?;
    for (position, row) in rows.iter().enumerate() {
        sqlx::query(
            "INSERT INTO related_repositories (tracker, project_id, position, related_path, source,
                                               admitted, reason, related_project_id, visibility,
                                               head_commit, graph_commit)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(tracker)
        .bind(project_id)
        .bind(i32::try_from(position).unwrap_or(i32::MAX))
        .bind(row.related_path)
        .bind(row.source)
        .bind(row.refusal.is_none())
        .bind(row.refusal)
        .bind(row.related_project_id)
        .bind(row.visibility)
        .bind(row.head_commit)
        .bind(row.graph_commit)
        .execute(&mut *tx)
        .await?;
    }
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
