//! [`Indexer::update`]: which files changed and their new facts, then one of two paths — the
//! fast path (`kept.rs`) when every changed file offers other files what it offered before,
//! else the closure path (`closure.rs`).

use std::collections::{BTreeSet, HashSet};
use std::path::PathBuf;
use std::time::Instant;

use super::parse::{Parsed, parse_file};
use crate::index::budget::ParseBudget;
use crate::index::facts::FileFacts;
use crate::index::frontend::FRONTENDS;
use crate::index::parallel::par_map;
use crate::index::walk::{self, SourceFile};
use crate::index::{GraphDelta, Indexer, Result};
use crate::model::Language;

/// The files an update re-parses.
pub(super) struct Changes {
    /// The changed source files (and, after a configuration change, every file of the
    /// languages it concerns), sorted by path.
    pub candidates: Vec<SourceFile>,
    /// Whether a configuration file changed what the files of a language parse to (a
    /// `go.mod` that moved import paths): the kept tables of that language no longer apply.
    pub modules_replaced: bool,
}

impl Indexer {
    /// Re-indexes after `changed_paths` (absolute, or relative to the root) were added, modified
    /// or deleted. Paths that no frontend claims are ignored, except the configuration files a
    /// frontend names (`Frontend::reparses_all`: `go.mod`), which
    /// re-parse every file of that language when the repository's modules changed.
    pub fn update(&mut self, changed_paths: &[PathBuf]) -> Result<GraphDelta> {
        let started = Instant::now();
        let changes = self.collect_changes(changed_paths)?;
        let parsed = self.reparse(&changes.candidates);
        tracing::debug!(
            index.parse_ms = started.elapsed().as_millis() as u64,
            "update: parsed"
        );
        if !changes.modules_replaced && self.fast_path_applies(&changes.candidates, &parsed) {
            return Ok(self.update_exports_kept(started, &changes.candidates, parsed));
        }
        Ok(self.update_closure(started, &changes, parsed))
    }

    /// Phase 1: the source files to re-parse, from the changed paths (a configuration file
    /// that changed the repository's modules adds every file of its language).
    fn collect_changes(&mut self, changed_paths: &[PathBuf]) -> Result<Changes> {
        let mut to_parse: BTreeSet<String> = BTreeSet::new();
        let mut config_changed: HashSet<Language> = HashSet::new();
        let mut modules_replaced = false;
        for path in changed_paths {
            let rel_path = path.strip_prefix(&self.root).unwrap_or(path);
            let Some(rel) = walk::rel_string(rel_path) else {
                continue;
            };
            if let Some(frontend) = FRONTENDS.iter().find(|f| f.reparses_all(&rel)) {
                config_changed.insert(frontend.language());
            } else if walk::language_of(&rel).is_some() {
                to_parse.insert(rel);
            }
        }
        if !config_changed.is_empty() {
            let modules = walk::discover(&self.root, &self.opts)?.modules;
            if modules != self.modules {
                self.modules = modules;
                modules_replaced = true;
                to_parse.extend(
                    self.facts
                        .iter()
                        .filter(|(_, f)| config_changed.contains(&f.lang.language()))
                        .map(|(rel, _)| rel.clone()),
                );
            }
        }
        let candidates = to_parse
            .iter()
            .filter_map(|rel| {
                walk::language_of(rel).map(|language| SourceFile {
                    rel: rel.clone(),
                    language,
                })
            })
            .collect();
        Ok(Changes {
            candidates,
            modules_replaced,
        })
    }

    /// Phase 2: the new facts of `candidates`, in parallel (`None`: deleted, moved under a
    /// skipped directory, or skipped, which is recorded).
    fn reparse(&mut self, candidates: &[SourceFile]) -> Vec<Option<FileFacts>> {
        let root = self.root.clone();
        let modules = self.modules.clone();
        let max = self.opts.max_file_bytes;
        let exclude = self.opts.exclude.clone();
        let budget = ParseBudget::new(self.opts.parse_memory_bytes);
        let parsed = par_map(
            candidates,
            self.opts.worker_threads(),
            |f| {
                if walk::is_skipped_path(&f.rel) || exclude.is_excluded(&f.rel, false) {
                    Parsed::Gone
                } else {
                    parse_file(&root, f, &modules, max, &budget)
                }
            },
            |_| {},
        );
        candidates
            .iter()
            .zip(parsed)
            .map(|(file, item)| {
                match &item {
                    Parsed::Skipped(reason) => {
                        self.skipped.insert(file.rel.clone(), *reason);
                    }
                    Parsed::Facts(_) | Parsed::Gone => {
                        self.skipped.remove(&file.rel);
                    }
                }
                item.into_facts()
            })
            .collect()
    }
}
