//! The history the agents' `history` tool reads (`relay_repo::code_history`): at a snapshot's
//! commit, through the mirror; bounded against a huge log; refusing what git could take for an
//! option or what leaves the repository.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use relay_repo::GitHistory;
use relay_repo::code_history::{
    CommitCount, HistoryError, HistoryPath, LineRange, MAX_COUNTED_COMMITS, MAX_SUBJECT_CHARS,
    PathKind,
};

use crate::support::{Upstream, git, manager};

const NEVER: &dyn Fn() -> bool = &|| false;

fn file(path: &str) -> HistoryPath<'_> {
    HistoryPath {
        path,
        kind: PathKind::File,
    }
}

/// Commits `files` as `author` at Unix time `at`; returns the SHA.
fn commit_as(
    upstream: &Upstream,
    files: &[(&str, &str)],
    message: &str,
    author: &str,
    at: i64,
) -> String {
    for (rel, content) in files {
        let path = upstream.path.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    git(&upstream.path, &["add", "--all"]);
    let date = format!("@{at} +0000");
    let output = Command::new("git")
        .args([
            "-c",
            &format!("user.name={author}"),
            "-c",
            "user.email=a@example.com",
        ])
        .args(["commit", "--quiet", "-m", message])
        .current_dir(&upstream.path)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    git(&upstream.path, &["rev-parse", "HEAD"])
}

/// Writes `count` commits on `trunk` through `git fast-import` (thousands in a moment), each
/// changing `f.txt`; `subject(i)` is the i-th commit's message.
fn fast_import(repo: &Path, count: usize, subject: impl Fn(usize) -> String) {
    let mut stream = Vec::new();
    for i in 0..count {
        let message = subject(i);
        let content = format!("version {i}\n");
        write!(
            stream,
            "commit refs/heads/trunk\nauthor Bulk <b@example.com> {at} +0000\ncommitter Bulk <b@example.com> {at} +0000\ndata {}\n{message}\nM 644 inline f.txt\ndata {}\n{content}\n",
            message.len(),
            content.len(),
            at = 1_700_000_000 + i as i64,
        )
        .unwrap();
    }
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(repo)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&stream).unwrap();
    assert!(child.wait().unwrap().success());
}

/// The log of a file at a snapshot's commit: its commits, newest first, with author, date and
/// subject; a later commit the mirror has fetched is not in it.
#[tokio::test]
async fn a_snapshots_history_ends_at_its_commit() {
    let upstream = Upstream::new();
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    let spec = upstream.spec();
    commit_as(
        &upstream,
        &[("a.go", "one\n")],
        "add a",
        "Ann Author",
        86_400,
    );
    commit_as(&upstream, &[("b.go", "other\n")], "add b", "Bo", 2 * 86_400);
    let second = commit_as(
        &upstream,
        &[("a.go", "one\ntwo\n")],
        "a: the second line, because\n\nthe body is not shown",
        "Cy",
        3 * 86_400,
    );
    repos.sync_to(&spec, None).await.unwrap();
    commit_as(
        &upstream,
        &[("a.go", "later\n")],
        "after the snapshot",
        "Di",
        4 * 86_400,
    );
    repos.sync_to(&spec, None).await.unwrap();

    let history = GitHistory::of_snapshot(&repos, &spec, &second).unwrap();
    let log = history.log(file("a.go"), None, 10, NEVER).unwrap();
    let shown: Vec<(&str, &str, &str)> = log
        .commits
        .iter()
        .map(|c| (c.date.as_str(), c.author.as_str(), c.subject.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("1970-01-04", "Cy", "a: the second line, because"),
            ("1970-01-02", "Ann Author", "add a"),
        ]
    );
    assert_eq!(log.commits[0].sha, second);
    assert_eq!(log.count, CommitCount::Exact(2));
    // Fewer shown, the count stays whole.
    let log = history.log(file("a.go"), None, 1, NEVER).unwrap();
    assert_eq!((log.commits.len(), log.count), (1, CommitCount::Exact(2)));
    // The root: every commit up to the snapshot's.
    let root = HistoryPath {
        path: "",
        kind: PathKind::Directory,
    };
    assert_eq!(
        history.log(root, None, 10, NEVER).unwrap().count,
        CommitCount::Exact(3)
    );
}

/// A line range: who last changed each line (blame) and the commits that touched those lines
/// only; a renamed file's log goes back past the rename.
#[tokio::test]
async fn a_line_range_has_its_blame_and_renames_are_followed() {
    let upstream = Upstream::new();
    commit_as(&upstream, &[("old.py", "a\nb\nc\nd\n")], "start", "Ann", 0);
    commit_as(
        &upstream,
        &[("old.py", "a\nB\nc\nd\n")],
        "fix b",
        "Bo",
        86_400,
    );
    commit_as(
        &upstream,
        &[("old.py", "a\nB\nc\nD\n")],
        "fix d",
        "Cy",
        2 * 86_400,
    );
    git(&upstream.path, &["mv", "old.py", "new.py"]);
    let head = commit_as(&upstream, &[], "rename", "Di", 3 * 86_400);
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    repos.sync_to(&upstream.spec(), None).await.unwrap();
    let history = GitHistory::of_snapshot(&repos, &upstream.spec(), &head).unwrap();

    let blame = history
        .blame("new.py", LineRange { start: 1, end: 3 }, NEVER)
        .unwrap();
    let shown: Vec<(u32, u32, &str)> = blame
        .iter()
        .map(|r| (r.start, r.end, r.commit.subject.as_str()))
        .collect();
    assert_eq!(shown, [(1, 1, "start"), (2, 2, "fix b"), (3, 3, "start")]);

    let range = history
        .log(
            file("new.py"),
            Some(LineRange { start: 2, end: 2 }),
            10,
            NEVER,
        )
        .unwrap();
    let subjects: Vec<&str> = range.commits.iter().map(|c| c.subject.as_str()).collect();
    assert_eq!(subjects, ["fix b", "start"], "line 2 only: not `fix d`");

    let whole = history.log(file("new.py"), None, 10, NEVER).unwrap();
    assert_eq!(whole.count, CommitCount::Exact(4), "{whole:?}");
}

