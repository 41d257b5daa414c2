//! The stateful [`Indexer`]: a full index plus incremental updates.
//!
//! - `mod.rs`: the [`Indexer`] and the full index;
//! - `update`: [`Indexer::update`], which files changed and their new facts, then one of:
//! - `kept`: the update path when the changed files offer other files the same declarations;
//! - `closure`: the general update path (tables rebuilt or patched, dependents re-resolved);
//! - `dependents`: which other files an update must re-resolve;
//! - `tally`: symbol and edge counts kept up to date per file;
//! - `parse`: one file to facts, with a parser per thread.

#[cfg(test)]
mod budget_tests;
mod closure;
mod dependents;
#[cfg(test)]
mod flow_tests;
mod kept;
mod parse;
mod tally;
mod update;

use parse::{Parsed, parse_file};
use tally::Tally;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::budget::ParseBudget;
use super::facts::FileFacts;
use super::frontend;
use super::go::GoIndex;
use super::go::modules::GoModules;
use super::parallel::par_map;
use super::python::PyTables;
use super::resolve::{StoredOutput, build_tables, resolve_files};
use super::source::SkipReason;
use super::walk;
use super::{IndexOptions, IndexStats, Phase, Result};
use crate::model::{Edge, Graph, Language, Symbol};

/// The changes of one [`Indexer::update`], for stores to apply: for every path in `files`, delete
/// all symbols and edges whose `file` is that path, then insert `symbols` and `edges` (which all
/// belong to paths in `files`). Deleted files appear in `files` with nothing to insert.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GraphDelta {
    /// Repository-relative paths whose symbols and edges are replaced (sorted).
    pub files: Vec<String>,
    pub symbols: Vec<Symbol>,
    pub edges: Vec<Edge>,
    /// Files re-parsed by this update.
    pub reparsed: usize,
    /// Files re-resolved by this update (the changed files and those that can see them).
    pub resolved: usize,
    /// Wall time of the update.
    pub duration: Duration,
}

impl GraphDelta {
    /// Whether the update changed nothing.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// A repository index that can be updated incrementally.
///
/// It keeps the per-file facts and the resolution tables, so an update re-parses only the
/// changed files, patches the tables (Go: per package; Python: reused when no module's exports
/// changed, else rebuilt), and re-resolves the files whose lookups can give other results (those
/// that can see a changed name); only files whose symbols or edges changed are reported in the
/// [`GraphDelta`].
#[derive(Debug)]
pub struct Indexer {
    root: PathBuf,
    opts: IndexOptions,
    modules: GoModules,
    facts: BTreeMap<String, FileFacts>,
    outputs: BTreeMap<String, StoredOutput>,
    /// The Go tables of the last build, patched by declaration-preserving updates (`None` until
    /// built, or after an update that could not keep them).
    go_index: Option<GoIndex>,
    /// The Python tables of the last build that included Python, reused by updates that change
    /// no module's exports (`None` until built).
    py_tables: Option<Arc<PyTables>>,
    /// The Python value-flow table of the last resolution (compared after an update: when it
    /// changes, every Python module is re-resolved).
    py_flow: Option<Arc<super::python::PyFlow>>,
    /// How the last value-flow fixpoint went: an update replays it, re-evaluating only the
    /// modules its edit can affect.
    py_flow_state: Option<Arc<super::python::FlowState>>,
    /// Files named like source that are not indexed, with why (kept up to date by updates).
    skipped: BTreeMap<String, SkipReason>,
    /// Symbol and edge counts of `outputs`, kept up to date by updates.
    tally: Tally,
    stats: IndexStats,
    /// The most parses the full index ran at once (the parse budget's test hook).
    #[cfg(test)]
    parse_peak: usize,
}

impl Indexer {
    /// Indexes `root` from scratch with default options.
    pub fn full(root: &Path) -> Result<Indexer> {
        Indexer::full_with(root, IndexOptions::default())
    }

