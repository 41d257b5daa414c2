//! Resolution over all files: builds the global tables, then resolves each file in parallel.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use super::facts::{FileFacts, LangFacts};
use super::frontend;
pub(crate) use super::frontend::{FileOutput, Tables};
use super::go::{self as resolve_go, GoIndex, Implementation};
use super::packed::PackedGraph;
use super::parallel::par_map;
use super::python::{FlowState, FlowUpdate, PyIndex, PyTables};
use super::{IndexOptions, Phase};
use crate::model::Language;

/// Go's global (derived) results, compared between updates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Derived {
    /// file → `implements` edges of the types declared there.
    pub implements: HashMap<String, Vec<Implementation>>,
    /// `<interface>.<method>` → implementing methods (targets of `dynamic` edges).
    pub impls: HashMap<String, Vec<resolve_go::Target>>,
    /// What flows to the dynamic call sites.
    pub flow: resolve_go::GoFlow,
}

impl Tables<'_> {
    /// The Go tables, kept by the indexer for updates that do not change any declaration.
    pub(crate) fn into_go(self) -> GoIndex {
        self.go
    }

    /// The Python tables, kept by the indexer for updates that do not change any module's
    /// exports.
    pub(crate) fn py_tables(&self) -> Arc<PyTables> {
        self.py.tables()
    }

    /// The Python value-flow table computed with these tables.
    pub(crate) fn py_flow(&self) -> Arc<super::python::PyFlow> {
        self.py.flow()
    }

    /// The Python files (positions) whose table entries differ from those of the tables the
    /// update was given (`None`: not compared, or the modules differ).
    pub(crate) fn py_changed_table_files(&self) -> Option<&[usize]> {
        self.py.changed_table_files()
    }

    /// How the Python value-flow fixpoint went, for the next update to replay.
    pub(crate) fn py_flow_state(&self) -> Arc<FlowState> {
        self.py.flow_state()
    }
}

/// Builds the resolution tables from the facts of the files of the given `languages` (the
/// languages do not refer to each other, so an update touching only Go files keeps the Python
/// results).
pub(crate) fn build_tables<'a>(
    files: &'a BTreeMap<String, FileFacts>,
    languages: &[Language],
) -> Tables<'a> {
    build_tables_after(files, languages, None)
}

/// [`build_tables`] after an update: the Python value flow is replayed from `py_update` when
/// that applies.
pub(crate) fn build_tables_after<'a>(
    files: &'a BTreeMap<String, FileFacts>,
    languages: &[Language],
    py_update: Option<&FlowUpdate>,
) -> Tables<'a> {
    let all: Vec<&FileFacts> = files
        .values()
        .filter(|f| languages.contains(&f.lang.language()))
        .collect();
    let started = std::time::Instant::now();
    let (go, py) = std::thread::scope(|s| {
        let go = std::thread::Builder::new()
            .stack_size(super::INDEX_STACK_BYTES)
            .spawn_scoped(s, || GoIndex::build(&all));
        let py = PyIndex::build(&all, py_update);
        let go = match go {
            Ok(handle) => handle.join().unwrap_or_default(),
            Err(_) => GoIndex::build(&all),
        };
        (go, py)
    });
    tracing::debug!(
        index.tables_ms = started.elapsed().as_millis() as u64,
        "built resolution tables"
    );
    Tables { go, py, files: all }
}

/// Tables for resolving Python files against kept Python tables ([`PyIndex::kept`]).
pub(crate) fn python_tables_kept<'a>(
    files: &'a BTreeMap<String, FileFacts>,
    tables: Arc<PyTables>,
    py_update: Option<&FlowUpdate>,
) -> Tables<'a> {
    let all: Vec<&FileFacts> = files
        .values()
        .filter(|f| f.lang.language() == Language::Python)
        .collect();
    Tables {
        go: GoIndex::default(),
        py: PyIndex::kept(&all, tables, py_update),
        files: all,
    }
}

/// Resolves the files of `tables` (only those in `only`, if given), keyed by path.
pub(crate) fn resolve_files(
    tables: &Tables<'_>,
    only: Option<&BTreeSet<String>>,
    opts: &IndexOptions,
) -> BTreeMap<String, StoredOutput> {
    let started = std::time::Instant::now();
    let selected: Vec<&FileFacts> = tables
        .files
        .iter()
        .filter(|f| only.is_none_or(|o| o.contains(&f.rel)))
        .copied()
        .collect();
    let total = selected.len();
    let outputs = par_map(
        &selected,
        opts.worker_threads(),
        |facts| resolve_one(tables, facts),
        |done| {
            if done % 64 == 0 || done == total {
                opts.report(Phase::Resolving, done, total);
            }
        },
    );
    tracing::debug!(
        index.resolve_ms = started.elapsed().as_millis() as u64,
        index.resolved_files = total,
        "resolved files"
    );
    selected
        .iter()
        .map(|f| f.rel.clone())
        .zip(outputs)
        .collect()
}

fn resolve_one(tables: &Tables<'_>, facts: &FileFacts) -> StoredOutput {
    let mut out = FileOutput::default();
    frontend::of(facts).resolve(tables, facts, &mut out);
    finish(out)
}

/// Resolves one Go file against kept Go tables (`None` for a file of another language).
pub(crate) fn resolve_go_file(go: &GoIndex, facts: &FileFacts) -> Option<StoredOutput> {
    let LangFacts::Go(g) = &facts.lang else {
        return None;
    };
    let mut out = FileOutput::default();
    resolve_go::resolve_into(go, facts, g, &mut out);
    Some(finish(out))
}

/// Sorts a file's output deterministically and packs it to be kept.
fn finish(out: FileOutput) -> StoredOutput {
    let mut graph = crate::model::Graph {
        symbols: out.symbols,
        edges: out.edges,
    };
    super::sort_graph(&mut graph);
    StoredOutput {
        graph: PackedGraph::pack(&graph.symbols, &graph.edges),
        py_flow_reads: out.py_flow_reads,
        py_files_read: out.py_files_read,
    }
}

/// One file's resolution as the indexer keeps it: its symbols and edges packed
/// ([`PackedGraph`]), with what the resolution read (Python).
#[derive(Debug, Clone, Default)]
pub(crate) struct StoredOutput {
    pub graph: PackedGraph,
    /// Python: the value-flow entries the resolution read ([`FileOutput::py_flow_reads`]).
    pub py_flow_reads: Option<Arc<super::python::ReadSet>>,
    /// Python: the files whose facts the resolution read ([`FileOutput::py_files_read`]).
    pub py_files_read: Option<Arc<super::python::FilesRead>>,
}

/// Outputs are equal when their symbols and edges are: what a resolution read is bookkeeping.
impl PartialEq for StoredOutput {
    fn eq(&self, other: &Self) -> bool {
        self.graph == other.graph
    }
}

impl Eq for StoredOutput {}
