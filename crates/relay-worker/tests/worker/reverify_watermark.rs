//! Re-verification's watermark against the real Postgres and real git: a push that touches no
//! cited file moves the project's watermark and reads and writes no source row, while every
//! reader shows the sources verified at the pushed commit; a push touching one cited file reads
//! and writes only that file's sources.

use relay_core::IssueId;
use std::path::Path;
use std::process::Command;

use relay_repo::{Provider, RepoManager, RepoSettings, RepoSpec};
use relay_store::PgPool;
use relay_store::findings::{SourceRow, SourceStatus};
use relay_worker::jobs::reverify::{PushTarget, Reverification, reverify_project};

fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn commit(dir: &Path, file: &str, text: &str) -> String {
    std::fs::write(dir.join(file), text).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", file]);
    git(dir, &["rev-parse", "HEAD"])
}

struct World {
    pool: PgPool,
    upstream: tempfile::TempDir,
    _data: tempfile::TempDir,
    repos: RepoManager,
    spec: RepoSpec,
    issue: i64,
}

impl World {
    async fn push(&self, commit: &str) -> Reverification {
        self.repos.sync_to(&self.spec, Some(commit)).await.unwrap();
        let snapshot = self.repos.snapshot(&self.spec, Some(commit)).await.unwrap();
        reverify_project(
            &self.pool,
            &self.repos,
            &self.spec,
            PushTarget {
                tracker: "github",
                project_id: "77",
                project_path: "octo/repo",
                commit,
            },
            snapshot.path(),
        )
        .await
        .unwrap()
    }

    /// Each source row's (path, transaction id that last wrote it).
    async fn row_versions(&self) -> Vec<(String, String)> {
        sqlx::query_as("SELECT path, xmin::text FROM finding_sources ORDER BY finding_id, position")
            .fetch_all(&self.pool)
            .await
            .unwrap()
    }

    async fn shown_commits(&self) -> Vec<String> {
        let mut conn = self.pool.acquire().await.unwrap();
        relay_store::findings::live(&mut conn, IssueId(self.issue))
            .await
            .unwrap()
            .iter()
            .flat_map(|f| f.sources.iter())
            .map(|s| {
                assert_eq!(s.status, SourceStatus::Verified);
                s.commit_sha.clone()
            })
            .collect()
    }
}

async fn world(pool: PgPool) -> (World, String) {
    let upstream = tempfile::tempdir().unwrap();
    let dir = upstream.path();
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("a.py"), "def a():\n    return 1\n").unwrap();
    let base = commit(dir, "b.py", "def b():\n    return 2\n");
    let issue: i64 = sqlx::query_scalar(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
         VALUES ('github', '77', 'octo/repo', 1, 't', 'open', 'a', 'u', now()) RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    for path in ["a.py", "b.py"] {
        let name = &path[..1];
        relay_store::findings::insert(
            &mut conn,
            IssueId(issue),
            &format!("{name} is defined here"),
            None,
            &[SourceRow {
                path: path.into(),
                start_line: 1,
                end_line: 1,
                quote: Some(format!("def {name}():")),
                commit_sha: base.clone(),
                ..SourceRow::default()
            }],
        )
        .await
        .unwrap();
    }
    drop(conn);
    let data = tempfile::tempdir().unwrap();
    let repos = RepoManager::new(RepoSettings {
        data_dir: data.path().to_path_buf(),
        ..Default::default()
    })
    .unwrap();
    let spec =
        RepoSpec::new(Provider::GitHub, "https://github.com", "octo/repo").with_local_path(dir);
    repos.sync_to(&spec, Some(&base)).await.unwrap();
    let world = World {
        pool,
        upstream,
        _data: data,
        repos,
        spec,
        issue,
    };
    (world, base)
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_push_touching_no_cited_file_writes_no_source(pool: PgPool) {
    let (world, _) = world(pool).await;
    let dir = world.upstream.path().to_path_buf();

    // The first push reads every source (none is under a watermark yet).
    let first = commit(&dir, "README.md", "# one\n");
    let outcome = world.push(&first).await;
    assert!(!outcome.untouched);
    assert_eq!((outcome.sources, outcome.verified), (2, 2));
    assert_eq!(world.shown_commits().await, vec![first.clone(), first]);
    let before = world.row_versions().await;

    // A push touching no cited file: no source row read or written, all shown at the new commit.
    let second = commit(&dir, "README.md", "# two\n");
    let outcome = world.push(&second).await;
    assert!(outcome.untouched, "{outcome:?}");
    assert_eq!(outcome.sources, 0);
    assert_eq!(
        world.row_versions().await,
        before,
        "no source row rewritten"
    );
    assert_eq!(
        world.shown_commits().await,
        vec![second.clone(), second.clone()]
    );

    // A push changing a.py above its cited line: only a.py's source is read and written.
    let third = commit(&dir, "a.py", "# new\ndef a():\n    return 1\n");
    let outcome = world.push(&third).await;
    assert!(!outcome.untouched);
    assert_eq!((outcome.sources, outcome.reanchored), (1, 1), "{outcome:?}");
    let after = world.row_versions().await;
    assert_ne!(after[0], before[0], "a.py's source was rewritten");
    assert_eq!(after[1], before[1], "b.py's was not");
    assert_eq!(world.shown_commits().await, vec![third.clone(), third]);

    // A new finding is pending: the next push reads it even though its file did not change.
    let mut conn = world.pool.acquire().await.unwrap();
    relay_store::findings::insert(
        &mut conn,
        IssueId(world.issue),
        "b again",
        None,
        &[SourceRow {
            path: "b.py".into(),
            start_line: 2,
            end_line: 2,
            quote: Some("return 2".into()),
            commit_sha: second.clone(),
            ..SourceRow::default()
        }],
    )
    .await
    .unwrap();
    drop(conn);
    let fourth = commit(&dir, "README.md", "# four\n");
    let outcome = world.push(&fourth).await;
    assert!(!outcome.untouched);
    assert_eq!((outcome.sources, outcome.verified), (1, 1), "{outcome:?}");
    assert_eq!(world.shown_commits().await, vec![fourth.clone(); 3]);
    let fifth = commit(&dir, "README.md", "# five\n");
    assert!(world.push(&fifth).await.untouched);
    assert_eq!(world.shown_commits().await, vec![fifth; 3]);
}

/// A removed finding's sources leave re-verification with the commit they stood verified at.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_removed_finding_keeps_the_watermarks_commit(pool: PgPool) {
    let (world, _) = world(pool).await;
    let dir = world.upstream.path().to_path_buf();
    let first = commit(&dir, "README.md", "# one\n");
    world.push(&first).await;
    let second = commit(&dir, "README.md", "# two\n");
    assert!(world.push(&second).await.untouched);
    let mut conn = world.pool.acquire().await.unwrap();
    assert!(
        relay_store::findings::remove(
            &mut conn,
            IssueId(world.issue),
            1,
            relay_store::findings::RemovedBy::Planner
        )
        .await
        .unwrap()
    );
    let (commit_sha, through, recheck): (String, bool, bool) = sqlx::query_as(
        "SELECT commit_sha, through_watermark, recheck FROM finding_sources s
         JOIN findings f ON f.id = s.finding_id WHERE f.number = 1",
    )
    .fetch_one(&mut *conn)
    .await
    .unwrap();
    assert_eq!(
        (commit_sha, through, recheck),
        (second.clone(), false, false)
    );
    drop(conn);
    let third = commit(&dir, "README.md", "# three\n");
    assert!(world.push(&third).await.untouched);
    assert_eq!(world.shown_commits().await, vec![third]);
}
