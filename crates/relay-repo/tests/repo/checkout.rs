//! Checkout management against real local git repositories (file:// remotes) and a fake HTTP
//! tracker on 127.0.0.1.

use std::path::Path;
use std::sync::Arc;

use relay_repo::{Error, Provider, RepoSpec};
use secrecy::SecretString;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{Upstream, git, manager};

fn read(path: &Path, rel: &str) -> String {
    std::fs::read_to_string(path.join(rel)).unwrap()
}

fn leftovers(repo_dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for dir in [repo_dir.to_path_buf(), repo_dir.join("snapshots")] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            if name.starts_with(".tmp-") || name.starts_with(".trash-") {
                found.push(name);
            }
        }
    }
    found
}

#[tokio::test]
async fn clones_and_follows_the_default_branch() {
    let upstream = Upstream::new();
    let first = upstream.version(1);
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    let spec = upstream.spec();

    let checkout = repos.sync_to(&spec, None).await.unwrap();
    assert_eq!(checkout.commit, first);
    assert_eq!(checkout.default_branch, "trunk");
    assert_eq!(read(&checkout.path, "nested/b.txt"), "version 1\n");
    assert!(
        !checkout.path.join(".git").exists(),
        "snapshots carry no .git"
    );

    let second = upstream.version(2);
    let checkout = repos.sync_to(&spec, None).await.unwrap();
    assert_eq!(checkout.commit, second);
    assert_eq!(
        repos.current_commit(&spec).await.unwrap().as_deref(),
        Some(second.as_str())
    );
    let guard = repos.snapshot(&spec, None).await.unwrap();
    assert_eq!(guard.commit(), second);
    assert_eq!(read(guard.path(), "a.txt"), "version 2\n");

    // The remote switches its default branch: the checkout follows it.
    git(&upstream.path, &["checkout", "--quiet", "-b", "main"]);
    let third = upstream.version(3);
    git(&upstream.path, &["checkout", "--quiet", "trunk"]);
    git(&upstream.path, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    let checkout = repos.sync_to(&spec, None).await.unwrap();
    assert_eq!(checkout.default_branch, "main");
    assert_eq!(checkout.commit, third);
    assert!(leftovers(&repos.repo_dir(&spec).unwrap()).is_empty());
}

#[tokio::test]
async fn pushes_move_the_checkout_forward_only() {
    let upstream = Upstream::new();
    let first = upstream.version(1);
    let second = upstream.version(2);
    let third = upstream.version(3);
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    let spec = upstream.spec();

    let checkout = repos.sync_to(&spec, Some(&second)).await.unwrap();
    assert_eq!(checkout.commit, second);
    assert_eq!(read(&checkout.path, "a.txt"), "version 2\n");
    let checkout = repos.sync_to(&spec, Some(&third)).await.unwrap();
    assert_eq!(checkout.commit, third);
    // A late webhook for an older push does not move the checkout back.
    let checkout = repos.sync_to(&spec, Some(&first)).await.unwrap();
    assert_eq!(checkout.commit, third);
    // But an explicit snapshot of the old commit is available (for a job pinned to it).
    let old = repos.snapshot(&spec, Some(&first)).await.unwrap();
    assert_eq!(read(old.path(), "a.txt"), "version 1\n");
    assert_eq!(
        repos.current_commit(&spec).await.unwrap().as_deref(),
        Some(third.as_str())
    );
    // Abbreviated commits resolve to the full SHA.
    let short = repos.snapshot(&spec, Some(&second[..10])).await.unwrap();
    assert_eq!(short.commit(), second);
}

#[tokio::test]
async fn leased_snapshots_survive_updates_and_are_pruned_after() {
    let upstream = Upstream::new();
    let first = upstream.version(1);
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    let spec = upstream.spec();
    repos.sync_to(&spec, None).await.unwrap();

    let reader = repos.snapshot(&spec, None).await.unwrap();
    assert_eq!(reader.commit(), first);
    let second = upstream.version(2);
    repos.sync_to(&spec, Some(&second)).await.unwrap();
    // Retention is zero, so only the lease keeps the old snapshot alive.
    assert_eq!(repos.prune(&spec).await.unwrap(), 0);
    assert_eq!(read(reader.path(), "a.txt"), "version 1\n");
    let old_path = reader.path().to_path_buf();
    drop(reader);
    assert_eq!(repos.prune(&spec).await.unwrap(), 1);
    assert!(!old_path.exists());
    // The current snapshot is never pruned.
    assert_eq!(repos.prune(&spec).await.unwrap(), 0);
    let current = repos.snapshot(&spec, None).await.unwrap();
    assert_eq!(current.commit(), second);
    let listing: Vec<_> = std::fs::read_dir(current.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(read(current.path(), "a.txt"), "version 2\n", "{listing:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_readers_see_one_commit_while_pushes_update() {
    let upstream = Arc::new(Upstream::new());
    upstream.version(0);
    let data = tempfile::tempdir().unwrap();
    // Two managers sharing one data directory stand in for two worker processes.
    let writer = Arc::new(manager(data.path()));
    let other = Arc::new(manager(data.path()));
    let spec = upstream.spec();
    writer.sync_to(&spec, None).await.unwrap();

    let mut readers = Vec::new();
    for _ in 0..4 {
        let repos = Arc::clone(&other);
        let spec = spec.clone();
        readers.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            for _ in 0..25 {
                let guard = repos.snapshot(&spec, None).await.unwrap();
                let a = read(guard.path(), "a.txt");
                tokio::task::yield_now().await;
                let b = read(guard.path(), "nested/b.txt");
                assert_eq!(a, b, "a snapshot mixed two commits");
                seen.push((guard.commit().to_string(), a));
            }
            seen
        }));
    }
    let updater = {
        let repos = Arc::clone(&writer);
        let upstream = Arc::clone(&upstream);
        let spec = spec.clone();
        tokio::spawn(async move {
            for version in 1..=6 {
                let sha = upstream.version(version);
                repos.sync_to(&spec, Some(&sha)).await.unwrap();
            }
        })
    };
    // A second updater in the "other process" races the first.
    let racer = {
        let repos = Arc::clone(&other);
        let spec = spec.clone();
        tokio::spawn(async move {
            for _ in 0..4 {
                repos.sync_to(&spec, None).await.unwrap();
            }
        })
    };
    updater.await.unwrap();
    racer.await.unwrap();
    for reader in readers {
        for (commit, content) in reader.await.unwrap() {
            let expected = git(&upstream.path, &["show", &format!("{commit}:a.txt")]);
            assert_eq!(
                content.trim(),
                expected,
                "snapshot {commit} does not match its commit"
            );
        }
    }
    let head = git(&upstream.path, &["rev-parse", "HEAD"]);
    assert_eq!(writer.sync_to(&spec, None).await.unwrap().commit, head);
    assert!(leftovers(&writer.repo_dir(&spec).unwrap()).is_empty());
}

