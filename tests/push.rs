//! Pushes to the default branch move the checkout through the queue.

use relay_core::JobId;
use std::path::Path;
use std::sync::Arc;

use relay_codegraph::store::GraphStore;
use relay_worker::jobs::reindex::CodegraphIndexing;
use relay_worker::jobs::{JobDeps, RepoSpecs};
use relay_worker::{Outcome, Registry, Worker};
use serde_json::{Value, json};
use sqlx::PgPool;

use crate::helpers::*;
use crate::queue::settings;

/// The built-in registry with a repository manager in `data`, serving `octo/repo` of the GitHub
/// tracker and `group/project` of the GitLab tracker from `local` when given.
pub fn registry(data: &tempfile::TempDir, local: Option<&Path>) -> Registry {
    registry_with_graph(data, local, None)
}

pub fn registry_with_graph(
    data: &tempfile::TempDir,
    local: Option<&Path>,
    graph: Option<Arc<dyn GraphStore>>,
) -> Registry {
    let repos = relay_repo::RepoManager::new(relay_repo::RepoSettings {
        data_dir: data.path().to_path_buf(),
        ..Default::default()
    })
    .unwrap();
    let mut specs = RepoSpecs::new(&trackers());
    if let Some(local) = local {
        specs = specs
            .with_local("github", "octo/repo", local.to_path_buf())
            .with_local("gitlab", "group/project", local.to_path_buf());
    }
    relay_worker::jobs::registry(&JobDeps {
        repos: Arc::new(repos),
        specs: Arc::new(specs),
        codegraph: graph.map(|store| Arc::new(CodegraphIndexing::new(store, 2))),
        orchestrator: None,
    })
}

fn commit(dir: &Path, file: &str, text: &str) -> String {
    std::fs::write(dir.join(file), text).unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", file]);
    git(dir, &["rev-parse", "HEAD"])
}

fn github_push(git_ref: &str, after: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "ref": git_ref, "before": "0000000000000000000000000000000000000000", "after": after,
        "created": false, "deleted": false, "forced": false,
        "repository": { "id": 77, "full_name": "octo/repo", "default_branch": "main" },
        "pusher": { "name": "alice" }, "sender": { "login": "alice", "type": "User" }
    }))
    .unwrap()
}

