//! Re-verification after a push: every cited source of the live findings and of the
//! open gaps' evidence of one project, read in one statement, and the outcome of checking them at
//! the pushed commit, written in one statement per kind of owner. The checking itself (git,
//! files) happens in the worker.

use sqlx::PgConnection;

use crate::Result;
use crate::findings::{Position, SourceStatus};

/// What a cited source belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SourceOwner {
    /// A live finding (`finding_sources`).
    Finding,
    /// The evidence of an open gap (`gap_sources`).
    Gap,
}

impl SourceOwner {
    fn parse(s: &str) -> SourceOwner {
        if s == "gap" {
            SourceOwner::Gap
        } else {
            SourceOwner::Finding
        }
    }

    fn table(self) -> &'static str {
        match self {
            SourceOwner::Finding => "finding_sources",
            SourceOwner::Gap => "gap_sources",
        }
    }

    fn key(self) -> &'static str {
        match self {
            SourceOwner::Finding => "finding_id",
            SourceOwner::Gap => "gap_id",
        }
    }
}

/// One source of a live finding or of an open gap's evidence of the project, as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CitedSource {
    pub issue_id: i64,
    /// `finding` or `gap`: see [`CitedSource::owner`].
    #[sqlx(rename = "owner")]
    pub owner_kind: String,
    /// The finding's or the gap's id.
    pub owner_id: i64,
    /// The finding's or the gap's number in its issue.
    pub owner_number: i32,
    pub position: i32,
    pub path: String,
    pub start_line: i32,
    pub end_line: i32,
    pub quote: Option<String>,
    /// The cited lines' text at `commit_sha`, once a push has read it.
    pub anchor_text: Option<String>,
    pub commit_sha: String,
    /// `verified` or `stale`.
    pub status: String,
}

impl CitedSource {
    pub fn status(&self) -> SourceStatus {
        SourceStatus::parse(&self.status)
    }

    pub fn owner(&self) -> SourceOwner {
        SourceOwner::parse(&self.owner_kind)
    }
}

/// The outcome of checking one source at a pushed commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceCheck {
    pub owner: SourceOwner,
    pub owner_id: i64,
    pub position: i32,
    /// Where the text stands now (unchanged for a stale source).
    pub path: String,
    pub start_line: i32,
    pub end_line: i32,
    /// The pushed commit when verified; the last good commit when stale.
    pub commit_sha: String,
    pub status: SourceStatus,
    /// Set when this check re-anchored the source (the old position); `None` keeps the stored one.
    pub moved_from: Option<Position>,
    /// The text the source stands for (stored for sources without a quote).
    pub anchor_text: Option<String>,
}

/// Every source of every live finding and of every open gap's evidence of the project's issues,
/// by issue, owner and position.
pub async fn project_sources(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
) -> Result<Vec<CitedSource>> {
    Ok(sqlx::query_as(
        "SELECT f.issue_id, 'finding' AS owner, f.id AS owner_id, f.number AS owner_number,
                s.position, s.path, s.start_line, s.end_line, s.quote, s.anchor_text,
                s.commit_sha, s.status
         FROM issues i
         JOIN findings f ON f.issue_id = i.id AND NOT f.removed
         JOIN finding_sources s ON s.finding_id = f.id
         WHERE i.tracker = $1 AND i.project_id = $2
         UNION ALL
         SELECT g.issue_id, 'gap', g.id, g.number, s.position, s.path, s.start_line, s.end_line,
                NULL, s.anchor_text, s.commit_sha, s.status
         FROM issues i
         JOIN gaps g ON g.issue_id = i.id AND g.status = 'open'
         JOIN gap_sources s ON s.gap_id = g.id
         WHERE i.tracker = $1 AND i.project_id = $2
         ORDER BY 1, 2 DESC, 4, 5",
    )
    .bind(tracker)
    .bind(project_id)
    .fetch_all(conn)
    .await?)
}

/// Writes the outcome of a push's checks: one statement per kind of owner that has checks.
pub async fn record_checks(conn: &mut PgConnection, checks: &[SourceCheck]) -> Result<u64> {
    let mut written = 0;
    for owner in [SourceOwner::Finding, SourceOwner::Gap] {
        let mine: Vec<&SourceCheck> = checks.iter().filter(|c| c.owner == owner).collect();
        written += record_owner_checks(conn, owner, &mine).await?;
    }
    Ok(written)
}

