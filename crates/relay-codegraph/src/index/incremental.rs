//! The stateful [`Indexer`]: a full index plus incremental updates.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tree_sitter::Parser;

use super::deps;
use super::facts::{FileFacts, LangFacts, count_lines};
use super::fast_path;
use super::go_dependents;
use super::go_patch;
use super::parallel::par_map;
use super::py_names;
use super::resolve::{self, Derived, FileOutput, build_tables, resolve_files};
use super::resolve_go::GoIndex;
use super::resolve_python::PyTables;
use super::walk::{self, GoModules, SourceFile};
use super::{Error, IndexOptions, IndexStats, Phase, Result};
use crate::model::{Confidence, Edge, EdgeKind, Graph, Language, Symbol};

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
    outputs: BTreeMap<String, FileOutput>,
    /// The Go tables of the last build, patched by declaration-preserving updates (`None` until
    /// built, or after an update that could not keep them).
    go_index: Option<GoIndex>,
    /// The Python tables of the last build that included Python, reused by updates that change
    /// no module's exports (`None` until built).
    py_tables: Option<Arc<PyTables>>,
    /// Symbol and edge counts of `outputs`, kept up to date by updates.
    tally: Tally,
    stats: IndexStats,
}

/// Edge counts by `(kind, confidence)`, `None` for unresolved edges.
type TallyKey = (&'static str, Option<&'static str>);

/// Symbol and edge counts, patched per file so that an update does not recount the whole graph.
#[derive(Debug, Default)]
struct Tally {
    symbols: usize,
    edges: BTreeMap<TallyKey, usize>,
}

impl Tally {
    fn key(e: &Edge) -> TallyKey {
        (
            e.kind.as_str(),
            e.to.as_ref().map(|_| super::confidence_str(e.confidence)),
        )
    }

    fn add(&mut self, out: &FileOutput) {
        self.symbols += out.symbols.len();
        for e in &out.edges {
            *self.edges.entry(Self::key(e)).or_default() += 1;
        }
    }

    fn remove(&mut self, out: &FileOutput) {
        self.symbols = self.symbols.saturating_sub(out.symbols.len());
        for e in &out.edges {
            let key = Self::key(e);
            if let Some(n) = self.edges.get_mut(&key) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.edges.remove(&key);
                }
            }
        }
    }

    /// Fills the symbol and edge figures of `stats`.
    fn fill(&self, stats: &mut IndexStats) {
        stats.symbols = self.symbols;
        for (&(kind, confidence), &n) in &self.edges {
            stats.edges += n;
            *stats.edges_by_kind.entry(kind.to_owned()).or_default() += n;
            match confidence {
                Some(c) => *stats.edges_by_confidence.entry(c.to_owned()).or_default() += n,
                None => {
                    *stats.unresolved_by_kind.entry(kind.to_owned()).or_default() += n;
                    if kind == EdgeKind::Calls.as_str() {
                        stats.unresolved_calls += n;
                    }
                }
            }
        }
    }
}

impl Indexer {
    /// Indexes `root` from scratch with default options.
    pub fn full(root: &Path) -> Result<Indexer> {
        Indexer::full_with(root, IndexOptions::default())
    }

    /// Indexes `root` from scratch.
    pub fn full_with(root: &Path, opts: IndexOptions) -> Result<Indexer> {
        let started = Instant::now();
        let (files, modules) = walk::discover(root, &opts)?;
        let total = files.len();
        let parsed = par_map(
            &files,
            opts.worker_threads(),
            |f| parse_file(root, f, &modules),
            |done| {
                if done % 64 == 0 || done == total {
                    opts.report(Phase::Parsing, done, total);
                }
            },
        );
        let mut facts = BTreeMap::new();
        for item in parsed {
            if let Some(f) = item? {
                facts.insert(f.rel.clone(), f);
            }
        }
        let (outputs, go_index, py_tables) = {
            let tables = build_tables(&facts, &[Language::Go, Language::Python]);
            let outputs = resolve_files(&tables, None, &opts);
            let py_tables = tables.py_tables();
            (outputs, tables.into_go(), py_tables)
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
            tally,
            stats: IndexStats::default(),
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
            graph.symbols.extend(out.symbols.iter().cloned());
            graph.edges.extend(out.edges.iter().cloned());
        }
        super::sort_graph(&mut graph);
        graph
    }

