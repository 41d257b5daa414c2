//! Python name tables: modules, namespaces, classes, functions and class hierarchies (MRO)
//! built from all files' facts, the value-flow table ([`flow_table`]) and the values it holds
//! ([`values`]). Data and lookups only: `build` fills them.

mod flow_table;
mod values;

pub(crate) use flow_table::{
    FlowKey, FlowRecord, FlowState, MAX_FLOW_ROUNDS, PyFlow, ReadSet, SUBCLASS_RECEIVERS, digest,
    digest_stored, intersects, join_entry,
};
pub(crate) use values::{FilesRead, Val, Vals, join, one, unknown};

use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::PyFile;

/// Global Python tables: the files' facts, and [`PyTables`] derived from them (dereferenced).
pub(crate) struct PyIndex<'a> {
    pub(super) files: Vec<&'a PyFile>,
    /// Address of a file's facts → its index in `files`.
    pub(super) positions: HashMap<usize, usize>,
    pub(super) tables: Arc<PyTables>,
    /// The repository-relative paths of `files` (sorted).
    pub(super) paths: Vec<&'a str>,
    /// The value-flow fixpoint over these files.
    pub(super) flow: Arc<PyFlow>,
    /// How the fixpoint went, for the next update to replay.
    pub(super) flow_state: Arc<FlowState>,
    /// The files whose table entries differ from those of the update's previous tables
    /// (`None`: not compared, or the modules differ).
    pub(super) changed_table_files: Option<Vec<usize>>,
    /// Names of functions with a default argument, and of classes whose `__init__` has one:
    /// the value flow evaluates calls of such names to learn which defaults they leave out.
    pub(super) defaulted: HashSet<String>,
    /// Attributes some method sets on `self` on every return ([`super::PyDef::sets_self`]):
    /// only a read of one of these can be answered by a constructor or a method call.
    pub(super) set_attrs: HashSet<String>,
}

impl std::ops::Deref for PyIndex<'_> {
    type Target = PyTables;

    fn deref(&self) -> &PyTables {
        &self.tables
    }
}

/// The tables of a [`PyIndex`] that do not borrow the facts (files are referred to by their
/// position in the path-sorted list of Python files), kept by the indexer for updates that
/// change no module's exports.
#[derive(Debug, Default)]
pub(crate) struct PyTables {
    pub(super) modules: HashMap<String, usize>,
    pub(super) import_names: HashMap<String, Vec<usize>>,
    /// class qname → (file, def index).
    pub(super) classes: HashMap<String, (usize, usize)>,
    /// function qname → (file, def index).
    pub(super) funcs: HashMap<String, (usize, usize)>,
    /// class qname → MRO (`None` marks an unresolved base).
    pub(super) mro: HashMap<String, Vec<Option<String>>>,
    /// module var qnames.
    pub(super) vars: HashSet<String>,
    /// qname → owning file (first definition wins).
    pub(super) owners: HashMap<String, usize>,
    /// Dotted prefixes of module names (namespace packages included).
    pub(super) prefixes: HashSet<String>,
}

impl PyTables {
    /// The files (positions) that own an entry of `self` or `old` that differs between the
    /// two (over the same files); `None` if the module tables differ.
    pub(super) fn changed_files(&self, old: &PyTables) -> Option<HashSet<usize>> {
        if self.modules != old.modules
            || self.import_names != old.import_names
            || self.prefixes != old.prefixes
        {
            return None;
        }
        fn diff<V: PartialEq>(
            a: &HashMap<String, V>,
            b: &HashMap<String, V>,
            mut owner: impl FnMut(&V) -> Option<usize>,
            out: &mut HashSet<usize>,
        ) {
            for (k, v) in a {
                if b.get(k) != Some(v) {
                    out.extend(owner(v));
                    out.extend(b.get(k).and_then(&mut owner));
                }
            }
        }
        let mut out = HashSet::default();
        for (a, b) in [(self, old), (old, self)] {
            diff(&a.funcs, &b.funcs, |v| Some(v.0), &mut out);
            diff(&a.classes, &b.classes, |v| Some(v.0), &mut out);
            diff(&a.owners, &b.owners, |v| Some(*v), &mut out);
            for (c, line) in &a.mro {
                if b.mro.get(c) != Some(line) {
                    out.extend(a.classes.get(c).map(|v| v.0));
                    out.extend(b.classes.get(c).map(|v| v.0));
                }
            }
            for q in a.vars.difference(&b.vars) {
                out.extend(a.owners.get(q).copied());
                out.extend(b.owners.get(q).copied());
            }
        }
        Some(out)
    }
}

impl<'a> PyIndex<'a> {
    /// The files whose table entries differ from those of the update's previous tables.
    pub(crate) fn changed_table_files(&self) -> Option<&[usize]> {
        self.changed_table_files.as_deref()
    }

    /// How the value-flow fixpoint went, for the next update ([`FlowUpdate`](super::flow_update::FlowUpdate)).
    pub(crate) fn flow_state(&self) -> Arc<FlowState> {
        Arc::clone(&self.flow_state)
    }

    /// The value-flow table, to compare with the previous update's.
    pub(crate) fn flow(&self) -> Arc<PyFlow> {
        Arc::clone(&self.flow)
    }

    pub(super) fn with_tables(
        files: Vec<&'a PyFile>,
        paths: Vec<&'a str>,
        tables: Arc<PyTables>,
    ) -> PyIndex<'a> {
        let positions = files
            .iter()
            .enumerate()
            .map(|(i, f)| (std::ptr::from_ref::<PyFile>(f) as usize, i))
            .collect();
        let mut defaulted = HashSet::default();
        let mut set_attrs = HashSet::default();
        for f in &files {
            for d in &f.defs {
                set_attrs.extend(d.sets_self.iter().map(|(a, _)| a.clone()));
            }
            for d in f
                .defs
                .iter()
                .filter(|d| d.params.iter().any(|p| p.default.is_some()))
            {
                defaulted.insert(d.name.clone());
                if d.name == "__init__" {
                    let class = d.parent.rsplit('.').next().unwrap_or(&d.parent);
                    defaulted.insert(class.to_owned());
                }
            }
        }
        PyIndex {
            files,
            positions,
            tables,
            paths,
            flow: Arc::default(),
            flow_state: Arc::default(),
            changed_table_files: None,
            defaulted,
            set_attrs,
        }
    }

    /// The tables, to keep for later updates.
    pub(crate) fn tables(&self) -> Arc<PyTables> {
        Arc::clone(&self.tables)
    }

    pub(super) fn module_file(&self, name: &str) -> Option<usize> {
        if let Some(&i) = self.modules.get(name) {
            return Some(i);
        }
        match self.import_names.get(name) {
            Some(v) if v.len() == 1 => Some(v[0]),
            _ => None,
        }
    }
}
