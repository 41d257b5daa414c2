//! `relay codegraph <op> --repo PATH [--format text|json] ...`: the operations against a local checkout.
//!
//! The checkout is indexed, or a cached index is reused: with the `memory` backend a clean checkout's
//! graph is cached as JSON under the user cache directory, keyed by path and HEAD commit; with a
//! persistent backend the stored snapshot of the HEAD commit is reused. A checkout with uncommitted Go or
//! Python changes (or that is not a git repository) is always re-indexed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use relay_codegraph::index::{IndexOptions, index_repository};
use relay_codegraph::model::Graph;
use relay_codegraph::ops::{CodegraphArgs, GraphScope, run};
use relay_codegraph::store::{CodegraphSettings, GraphStore, StoreBackend, StoreError, open_store};

/// `--format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputFormat {
    /// The text agents read.
    #[default]
    Text,
    /// The structured outcome ([`relay_codegraph::ops::Outcome`]) as pretty JSON.
    Json,
}

impl std::str::FromStr for OutputFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "text" => Ok(OutputFormat::Text),
            "json" => Ok(OutputFormat::Json),
            other => Err(format!("unknown format {other:?} (expected text or json)")),
        }
    }
}

/// One `relay codegraph` invocation.
#[derive(Debug, Clone)]
pub struct CliRequest {
    /// The checkout to query.
    pub repo: PathBuf,
    pub format: OutputFormat,
    /// `operation` is the subcommand; the other fields come from `--name`, `--qname`, `--kind`,
    /// `--file`, `--depth`.
    pub args: CodegraphArgs,
    /// Where the memory backend caches graphs of clean checkouts; `None`: `$XDG_CACHE_HOME/relay/codegraph`
    /// or `~/.cache/relay/codegraph`.
    pub cache_dir: Option<PathBuf>,
}

/// What to print. `is_error` is set for operation errors (unknown qname, missing parameter...), for which
/// the binary should exit with status 1 after printing `text` to stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliOutput {
    pub text: String,
    pub is_error: bool,
}

/// Failures that prevent answering at all.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("failed to index {path}")]
    Index {
        path: PathBuf,
        #[source]
        source: relay_codegraph::index::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("repository path {path} is not accessible")]
    Repo {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Runs one `relay codegraph` invocation. `pool` is required when `settings.backend` is `postgres`.
pub async fn run_cli(
    request: &CliRequest,
    settings: &CodegraphSettings,
    pool: Option<relay_store::PgPool>,
) -> Result<CliOutput, CliError> {
    let store = open_store(settings, pool).await?;
    let persistent = settings.backend != StoreBackend::Memory;
    let cache = (!persistent)
        .then(|| request.cache_dir.clone().or_else(default_cache_dir))
        .flatten();
    let scope = load_checkout(store.as_ref(), &request.repo, cache.as_deref()).await?;
    let outcome = run(Some(store.as_ref()), &scope, &request.args).await;
    Ok(CliOutput {
        text: match request.format {
            OutputFormat::Text => outcome.to_text(),
            OutputFormat::Json => outcome.to_json(),
        },
        is_error: outcome.is_error(),
    })
}

/// Makes sure `store` holds the graph of the checkout at `path` and returns its scope: the repository is
/// the canonical path, the commit is HEAD (`worktree` outside git). When the checkout is clean, a graph
/// already stored for HEAD is reused, else one cached as JSON in `cache_dir` (if given); otherwise the
/// checkout is indexed (and cached in `cache_dir` when clean).
pub async fn load_checkout(
    store: &dyn GraphStore,
    path: &Path,
    cache_dir: Option<&Path>,
) -> Result<GraphScope, CliError> {
    let root = tokio::fs::canonicalize(path)
        .await
        .map_err(|source| CliError::Repo {
            path: path.to_owned(),
            source,
        })?;
    let repo = root.to_string_lossy().into_owned();
    // Only the files a language frontend reads make a checkout dirty for the graph.
    let pathspecs = relay_codegraph::index::indexed_pathspecs();
    let git = relay_repo::worktree::state(&root, &pathspecs).await;
    let commit = git
        .as_ref()
        .map(|g| g.head.clone())
        .unwrap_or_else(|| "worktree".to_owned());
    let clean = git.as_ref().is_some_and(|g| g.clean);

    if clean {
        if store.latest_commit(&repo).await?.as_deref() == Some(commit.as_str()) {
            tracing::debug!(repo.path = %repo, commit = %commit, "reusing stored code graph");
            return Ok(GraphScope::at(repo, commit));
        }
        if let Some(graph) = read_cache(cache_dir, &repo, &commit).await {
            store.replace_graph(&repo, &commit, &graph).await?;
            return Ok(GraphScope::at(repo, commit));
        }
    }
    let index_root = root.clone();
    let output = tokio::task::spawn_blocking(move || {
        index_repository(&index_root, &IndexOptions::default())
    })
    .await
    .expect("the indexing task does not panic")
    .map_err(|source| CliError::Index {
        path: root.clone(),
        source,
    })?;
    store.replace_graph(&repo, &commit, &output.graph).await?;
    if clean {
        write_cache(cache_dir, &repo, &commit, &output.graph).await;
    }
    Ok(GraphScope::at(repo, commit))
}

/// `$XDG_CACHE_HOME/relay/codegraph` or `~/.cache/relay/codegraph`.
pub fn default_cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|d| d.join("relay").join("codegraph"))
}

fn cache_file(dir: Option<&Path>, repo: &str, commit: &str) -> Option<PathBuf> {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in repo.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let commit: String = commit.chars().filter(char::is_ascii_alphanumeric).collect();
    dir.map(|d| d.join(format!("{hash:016x}-{commit}.json")))
}

async fn read_cache(dir: Option<&Path>, repo: &str, commit: &str) -> Option<Graph> {
    let path = cache_file(dir, repo, commit)?;
    let bytes = tokio::fs::read(&path).await.ok()?;
    match serde_json::from_slice(&bytes) {
        Ok(graph) => Some(graph),
        Err(e) => {
            tracing::warn!(cache.path = %path.display(), error = %e, "ignoring unreadable code graph cache");
            None
        }
    }
}

/// Best effort: a cache that cannot be written only costs a re-index next time.
async fn write_cache(dir: Option<&Path>, repo: &str, commit: &str, graph: &Graph) {
    let Some(path) = cache_file(dir, repo, commit) else {
        return;
    };
    let result = async {
        if let Some(dir) = path.parent() {
            tokio::fs::create_dir_all(dir).await?;
        }
        let tmp = path.with_extension("json.tmp");
        tokio::fs::write(&tmp, serde_json::to_vec(graph)?).await?;
        tokio::fs::rename(&tmp, &path).await
    }
    .await;
    if let Err(e) = result {
        tracing::warn!(cache.path = %path.display(), error = %e, "failed to write code graph cache");
    }
}
