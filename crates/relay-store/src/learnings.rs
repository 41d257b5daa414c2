//! Learnings: durable facts about one repository (tracker + project), shared by its issues and
//! deduplicated by a hash of their normalised content. Each keeps its provenance (issue, note,
//! job, the guidance digest it was drawn under), its use (prompts it reached, when last), and,
//! once forgotten, who forgot it when (migration 0041): a forgotten learning never reaches a
//! prompt again, and proposing the same fact again does not bring it back.

use chrono::{DateTime, Utc};
use relay_core::IssueId;
use relay_core::JobId;
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
    pub issue_id: Option<IssueId>,
    pub created_by_run: Option<JobId>,
    pub created_at: DateTime<Utc>,
    /// Drawn from a context with an internal note: shown to its own issue only.
    pub restricted: bool,
    /// The note whose cycle proposed it (the newest triggering note), when there was one.
    pub note_id: Option<String>,
    /// The repository guidance's digest when it was drawn.
    pub guidance_digest: Option<String>,
    /// Planner prompts it reached.
    pub prompt_uses: i64,
    pub last_used_at: Option<DateTime<Utc>>,
    pub forgotten_at: Option<DateTime<Utc>>,
    pub forgotten_by: Option<String>,
}

/// The columns of [`LearningRow`], for `SELECT`s over `learnings l`.
const COLUMNS: &str =
    "l.id, l.tracker, l.project_id, l.kind, l.content, l.issue_id, l.created_by_run,
     l.created_at, l.restricted, l.note_id, l.guidance_digest, l.prompt_uses, l.last_used_at,
     l.forgotten_at, l.forgotten_by";

/// A proposed learning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLearning<'a> {
    pub tracker: &'a str,
    pub project_id: &'a str,
    pub kind: &'a str,
    pub content: &'a str,
    /// The issue whose job proposed it.
    pub issue_id: Option<IssueId>,
    pub run: Option<JobId>,
    /// The proposing cycle's context held text that must not leave the issue (a GitLab internal
    /// note): only that issue will see the learning.
    pub restricted: bool,
    /// The triggering note of the cycle that proposed it.
    pub note_id: Option<&'a str>,
    /// The repository guidance's digest in that cycle.
    pub guidance_digest: Option<&'a str>,
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
        "INSERT INTO learnings (tracker, project_id, kind, content, content_hash, issue_id, created_by_run,
                                restricted, note_id, guidance_digest)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
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
    .bind(learning.note_id)
    .bind(learning.guidance_digest)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Every learning of a repository, oldest first, forgotten ones included (operators' view:
/// nothing is hidden).
pub async fn for_project(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
) -> Result<Vec<LearningRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM learnings l WHERE l.tracker = $1 AND l.project_id = $2 ORDER BY l.id"
    )))
    .bind(tracker)
    .bind(project_id)
    .fetch_all(conn)
    .await?)
}

/// The learnings one issue's context may show, oldest first: the repository's, except the
/// forgotten ones and those that must not leave the issue they came from — drawn from a
/// confidential issue (as it is now) or from a context with an internal note — unless that
/// issue is `issue_id` itself.
pub async fn for_issue_context(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
    issue_id: IssueId,
) -> Result<Vec<LearningRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS}
         FROM learnings l LEFT JOIN issues source ON source.id = l.issue_id
         WHERE l.tracker = $1 AND l.project_id = $2 AND l.forgotten_at IS NULL
           AND (l.issue_id = $3
                OR (NOT l.restricted AND NOT COALESCE(source.confidential, false)))
         ORDER BY l.id"
    )))
    .bind(tracker)
    .bind(project_id)
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}

/// One learning by id.
pub async fn get(conn: &mut PgConnection, id: i64) -> Result<Option<LearningRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM learnings l WHERE l.id = $1"
    )))
    .bind(id)
    .fetch_optional(conn)
    .await?)
}

/// Counts one prompt use of each of `ids` (the learnings a planner's prompt showed).
pub async fn mark_used(conn: &mut PgConnection, ids: &[i64]) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "UPDATE learnings SET prompt_uses = prompt_uses + 1, last_used_at = now()
         WHERE id = ANY($1) AND forgotten_at IS NULL",
    )
    .bind(ids)
    .execute(conn)
    .await?;
    Ok(())
}

