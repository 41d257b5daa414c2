//! The tolerant Go and Python indexer.
//!
//! Indexing runs in two phases:
//! 1. **extraction** (`go`, `python`): each file is parsed with tree-sitter (in parallel) into
//!    per-file *facts*: its declarations plus every call, type and value reference in a small
//!    expression IR with lexical scopes already applied (locals are told apart from package-level
//!    names at this point);
//! 2. **resolution** (`go`, `python`): global tables (packages, types, method
//!    sets, modules, class hierarchies) are built from all facts, and each file's references are
//!    resolved against them into [`Edge`]s. What cannot be resolved stays an unresolved edge.
//!
//! The per-file facts are kept by [`Indexer`] so that [`Indexer::update`] re-parses only the files
//! that changed and hands back a [`GraphDelta`].
//!
//! Each language is a folder (`go/`, `python/`) implementing the `Frontend` trait of `frontend`;
//! the language-neutral modules (`walk`, `incremental`, `deps`, `resolve`) reach a language only
//! through the registered frontends. `syntax` holds the tree-sitter helpers the extractors share.

mod budget;
mod deps;
mod depth;
mod facts;
mod frontend;
pub(crate) mod go;
mod incremental;
mod packed;
mod parallel;
mod python;
mod resolve;
mod source;
mod syntax;
mod walk;
mod wanted;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::model::{Confidence, Edge, EdgeKind, Graph};

pub use frontend::{files_by_language, indexed_pathspecs, language_names, languages_sentence};
pub use incremental::{GraphDelta, Indexer};
pub use source::SkipReason;
pub use walk::indexed_files;

/// Stack size of every thread that indexes (the parser and resolver threads, and the threads
/// callers run an index on). Recursion over syntax and values is bounded by depth limits (see
/// `index/depth.rs`), so this is headroom for tree-sitter and ordinary nesting, not a defence.
pub const INDEX_STACK_BYTES: usize = 256 * 1024 * 1024;

/// Errors of the indexer. Unparsable source is not an error (it is indexed as far as it parses).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The repository root does not exist or is not a directory.
    #[error("repository root {0} is not a directory")]
    NotADirectory(PathBuf),
    /// Walking the repository failed.
    #[error("failed to walk {path}")]
    Walk {
        path: PathBuf,
        #[source]
        source: ignore::Error,
    },
    /// Reading a file or directory failed.
    #[error("failed to read {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Result type of the indexer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What the indexer is doing, reported to an optional progress callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Parsing files and extracting facts (`done`/`total` count files).
    Parsing,
    /// Resolving references across files (`done`/`total` count files).
    Resolving,
}

/// A progress report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub phase: Phase,
    pub done: usize,
    pub total: usize,
}

/// A progress callback; called from worker threads, so it must be cheap and thread-safe.
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// Default of [`IndexOptions::max_file_bytes`]: 4 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Default of [`IndexOptions::parse_memory_bytes`]: 512 MiB.
pub const DEFAULT_PARSE_MEMORY_BYTES: u64 = 512 * 1024 * 1024;

/// Options of a full or incremental index.
#[derive(Clone)]
pub struct IndexOptions {
    /// Worker threads for parsing and resolution; `0` uses all available cores.
    pub threads: usize,
    /// Files larger than this are not parsed (generated code, data dumps): counted as skipped
    /// `too_large`. Default: [`DEFAULT_MAX_FILE_BYTES`].
    pub max_file_bytes: u64,
    /// Memory budget of the parses in flight, whatever the number of threads: a parse reserves
    /// an estimate of its syntax tree and extraction (a multiple of its file's size) and waits
    /// while the parses running would exceed this; one parse always runs. `0`: no budget.
    /// Default: [`DEFAULT_PARSE_MEMORY_BYTES`].
    pub parse_memory_bytes: u64,
    /// Optional progress callback.
    pub progress: Option<ProgressFn>,
    /// Paths the repository's configuration excludes (`.relay.toml` `exclude`): never walked,
    /// parsed or re-parsed, so no symbol or edge comes from them.
    pub exclude: Arc<relay_core::repo_config::ExcludeSet>,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            threads: 0,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            parse_memory_bytes: DEFAULT_PARSE_MEMORY_BYTES,
            progress: None,
            exclude: Arc::default(),
        }
    }
}

