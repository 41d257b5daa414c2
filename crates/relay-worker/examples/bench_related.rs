//! What a related repository costs a job's start (issue #46's benchmark): the work
//! `jobs::orchestrator::related` and `prepare` do per admitted repository — the checkout's
//! current commit read, one fetch of the remote head (`sync_to(None)`), the snapshot leased, the
//! code graph ensured at that commit — measured three ways in one run:
//!
//! - **first use**: clone, snapshot, full index (the baseline every figure is a ratio of);
//! - **head not moved**: the target is one fetch that transfers nothing and no re-index;
//! - **head moved by one commit** (one file's body edited): one incremental update.
//!
//! The related repository is generated: [`FILES`] Go files in [`PACKAGES`] packages, a local
//! upstream cloned over the file protocol (git's own fetch: the same process a remote costs,
//! without the network). Each figure is the median of [`ROUNDS`], as a ratio of the first use's
//! in the same run, split into git's part (fetch, snapshot) and the code graph's.
//!
//! `cargo run --release -p relay-worker --example bench_related`

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use relay_codegraph::store::GraphStore;
use relay_codegraph::store::memory::MemoryStore;
use relay_repo::{Provider, RepoManager, RepoSettings, RepoSpec};
use relay_worker::jobs::orchestrator::graph::{ensure_graph, graph_repo_key};
use relay_worker::jobs::reindex::CodegraphIndexing;

const PACKAGES: usize = 20;
const FILES: usize = 400;
const FUNCTIONS_PER_FILE: usize = 8;
const ROUNDS: usize = 7;

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.com",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .with_context(|| format!("git {args:?}"))?;
    anyhow::ensure!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn go_file(package: usize, file: usize, salt: usize) -> String {
    let mut text = format!("package p{package}\n\n");
    for f in 0..FUNCTIONS_PER_FILE {
        text.push_str(&format!(
            "// F{file}_{f} is generated.\nfunc F{file}_{f}(x int) int {{\n\treturn x + {salt} + F{file}_{g}(x)\n}}\n\n",
            g = (f + 1) % FUNCTIONS_PER_FILE
        ));
    }
    text
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// How long one job start's work took: git's part (the current commit read, the fetch, the
/// snapshot leased) and the code graph's (ensured at the commit).
#[derive(Debug, Clone, Copy)]
struct Took {
    git: Duration,
    graph: Duration,
}

/// One job start's work for the related repository (see the module docs) and the commit it
/// stands at.
async fn job_start(
    repos: &RepoManager,
    spec: &RepoSpec,
    indexing: &CodegraphIndexing,
    key: &str,
) -> anyhow::Result<(Took, String)> {
    let started = Instant::now();
    let _before = repos.current_commit(spec).await?;
    let head = repos.sync_to(spec, None).await?;
    let snapshot = repos.snapshot(spec, Some(&head.commit)).await?;
    let git = started.elapsed();
    ensure_graph(
        indexing,
        repos,
        spec,
        key,
        snapshot.commit(),
        snapshot.path(),
        Arc::default(),
    )
    .await?;
    let graph = started.elapsed() - git;
    Ok((Took { git, graph }, head.commit))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let upstream = tempfile::tempdir()?;
    git(upstream.path(), &["init", "-q"])?;
    std::fs::write(
        upstream.path().join("go.mod"),
        "module example.com/sdk\n\ngo 1.22\n",
    )?;
    for file in 0..FILES {
        let package = file % PACKAGES;
        let dir = upstream.path().join(format!("p{package}"));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(format!("f{file}.go")), go_file(package, file, 0))?;
    }
    git(upstream.path(), &["add", "."])?;
    git(upstream.path(), &["commit", "-qm", "sdk"])?;

    let mut first = Vec::new();
    let mut unchanged = Vec::new();
    let mut moved = Vec::new();
    for round in 0..ROUNDS {
        let data = tempfile::tempdir()?;
        let repos = RepoManager::new(RepoSettings {
            data_dir: data.path().to_path_buf(),
            ..Default::default()
        })?;
        let spec = RepoSpec::new(Provider::GitHub, "https://github.com", "acme/sdk")
            .with_local_path(upstream.path());
        let store: Arc<dyn GraphStore> = Arc::new(MemoryStore::new());
        let indexing = CodegraphIndexing::new(store.clone(), 4);
        let key = graph_repo_key("github", "acme/sdk");

        let (took, commit) = job_start(&repos, &spec, &indexing, &key).await?;
        first.push(took);
        anyhow::ensure!(store.latest_commit(&key).await?.as_deref() == Some(commit.as_str()));

        let (took, same) = job_start(&repos, &spec, &indexing, &key).await?;
        anyhow::ensure!(same == commit, "the head did not move");
        unchanged.push(took);

        // One body edited upstream: the next job start fetches it and updates the graph.
        let file = round % FILES;
        let path = upstream
            .path()
            .join(format!("p{}/f{file}.go", file % PACKAGES));
        std::fs::write(&path, go_file(file % PACKAGES, file, round + 1))?;
        git(upstream.path(), &["commit", "-qam", "edit"])?;
        let (took, next) = job_start(&repos, &spec, &indexing, &key).await?;
        anyhow::ensure!(next != commit, "the head moved");
        anyhow::ensure!(store.latest_commit(&key).await?.as_deref() == Some(next.as_str()));
        moved.push(took);
    }
    let base = median(first.iter().map(|t| t.git + t.graph).collect());
    let graph_base = median(first.iter().map(|t| t.graph).collect());
    let shown = |name: &str, samples: &[Took]| {
        let total = median(samples.iter().map(|t| t.git + t.graph).collect());
        let git = median(samples.iter().map(|t| t.git).collect());
        let graph = median(samples.iter().map(|t| t.graph).collect());
        println!(
            "  {name:<44} {total:>9.1?} ({:.3}) · git {git:>9.1?} · graph {graph:>9.1?} ({:.3} of a full index)",
            total.as_secs_f64() / base.as_secs_f64(),
            graph.as_secs_f64() / graph_base.as_secs_f64()
        );
    };
    println!(
        "related repository: {FILES} Go files in {PACKAGES} packages, medians of {ROUNDS} rounds; \
         (ratio of the first use's total)"
    );
    shown("first use (clone, snapshot, full index)", &first);
    shown("head not moved (fetch, no re-index)", &unchanged);
    shown("head moved one commit (fetch, incremental)", &moved);
    Ok(())
}
