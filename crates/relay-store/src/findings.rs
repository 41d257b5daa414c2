//! Findings: facts verified in the code, numbered per issue, with their sources and the commit
//! each source was verified at. Removed findings keep their row so a number is never reused.

use chrono::{DateTime, Utc};
use relay_core::IssueId;
use relay_core::JobId;
use sqlx::PgConnection;

use crate::Result;

/// A stored finding with its sources.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FindingRow {
    pub id: i64,
    pub issue_id: IssueId,
    pub number: i32,
    pub synthesis: String,
    pub created_by_run: Option<JobId>,
    pub created_at: DateTime<Utc>,
    pub sources: Vec<SourceRow>,
    /// Whether any source is stale: the cited text is no longer where it was.
    pub stale: bool,
}

#[derive(Debug, Clone, sqlx::FromRow)]
struct FindingHead {
    id: i64,
    issue_id: IssueId,
    number: i32,
    synthesis: String,
    created_by_run: Option<JobId>,
    created_at: DateTime<Utc>,
}

/// One cited source of a finding.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SourceRow {
    pub path: String,
    pub start_line: i32,
    pub end_line: i32,
    pub quote: Option<String>,
    /// The commit the citation was last verified at (for a stale source: the last good one).
    pub commit_sha: String,
    /// Whether the cited text still stood at `commit_sha`'s successor that was checked last.
    pub status: SourceStatus,
    /// Where the source was before a push moved its text (lines inserted above, the block moved,
    /// the file renamed); `None` when it never moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_from: Option<Position>,
}

/// Whether a source's text still stands where it is cited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceStatus {
    /// The text was found at the cited lines of `commit_sha`.
    #[default]
    Verified,
    /// The text is gone or changed; `commit_sha` is the last commit where it stood.
    Stale,
}

impl SourceStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceStatus::Verified => "verified",
            SourceStatus::Stale => "stale",
        }
    }

    pub fn parse(s: &str) -> SourceStatus {
        if s == "stale" {
            SourceStatus::Stale
        } else {
            SourceStatus::Verified
        }
    }
}

/// A place in the repository: a file and an inclusive, 1-based line range.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Position {
    pub path: String,
    pub start_line: i32,
    pub end_line: i32,
}

/// Why a finding stopped being live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemovedBy {
    /// `update_findings.remove`.
    Planner,
    /// Dropped as the oldest past the per-issue cap.
    Cap,
}

impl RemovedBy {
    fn as_str(self) -> &'static str {
        match self {
            RemovedBy::Planner => "planner",
            RemovedBy::Cap => "cap",
        }
    }
}

/// Marks finding `number` as drawn with a GitLab internal note in context (migration 0086).
pub async fn mark_internal(conn: &mut PgConnection, issue_id: IssueId, number: i32) -> Result<()> {
    sqlx::query("UPDATE findings SET internal = true WHERE issue_id = $1 AND number = $2")
        .bind(issue_id)
        .bind(number)
        .execute(conn)
        .await?;
    Ok(())
}