async fn record_owner_checks(
    conn: &mut PgConnection,
    owner: SourceOwner,
    checks: &[&SourceCheck],
) -> Result<u64> {
    if checks.is_empty() {
        return Ok(0);
    }
    let mut owner_ids = Vec::with_capacity(checks.len());
    let mut positions = Vec::with_capacity(checks.len());
    let mut paths = Vec::with_capacity(checks.len());
    let mut starts = Vec::with_capacity(checks.len());
    let mut ends = Vec::with_capacity(checks.len());
    let mut commits = Vec::with_capacity(checks.len());
    let mut statuses = Vec::with_capacity(checks.len());
    let mut moved_paths: Vec<Option<String>> = Vec::with_capacity(checks.len());
    let mut moved_starts: Vec<Option<i32>> = Vec::with_capacity(checks.len());
    let mut moved_ends: Vec<Option<i32>> = Vec::with_capacity(checks.len());
    let mut anchors: Vec<Option<String>> = Vec::with_capacity(checks.len());
    for check in checks {
        owner_ids.push(check.owner_id);
        positions.push(check.position);
        paths.push(check.path.clone());
        starts.push(check.start_line);
        ends.push(check.end_line);
        commits.push(check.commit_sha.clone());
        statuses.push(check.status.as_str());
        moved_paths.push(check.moved_from.as_ref().map(|m| m.path.clone()));
        moved_starts.push(check.moved_from.as_ref().map(|m| m.start_line));
        moved_ends.push(check.moved_from.as_ref().map(|m| m.end_line));
        anchors.push(check.anchor_text.clone());
    }
    let (table, key) = (owner.table(), owner.key());
    let done = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE {table} s SET
             path = c.path, start_line = c.start_line, end_line = c.end_line,
             commit_sha = c.commit_sha, status = c.status,
             moved_from_path = coalesce(c.moved_path, s.moved_from_path),
             moved_from_start = CASE WHEN c.moved_path IS NULL THEN s.moved_from_start ELSE c.moved_start END,
             moved_from_end = CASE WHEN c.moved_path IS NULL THEN s.moved_from_end ELSE c.moved_end END,
             anchor_text = coalesce(c.anchor, s.anchor_text)
         FROM unnest($1::bigint[], $2::int[], $3::text[], $4::int[], $5::int[], $6::text[],
                     $7::text[], $8::text[], $9::int[], $10::int[], $11::text[])
              AS c(owner_id, position, path, start_line, end_line, commit_sha, status,
                   moved_path, moved_start, moved_end, anchor)
         WHERE s.{key} = c.owner_id AND s.position = c.position"
    )))
    .bind(&owner_ids)
    .bind(&positions)
    .bind(&paths)
    .bind(&starts)
    .bind(&ends)
    .bind(&commits)
    .bind(&statuses)
    .bind(&moved_paths)
    .bind(&moved_starts)
    .bind(&moved_ends)
    .bind(&anchors)
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::SourceRow;
    use sqlx::PgPool;

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn sources_of_a_project_are_read_and_updated_in_bulk(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let issue: i64 = sqlx::query_scalar(
            "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
             VALUES ('github', '77', 'octo/repo', 1, 't', 'open', 'a', 'u', now()) RETURNING id",
        )
        .fetch_one(&mut *conn)
        .await
        .unwrap();
        let source = SourceRow {
            path: "a.py".into(),
            start_line: 6,
            end_line: 6,
            commit_sha: "c1".into(),
            ..SourceRow::default()
        };
        crate::findings::insert(&mut conn, issue, "f", None, &[source.clone(), source])
            .await
            .unwrap();
        // Another project's findings are not this push's business.
        crate::findings::insert(&mut conn, issue + 1, "x", None, &[])
            .await
            .unwrap();
        let sources = project_sources(&mut conn, "github", "77").await.unwrap();
        assert_eq!(sources.len(), 2);
        assert_eq!(sources[0].status(), SourceStatus::Verified);
        let checks = vec![
            SourceCheck {
                owner: SourceOwner::Finding,
                owner_id: sources[0].owner_id,
                position: 0,
                path: "b.py".into(),
                start_line: 9,
                end_line: 9,
                commit_sha: "c2".into(),
                status: SourceStatus::Verified,
                moved_from: Some(Position {
                    path: "a.py".into(),
                    start_line: 6,
                    end_line: 6,
                }),
                anchor_text: Some("x = 1".into()),
            },
            SourceCheck {
                owner: SourceOwner::Finding,
                owner_id: sources[1].owner_id,
                position: 1,
                path: "a.py".into(),
                start_line: 6,
                end_line: 6,
                commit_sha: "c1".into(),
                status: SourceStatus::Stale,
                moved_from: None,
                anchor_text: None,
            },
        ];
        assert_eq!(record_checks(&mut conn, &checks).await.unwrap(), 2);
        let live = crate::findings::live(&mut conn, issue).await.unwrap();
        assert!(live[0].stale);
        let moved = &live[0].sources[0];
        assert_eq!((moved.path.as_str(), moved.start_line), ("b.py", 9));
        assert_eq!(moved.moved_from.as_ref().unwrap().start_line, 6);
        assert_eq!(live[0].sources[1].status, SourceStatus::Stale);
        // A later check without a move keeps the recorded old position.
        let mut again = checks[0].clone();
        again.moved_from = None;
        again.anchor_text = None;
        record_checks(&mut conn, &[again]).await.unwrap();
        let live = crate::findings::live(&mut conn, issue).await.unwrap();
        assert_eq!(live[0].sources[0].moved_from.as_ref().unwrap().path, "a.py");
        let anchor: Option<String> =
            sqlx::query_scalar("SELECT anchor_text FROM finding_sources WHERE position = 0")
                .fetch_one(&mut *conn)
                .await
                .unwrap();
        assert_eq!(anchor.as_deref(), Some("x = 1"));
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn an_open_gaps_evidence_is_a_source_and_a_closed_ones_is_not(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let issue: i64 = sqlx::query_scalar(
            "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
             VALUES ('github', '77', 'octo/repo', 1, 't', 'open', 'a', 'u', now()) RETURNING id",
        )
        .fetch_one(&mut *conn)
        .await
        .unwrap();
        let open = |question: &'static str| crate::gaps::NewGapRow {
            question,
            severity: "high",
            respondent: "reporter",
            evidence: Some("see a.py:6"),
            run: None,
        };
        let kept = crate::gaps::open(&mut conn, issue, &open("kept"))
            .await
            .unwrap();
        let closed = crate::gaps::open(&mut conn, issue, &open("closed"))
            .await
            .unwrap();
        let place = Position {
            path: "a.py".into(),
            start_line: 6,
            end_line: 6,
        };
        for gap in [&kept, &closed] {
            crate::gaps::add_evidence_sources(
                &mut conn,
                gap.id,
                std::slice::from_ref(&place),
                "c1",
            )
            .await
            .unwrap();
        }
        crate::gaps::close(
            &mut conn,
            issue,
            closed.number,
            &crate::gaps::GapClosure {
                reason: "answered",
                note: "n",
                run: None,
            },
        )
        .await
        .unwrap();
        let sources = project_sources(&mut conn, "github", "77").await.unwrap();
        assert_eq!(sources.len(), 1, "{sources:?}");
        assert_eq!(
            (
                sources[0].owner(),
                sources[0].owner_id,
                sources[0].owner_number
            ),
            (SourceOwner::Gap, kept.id, kept.number)
        );
        let check = SourceCheck {
            owner: SourceOwner::Gap,
            owner_id: kept.id,
            position: 0,
            path: "a.py".into(),
            start_line: 9,
            end_line: 9,
            commit_sha: "c2".into(),
            status: SourceStatus::Verified,
            moved_from: Some(place.clone()),
            anchor_text: Some("x = 1".into()),
        };
        assert_eq!(record_checks(&mut conn, &[check]).await.unwrap(), 1);
        let evidence = crate::gaps::evidence_sources(&mut conn, issue)
            .await
            .unwrap();
        assert_eq!(evidence.len(), 2);
        assert_eq!(evidence[0].gap_number, kept.number);
        assert_eq!(
            (
                evidence[0].source.start_line,
                evidence[0].source.commit_sha.as_str()
            ),
            (9, "c2")
        );
        assert_eq!(evidence[0].source.moved_from, Some(place));
        assert_eq!(
            evidence[1].source.start_line, 6,
            "the closed gap's is left alone"
        );
    }
}
