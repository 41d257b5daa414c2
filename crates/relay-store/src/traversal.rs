//! Thorough mode's traversal state per issue (migration 0010): loaded when a job starts, written
//! back whole when a job's thorough queries explored something. The store keeps the JSON as the
//! agent wrote it; its shape is the agent's (`relay_agent::thorough::state`).

use relay_core::IssueId;
use serde_json::Value;
use sqlx::PgConnection;

use crate::Result;

/// A stored traversal state.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct TraversalRow {
    pub state: Value,
    pub commit_sha: String,
}

/// The issue's state, if a job stored one.
pub async fn load(conn: &mut PgConnection, issue_id: IssueId) -> Result<Option<TraversalRow>> {
    Ok(
        sqlx::query_as("SELECT state, commit_sha FROM traversal_states WHERE issue_id = $1")
            .bind(issue_id)
            .fetch_optional(conn)
            .await?,
    )
}

/// Stores the issue's state (replacing the previous one).
pub async fn save(
    conn: &mut PgConnection,
    issue_id: IssueId,
    state: &Value,
    commit_sha: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO traversal_states (issue_id, state, commit_sha) VALUES ($1, $2, $3)
         ON CONFLICT (issue_id) DO UPDATE
         SET state = EXCLUDED.state, commit_sha = EXCLUDED.commit_sha, updated_at = now()",
    )
    .bind(issue_id)
    .bind(state)
    .bind(commit_sha)
    .execute(conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use sqlx::PgPool;

    use super::*;

    async fn issue(pool: &PgPool) -> i64 {
        sqlx::query_scalar(
            "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
             VALUES ('github', '1', 'acme/app', 7, 't', 'open', 'alice', 'https://x/7', now()) RETURNING id",
        )
        .fetch_one(pool)
        .await
        .unwrap()
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn a_state_is_loaded_as_saved_and_replaced_whole(pool: PgPool) {
        let id = issue(&pool).await;
        let mut conn = pool.acquire().await.unwrap();
        assert_eq!(
            load(&mut conn, relay_core::IssueId(id)).await.unwrap(),
            None
        );
        save(
            &mut conn,
            relay_core::IssueId(id),
            &json!({"files": ["a.go"]}),
            "c1",
        )
        .await
        .unwrap();
        save(
            &mut conn,
            relay_core::IssueId(id),
            &json!({"files": ["a.go", "b.go"]}),
            "c2",
        )
        .await
        .unwrap();
        let row = load(&mut conn, relay_core::IssueId(id))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.state, json!({"files": ["a.go", "b.go"]}));
        assert_eq!(row.commit_sha, "c2");
        sqlx::query("DELETE FROM issues WHERE id = $1")
            .bind(id)
            .execute(&mut *conn)
            .await
            .unwrap();
        assert_eq!(
            load(&mut conn, relay_core::IssueId(id)).await.unwrap(),
            None,
            "gone with its issue"
        );
    }
}