    /// Indexes `root` from scratch.
    pub fn full_with(root: &Path, opts: IndexOptions) -> Result<Indexer> {
        let started = Instant::now();
        let walk::Discovered {
            files,
            modules,
            skipped,
        } = walk::discover(root, &opts)?;
        let mut skipped: BTreeMap<String, SkipReason> = skipped.into_iter().collect();
        let total = files.len();
        let budget = ParseBudget::new(opts.parse_memory_bytes);
        let parsed = par_map(
            &files,
            opts.worker_threads(),
            |f| parse_file(root, f, &modules, opts.max_file_bytes, &budget),
            |done| {
                if done % 64 == 0 || done == total {
                    opts.report(Phase::Parsing, done, total);
                }
            },
        );
        tracing::debug!(
            index.rss_mib = super::rss_mib(),
            index.parse_ms = started.elapsed().as_millis() as u64,
            "parsed files"
        );
        let mut facts = BTreeMap::new();
        for (file, item) in files.iter().zip(parsed) {
            match item {
                Parsed::Facts(f) => {
                    facts.insert(f.rel.clone(), *f);
                }
                Parsed::Skipped(reason) => {
                    skipped.insert(file.rel.clone(), reason);
                }
                Parsed::Gone => {}
            }
        }
        let (outputs, go_index, py_tables, py_flow, py_flow_state) = {
            let tables = build_tables(&facts, &Language::ALL);
            tracing::debug!(index.rss_mib = super::rss_mib(), "built tables");
            let outputs = resolve_files(&tables, None, &opts);
            tracing::debug!(index.rss_mib = super::rss_mib(), "resolved");
            let py_tables = tables.py_tables();
            let py_flow = tables.py_flow();
            let py_flow_state = tables.py_flow_state();
            (outputs, tables.into_go(), py_tables, py_flow, py_flow_state)
        };
        let mut tally = Tally::default();
        for out in outputs.values() {
            tally.add(out);
        }
        let mut indexer = Indexer {
            root: root.to_path_buf(),
            opts,
            modules,
            facts,
            outputs,
            go_index: Some(go_index),
            py_tables: Some(py_tables),
            py_flow: Some(py_flow),
            py_flow_state: Some(py_flow_state),
            skipped,
            tally,
            stats: IndexStats::default(),
            #[cfg(test)]
            parse_peak: budget.peak_running(),
        };
        indexer.recount(started.elapsed());
        tracing::debug!(
            index.files = indexer.stats.files,
            index.symbols = indexer.stats.symbols,
            index.edges = indexer.stats.edges,
            index.ms = indexer.stats.duration.as_millis() as u64,
            "indexed repository"
        );
        Ok(indexer)
    }

    /// The repository root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Points the indexer at another directory holding the same repository, e.g. the snapshot of
    /// a newer commit. Nothing is re-read: follow with [`Indexer::update`] for the files that
    /// differ between the two trees (all facts are keyed by repository-relative path).
    pub fn set_root(&mut self, root: &Path) {
        self.root = root.to_path_buf();
    }

    /// Figures of the current index (`duration` is that of the last full index).
    pub fn stats(&self) -> &IndexStats {
        &self.stats
    }

    /// The whole graph, sorted deterministically.
    pub fn graph(&self) -> Graph {
        let mut graph = Graph::default();
        for out in self.outputs.values() {
            graph.symbols.extend(out.graph.symbols());
            graph.edges.extend(out.graph.edges());
        }
        super::sort_graph(&mut graph);
        graph
    }

    /// Replaces the outputs of `replaced` by `outputs` and records the files that changed.
    fn apply_outputs(
        &mut self,
        replaced: BTreeSet<&String>,
        outputs: &mut BTreeMap<String, StoredOutput>,
        delta: &mut GraphDelta,
    ) {
        for rel in replaced {
            let new = outputs.remove(rel);
            if self.outputs.get(rel) == new.as_ref() {
                continue;
            }
            delta.files.push(rel.clone());
            match new {
                Some(new) => {
                    delta.symbols.extend(new.graph.symbols());
                    delta.edges.extend(new.graph.edges());
                    self.tally.add(&new);
                    if let Some(old) = self.outputs.insert(rel.clone(), new) {
                        self.tally.remove(&old);
                    }
                }
                None => {
                    if let Some(old) = self.outputs.remove(rel) {
                        self.tally.remove(&old);
                    }
                }
            }
        }
    }

    /// Whether `rel` is indexed as a file of `language`.
    fn is_of(&self, rel: &str, language: Language) -> bool {
        self.facts
            .get(rel)
            .is_some_and(|f| f.lang.language() == language)
    }

    /// The indexed files of `language`, in path order.
    fn files_of(&self, language: Language) -> Vec<String> {
        self.facts
            .iter()
            .filter(|(_, f)| f.lang.language() == language)
            .map(|(rel, _)| rel.clone())
            .collect()
    }

    fn recount(&mut self, duration: Duration) {
        let mut stats = IndexStats {
            duration,
            ..IndexStats::default()
        };
        for f in self.facts.values() {
            stats.files += 1;
            stats.lines += u64::from(f.lines);
            frontend::of(f).count_file(&mut stats);
            if f.parse_error {
                stats.parse_errors += 1;
            }
            if f.depth_limited {
                stats.depth_limited += 1;
            }
        }
        for reason in self.skipped.values() {
            *stats.skipped.entry(reason.as_str().to_owned()).or_default() += 1;
        }
        self.tally.fill(&mut stats);
        self.stats = stats;
    }
}
