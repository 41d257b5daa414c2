//! Re-verification after a push: the cited sources of the live findings and of the open gaps'
//! evidence of one project that a push must read, read in one statement, and the outcome of
//! checking them at the pushed commit, written in one transaction (one statement per kind of
//! owner, and the project's watermark). The checking itself (git, files) happens in the worker.
//!
//! The watermark (`reverify_watermarks`, `migrations/0071_reverify_watermark.sql`): the commit a
//! project's sources are verified through. A source `through_watermark` stands verified at that
//! commit without its row being rewritten on every push; readers show the watermark's commit for
//! it ([`EFFECTIVE_COMMIT`]). A push that touches none of the project's cited files and finds no
//! source pending ([`advance_if_untouched`]) moves the watermark and writes nothing else.
//!
//! A project's sources are those of its own issues that cite it (bare paths) and those of any
//! issue of the same tracker that cite it as a related repository (`owner/name:path`, the place
//! form): a push to an SDK re-verifies the app's findings that cite the SDK. Its own issues'
//! places in other repositories are theirs to check ([`Scope`]).

use relay_core::IssueId;
use sqlx::PgConnection;

use crate::Result;
use crate::findings::{Position, SourceStatus};

/// The project whose sources a push checks: its tracker, id and path.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    pub tracker: &'a str,
    pub project_id: &'a str,
    /// `owner/name` (`group/sub/project`): other issues cite it as `<project_path>:path`.
    pub project_path: &'a str,
}

/// SQL: whether source `s` of issue `i` is the project's: its own issue's bare path (not a place
/// `owner/name:path` in a related repository), or any issue's place in the project (`$2` the
/// project id, `$P` its path; the caller substitutes `$P`). The pattern is
/// `relay_core::related::is_repository_path`'s shape (its length bounds aside) in SQL.
const IN_SCOPE: &str = "((i.project_id = $2 AND s.path !~ '^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)+:') \
     OR left(s.path, length($P) + 1) = $P || ':')";
/// SQL: the source's path inside the project (the place's prefix taken off).
const PATH_IN_PROJECT: &str = "CASE WHEN left(s.path, length($P) + 1) = $P || ':' THEN substr(s.path, length($P) + 2) ELSE s.path END";
/// SQL: the place's repository label (`NULL` for the project's own bare paths).
const LABEL: &str = "CASE WHEN left(s.path, length($P) + 1) = $P || ':' THEN $P END";

/// `template` with `{IN_SCOPE}`, `{PATH}`, `{LABEL}` and `{EFFECTIVE_COMMIT}` filled in and the
/// project path's placeholder `$P` bound as parameter `$n`.
fn scoped(template: &str, n: usize) -> String {
    let fill = |sql: &str| sql.replace("$P", &format!("${n}"));
    template
        .replace("{IN_SCOPE}", &fill(IN_SCOPE))
        .replace("{PATH}", &fill(PATH_IN_PROJECT))
        .replace("{LABEL}", &fill(LABEL))
        .replace("{EFFECTIVE_COMMIT}", EFFECTIVE_COMMIT)
}

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
    pub issue_id: IssueId,
    /// `finding` or `gap`: see [`CitedSource::owner`].
    #[sqlx(rename = "owner")]
    pub owner_kind: String,
    /// The finding's or the gap's id.
    pub owner_id: i64,
    /// The finding's or the gap's number in its issue.
    pub owner_number: i32,
    pub position: i32,
    /// The path inside the project (a related place's `owner/name:` prefix taken off: see
    /// `label`).
    pub path: String,
    /// `Some(project path)` for a source another issue cites as a related place
    /// (`label:path`): its check is written back in that form ([`SourceCheck::path`]).
    pub label: Option<String>,
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
    /// Where the text stands now (unchanged for a stale source), as stored: a related place
    /// keeps its `label:` prefix.
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
    /// Verified at the pushed commit, which becomes the project's watermark in the same write:
    /// later pushes leave the row alone until its file changes. `false`: the next push reads it
    /// again (stale, or verified at a commit the watermark does not reach).
    pub through_watermark: bool,
}

/// The commit a source stands verified at, for a query that names the source `s` and the
/// project's watermark row `w` (possibly absent: a `LEFT JOIN`).
pub const EFFECTIVE_COMMIT: &str = "CASE WHEN s.through_watermark THEN coalesce(w.verified_through, s.commit_sha) ELSE s.commit_sha END";