fn gitlab_push(git_ref: &str, after: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "object_kind": "push", "event_name": "push", "ref": git_ref,
        "before": "0000000000000000000000000000000000000000", "after": after, "checkout_sha": after,
        "project_id": 15,
        "project": { "id": 15, "path_with_namespace": "group/project", "default_branch": "main" },
        "user_username": "alice"
    }))
    .unwrap()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn default_branch_pushes_update_the_checkout(pool: PgPool) {
    let upstream = tempfile::tempdir().unwrap();
    git(upstream.path(), &["init", "-q"]);
    let first = commit(upstream.path(), "a.txt", "one");

    let app = relay_gateway::app(state(pool.clone()));
    let answer = call(
        &app,
        github_request("push", "p-1", github_push("refs/heads/main", &first)),
    )
    .await;
    assert_eq!(
        (answer.outcome(), answer.reason()),
        ("accepted", "default_branch_push")
    );
    let job_id = answer.body["job"].as_i64().unwrap();
    let others = [
        (
            github_push("refs/heads/feature", &first),
            "not_default_branch",
        ),
        (github_push("refs/tags/v1", &first), "not_default_branch"),
        (
            github_push(
                "refs/heads/main",
                "0000000000000000000000000000000000000000",
            ),
            "branch_deleted",
        ),
    ];
    for (i, (body, reason)) in others.into_iter().enumerate() {
        let answer = call(&app, github_request("push", &format!("p-x{i}"), body)).await;
        assert_eq!((answer.outcome(), answer.reason()), ("ignored", reason));
    }

    let data = tempfile::tempdir().unwrap();
    let worker = Worker::new(
        pool.clone(),
        registry(&data, Some(upstream.path())),
        settings(),
    );
    assert_eq!(
        worker.drain().await.unwrap(),
        vec![Outcome::Succeeded {
            job_id: JobId(job_id)
        }]
    );
    let detail: Value = sqlx::query_scalar("SELECT detail FROM job_runs WHERE job_id = $1")
        .bind(job_id)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(detail["commit"], json!(first));

    // Two quick pushes: one queued update, at the newest commit.
    let second = commit(upstream.path(), "b.txt", "two");
    let third = commit(upstream.path(), "c.txt", "three");
    let a = call(
        &app,
        gitlab_request("Push Hook", "gp-1", gitlab_push("refs/heads/main", &second)),
    )
    .await;
    assert_eq!(a.reason(), "default_branch_push");
    let b = call(
        &app,
        github_request("push", "p-2", github_push("refs/heads/main", &second)),
    )
    .await;
    let c = call(
        &app,
        github_request("push", "p-3", github_push("refs/heads/main", &third)),
    )
    .await;
    assert_eq!(
        b.body["job"], c.body["job"],
        "a newer push joins the queued update"
    );
    let outcomes = worker.drain().await.unwrap();
    assert_eq!(outcomes.len(), 2, "{outcomes:?}");
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Outcome::Succeeded { .. })),
        "{outcomes:?}"
    );
    let commits: Vec<Value> = sqlx::query_scalar(
        "SELECT r.detail->'commit' FROM job_runs r JOIN jobs j ON j.id = r.job_id
         WHERE j.kind = 'update_checkout' ORDER BY r.id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(
        commits.contains(&json!(third)) && commits.contains(&json!(second)),
        "{commits:?}"
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_missing_repository_fails_permanently(pool: PgPool) {
    let app = relay_gateway::app(state(pool.clone()));
    let answer = call(
        &app,
        github_request(
            "push",
            "m-1",
            github_push(
                "refs/heads/main",
                "1234567890123456789012345678901234567890",
            ),
        ),
    )
    .await;
    let job_id = answer.body["job"].as_i64().unwrap();
    let data = tempfile::tempdir().unwrap();
    let nowhere = data.path().join("no-such-repo");
    let worker = Worker::new(pool.clone(), registry(&data, Some(&nowhere)), settings());
    assert_eq!(
        worker.drain().await.unwrap(),
        vec![Outcome::Failed {
            job_id: JobId(job_id)
        }]
    );
    let job = relay_store::queue::get(&pool, JobId(job_id))
        .await
        .unwrap()
        .unwrap();
    assert!(
        job.last_error
            .unwrap()
            .contains("failed to update the checkout")
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn pushes_keep_the_code_graph_current_incrementally(pool: PgPool) {
    let upstream = tempfile::tempdir().unwrap();
    git(upstream.path(), &["init", "-q"]);
    std::fs::create_dir_all(upstream.path().join("app")).unwrap();
    commit(upstream.path(), "app/__init__.py", "");
    commit(
        upstream.path(),
        "app/util.py",
        "def helper():\n    return 1\n",
    );
    let first = commit(
        upstream.path(),
        "app/main.py",
        "from app.util import helper\n\ndef run():\n    return helper()\n",
    );

    let store: Arc<dyn GraphStore> = Arc::new(relay_codegraph::store::memory::MemoryStore::new());
    let app = relay_gateway::app(state(pool.clone()));
    let data = tempfile::tempdir().unwrap();
    let worker = Worker::new(
        pool.clone(),
        registry_with_graph(&data, Some(upstream.path()), Some(store.clone())),
        settings(),
    );

    call(
        &app,
        github_request("push", "g-1", github_push("refs/heads/main", &first)),
    )
    .await;
    assert!(matches!(
        worker.drain().await.unwrap()[..],
        [Outcome::Succeeded { .. }]
    ));
    assert_eq!(
        store
            .latest_commit("github/octo/repo")
            .await
            .unwrap()
            .as_deref(),
        Some(first.as_str())
    );

    // A new function that calls the helper: only the changed file is re-parsed.
    let second = commit(
        upstream.path(),
        "app/extra.py",
        "from app.util import helper\n\ndef twice():\n    return helper() + helper()\n",
    );
    call(
        &app,
        github_request("push", "g-2", github_push("refs/heads/main", &second)),
    )
    .await;
    assert!(matches!(
        worker.drain().await.unwrap()[..],
        [Outcome::Succeeded { .. }]
    ));
    let details: Vec<Value> = sqlx::query_scalar(
        "SELECT r.detail->'codegraph' FROM job_runs r JOIN jobs j ON j.id = r.job_id
         WHERE j.kind = 'update_checkout' ORDER BY r.id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(details[0]["codegraph"], json!("full"));
    assert_eq!(details[1]["codegraph"], json!("incremental"), "{details:?}");
    assert_eq!(details[1]["changed_files"], json!(1));
    assert_eq!(
        store
            .latest_commit("github/octo/repo")
            .await
            .unwrap()
            .as_deref(),
        Some(second.as_str())
    );

    // The stored graph equals a full index of the new commit.
    let snapshot = relay_codegraph::store::Snapshot::new("github/octo/repo", second.as_str());
    let mut stored = store.export(&snapshot).await.unwrap();
    let checkout = tempfile::tempdir().unwrap();
    git(
        checkout.path(),
        &["clone", "-q", upstream.path().to_str().unwrap(), "."],
    );
    let mut full = relay_codegraph::index::index_repository(checkout.path(), &Default::default())
        .unwrap()
        .graph;
    relay_codegraph::store::canonicalize(&mut stored);
    relay_codegraph::store::canonicalize(&mut full);
    assert_eq!(stored, full);
    assert!(
        stored
            .edges
            .iter()
            .any(|e| e.from == "app.extra.twice" && e.to.as_deref() == Some("app.util.helper"))
    );
}

/// A repository built to hurt the indexer (nestings that overflow any recursive walker, a binary
/// blob named `.py`, a file over the size cap, invalid UTF-8 in `.go`, `.py` and `go.mod`, a
/// symlink loop): the push's index job succeeds, counts what it skipped, and the worker goes on
/// with the next job. Without bounded recursion the index aborts the whole process.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_hostile_repository_is_indexed_and_the_worker_goes_on(pool: PgPool) {
    let upstream = tempfile::tempdir().unwrap();
    let dir = upstream.path();
    git(dir, &["init", "-q"]);
    let write = |rel: &str, bytes: &[u8]| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    };
    let deep = 250_000;
    let sum = format!("{}1", "1+".repeat(299_999));
    write("go.mod", b"module example.com/caf\xe9\n");
    write("app/util.py", b"def helper():\n    return 1\n");
    write(
        "deep/parens.py",
        format!("X = {}1{}\n", "(".repeat(deep), ")".repeat(deep)).as_bytes(),
    );
    write("deep/sum.py", format!("X = {sum}\n").as_bytes());
    write(
        "deep/sum.go",
        format!("package deep\n\nvar X = {sum}\n").as_bytes(),
    );
    write("blob/data.py", &[0u8, 159, 146, 150, 0, 1, 2]);
    write("big/one_line.py", "a".repeat(5 * 1024 * 1024).as_bytes());
    write("bad/latin1.py", b"def caf\xe9():\n    pass\n");
    write("bad/latin1.go", b"package bad\n// caf\xe9\n");
    std::os::unix::fs::symlink(".", dir.join("bad/loop")).unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "hostile"]);
    let first = git(dir, &["rev-parse", "HEAD"]);

    let store: Arc<dyn GraphStore> = Arc::new(relay_codegraph::store::memory::MemoryStore::new());
    let app = relay_gateway::app(state(pool.clone()));
    let data = tempfile::tempdir().unwrap();
    let worker = Worker::new(
        pool.clone(),
        registry_with_graph(&data, Some(dir), Some(store.clone())),
        settings(),
    );
    call(
        &app,
        github_request("push", "h-1", github_push("refs/heads/main", &first)),
    )
    .await;
    assert!(matches!(
        worker.drain().await.unwrap()[..],
        [Outcome::Succeeded { .. }]
    ));

    // The next job is served by the same worker.
    let second = commit(
        dir,
        "app/more.py",
        "from app.util import helper\n\ndef run():\n    return helper()\n",
    );
    call(
        &app,
        github_request("push", "h-2", github_push("refs/heads/main", &second)),
    )
    .await;
    assert!(matches!(
        worker.drain().await.unwrap()[..],
        [Outcome::Succeeded { .. }]
    ));
    let details: Vec<Value> = sqlx::query_scalar(
        "SELECT r.detail->'codegraph' FROM job_runs r JOIN jobs j ON j.id = r.job_id
         WHERE j.kind = 'update_checkout' ORDER BY r.id",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(details[0]["codegraph"], json!("full"), "{details:?}");
    assert_eq!(
        details[0]["skipped"],
        json!({ "binary": 1, "not_utf8": 2, "too_large": 1 }),
        "{details:?}"
    );
    assert_eq!(details[0]["depth_limited"], json!(3), "{details:?}");
    let snapshot = relay_codegraph::store::Snapshot::new("github/octo/repo", second.as_str());
    let stored = store.export(&snapshot).await.unwrap();
    assert!(
        stored
            .edges
            .iter()
            .any(|e| e.from == "app.more.run" && e.to.as_deref() == Some("app.util.helper")),
        "the sane files next to the hostile ones are indexed"
    );
}