/// What forgetting a learning came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Forgotten {
    /// Forgotten now.
    Now(LearningRow),
    /// It was already forgotten (by whom, when: in the row).
    Already(LearningRow),
    /// No learning of this repository has that id.
    NotFound,
}

/// Forgets learning `id` of the repository (tracker, project id), recording `by`. A learning of
/// another repository is `NotFound`: a command on one project cannot touch another's.
pub async fn forget(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
    id: i64,
    by: &str,
) -> Result<Forgotten> {
    let updated: Option<LearningRow> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "UPDATE learnings l SET forgotten_at = now(), forgotten_by = $4
         WHERE l.id = $3 AND l.tracker = $1 AND l.project_id = $2 AND l.forgotten_at IS NULL
         RETURNING {COLUMNS}"
    )))
    .bind(tracker)
    .bind(project_id)
    .bind(id)
    .bind(by)
    .fetch_optional(&mut *conn)
    .await?;
    if let Some(row) = updated {
        return Ok(Forgotten::Now(row));
    }
    Ok(match get(conn, id).await? {
        Some(row) if row.tracker == tracker && row.project_id == project_id => {
            Forgotten::Already(row)
        }
        _ => Forgotten::NotFound,
    })
}

/// Learnings of every repository (or of one tracker), newest first, at most `limit`: the
/// command line's listing.
pub async fn list(
    conn: &mut PgConnection,
    tracker: Option<&str>,
    project_id: Option<&str>,
    limit: i64,
) -> Result<Vec<LearningRow>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {COLUMNS} FROM learnings l
         WHERE ($1::text IS NULL OR l.tracker = $1) AND ($2::text IS NULL OR l.project_id = $2)
         ORDER BY l.id DESC LIMIT $3"
    )))
    .bind(tracker)
    .bind(project_id)
    .bind(limit)
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
            issue_id: Some(relay_core::IssueId(1)),
            run: Some(relay_core::JobId(3)),
            restricted: false,
            note_id: Some("n1"),
            guidance_digest: Some("g1"),
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
        assert_eq!(rows[0].created_by_run, Some(JobId(3)));
        assert_eq!(content_hash("A  b"), content_hash("a b"));
        assert_eq!(rows[0].note_id.as_deref(), Some("n1"));
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn a_forgotten_learning_stays_forgotten_and_out_of_every_context(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let learning = NewLearning {
            tracker: "gh",
            project_id: "7",
            kind: "code",
            content: "Retries live in retry.go.",
            issue_id: Some(relay_core::IssueId(1)),
            run: Some(relay_core::JobId(3)),
            restricted: false,
            note_id: None,
            guidance_digest: None,
        };
        assert!(propose(&mut conn, &learning).await.unwrap());
        let id = for_project(&mut conn, "gh", "7").await.unwrap()[0].id;
        mark_used(&mut conn, &[id]).await.unwrap();
        assert_eq!(
            forget(&mut conn, "gh", "8", id, "@eve").await.unwrap(),
            Forgotten::NotFound,
            "another repository's id"
        );
        let Forgotten::Now(row) = forget(&mut conn, "gh", "7", id, "@alice").await.unwrap() else {
            panic!("forgotten now");
        };
        assert_eq!(row.forgotten_by.as_deref(), Some("@alice"));
        assert_eq!(row.prompt_uses, 1);
        assert!(matches!(
            forget(&mut conn, "gh", "7", id, "@bob").await.unwrap(),
            Forgotten::Already(row) if row.forgotten_by.as_deref() == Some("@alice")
        ));
        assert!(
            for_issue_context(&mut conn, "gh", "7", relay_core::IssueId(1))
                .await
                .unwrap()
                .is_empty()
        );
        // Proposed again, the same fact stays forgotten.
        assert!(!propose(&mut conn, &learning).await.unwrap());
        assert!(
            for_issue_context(&mut conn, "gh", "7", relay_core::IssueId(2))
                .await
                .unwrap()
                .is_empty()
        );
        mark_used(&mut conn, &[id]).await.unwrap();
        assert_eq!(get(&mut conn, id).await.unwrap().unwrap().prompt_uses, 1);
        assert_eq!(
            list(&mut conn, Some("gh"), None, 10).await.unwrap().len(),
            1
        );
    }
}