/// The commit the project's sources are verified through, if a push has recorded one.
pub async fn watermark(
    conn: &mut PgConnection,
    tracker: &str,
    project_id: &str,
) -> Result<Option<String>> {
    Ok(sqlx::query_scalar(
        "SELECT verified_through FROM reverify_watermarks WHERE tracker = $1 AND project_id = $2",
    )
    .bind(tracker)
    .bind(project_id)
    .fetch_optional(conn)
    .await?)
}

/// The quiet push: moves the watermark from `from` to `to` in one statement, if no source of the
/// project is pending and none under the watermark cites one of `changed` (the paths that changed
/// between the two commits). `false`: something must be read (or the watermark moved meanwhile).
pub async fn advance_if_untouched(
    conn: &mut PgConnection,
    scope: Scope<'_>,
    from: &str,
    to: &str,
    changed: &[String],
) -> Result<bool> {
    let done = sqlx::query(sqlx::AssertSqlSafe(scoped(
        "UPDATE reverify_watermarks w SET verified_through = $4, updated_at = now()
         WHERE w.tracker = $1 AND w.project_id = $2 AND w.verified_through = $3
           AND NOT EXISTS (
               SELECT 1 FROM finding_sources s
               JOIN findings f ON f.id = s.finding_id AND NOT f.removed
               JOIN issues i ON i.id = f.issue_id
               WHERE i.tracker = $1 AND {IN_SCOPE}
                 AND (s.recheck OR (s.through_watermark AND {PATH} = ANY($5))))
           AND NOT EXISTS (
               SELECT 1 FROM gap_sources s
               JOIN gaps g ON g.id = s.gap_id AND g.status = 'open'
               JOIN issues i ON i.id = g.issue_id
               WHERE i.tracker = $1 AND {IN_SCOPE}
                 AND (s.recheck OR (s.through_watermark AND {PATH} = ANY($5))))",
        6,
    )))
    .bind(scope.tracker)
    .bind(scope.project_id)
    .bind(from)
    .bind(to)
    .bind(changed)
    .bind(scope.project_path)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The sources a push must read: every pending one (`recheck`: new, stale, or verified beyond the
/// watermark) and those under the watermark whose path is one of `changed`. `commit_sha` is the
/// commit each stands verified at (the watermark's for those under it). By issue, owner and
/// position.
pub async fn sources_to_check(
    conn: &mut PgConnection,
    scope: Scope<'_>,
    changed: &[String],
) -> Result<Vec<CitedSource>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(scoped(
        "SELECT f.issue_id, 'finding' AS owner, f.id AS owner_id, f.number AS owner_number,
                s.position, {PATH} AS path, {LABEL} AS label, s.start_line, s.end_line, s.quote,
                s.anchor_text, {EFFECTIVE_COMMIT} AS commit_sha, s.status
         FROM finding_sources s
         JOIN findings f ON f.id = s.finding_id AND NOT f.removed
         JOIN issues i ON i.id = f.issue_id
         LEFT JOIN reverify_watermarks w ON w.tracker = $1 AND w.project_id = $2
         WHERE i.tracker = $1 AND {IN_SCOPE}
           AND (s.recheck OR (s.through_watermark AND {PATH} = ANY($3)))
         UNION ALL
         SELECT g.issue_id, 'gap', g.id, g.number, s.position, {PATH}, {LABEL}, s.start_line,
                s.end_line, NULL, s.anchor_text, {EFFECTIVE_COMMIT}, s.status
         FROM gap_sources s
         JOIN gaps g ON g.id = s.gap_id AND g.status = 'open'
         JOIN issues i ON i.id = g.issue_id
         LEFT JOIN reverify_watermarks w ON w.tracker = $1 AND w.project_id = $2
         WHERE i.tracker = $1 AND {IN_SCOPE}
           AND (s.recheck OR (s.through_watermark AND {PATH} = ANY($3)))
         ORDER BY 1, 2 DESC, 4, 5",
        4,
    )))
    .bind(scope.tracker)
    .bind(scope.project_id)
    .bind(changed)
    .bind(scope.project_path)
    .fetch_all(conn)
    .await?)
}

