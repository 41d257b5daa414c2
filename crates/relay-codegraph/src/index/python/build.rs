//! Building the Python tables from every file, in order: declare (modules, import names,
//! namespaces, definitions, owners), the class hierarchies (MRO, whose bases are evaluated
//! without value flow), then the value flow (solved, or replayed from the previous update's).

use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::eval::Eval;
use super::flow_update::{FlowUpdate, replay};
use super::tables::{PyFlow, PyIndex, PyTables, Val};
use super::{DefKind, PExpr, PyFile};
use crate::index::facts::{FileFacts, LangFacts};

impl<'a> PyIndex<'a> {
    /// Builds the tables and the value flow of the Python files of `all` (the flow replayed
    /// from the previous one when `update` is given and applies).
    pub(crate) fn build(all: &[&'a FileFacts], update: Option<&FlowUpdate>) -> PyIndex<'a> {
        let (files, paths) = python_files(all);
        let mut index = PyTables::default();
        let packages: HashSet<&str> = files
            .iter()
            .filter(|f| f.is_package)
            .map(|f| f.module.as_str())
            .collect();
        for (i, f) in files.iter().enumerate() {
            index.modules.entry(f.module.clone()).or_insert(i);
            index.owners.entry(f.module.clone()).or_insert(i);
            // Names importable from source roots (directories that are not packages).
            let parts: Vec<&str> = f.module.split('.').collect();
            for k in 1..parts.len() {
                let dir = parts[..k].join(".");
                if !packages.contains(dir.as_str()) {
                    index
                        .import_names
                        .entry(parts[k..].join("."))
                        .or_default()
                        .push(i);
                }
            }
            let mut prefix = String::new();
            for part in &parts[..parts.len().saturating_sub(1)] {
                if !prefix.is_empty() {
                    prefix.push('.');
                }
                prefix.push_str(part);
                index.prefixes.insert(prefix.clone());
            }
            for (d, def) in f.defs.iter().enumerate() {
                index.owners.entry(def.qname.clone()).or_insert(i);
                match def.kind {
                    DefKind::Class => {
                        index.classes.entry(def.qname.clone()).or_insert((i, d));
                    }
                    _ => {
                        index.funcs.entry(def.qname.clone()).or_insert((i, d));
                    }
                }
            }
            for v in &f.vars {
                let q = format!("{}.{}", f.module, v.name);
                index.owners.entry(q.clone()).or_insert(i);
                index.vars.insert(q);
            }
        }
        let mut index = PyIndex::with_tables(files, paths, Arc::new(index));
        let mut mro = HashMap::default();
        for c in index.classes.keys() {
            let line = index.linearize(c, 0, &mut HashSet::default());
            mro.insert(c.clone(), line);
        }
        if let Some(tables) = Arc::get_mut(&mut index.tables) {
            tables.mro = mro;
        }
        // A file whose table entries changed is read differently by the modules that looked
        // them up: it counts as changed for the replay.
        let update = update.and_then(|u| {
            let old = u.tables.as_ref()?;
            let mut files: Vec<usize> = index.tables.changed_files(old)?.into_iter().collect();
            files.sort_unstable();
            let mut u = u.clone();
            u.changed
                .extend(files.iter().map(|&fi| index.paths[fi].to_owned()));
            index.changed_table_files = Some(files);
            Some(u)
        });
        index.compute_flow(update.as_ref());
        index
    }

    /// An index over `all` (the same Python files, in the same order, as when `tables` were
    /// built, with the same exports) reusing `tables`.
    pub(crate) fn kept(
        all: &[&'a FileFacts],
        tables: Arc<PyTables>,
        update: Option<&FlowUpdate>,
    ) -> PyIndex<'a> {
        let (files, paths) = python_files(all);
        let mut index = PyIndex::with_tables(files, paths, tables);
        index.compute_flow(update);
        index
    }

    fn compute_flow(&mut self, update: Option<&FlowUpdate>) {
        let started = std::time::Instant::now();
        let (flow, state) = match update.and_then(|u| replay(self, u)) {
            Some(replayed) => replayed,
            None => PyFlow::compute(self),
        };
        tracing::debug!(
            index.py_flow_ms = started.elapsed().as_millis() as u64,
            "python value flow"
        );
        self.flow = flow;
        self.flow_state = Arc::new(state);
    }

    /// Resolved direct bases of a class (`None` for unresolved ones; `object` dropped).
    pub(super) fn bases(&self, class: &str) -> Vec<Option<String>> {
        let Some(&(fi, di)) = self.classes.get(class) else {
            return vec![None];
        };
        let file = self.files[fi];
        let def = &file.defs[di];
        let mut out = Vec::new();
        for &b in &def.bases {
            // Bases are evaluated without value flow: the MRO is part of the tables.
            let no_flow = PyFlow::default();
            let mut ev = Eval::new(self, &no_flow);
            match ev.expr(fi, b, false).as_slice() {
                [Val::Class(q, _)] => out.push(Some(q.clone())),
                [Val::Builtin(_)] if matches!(&file.exprs[b as usize], PExpr::Name { name, .. } if name == "object") =>
                    {}
                _ => out.push(None),
            }
        }
        out
    }

    /// C3 linearization; with unresolved bases, a depth-first order with `None` markers.
    pub(super) fn linearize(
        &self,
        class: &str,
        depth: u32,
        seen: &mut HashSet<String>,
    ) -> Vec<Option<String>> {
        if depth > 20 || !seen.insert(class.to_owned()) {
            return vec![Some(class.to_owned())];
        }
        let bases = self.bases(class);
        let mut result = vec![Some(class.to_owned())];
        let mut seqs: Vec<Vec<Option<String>>> = Vec::new();
        for b in &bases {
            match b {
                Some(b) => seqs.push(self.linearize(b, depth + 1, seen)),
                None => seqs.push(vec![None]),
            }
        }
        seen.remove(class);
        if seqs.iter().all(|s| s.iter().all(Option::is_some)) {
            seqs.push(bases.clone());
            let mut seqs: Vec<Vec<String>> = seqs
                .iter()
                .cloned()
                .map(|s| s.into_iter().flatten().collect())
                .collect();
            loop {
                seqs.retain(|s| !s.is_empty());
                if seqs.is_empty() {
                    return result;
                }
                let head = seqs
                    .iter()
                    .map(|s| &s[0])
                    .find(|h| !seqs.iter().any(|s| s[1..].contains(h)));
                let Some(head) = head.cloned() else { break };
                result.push(Some(head.clone()));
                for s in &mut seqs {
                    if s[0] == head {
                        s.remove(0);
                    }
                }
            }
            result.truncate(1);
        }
        // Fallback: depth-first, left to right, with unresolved markers.
        for s in seqs {
            for item in s {
                if item.is_none() || !result.contains(&item) {
                    result.push(item);
                }
            }
        }
        result
    }
}

/// The Python files of `all`, with their paths.
fn python_files<'a>(all: &[&'a FileFacts]) -> (Vec<&'a PyFile>, Vec<&'a str>) {
    all.iter()
        .filter_map(|f| match &f.lang {
            LangFacts::Python(p) => Some((p, f.rel.as_str())),
            _ => None,
        })
        .unzip()
}