    /// Re-indexes after `changed_paths` (absolute, or relative to the root) were added, modified
    /// or deleted. Paths that are not Go or Python files are ignored, except `go.mod` files, which
    /// re-parse every Go file.
    pub fn update(&mut self, changed_paths: &[PathBuf]) -> Result<GraphDelta> {
        let started = Instant::now();
        let mut to_parse: BTreeSet<String> = BTreeSet::new();
        let mut modules_changed = false;
        let mut modules_replaced = false;
        for path in changed_paths {
            let rel_path = path.strip_prefix(&self.root).unwrap_or(path);
            let Some(rel) = walk::rel_string(rel_path) else {
                continue;
            };
            if rel == "go.mod" || rel.ends_with("/go.mod") {
                modules_changed = true;
            } else if walk::language_of(&rel).is_some() {
                to_parse.insert(rel);
            }
        }
        if modules_changed {
            let (_, modules) = walk::discover(&self.root, &self.opts)?;
            if modules != self.modules {
                self.modules = modules;
                modules_replaced = true;
                to_parse.extend(
                    self.facts
                        .iter()
                        .filter(|(_, f)| matches!(f.lang, LangFacts::Go(_)))
                        .map(|(rel, _)| rel.clone()),
                );
            }
        }
        let candidates: Vec<SourceFile> = to_parse
            .iter()
            .filter_map(|rel| {
                walk::language_of(rel).map(|language| SourceFile {
                    rel: rel.clone(),
                    language,
                })
            })
            .collect();
        let root = self.root.clone();
        let modules = self.modules.clone();
        let max = self.opts.max_file_bytes;
        let parsed = par_map(
            &candidates,
            self.opts.worker_threads(),
            |f| {
                let abs = root.join(&f.rel);
                let present = !walk::is_skipped_path(&f.rel)
                    && std::fs::metadata(&abs).is_ok_and(|m| m.is_file() && m.len() <= max);
                if present {
                    parse_file(&root, f, &modules)
                } else {
                    Ok(None)
                }
            },
            |_| {},
        );
        let parsed = parsed.into_iter().collect::<Result<Vec<_>>>()?;
        tracing::debug!(
            index.parse_ms = started.elapsed().as_millis() as u64,
            "update: parsed"
        );
        if !modules_replaced && self.fast_path_applies(&candidates, &parsed) {
            return Ok(self.update_exports_kept(started, &candidates, parsed));
        }
        let mut changed_files = BTreeSet::new();
        let mut go_keys: HashSet<String> = HashSet::new();
        let mut py_keys: HashSet<String> = HashSet::new();
        // Previous facts of the changed Go files (`None` for new ones), for patching the tables.
        let mut old_go: BTreeMap<String, Option<FileFacts>> = BTreeMap::new();
        let mut old_py: BTreeMap<String, Option<FileFacts>> = BTreeMap::new();
        // Old and new package sets both count (a package may appear or vanish).
        for (file, item) in candidates.iter().zip(parsed) {
            changed_files.insert(file.rel.clone());
            let keys = match file.language {
                Language::Go => &mut go_keys,
                Language::Python => &mut py_keys,
            };
            if let Some(new) = &item {
                keys.extend(deps::provides(new, &HashSet::new()));
            }
            let previous = match item {
                Some(facts) => self.facts.insert(file.rel.clone(), facts),
                None => self.facts.remove(&file.rel),
            };
            if let Some(old) = &previous {
                keys.extend(deps::provides(old, &HashSet::new()));
            }
            match file.language {
                Language::Go => old_go.insert(file.rel.clone(), previous),
                Language::Python => old_py.insert(file.rel.clone(), previous),
            };
        }
        let mut languages: Vec<Language> = candidates.iter().map(|c| c.language).collect();
        languages.sort();
        languages.dedup();
        let mut delta = GraphDelta {
            reparsed: candidates.len(),
            ..GraphDelta::default()
        };
        if languages.is_empty() {
            delta.duration = started.elapsed();
            return Ok(delta);
        }
        let has_go = languages.contains(&Language::Go);
        let has_py = languages.contains(&Language::Python);
        let of_language = |facts: &BTreeMap<String, FileFacts>, rel: &String, lang: Language| {
            facts.get(rel).is_some_and(|f| resolve::language(f) == lang)
        };
        // Go: patch the kept tables where possible; the files to re-resolve are then those
        // that can see a changed name (see `go_patch`).
        let mut go_targets: Option<BTreeSet<String>> = None;
        // `implements`/`impls` of the tables replaced by a rebuild.
        let mut old_derived: Option<Derived> = None;
        if has_go {
            let patched = match self.go_index.as_mut() {
                Some(go) if !modules_replaced => go_patch::patch(go, &self.facts, &old_go),
                _ => None,
            };
            match patched {
                Some(p) => {
                    let mut targets: BTreeSet<String> = old_go
                        .keys()
                        .chain(&p.files)
                        .filter(|rel| of_language(&self.facts, rel, Language::Go))
                        .cloned()
                        .collect();
                    tracing::debug!(
                        index.at_ms = started.elapsed().as_millis() as u64,
                        "update: go tables patched"
                    );
                    if let Some(go) = &self.go_index {
                        targets.extend(go_dependents::dependents(
                            go,
                            &self.facts,
                            &p,
                            self.opts.worker_threads(),
                        ));
                    }
                    tracing::debug!(
                        index.at_ms = started.elapsed().as_millis() as u64,
                        index.names = ?p.names,
                        "update: go dependents found"
                    );
                    go_targets = Some(targets);
                }
                None => {
                    if let Some(mut old) = self.go_index.take() {
                        old_derived = Some(Derived {
                            implements: std::mem::take(&mut old.implements),
                            impls: std::mem::take(&mut old.impls),
                        });
                        // Freeing millions of table entries takes longer than resolving the
                        // affected files, so it is done off the update's path.
                        drop_in_background(old);
                    }
                }
            }
        }
        let mut build: Vec<Language> = Vec::new();
        if has_go && go_targets.is_none() {
            build.push(Language::Go);
        }
        if has_py {
            build.push(Language::Python);
        }
        // Tables are rebuilt from all facts of the languages involved; only the files that can
        // see a changed package/module are re-resolved (the other languages keep their results).
        // The Python modules to re-resolve by name depend on the facts alone: found while the
        // tables are built.
        let facts = &self.facts;
        let (tables, py_found) = std::thread::scope(|s| {
            let old_py = &old_py;
            let found = has_py.then(|| {
                std::thread::Builder::new()
                    .stack_size(super::parallel::WORKER_STACK)
                    .spawn_scoped(s, move || python_dependents(facts, old_py))
            });
            let tables = build_tables(facts, &build);
            let found = match found {
                Some(Ok(handle)) => handle.join().unwrap_or(None),
                Some(Err(_)) => python_dependents(facts, old_py),
                None => None,
            };
            (tables, found)
        });
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: tables built"
        );
        let mut targets: BTreeSet<String> = BTreeSet::new();
        for lang in &languages {
            if *lang == Language::Go
                && let Some(go) = &go_targets
            {
                targets.extend(go.iter().cloned());
                continue;
            }
            if *lang == Language::Python
                && let Some(found) = &py_found
            {
                targets.extend(found.iter().cloned());
                continue;
            }
            let (files, keys) = match lang {
                Language::Go => (&old_go.keys().cloned().collect(), go_keys.clone()),
                Language::Python => (&changed_files, py_keys.clone()),
            };
            let mut found = deps::affected(&self.facts, files, keys);
            // Names may coincide across languages (a Go package `x`, a Python module `x`).
            found.retain(|rel| of_language(&self.facts, rel, *lang));
            targets.extend(found);
        }
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: affected"
        );
        if has_go && go_targets.is_none() {
            match &old_derived {
                Some(old) => add_derived_changes(old, &tables.go, &self.outputs, &mut targets),
                // No previous tables to compare with: every Go file.
                None => targets.extend(
                    self.facts
                        .iter()
                        .filter(|(_, f)| matches!(f.lang, LangFacts::Go(_)))
                        .map(|(rel, _)| rel.clone()),
                ),
            }
        }
        delta.resolved = targets.len();
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: derived"
        );
        let mut outputs = resolve_files(&tables, Some(&targets), &self.opts);
        if has_py && let Some(old) = self.py_tables.replace(tables.py_tables()) {
            drop_in_background(old);
        }
        if go_targets.is_some() {
            let go_files: BTreeSet<String> = targets
                .iter()
                .filter(|rel| of_language(&self.facts, rel, Language::Go))
                .cloned()
                .collect();
            self.resolve_go_kept(&go_files, &mut outputs);
        }
        if has_go && go_targets.is_none() {
            self.go_index = Some(tables.into_go());
        } else {
            drop(tables);
        }
        let replaced: BTreeSet<&String> = targets.iter().chain(&changed_files).collect();
        self.apply_outputs(replaced, &mut outputs, &mut delta);
        tracing::debug!(
            index.at_ms = started.elapsed().as_millis() as u64,
            "update: applied"
        );
        let full_duration = self.stats.duration;
        self.recount(full_duration);
        delta.duration = started.elapsed();
        Ok(delta)
    }

    /// Whether every changed file existed before, still exists and offers other files the same
    /// things as before: a Go file declares the same things up to lines
    /// ([`fast_path::same_go_decls`], with the Go tables kept), a Python module has the same
    /// facts up to its own references, lines and docs ([`fast_path::same_py_exports`]).
    fn fast_path_applies(&self, candidates: &[SourceFile], parsed: &[Option<FileFacts>]) -> bool {
        !candidates.is_empty()
            && candidates.iter().zip(parsed).all(|(file, new)| {
                let old = self.facts.get(&file.rel).map(|f| &f.lang);
                let new = new.as_ref().map(|f| &f.lang);
                match (old, new) {
                    (Some(LangFacts::Go(old)), Some(LangFacts::Go(new))) => {
                        self.go_index.is_some() && fast_path::same_go_decls(old, new)
                    }
                    (Some(LangFacts::Python(old)), Some(LangFacts::Python(new))) => {
                        fast_path::same_py_exports(old, new)
                    }
                    _ => false,
                }
            })
    }

    /// The update when [`Self::fast_path_applies`]: patch the lines the changed Go files
    /// contribute to the kept Go tables, rebuild the Python tables if a Python module changed,
    /// and re-resolve only the changed files.
    fn update_exports_kept(
        &mut self,
        started: Instant,
        candidates: &[SourceFile],
        parsed: Vec<Option<FileFacts>>,
    ) -> GraphDelta {
        let mut delta = GraphDelta {
            reparsed: candidates.len(),
            ..GraphDelta::default()
        };
        let mut changed_files = BTreeSet::new();
        for facts in parsed.into_iter().flatten() {
            changed_files.insert(facts.rel.clone());
            self.facts.insert(facts.rel.clone(), facts);
        }
        let mut go_files = BTreeSet::new();
        let mut py_files = BTreeSet::new();
        for rel in &changed_files {
            match self.facts.get(rel).map(|f| &f.lang) {
                Some(LangFacts::Go(_)) => go_files.insert(rel.clone()),
                Some(LangFacts::Python(_)) => py_files.insert(rel.clone()),
                None => false,
            };
        }
        let mut outputs: BTreeMap<String, FileOutput> = BTreeMap::new();
        if !py_files.is_empty() {
            let tables = match &self.py_tables {
                Some(kept) => resolve::python_tables_kept(&self.facts, Arc::clone(kept)),
                None => build_tables(&self.facts, &[Language::Python]),
            };
            outputs.extend(resolve_files(&tables, Some(&py_files), &self.opts));
            if self.py_tables.is_none() {
                self.py_tables = Some(tables.py_tables());
            }
        }
        self.resolve_go_decls_kept(&go_files, &mut outputs);
        delta.resolved = outputs.len();
        self.apply_outputs(changed_files.iter().collect(), &mut outputs, &mut delta);
        let full_duration = self.stats.duration;
        self.recount(full_duration);
        delta.duration = started.elapsed();
        delta
    }

    /// Patches the kept Go tables for `files` (whose declarations are unchanged up to lines)
    /// and resolves them into `outputs`.
    fn resolve_go_decls_kept(
        &mut self,
        files: &BTreeSet<String>,
        outputs: &mut BTreeMap<String, FileOutput>,
    ) {
        if files.is_empty() {
            return;
        }
        let Some(go) = self.go_index.as_mut() else {
            return;
        };
        for rel in files {
            if let Some(LangFacts::Go(g)) = self.facts.get(rel).map(|f| &f.lang) {
                fast_path::patch_lines(go, rel, g);
            }
        }
        self.resolve_go_kept(files, outputs);
    }

    /// Resolves the Go `files` against the kept Go tables into `outputs`.
    fn resolve_go_kept(
        &self,
        files: &BTreeSet<String>,
        outputs: &mut BTreeMap<String, FileOutput>,
    ) {
        let Some(go) = self.go_index.as_ref() else {
            return;
        };
        if files.is_empty() {
            return;
        }
        let files: Vec<&FileFacts> = files.iter().filter_map(|rel| self.facts.get(rel)).collect();
        let resolved = par_map(
            &files,
            self.opts.worker_threads().min(files.len()),
            |f| resolve::resolve_go_file(go, f),
            |_| {},
        );
        outputs.extend(
            files
                .iter()
                .zip(resolved)
                .filter_map(|(f, out)| out.map(|out| (f.rel.clone(), out))),
        );
    }

    /// Replaces the outputs of `replaced` by `outputs` and records the files that changed.
    fn apply_outputs(
        &mut self,
        replaced: BTreeSet<&String>,
        outputs: &mut BTreeMap<String, FileOutput>,
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
                    delta.symbols.extend(new.symbols.iter().cloned());
                    delta.edges.extend(new.edges.iter().cloned());
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

    fn recount(&mut self, duration: Duration) {
        let mut stats = IndexStats {
            duration,
            ..IndexStats::default()
        };
        for f in self.facts.values() {
            stats.files += 1;
            stats.lines += u64::from(f.lines);
            match f.lang {
                LangFacts::Go(_) => stats.go_files += 1,
                LangFacts::Python(_) => stats.python_files += 1,
            }
            if f.parse_error {
                stats.parse_errors += 1;
            }
        }
        self.tally.fill(&mut stats);
        self.stats = stats;
    }
}