/// The numbers of the issue's findings marked internal ([`mark_internal`]).
pub async fn internal_numbers(conn: &mut PgConnection, issue_id: IssueId) -> Result<Vec<i32>> {
    Ok(sqlx::query_scalar(
        "SELECT number FROM findings WHERE issue_id = $1 AND internal ORDER BY number",
    )
    .bind(issue_id)
    .fetch_all(conn)
    .await?)
}
/// Inserts a finding with the next free number of the issue and its sources; returns the number.
pub async fn insert(
    conn: &mut PgConnection,
    issue_id: IssueId,
    synthesis: &str,
    run: Option<JobId>,
    sources: &[SourceRow],
) -> Result<i32> {
    let (id, number): (i64, i32) = sqlx::query_as(
        "INSERT INTO findings (issue_id, number, synthesis, created_by_run)
         SELECT $1, coalesce(max(number), 0) + 1, $2, $3 FROM findings WHERE issue_id = $1
         RETURNING id, number",
    )
    .bind(issue_id)
    .bind(synthesis)
    .bind(run)
    .fetch_one(&mut *conn)
    .await?;
    for (position, source) in sources.iter().enumerate() {
        sqlx::query(
            "INSERT INTO finding_sources (finding_id, position, path, start_line, end_line, quote, commit_sha)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(id)
        .bind(position as i32)
        .bind(&source.path)
        .bind(source.start_line)
        .bind(source.end_line)
        .bind(&source.quote)
        .bind(&source.commit_sha)
        .execute(&mut *conn)
        .await?;
    }
    Ok(number)
}

/// Marks a live finding removed; `false` when the issue has no live finding with that number.
pub async fn remove(
    conn: &mut PgConnection,
    issue_id: IssueId,
    number: i32,
    by: RemovedBy,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE findings SET removed = true, removed_reason = $3
         WHERE issue_id = $1 AND number = $2 AND NOT removed",
    )
    .bind(issue_id)
    .bind(number)
    .bind(by.as_str())
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Removes the oldest live findings so at most `keep` stay; returns the dropped numbers.
pub async fn drop_oldest_past(
    conn: &mut PgConnection,
    issue_id: IssueId,
    keep: usize,
) -> Result<Vec<i32>> {
    Ok(sqlx::query_scalar(
        "UPDATE findings SET removed = true, removed_reason = 'cap'
         WHERE id IN (
             SELECT id FROM findings WHERE issue_id = $1 AND NOT removed
             ORDER BY number DESC OFFSET $2)
         RETURNING number",
    )
    .bind(issue_id)
    .bind(keep as i64)
    .fetch_all(conn)
    .await
    .map(|mut numbers: Vec<i32>| {
        numbers.sort_unstable();
        numbers
    })?)
}

/// The live findings of an issue with their sources, by number.
pub async fn live(conn: &mut PgConnection, issue_id: IssueId) -> Result<Vec<FindingRow>> {
    let heads: Vec<FindingHead> = sqlx::query_as(
        "SELECT id, issue_id, number, synthesis, created_by_run, created_at
         FROM findings WHERE issue_id = $1 AND NOT removed ORDER BY number",
    )
    .bind(issue_id)
    .fetch_all(&mut *conn)
    .await?;
    let ids: Vec<i64> = heads.iter().map(|h| h.id).collect();
    // A source under the project's re-verification watermark stands verified at its commit.
    let sources: Vec<(i64, SourceRowWithId)> =
        sqlx::query_as::<_, SourceRowWithId>(sqlx::AssertSqlSafe(format!(
            "SELECT s.finding_id, s.path, s.start_line, s.end_line, s.quote,
                    {} AS commit_sha, s.status, s.moved_from_path, s.moved_from_start,
                    s.moved_from_end
             FROM finding_sources s
             LEFT JOIN issues i ON i.id = $2
             LEFT JOIN reverify_watermarks w
                 ON w.tracker = i.tracker AND w.project_id = i.project_id
             WHERE s.finding_id = ANY($1) ORDER BY s.finding_id, s.position",
            crate::reverify::EFFECTIVE_COMMIT
        )))
        .bind(&ids)
        .bind(issue_id)
        .fetch_all(&mut *conn)
        .await?
        .into_iter()
        .map(|s| (s.finding_id, s))
        .collect();
    Ok(heads
        .into_iter()
        .map(|h| {
            let sources: Vec<SourceRow> = sources
                .iter()
                .filter(|(id, _)| *id == h.id)
                .map(|(_, s)| s.to_source())
                .collect();
            FindingRow {
                stale: sources.iter().any(|s| s.status == SourceStatus::Stale),
                sources,
                id: h.id,
                issue_id: h.issue_id,
                number: h.number,
                synthesis: h.synthesis,
                created_by_run: h.created_by_run,
                created_at: h.created_at,
            }
        })
        .collect())
}

#[derive(Debug, Clone, sqlx::FromRow)]
struct SourceRowWithId {
    finding_id: i64,
    path: String,
    start_line: i32,
    end_line: i32,
    quote: Option<String>,
    commit_sha: String,
    status: String,
    moved_from_path: Option<String>,
    moved_from_start: Option<i32>,
    moved_from_end: Option<i32>,
}

impl SourceRowWithId {
    fn to_source(&self) -> SourceRow {
        SourceRow {
            path: self.path.clone(),
            start_line: self.start_line,
            end_line: self.end_line,
            quote: self.quote.clone(),
            commit_sha: self.commit_sha.clone(),
            status: SourceStatus::parse(&self.status),
            moved_from: match (
                &self.moved_from_path,
                self.moved_from_start,
                self.moved_from_end,
            ) {
                (Some(path), Some(start_line), Some(end_line)) => Some(Position {
                    path: path.clone(),
                    start_line,
                    end_line,
                }),
                _ => None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::PgPool;

    fn source(path: &str) -> SourceRow {
        SourceRow {
            path: path.into(),
            start_line: 3,
            end_line: 5,
            quote: Some("func Plan()".into()),
            commit_sha: "abc123".into(),
            ..SourceRow::default()
        }
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn insert_remove_and_cap(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        for i in 1..=4 {
            let n = insert(
                &mut conn,
                relay_core::IssueId(1),
                &format!("finding {i}"),
                Some(relay_core::JobId(7)),
                &[source("a.go"), source("b.go")],
            )
            .await
            .unwrap();
            assert_eq!(n, i);
        }
        insert(
            &mut conn,
            relay_core::IssueId(2),
            "elsewhere",
            None,
            &[source("c.go")],
        )
        .await
        .unwrap();

        assert!(
            remove(&mut conn, relay_core::IssueId(1), 2, RemovedBy::Planner)
                .await
                .unwrap()
        );
        assert!(
            !remove(&mut conn, relay_core::IssueId(1), 2, RemovedBy::Planner)
                .await
                .unwrap()
        );
        assert!(
            !remove(&mut conn, relay_core::IssueId(1), 99, RemovedBy::Planner)
                .await
                .unwrap()
        );

        // Live: 1, 3, 4. Keep 2: drops 1.
        assert_eq!(
            drop_oldest_past(&mut conn, relay_core::IssueId(1), 2)
                .await
                .unwrap(),
            vec![1]
        );
        assert!(
            drop_oldest_past(&mut conn, relay_core::IssueId(1), 2)
                .await
                .unwrap()
                .is_empty()
        );

        let live = live(&mut conn, relay_core::IssueId(1)).await.unwrap();
        assert_eq!(
            live.iter().map(|f| f.number).collect::<Vec<_>>(),
            vec![3, 4]
        );
        assert_eq!(live[0].sources.len(), 2);
        assert_eq!(live[0].sources[1].path, "b.go");
        assert_eq!(live[0].sources[0].commit_sha, "abc123");
        assert_eq!(live[0].created_by_run, Some(JobId(7)));
        // A number is never reused after removals.
        assert_eq!(
            insert(
                &mut conn,
                relay_core::IssueId(1),
                "five",
                None,
                &[source("a.go")]
            )
            .await
            .unwrap(),
            5
        );
    }
}