#[tokio::test]
async fn failures_leave_the_checkout_untouched() {
    let upstream = Upstream::new();
    let first = upstream.version(1);
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    let spec = upstream.spec();
    let checkout = repos.sync_to(&spec, None).await.unwrap();

    // Unknown commit.
    let missing = "0123456789abcdef0123456789abcdef01234567";
    let error = repos.sync_to(&spec, Some(missing)).await.unwrap_err();
    assert!(matches!(error, Error::CommitNotFound { .. }), "{error:?}");
    assert!(error.to_string().contains(missing), "{error}");
    assert!(matches!(
        repos.snapshot(&spec, Some(missing)).await.unwrap_err(),
        Error::CommitNotFound { .. }
    ));

    // The remote disappears.
    let moved = upstream.path.with_file_name("moved");
    std::fs::rename(&upstream.path, &moved).unwrap();
    let error = repos.sync_to(&spec, None).await.unwrap_err();
    assert!(matches!(error, Error::RepoNotFound { .. }), "{error:?}");
    assert_eq!(
        repos.current_commit(&spec).await.unwrap().as_deref(),
        Some(first.as_str())
    );
    assert_eq!(read(&checkout.path, "a.txt"), "version 1\n");
    assert!(leftovers(&repos.repo_dir(&spec).unwrap()).is_empty());

    // Invalid input never reaches git.
    let error = repos
        .sync_to(&spec, Some("--upload-pack=touch /tmp/x"))
        .await
        .unwrap_err();
    assert!(matches!(error, Error::InvalidSpec(_)), "{error:?}");
}

#[tokio::test]
async fn first_clone_of_a_missing_repository_leaves_nothing() {
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    let spec = RepoSpec::new(
        Provider::GitLab,
        "https://gitlab.example.com",
        "group/sub/project",
    )
    .with_local_path(data.path().join("no-such-repo"));
    let error = repos.sync_to(&spec, None).await.unwrap_err();
    assert!(matches!(error, Error::RepoNotFound { .. }), "{error:?}");
    let repo_dir = repos.repo_dir(&spec).unwrap();
    assert!(!repo_dir.join("mirror.git").exists());
    assert!(leftovers(&repo_dir).is_empty());
}

#[tokio::test]
async fn an_empty_repository_is_a_clear_error() {
    let upstream = Upstream::new();
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    let error = repos.sync_to(&upstream.spec(), None).await.unwrap_err();
    assert!(matches!(error, Error::CommitNotFound { .. }), "{error:?}");
    assert!(
        error.to_string().contains("is the repository empty?"),
        "{error}"
    );
}

/// Serves one fake git HTTP endpoint that answers every request with `status`, and records the
/// request heads.
async fn fake_tracker(status: &'static str) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
    let recorded = Arc::clone(&requests);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let recorded = Arc::clone(&recorded);
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buffer = [0u8; 4096];
                while !head.windows(4).any(|window| window == b"\r\n\r\n") {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(read) => head.extend_from_slice(&buffer[..read]),
                    }
                }
                recorded
                    .lock()
                    .unwrap()
                    .push(String::from_utf8_lossy(&head).into_owned());
                let response = format!(
                    "HTTP/1.1 {status}\r\nWWW-Authenticate: Basic realm=\"fake\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (format!("http://{address}"), requests)
}