/// Every source of every live finding and of every open gap's evidence of the project (see
/// [`Scope`]), by issue, owner and position (`commit_sha`: the commit each stands verified at).
pub async fn project_sources(
    conn: &mut PgConnection,
    scope: Scope<'_>,
) -> Result<Vec<CitedSource>> {
    Ok(sqlx::query_as(sqlx::AssertSqlSafe(scoped(
        "SELECT f.issue_id, 'finding' AS owner, f.id AS owner_id, f.number AS owner_number,
                s.position, {PATH} AS path, {LABEL} AS label, s.start_line, s.end_line, s.quote,
                s.anchor_text, {EFFECTIVE_COMMIT} AS commit_sha, s.status
         FROM issues i
         JOIN findings f ON f.issue_id = i.id AND NOT f.removed
         JOIN finding_sources s ON s.finding_id = f.id
         LEFT JOIN reverify_watermarks w ON w.tracker = $1 AND w.project_id = $2
         WHERE i.tracker = $1 AND {IN_SCOPE}
         UNION ALL
         SELECT g.issue_id, 'gap', g.id, g.number, s.position, {PATH}, {LABEL}, s.start_line,
                s.end_line, NULL, s.anchor_text, {EFFECTIVE_COMMIT}, s.status
         FROM issues i
         JOIN gaps g ON g.issue_id = i.id AND g.status = 'open'
         JOIN gap_sources s ON s.gap_id = g.id
         LEFT JOIN reverify_watermarks w ON w.tracker = $1 AND w.project_id = $2
         WHERE i.tracker = $1 AND {IN_SCOPE}
         ORDER BY 1, 2 DESC, 4, 5",
        3,
    )))
    .bind(scope.tracker)
    .bind(scope.project_id)
    .bind(scope.project_path)
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

/// The watermark a push moves: from what it read (`None`: the project had none) to the pushed
/// commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Advance<'a> {
    pub tracker: &'a str,
    pub project_id: &'a str,
    pub from: Option<&'a str>,
    pub to: &'a str,
}

/// Writes a push's checks and, when given, moves the project's watermark, in one transaction.
/// Fails (writing nothing) when the watermark is no longer `advance.from`: another
/// re-verification of the project moved it meanwhile.
pub async fn record_push(
    conn: &mut PgConnection,
    checks: &[SourceCheck],
    advance: Option<Advance<'_>>,
) -> Result<u64> {
    let mut tx = sqlx::Connection::begin(conn).await?;
    let written = record_checks(&mut tx, checks).await?;
    if let Some(advance) = advance {
        let moved = sqlx::query(
            "INSERT INTO reverify_watermarks AS w (tracker, project_id, verified_through)
             VALUES ($1, $2, $4)
             ON CONFLICT (tracker, project_id) DO UPDATE
                 SET verified_through = EXCLUDED.verified_through, updated_at = now()
                 WHERE w.verified_through IS NOT DISTINCT FROM $3",
        )
        .bind(advance.tracker)
        .bind(advance.project_id)
        .bind(advance.from)
        .bind(advance.to)
        .execute(&mut *tx)
        .await?;
        if moved.rows_affected() != 1 {
            return Err(crate::Error::Conflict(
                "the project's re-verification watermark moved meanwhile".into(),
            ));
        }
    }
    tx.commit().await?;
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
    let mut through: Vec<bool> = Vec::with_capacity(checks.len());
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
        through.push(check.through_watermark);
    }
    let (table, key) = (owner.table(), owner.key());
    let done = sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE {table} s SET
             path = c.path, start_line = c.start_line, end_line = c.end_line,
             commit_sha = c.commit_sha, status = c.status,
             moved_from_path = coalesce(c.moved_path, s.moved_from_path),
             moved_from_start = CASE WHEN c.moved_path IS NULL THEN s.moved_from_start ELSE c.moved_start END,
             moved_from_end = CASE WHEN c.moved_path IS NULL THEN s.moved_from_end ELSE c.moved_end END,
             anchor_text = coalesce(c.anchor, s.anchor_text),
             through_watermark = c.through, recheck = NOT c.through
         FROM unnest($1::bigint[], $2::int[], $3::text[], $4::int[], $5::int[], $6::text[],
                     $7::text[], $8::text[], $9::int[], $10::int[], $11::text[], $12::bool[])
              AS c(owner_id, position, path, start_line, end_line, commit_sha, status,
                   moved_path, moved_start, moved_end, anchor, through)
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
    .bind(&through)
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::findings::SourceRow;
    use sqlx::PgPool;

    const OCTO: Scope<'static> = Scope {
        tracker: "github",
        project_id: "77",
        project_path: "octo/repo",
    };

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn a_place_in_a_related_repository_is_that_repositorys_to_check(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        let issue: i64 = sqlx::query_scalar(
            "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
             VALUES ('github', '77', 'octo/repo', 1, 't', 'open', 'a', 'u', now()) RETURNING id",
        )
        .fetch_one(&mut *conn)
        .await
        .unwrap();
        let at = |path: &str, commit: &str| SourceRow {
            path: path.into(),
            start_line: 4,
            end_line: 4,
            commit_sha: commit.into(),
            ..SourceRow::default()
        };
        // The app's issue cites its own file and a line of its SDK (a related repository).
        crate::findings::insert(
            &mut conn,
            relay_core::IssueId(issue),
            "f",
            None,
            &[at("main.go", "app1"), at("octo/sdk:client.go", "sdk1")],
        )
        .await
        .unwrap();
        let own = project_sources(&mut conn, OCTO).await.unwrap();
        let paths: Vec<(&str, Option<&str>)> = own
            .iter()
            .map(|s| (s.path.as_str(), s.label.as_deref()))
            .collect();
        assert_eq!(
            paths,
            [("main.go", None)],
            "the SDK's place is not the app's to check"
        );
        let sdk = Scope {
            tracker: "github",
            project_id: "78",
            project_path: "octo/sdk",
        };
        let cited = project_sources(&mut conn, sdk).await.unwrap();
        let places: Vec<(&str, Option<&str>, &str)> = cited
            .iter()
            .map(|s| (s.path.as_str(), s.label.as_deref(), s.commit_sha.as_str()))
            .collect();
        assert_eq!(places, [("client.go", Some("octo/sdk"), "sdk1")]);
        // A push of the SDK that changed client.go must read it; the app's changes do not count.
        let pending = sources_to_check(&mut conn, sdk, &["client.go".into()])
            .await
            .unwrap();
        assert_eq!(pending.len(), 1);
        // Another tracker's issues never cite this one's repositories.
        let other = Scope {
            tracker: "gitlab",
            ..sdk
        };
        assert!(project_sources(&mut conn, other).await.unwrap().is_empty());
    }

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
        crate::findings::insert(
            &mut conn,
            relay_core::IssueId(issue),
            "f",
            None,
            &[source.clone(), source],
        )
        .await
        .unwrap();
        // Another project's findings are not this push's business.
        crate::findings::insert(&mut conn, relay_core::IssueId(issue + 1), "x", None, &[])
            .await
            .unwrap();
        let sources = project_sources(&mut conn, OCTO).await.unwrap();
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
                through_watermark: false,
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
                through_watermark: false,
            },
        ];
        assert_eq!(record_checks(&mut conn, &checks).await.unwrap(), 2);
        let live = crate::findings::live(&mut conn, relay_core::IssueId(issue))
            .await
            .unwrap();
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
        let live = crate::findings::live(&mut conn, relay_core::IssueId(issue))
            .await
            .unwrap();
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
        let kept = crate::gaps::open(&mut conn, relay_core::IssueId(issue), &open("kept"))
            .await
            .unwrap();
        let closed = crate::gaps::open(&mut conn, relay_core::IssueId(issue), &open("closed"))
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
                &[crate::gaps::EvidencePlace {
                    place: &place,
                    commit_sha: "c1",
                }],
            )
            .await
            .unwrap();
        }
        crate::gaps::close(
            &mut conn,
            relay_core::IssueId(issue),
            closed.number,
            &crate::gaps::GapClosure {
                reason: "answered",
                note: "n",
                run: None,
            },
        )
        .await
        .unwrap();
        let sources = project_sources(&mut conn, OCTO).await.unwrap();
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
            through_watermark: false,
        };
        assert_eq!(record_checks(&mut conn, &[check]).await.unwrap(), 1);
        let evidence = crate::gaps::evidence_sources(&mut conn, relay_core::IssueId(issue))
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
