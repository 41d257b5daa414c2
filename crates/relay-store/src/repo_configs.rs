//! The configuration in effect per repository (migration 0040): what the last job or push made
//! of the repository's `.relay.toml` at its commit, for the status page, the API and the log.

use chrono::{DateTime, Utc};
use sqlx::PgConnection;

use crate::Result;

/// A repository's configuration in effect, as recorded.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow, serde::Serialize)]
pub struct RepoConfigRow {
    pub tracker: String,
    pub project_id: String,
    pub project_path: String,
    pub commit_sha: String,
    /// `relay_core::repo_config::EffectiveConfig` as JSON.
    pub effective: serde_json::Value,
    /// `[{origin, commit, chars, truncated}]`.
    pub guidance: serde_json::Value,
    pub guidance_digest: Option<String>,
    pub has_errors: bool,
    pub read_at: DateTime<Utc>,
    /// The configuration file's text as read at `commit_sha` (migration 0090; `None`: no file,
    /// over the bound, or recorded before).
    pub file_text: Option<String>,
}

/// What to record.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRepoConfig<'a> {
    pub tracker: &'a str,
    pub project_id: &'a str,
    pub project_path: &'a str,
    pub commit_sha: &'a str,
    pub effective: &'a serde_json::Value,
    pub guidance: &'a serde_json::Value,
    pub guidance_digest: Option<&'a str>,
    pub has_errors: bool,
    /// The configuration file's text, when one was read (and within the size bound).
    pub file_text: Option<&'a str>,
}

/// Records the configuration in effect; returns whether it is news — the first record of the
/// repository, another commit, or another outcome at the same commit (the server's settings
/// changed) — so its errors are logged once per commit, not once per job.
pub async fn record(conn: &mut PgConnection, config: &NewRepoConfig<'_>) -> Result<bool> {
    let news: Option<bool> = sqlx::query_scalar(
        "INSERT INTO repo_configs AS r (tracker, project_id, project_path, commit_sha, effective,
                                        guidance, guidance_digest, has_errors, file_text)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (tracker, project_id) DO UPDATE
            SET project_path = EXCLUDED.project_path, commit_sha = EXCLUDED.commit_sha,
                effective = EXCLUDED.effective, guidance = EXCLUDED.guidance,
                guidance_digest = EXCLUDED.guidance_digest, has_errors = EXCLUDED.has_errors,
                file_text = EXCLUDED.file_text, read_at = now()
            WHERE r.commit_sha IS DISTINCT FROM EXCLUDED.commit_sha
               OR r.effective IS DISTINCT FROM EXCLUDED.effective
               OR r.guidance IS DISTINCT FROM EXCLUDED.guidance
               OR r.file_text IS DISTINCT FROM EXCLUDED.file_text
         RETURNING true",
    )
    .bind(config.tracker)
    .bind(config.project_id)
    .bind(config.project_path)
    .bind(config.commit_sha)
    .bind(config.effective)
    .bind(config.guidance)
    .bind(config.guidance_digest)
    .bind(config.has_errors)
    .bind(config.file_text)
    .fetch_optional(conn)
    .await?;
    Ok(news.unwrap_or(false))
}

/// The configuration recorded for a repository.
pub async fn get(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
) -> Result<Option<RepoConfigRow>> {
    Ok(sqlx::query_as(
        "SELECT tracker, project_id, project_path, commit_sha, effective, guidance, guidance_digest,
                has_errors, read_at, file_text
         FROM repo_configs WHERE tracker = $1 AND project_id = $2",
    )
    .bind(tracker)
    .bind(project_id)
    .fetch_optional(conn)
    .await?)
}

/// A project Relay knows, with whether its configuration was read and is in error.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct ProjectLine {
    pub tracker: String,
    pub project_id: String,
    pub project_path: String,
    pub issues: i64,
    /// The commit the configuration was last read at (`None`: never read yet).
    pub config_commit: Option<String>,
    pub config_errors: bool,
    /// Learnings not forgotten.
    pub learnings: i64,
}

/// Every project with an issue, by tracker and path (at most `limit`).
pub async fn projects(conn: &mut PgConnection, limit: i64) -> Result<Vec<ProjectLine>> {
    Ok(sqlx::query_as(
        "SELECT i.tracker, i.project_id, max(i.project_path) AS project_path, count(*) AS issues,
                max(r.commit_sha) AS config_commit, coalesce(bool_or(r.has_errors), false) AS config_errors,
                (SELECT count(*) FROM learnings l WHERE l.tracker = i.tracker
                    AND l.project_id = i.project_id AND l.forgotten_at IS NULL) AS learnings
         FROM issues i
         LEFT JOIN repo_configs r ON r.tracker = i.tracker AND r.project_id = i.project_id
         GROUP BY i.tracker, i.project_id
         ORDER BY i.tracker, max(i.project_path)
         LIMIT $1",
    )
    .bind(limit)
    .fetch_all(conn)
    .await?)
}

/// The path of project (tracker, project id), from its newest issue (`None`: no issue of it).
pub async fn project_path(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
) -> Result<Option<String>> {
    Ok(sqlx::query_scalar(
        "SELECT project_path FROM issues WHERE tracker = $1 AND project_id = $2
         ORDER BY id DESC LIMIT 1",
    )
    .bind(tracker)
    .bind(project_id)
    .fetch_optional(conn)
    .await?)
}

/// The project id of `project_path` on `tracker`, from its issues (`None`: no issue of it).
pub async fn project_id_of(
    conn: &mut PgConnection,
    tracker: &str,
    project_path: &str,
) -> Result<Option<String>> {
    Ok(sqlx::query_scalar(
        "SELECT project_id FROM issues WHERE tracker = $1 AND lower(project_path) = lower($2)
         ORDER BY id DESC LIMIT 1",
    )
    .bind(tracker)
    .bind(project_path)
    .fetch_optional(conn)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::PgPool;

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn news_once_per_commit_or_outcome(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let effective = serde_json::json!({"errors": [1]});
        let guidance = serde_json::json!([]);
        let mut config = NewRepoConfig {
            tracker: "gh",
            project_id: "7",
            project_path: "o/r",
            commit_sha: "a",
            effective: &effective,
            guidance: &guidance,
            guidance_digest: None,
            has_errors: true,
            file_text: None,
        };
        assert!(record(&mut conn, &config).await.unwrap());
        assert!(
            !record(&mut conn, &config).await.unwrap(),
            "same commit, same outcome"
        );
        config.commit_sha = "b";
        assert!(record(&mut conn, &config).await.unwrap());
        let changed = serde_json::json!({"errors": []});
        config.effective = &changed;
        config.has_errors = false;
        assert!(record(&mut conn, &config).await.unwrap());
        let row = get(&mut conn, "gh", "7").await.unwrap().unwrap();
        assert_eq!(row.commit_sha, "b");
        assert!(!row.has_errors);
        assert_eq!(row.file_text, None);
        // The file's text kept for the first time (a record from before it was kept) is news.
        config.file_text = Some("[budget]\nissue_tokens = 1\n");
        assert!(record(&mut conn, &config).await.unwrap());
        let row = get(&mut conn, "gh", "7").await.unwrap().unwrap();
        assert_eq!(row.file_text.as_deref(), config.file_text);
        assert!(
            projects(&mut conn, 10).await.unwrap().is_empty(),
            "no issue yet"
        );
    }
}