#[tokio::test]
async fn the_token_is_sent_as_a_header_and_never_shown() {
    const TOKEN: &str = "ghs_TopSecretToken123";
    let (base_url, requests) = fake_tracker("401 Unauthorized").await;
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    let spec = RepoSpec::new(Provider::GitHub, &base_url, "acme/private")
        .with_token(SecretString::from(TOKEN));
    assert_eq!(
        spec.clone_url().unwrap(),
        format!("{base_url}/acme/private.git")
    );

    let error = repos.sync_to(&spec, None).await.unwrap_err();
    assert!(matches!(error, Error::Auth { .. }), "{error:?}");
    // "x-access-token:ghs_TopSecretToken123" in base64.
    let encoded = "eC1hY2Nlc3MtdG9rZW46Z2hzX1RvcFNlY3JldFRva2VuMTIz";
    for text in [error.to_string(), format!("{error:?}"), format!("{spec:?}")] {
        assert!(
            !text.contains(TOKEN) && !text.contains(encoded),
            "secret leaked: {text}"
        );
    }
    let requests = requests.lock().unwrap().clone();
    let first = requests.first().expect("git contacted the fake tracker");
    assert!(
        first.starts_with("GET /acme/private.git/info/refs?service=git-upload-pack "),
        "{first}"
    );
    assert!(
        first.contains(&format!("Authorization: Basic {encoded}")),
        "{first}"
    );
    assert!(!first.contains(TOKEN));
    assert!(!repos.repo_dir(&spec).unwrap().join("mirror.git").exists());
}

#[tokio::test]
async fn gitlab_missing_repository_is_reported_as_not_found() {
    let (base_url, requests) = fake_tracker("404 Not Found").await;
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    let spec = RepoSpec::new(
        Provider::GitLab,
        format!("{base_url}/gitlab/api/v4"),
        "group/sub/project",
    )
    .with_token(SecretString::from("glpat-secret"));
    let error = repos.sync_to(&spec, None).await.unwrap_err();
    assert!(matches!(error, Error::RepoNotFound { .. }), "{error:?}");
    assert!(!error.to_string().contains("glpat-secret"));
    let requests = requests.lock().unwrap().clone();
    assert!(
        requests[0].starts_with("GET /gitlab/group/sub/project.git/info/refs"),
        "{}",
        requests[0]
    );
    // "oauth2:glpat-secret" in base64.
    assert!(
        requests[0].contains("Authorization: Basic b2F1dGgyOmdscGF0LXNlY3JldA=="),
        "{}",
        requests[0]
    );
}

/// Many files at one commit in two git processes: a missing path, a directory, a name with spaces
/// that looks like a `cat-file` answer, leading blank lines, text that is not UTF-8, an empty file
/// and a name that cannot be asked for on one line. `file_at` is the same read for one path.
#[tokio::test]
async fn files_at_reads_a_commit_in_one_batch_as_file_at_does() {
    let upstream = Upstream::new();
    // Not UTF-8: written as bytes before the commit.
    std::fs::write(upstream.path.join("latin1.txt"), b"caf\xe9\n").unwrap();
    let commit = upstream.commit(
        &[
            ("a.py", "\n\nx = 1\n"),
            ("dir/b.py", "def f():\n    return 2\n"),
            ("x blob 5", "tricky\n"),
            ("empty.txt", ""),
        ],
        "files",
    );
    let data = tempfile::tempdir().unwrap();
    let repos = manager(data.path());
    let spec = upstream.spec();
    repos.sync_to(&spec, Some(&commit)).await.unwrap();
    let paths: Vec<String> = [
        "a.py",
        "dir/b.py",
        "x blob 5",
        "empty.txt",
        "latin1.txt",
        "missing.py",
        "dir",
        "a.py",
        "line\nbreak.py",
    ]
    .map(String::from)
    .to_vec();
    let batch = repos.files_at(&spec, &commit, &paths).await.unwrap();
    assert_eq!(batch.len(), 8, "every distinct path is answered");
    let expected: [(&str, Option<&str>); 8] = [
        ("a.py", Some("\n\nx = 1\n")),
        ("dir/b.py", Some("def f():\n    return 2\n")),
        ("x blob 5", Some("tricky\n")),
        ("empty.txt", Some("")),
        // Not UTF-8: read leniently, as every git output is.
        ("latin1.txt", Some("caf\u{fffd}\n")),
        ("missing.py", None),
        ("dir", None),
        ("line\nbreak.py", None),
    ];
    for (path, text) in expected {
        assert_eq!(batch[path].as_deref(), text, "{path:?}");
        // One file is the same read.
        let one = repos.file_at(&spec, &commit, path).await.unwrap();
        assert_eq!(one.as_deref(), text, "file_at {path:?}");
    }
}