/// Adds the Go files whose derived edges change: types whose `implements` edges differ, and
/// call sites of interface methods whose implementations differ (their `dynamic` edges).
fn add_derived_changes(
    old: &Derived,
    new: &GoIndex,
    outputs: &BTreeMap<String, FileOutput>,
    targets: &mut BTreeSet<String>,
) {
    for file in old.implements.keys().chain(new.implements.keys()) {
        if old.implements.get(file) != new.implements.get(file) {
            targets.insert(file.clone());
        }
    }
    let changed: HashSet<&String> = old
        .impls
        .keys()
        .chain(new.impls.keys())
        .filter(|m| old.impls.get(*m) != new.impls.get(*m))
        .collect();
    if changed.is_empty() {
        return;
    }
    for (rel, out) in outputs {
        if targets.contains(rel) || !rel.ends_with(".go") {
            continue;
        }
        let calls_changed = out.edges.iter().any(|e| {
            e.kind == EdgeKind::Calls
                && e.confidence != Confidence::Dynamic
                && e.to.as_ref().is_some_and(|t| changed.contains(t))
        });
        if calls_changed {
            targets.insert(rel.clone());
        }
    }
}

/// The Python modules to re-resolve after the modules in `old` (previous facts) changed,
/// by changed names ([`py_names`]); `None` if that does not apply (a module added or
/// deleted, or changed in more than names).
fn python_dependents(
    facts: &BTreeMap<String, FileFacts>,
    old: &BTreeMap<String, Option<FileFacts>>,
) -> Option<BTreeSet<String>> {
    let mut names = BTreeSet::new();
    let mut qnames = BTreeSet::new();
    for (rel, before) in old {
        let (Some(LangFacts::Python(a)), Some(LangFacts::Python(b))) = (
            before.as_ref().map(|f| &f.lang),
            facts.get(rel).map(|f| &f.lang),
        ) else {
            return None;
        };
        names.extend(py_names::changed_names(a, b)?);
        qnames.extend(py_names::changed_qnames(a, b));
    }
    let names = py_names::close(facts, names)?;
    let mut out: BTreeSet<String> = old.keys().cloned().collect();
    out.extend(py_names::possible_owners(facts, &qnames));
    if !names.is_empty() {
        for (rel, f) in facts {
            if let LangFacts::Python(p) = &f.lang
                && py_names::mentions(p, &names)
            {
                out.insert(rel.clone());
            }
        }
    }
    tracing::debug!(
        index.names = ?names,
        index.files = out.len(),
        "update: python dependents by name"
    );
    Some(out)
}