/// Git output is untrusted and unbounded: a log of more commits than are counted says "at least",
/// and a subject of a megabyte is read within the byte bound and shown cut.
#[tokio::test]
async fn a_huge_log_is_bounded_and_counted_honestly() {
    let upstream = Upstream::new();
    fast_import(&upstream.path, MAX_COUNTED_COMMITS + 200, |i| {
        format!("change {i}")
    });
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    let checkout = repos.sync_to(&upstream.spec(), None).await.unwrap();
    let history = GitHistory::of_snapshot(&repos, &upstream.spec(), &checkout.commit).unwrap();
    let log = history.log(file("f.txt"), None, 10, NEVER).unwrap();
    assert_eq!(log.commits.len(), 10);
    assert_eq!(
        log.commits[0].subject,
        format!("change {}", MAX_COUNTED_COMMITS + 199)
    );
    assert_eq!(log.count, CommitCount::AtLeast(MAX_COUNTED_COMMITS + 1));

    let huge = Upstream::new();
    fast_import(&huge.path, 3, |i| {
        format!("{i} {}", "x".repeat(1024 * 1024))
    });
    let checkout = repos.sync_to(&huge.spec(), None).await.unwrap();
    let history = GitHistory::of_snapshot(&repos, &huge.spec(), &checkout.commit).unwrap();
    let log = history.log(file("f.txt"), None, 10, NEVER).unwrap();
    assert_eq!(log.count, CommitCount::AtLeast(1), "{:?}", log.count);
    let subject = &log.commits[0].subject;
    assert!(
        subject.starts_with("2 xxx") && subject.ends_with('…'),
        "{subject}"
    );
    assert!(
        subject.chars().count() <= MAX_SUBJECT_CHARS + 1,
        "{}",
        subject.len()
    );
}

/// Nothing git could take for an option or a path outside the repository reaches it: such a path
/// is refused (and no file is written), as is a revision that is not an object id.
#[tokio::test]
async fn hostile_paths_and_revisions_are_refused() {
    let upstream = Upstream::new();
    let head = commit_as(&upstream, &[("a.go", "x\n")], "a", "Ann", 0);
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    repos.sync_to(&upstream.spec(), None).await.unwrap();
    let history = GitHistory::of_snapshot(&repos, &upstream.spec(), &head).unwrap();
    let written = data.path().join("written");
    let option = format!("--output={}", written.display());
    for path in [
        option.as_str(),
        "-p",
        "../../etc/passwd",
        "/etc/passwd",
        "a\u{0}b",
        "x/../../y",
    ] {
        let refused = history.log(file(path), None, 10, NEVER);
        assert!(
            matches!(refused, Err(HistoryError::Refused(_))),
            "{path:?}: {refused:?}"
        );
        let refused = history.blame(path, LineRange { start: 1, end: 1 }, NEVER);
        assert!(
            matches!(refused, Err(HistoryError::Refused(_))),
            "{path:?}: {refused:?}"
        );
    }
    assert!(
        !written.exists(),
        "git wrote a file it was handed as an option"
    );
    for revision in ["HEAD", "--all", "-n1", "main~1", ""] {
        assert!(
            GitHistory::of_snapshot(&repos, &upstream.spec(), revision).is_err(),
            "{revision:?}"
        );
    }
    let empty = history.blame("a.go", LineRange { start: 3, end: 2 }, NEVER);
    assert!(matches!(empty, Err(HistoryError::Refused(_))), "{empty:?}");
    let wide = history.blame("a.go", LineRange { start: 1, end: 500 }, NEVER);
    assert!(matches!(wide, Err(HistoryError::Refused(_))), "{wide:?}");
    // A line past the end is git's refusal, without the server's path to the mirror.
    let past = history.blame("a.go", LineRange { start: 5, end: 6 }, NEVER);
    let Err(HistoryError::Git(message)) = past else {
        panic!("{past:?}")
    };
    assert!(message.contains("has only 1 line"), "{message}");
    assert!(
        !message.contains(&*data.path().to_string_lossy()),
        "{message}"
    );
}

/// A working tree's history for the CLI, from a subdirectory of its repository: paths are the
/// subdirectory's (the eval fixture is such a subdirectory of this repository).
#[test]
fn a_worktree_subdirectory_reads_its_repositorys_history() {
    let upstream = Upstream::new();
    commit_as(
        &upstream,
        &[("sub/pkg/x.go", "x\n"), ("top.go", "t\n")],
        "both",
        "Ann",
        0,
    );
    let head = commit_as(
        &upstream,
        &[("sub/pkg/x.go", "y\n")],
        "x only",
        "Bo",
        86_400,
    );
    let history = GitHistory::of_worktree(&upstream.path.join("sub")).unwrap();
    assert_eq!(history.commit(), head);
    let log = history.log(file("pkg/x.go"), None, 10, NEVER).unwrap();
    assert_eq!(log.count, CommitCount::Exact(2));
    let outside = tempfile::tempdir().unwrap();
    assert_eq!(GitHistory::of_worktree(outside.path()), None);
}