impl fmt::Debug for IndexOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IndexOptions")
            .field("threads", &self.threads)
            .field("max_file_bytes", &self.max_file_bytes)
            .field("parse_memory_bytes", &self.parse_memory_bytes)
            .field("progress", &self.progress.as_ref().map(|_| "<callback>"))
            .field("exclude", &self.exclude)
            .finish()
    }
}

impl IndexOptions {
    fn worker_threads(&self) -> usize {
        if self.threads > 0 {
            self.threads
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        }
    }

    fn report(&self, phase: Phase, done: usize, total: usize) {
        if let Some(progress) = &self.progress {
            progress(Progress { phase, done, total });
        }
    }
}

/// Summary figures of an index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IndexStats {
    /// Source files indexed (Go and Python).
    pub files: usize,
    pub go_files: usize,
    pub python_files: usize,
    /// Source lines in those files.
    pub lines: u64,
    pub symbols: usize,
    pub edges: usize,
    /// Edge counts by kind (`calls`, `uses`, ...).
    pub edges_by_kind: BTreeMap<String, usize>,
    /// Edge counts by confidence (`exact`, `inferred`, `dynamic`); unresolved edges are not counted here.
    pub edges_by_confidence: BTreeMap<String, usize>,
    /// Edges whose target could not be resolved, by kind.
    pub unresolved_by_kind: BTreeMap<String, usize>,
    /// `calls` edges whose target could not be resolved.
    pub unresolved_calls: usize,
    /// Files whose syntax tree contains errors (they are still indexed as far as they parse).
    pub parse_errors: usize,
    /// Files found but not indexed, by reason ([`SkipReason::as_str`]: `too_large`, `binary`,
    /// `not_utf8`, `unreadable`, `not_regular_file`).
    pub skipped: BTreeMap<String, usize>,
    /// Files indexed only down to the recursion limit (deeper nesting is unresolved).
    pub depth_limited: usize,
    /// Wall time of the index.
    #[serde(serialize_with = "serialize_duration_ms")]
    pub duration: Duration,
}

fn serialize_duration_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

fn confidence_str(c: Confidence) -> &'static str {
    match c {
        Confidence::Exact => "exact",
        Confidence::Inferred => "inferred",
        Confidence::Dynamic => "dynamic",
    }
}

/// The result of a full index.
#[derive(Debug, Clone)]
pub struct IndexOutput {
    pub graph: Graph,
    pub stats: IndexStats,
}

/// Indexes every Go and Python file under `root` (respecting `.gitignore`, skipping hidden,
/// `testdata`, `node_modules` and `__pycache__` directories) and returns the sorted graph.
pub fn index_repository(root: &Path, opts: &IndexOptions) -> Result<IndexOutput> {
    let indexer = Indexer::full_with(root, opts.clone())?;
    Ok(IndexOutput {
        graph: indexer.graph(),
        stats: indexer.stats().clone(),
    })
}

/// Resident memory of this process in MiB, and its peak (`/proc/self/status`), for the phase
/// timings in the debug log; `(0, 0)` where it cannot be read.
pub(crate) fn rss_mib() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|kb| kb.parse::<u64>().ok())
            .map_or(0, |kb| kb / 1024)
    };
    format!("{} (peak {})", field("VmRSS:"), field("VmHWM:"))
}

/// Sorts a graph deterministically: symbols by file/line/qname, edges by file/line/kind/from/to.
pub fn sort_graph(graph: &mut Graph) {
    graph.symbols.sort_by(|a, b| {
        (&a.file, a.line, &a.qname, a.kind).cmp(&(&b.file, b.line, &b.qname, b.kind))
    });
    graph.edges.sort_by(|a, b| edge_key(a).cmp(&edge_key(b)));
    graph.edges.dedup();
}

type EdgeKey<'a> = (
    &'a str,
    u32,
    EdgeKind,
    &'a str,
    Option<&'a str>,
    &'a str,
    Confidence,
);

fn edge_key(e: &Edge) -> EdgeKey<'_> {
    (
        &e.file,
        e.line,
        e.kind,
        &e.from,
        e.to.as_deref(),
        &e.to_name,
        e.confidence,
    )
}