/// Drops `value` on a short-lived thread. If no thread can be started, the closure, and the
/// value with it, is dropped here.
fn drop_in_background<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("codegraph-drop".to_owned())
        .spawn(move || drop(value));
}

thread_local! {
    static GO_PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
    static PY_PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses one file into facts (`None` if it cannot be read as a regular file any more).
fn parse_file(root: &Path, file: &SourceFile, modules: &GoModules) -> Result<Option<FileFacts>> {
    let abs = root.join(&file.rel);
    let src = match std::fs::read(&abs) {
        Ok(src) => src,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::Io { path: abs, source }),
    };
    let lines = count_lines(&src);
    let (parser_cell, language) = match file.language {
        Language::Go => (
            &GO_PARSER,
            tree_sitter::Language::from(tree_sitter_go::LANGUAGE),
        ),
        Language::Python => (
            &PY_PARSER,
            tree_sitter::Language::from(tree_sitter_python::LANGUAGE),
        ),
    };
    let tree = parser_cell.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            // The grammars are ABI-compatible with the runtime (checked by the test suite).
            parser.set_language(&language).ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(&src, None)
    });
    let Some(tree) = tree else {
        return Ok(None);
    };
    let root_node = tree.root_node();
    let lang = match file.language {
        Language::Go => {
            let dir = file.rel.rsplit_once('/').map_or("", |(d, _)| d);
            let pkg_path = modules.package_path(dir);
            let stem = file
                .rel
                .rsplit('/')
                .next()
                .and_then(|name| name.strip_suffix(".go"));
            LangFacts::Go(super::go::extract(
                root_node,
                &src,
                pkg_path.as_deref(),
                stem,
            ))
        }
        Language::Python => {
            let (module, is_package) = python_module_name(&file.rel);
            LangFacts::Python(super::python::extract(root_node, &src, module, is_package))
        }
    };
    Ok(Some(FileFacts {
        rel: file.rel.clone(),
        lines,
        parse_error: root_node.has_error(),
        lang,
    }))
}

/// Dotted module name of a Python file and whether it is a package (`__init__.py`).
pub(crate) fn python_module_name(rel: &str) -> (String, bool) {
    let stem = rel.strip_suffix(".py").unwrap_or(rel);
    if let Some(pkg) = stem.strip_suffix("/__init__") {
        return (pkg.replace('/', "."), true);
    }
    if stem == "__init__" {
        return ("__init__".to_owned(), true);
    }
    (stem.replace('/', "."), false)
}
