//! Learnings: durable facts about one repository (tracker + project), shared by its issues and
//! deduplicated by a hash of their normalised content.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use sqlx::PgConnection;

use crate::Result;

/// A stored learning.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct LearningRow {
    pub id: i64,
    pub tracker: String,
    pub project_id: String,
    /// `domain` or `code`.
    pub kind: String,
    pub content: String,
    pub issue_id: Option<i64>,
    pub created_by_run: Option<i64>,
    pub created_at: DateTime<Utc>,
    /// Drawn from a context with an internal note: shown to its own issue only.
    pub restricted: bool,
}

/// A proposed learning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLearning<'a> {
    pub tracker: &'a str,
    pub project_id: &'a str,
    pub kind: &'a str,
    pub content: &'a str,
    /// The issue whose job proposed it.
    pub issue_id: Option<i64>,
    pub run: Option<i64>,
    /// The proposing cycle's context held text that must not leave the issue (a GitLab internal
    /// note): only that issue will see the learning.
    pub restricted: bool,
}

/// The dedupe key: sha256 of the content lowercased with whitespace runs collapsed, so the same
/// fact re-worded only in case or spacing is stored once.
pub fn content_hash(content: &str) -> String {
    let normalised = content
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    hex::encode(Sha256::digest(normalised.as_bytes()))
}

/// Stores a learning unless the repository already has the same one; returns whether it was new.
pub async fn propose(conn: &mut PgConnection, learning: &NewLearning<'_>) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO learnings (tracker, project_id, kind, content, content_hash, issue_id, created_by_run, restricted)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (tracker, project_id, content_hash) DO NOTHING",
    )
    .bind(learning.tracker)
    .bind(learning.project_id)
    .bind(learning.kind)
    .bind(learning.content.trim())
    .bind(content_hash(learning.content))
    .bind(learning.issue_id)
    .bind(learning.run)
    .bind(learning.restricted)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Every learning of a repository, oldest first (operators' view: nothing is hidden).
pub async fn for_project(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
) -> Result<Vec<LearningRow>> {
    Ok(sqlx::query_as(
        "SELECT id, tracker, project_id, kind, content, issue_id, created_by_run, created_at, restricted
         FROM learnings WHERE tracker = $1 AND project_id = $2 ORDER BY id",
    )
    .bind(tracker)
    .bind(project_id)
    .fetch_all(conn)
    .await?)
}

/// The learnings one issue's context may show, oldest first: the repository's, except those
/// that must not leave the issue they came from — drawn from a confidential issue (as it is
/// now) or from a context with an internal note — unless that issue is `issue_id` itself.
pub async fn for_issue_context(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
    issue_id: i64,
) -> Result<Vec<LearningRow>> {
    Ok(sqlx::query_as(
        "SELECT l.id, l.tracker, l.project_id, l.kind, l.content, l.issue_id, l.created_by_run,
                l.created_at, l.restricted
         FROM learnings l LEFT JOIN issues source ON source.id = l.issue_id
         WHERE l.tracker = $1 AND l.project_id = $2
           AND (l.issue_id = $3
                OR (NOT l.restricted AND NOT COALESCE(source.confidential, false)))
         ORDER BY l.id",
    )
    .bind(tracker)
    .bind(project_id)
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::PgPool;

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn dedupes_per_repository_on_normalised_content(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let learning = NewLearning {
            tracker: "gh",
            project_id: "7",
            kind: "code",
            content: "Handlers live in  internal/http.",
            issue_id: Some(1),
            run: Some(3),
            restricted: false,
        };
        assert!(propose(&mut conn, &learning).await.unwrap());
        let same = NewLearning {
            content: "handlers live in\ninternal/http.",
            ..learning.clone()
        };
        assert!(!propose(&mut conn, &same).await.unwrap());
        let other_repo = NewLearning {
            project_id: "8",
            ..learning.clone()
        };
        assert!(propose(&mut conn, &other_repo).await.unwrap());

        let rows = for_project(&mut conn, "gh", "7").await.unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].content, "Handlers live in  internal/http.");
        assert_eq!(rows[0].kind, "code");
        assert_eq!(rows[0].created_by_run, Some(3));
        assert_eq!(content_hash("A  b"), content_hash("a b"));
    }
}
