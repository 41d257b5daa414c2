//! The value-flow table ([`PyFlow`]): what flows into each parameter, out of each function,
//! into each container and class attribute, with the entry-wise access an update's replay
//! needs and the record of how the fixpoint went ([`FlowState`]). Data and lookups only: the
//! fixpoint that fills it is `flow`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;

use super::values::{FilesRead, Val, Vals, join};

/// Rounds of the fixpoint (each round lets values travel one more call/return/store step
/// beyond what lazy evaluation already follows).
pub(crate) const MAX_FLOW_ROUNDS: usize = 4;
/// The parameter index under which a class's entry holds the instances of its subclasses that
/// its methods are called on (what `self` can be beside the class itself).
pub(crate) const SUBCLASS_RECEIVERS: u32 = u32::MAX;
/// A container's items by constant key (`None`: any key).
type Items = BTreeMap<Option<String>, Vals>;

/// One entry of the flow table, as read by a module's resolution.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum FlowKey {
    Param(String, u32),
    Returns(String),
    Yields(String),
    Decorated(String),
    Stored(Val),
    Attr(String, String),
}

/// The digests of the flow entries a module's evaluation read ([`FlowKey::digest`]; a
/// collision can only make a module look like a reader, which costs a re-resolution).
pub(crate) type ReadSet = rustc_hash::FxHashSet<u64>;

/// One evaluation of a module's contribution to a round of the fixpoint.
#[derive(Debug)]
pub(crate) struct FlowRecord {
    pub(crate) contribution: PyFlow,
    /// The flow entries the evaluation read.
    pub(crate) reads: ReadSet,
    /// The files whose facts the evaluation read.
    pub(crate) files_read: FilesRead,
}

/// How the fixpoint went, kept so that an update can replay it and re-evaluate only the
/// modules an edit can affect ([`crate::index::python::flow_update`]).
#[derive(Debug, Default)]
pub(crate) struct FlowState {
    /// The repository-relative paths of the files, in index order (values name files by
    /// position).
    pub(crate) paths: Vec<String>,
    /// The table after each round run (the last one with its literal snapshots, which a
    /// replay ignores).
    pub(crate) tables: Vec<Arc<PyFlow>>,
    /// The entries (digests) each round run changed (the last one empty when a fixpoint was
    /// reached).
    pub(crate) changes: Vec<ReadSet>,
    /// Per file, the evaluations of its contribution with the first round each is in
    /// effect for (a module not re-evaluated in a round contributes what it did before).
    pub(crate) records: Vec<Vec<(usize, Arc<FlowRecord>)>>,
}

/// Whether two digest sets share an element.
pub(crate) fn intersects(a: &ReadSet, b: &ReadSet) -> bool {
    if a.len() <= b.len() {
        a.iter().any(|k| b.contains(k))
    } else {
        b.iter().any(|k| a.contains(k))
    }
}

/// The digest of a flow entry, computed from borrowed parts (no allocation per read).
pub(crate) fn digest(tag: u8, a: &str, b: &str, index: u32) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    tag.hash(&mut h);
    a.hash(&mut h);
    b.hash(&mut h);
    index.hash(&mut h);
    h.finish()
}

/// The digest of a container's entry.
pub(crate) fn digest_stored(container: &Val) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    5u8.hash(&mut h);
    container.hash(&mut h);
    h.finish()
}

impl FlowKey {
    pub(crate) fn digest(&self) -> u64 {
        match self {
            FlowKey::Param(f, i) => digest(0, f, "", *i),
            FlowKey::Returns(f) => digest(1, f, "", 0),
            FlowKey::Yields(f) => digest(2, f, "", 0),
            FlowKey::Decorated(q) => digest(3, q, "", 0),
            FlowKey::Attr(c, a) => digest(4, c, a, 0),
            FlowKey::Stored(v) => digest_stored(v),
        }
    }
}

/// Values flowing between modules; compared between updates (a change re-resolves the
/// modules that read a changed entry).
///
/// Every map is keyed so that a read looks an entry up by borrowed names (no allocation per
/// read), and holds no empty entry (an empty set and a missing entry are the same, so that
/// tables compare equal whatever order they were built in).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct PyFlow {
    /// function → parameter index → values.
    pub(crate) params: HashMap<String, BTreeMap<u32, Vals>>,
    pub(crate) returns: HashMap<String, Vals>,
    /// Parameters a function returns as they are (`def dec(fn): return fn`): a call returns
    /// the arguments of that call site, not every argument ever passed.
    pub(crate) returned_params: HashMap<String, Vec<u32>>,
    pub(crate) yields: HashMap<String, Vals>,
    pub(crate) decorated: HashMap<String, Vals>,
    pub(crate) stored: HashMap<Val, Items>,
    /// class → attribute → values.
    pub(crate) attrs: HashMap<String, HashMap<String, Vals>>,
    /// The items of container literals that flow between functions, as written (compared
    /// between updates only; evaluation reads the literal itself).
    pub(crate) literals: BTreeMap<Val, Items>,
}

impl PyFlow {
    pub(crate) fn param(&self, f: &str, index: u32) -> Vals {
        self.params
            .get(f)
            .and_then(|p| p.get(&index))
            .cloned()
            .unwrap_or_default()
    }

    pub(crate) fn returns(&self, f: &str) -> Vals {
        self.returns.get(f).cloned().unwrap_or_default()
    }

    pub(crate) fn returned_params(&self, f: &str) -> &[u32] {
        self.returned_params.get(f).map_or(&[], Vec::as_slice)
    }

    pub(crate) fn yields(&self, f: &str) -> Vals {
        self.yields.get(f).cloned().unwrap_or_default()
    }

    pub(crate) fn decorated(&self, q: &str) -> Option<Vals> {
        self.decorated.get(q).cloned()
    }

    pub(crate) fn attr(&self, class: &str, attr: &str) -> Vals {
        self.attrs
            .get(class)
            .and_then(|a| a.get(attr))
            .cloned()
            .unwrap_or_default()
    }

    /// Items stored into `container` under `key` (`None`: all).
    pub(crate) fn stored(&self, container: &Val, key: Option<&str>) -> Vals {
        let Some(items) = self.stored.get(container) else {
            return Vals::new();
        };
        let mut out = Vals::new();
        for (k, v) in items {
            if key.is_none() || k.is_none() || k.as_deref() == key {
                join(&mut out, v.clone());
            }
        }
        out
    }

    /// The entries whose values differ between `self` and `other`.
    pub(crate) fn changed(&self, other: &PyFlow) -> BTreeSet<FlowKey> {
        self.changed_entries(other, true)
    }

    /// The entries whose values differ between `self` and `other`, the literal snapshots
    /// compared only if `literals`.
    pub(crate) fn changed_entries(&self, other: &PyFlow, literals: bool) -> BTreeSet<FlowKey> {
        /// Keys of `a` whose value differs in `b` (or that `b` lacks).
        fn diff<'m, K: 'm + Eq + std::hash::Hash, V: 'm + PartialEq>(
            a: &'m HashMap<K, V>,
            b: &'m HashMap<K, V>,
        ) -> impl Iterator<Item = &'m K> {
            a.iter()
                .filter(move |(k, v)| b.get(*k) != Some(*v))
                .map(|(k, _)| k)
        }
        let mut out = BTreeSet::new();
        for (a, b) in [(self, other), (other, self)] {
            for (f, params) in &a.params {
                let theirs = b.params.get(f);
                for (i, v) in params {
                    if theirs.and_then(|t| t.get(i)) != Some(v) {
                        out.insert(FlowKey::Param(f.clone(), *i));
                    }
                }
            }
            out.extend(diff(&a.returns, &b.returns).cloned().map(FlowKey::Returns));
            out.extend(
                diff(&a.returned_params, &b.returned_params)
                    .cloned()
                    .map(FlowKey::Returns),
            );
            out.extend(diff(&a.yields, &b.yields).cloned().map(FlowKey::Yields));
            out.extend(
                diff(&a.decorated, &b.decorated)
                    .cloned()
                    .map(FlowKey::Decorated),
            );
            out.extend(diff(&a.stored, &b.stored).cloned().map(FlowKey::Stored));
            for (c, attrs) in &a.attrs {
                let theirs = b.attrs.get(c);
                for (n, v) in attrs {
                    if theirs.and_then(|t| t.get(n)) != Some(v) {
                        out.insert(FlowKey::Attr(c.clone(), n.clone()));
                    }
                }
            }
            for (k, v) in a.literals.iter().filter(|_| literals) {
                if b.literals.get(k) != Some(v) {
                    out.insert(FlowKey::Stored(k.clone()));
                }
            }
        }
        out
    }

    /// Adds the entries of `other`, recording in `changed` the digests ([`FlowKey::digest`])
    /// of the entries whose values changed (values only grow, so nothing else can change).
    pub(crate) fn merge(&mut self, other: PyFlow, changed: &mut ReadSet) {
        fn all(
            into: &mut HashMap<String, Vals>,
            from: HashMap<String, Vals>,
            tag: u8,
            changed: &mut ReadSet,
        ) {
            for (k, v) in from {
                let d = digest(tag, &k, "", 0);
                if join_entry(into.entry(k).or_default(), v) {
                    changed.insert(d);
                }
            }
        }
        for (f, params) in other.params {
            let into = self.params.entry(f.clone()).or_default();
            for (i, v) in params {
                if join_entry(into.entry(i).or_default(), v) {
                    changed.insert(digest(0, &f, "", i));
                }
            }
        }
        all(&mut self.returns, other.returns, 1, changed);
        all(&mut self.yields, other.yields, 2, changed);
        all(&mut self.decorated, other.decorated, 3, changed);
        for (c, attrs) in other.attrs {
            let into = self.attrs.entry(c.clone()).or_default();
            for (n, v) in attrs {
                let d = digest(4, &c, &n, 0);
                if join_entry(into.entry(n).or_default(), v) {
                    changed.insert(d);
                }
            }
        }
        for (k, mut v) in other.returned_params {
            let d = digest(1, &k, "", 0);
            let e = self.returned_params.entry(k).or_default();
            let before = e.len();
            e.append(&mut v);
            e.sort_unstable();
            e.dedup();
            if e.len() != before {
                changed.insert(d);
            }
        }
        for (c, items) in other.stored {
            let d = digest_stored(&c);
            let into = self.stored.entry(c).or_default();
            for (k, v) in items {
                if join_entry(into.entry(k).or_default(), v) {
                    changed.insert(d);
                }
            }
        }
    }
}

/// Entry-wise access for the replay ([`crate::index::python::flow_update`]): an entry is named by its
/// [`FlowKey`] (`Returns` names both the returned values and the returned parameters).
impl PyFlow {
    /// The keys of all entries (but the literal snapshots).
    pub(crate) fn keys(&self) -> Vec<FlowKey> {
        let mut out = Vec::new();
        for (f, params) in &self.params {
            out.extend(params.keys().map(|i| FlowKey::Param(f.clone(), *i)));
        }
        out.extend(self.returns.keys().cloned().map(FlowKey::Returns));
        out.extend(self.returned_params.keys().cloned().map(FlowKey::Returns));
        out.extend(self.yields.keys().cloned().map(FlowKey::Yields));
        out.extend(self.decorated.keys().cloned().map(FlowKey::Decorated));
        out.extend(self.stored.keys().cloned().map(FlowKey::Stored));
        for (c, attrs) in &self.attrs {
            out.extend(attrs.keys().map(|a| FlowKey::Attr(c.clone(), a.clone())));
        }
        out
    }

    /// Whether entry `key` is the same in `self` and `other`.
    pub(crate) fn entry_eq(&self, other: &PyFlow, key: &FlowKey) -> bool {
        match key {
            FlowKey::Param(f, i) => {
                self.params.get(f).and_then(|p| p.get(i))
                    == other.params.get(f).and_then(|p| p.get(i))
            }
            FlowKey::Returns(f) => {
                self.returns.get(f) == other.returns.get(f)
                    && self.returned_params.get(f) == other.returned_params.get(f)
            }
            FlowKey::Yields(f) => self.yields.get(f) == other.yields.get(f),
            FlowKey::Decorated(q) => self.decorated.get(q) == other.decorated.get(q),
            FlowKey::Stored(c) => self.stored.get(c) == other.stored.get(c),
            FlowKey::Attr(c, a) => {
                self.attrs.get(c).and_then(|m| m.get(a))
                    == other.attrs.get(c).and_then(|m| m.get(a))
            }
        }
    }

    /// Empties entry `key` (no empty entry is kept).
    pub(crate) fn remove_entry(&mut self, key: &FlowKey) {
        match key {
            FlowKey::Param(f, i) => {
                if let Some(p) = self.params.get_mut(f) {
                    p.remove(i);
                    if p.is_empty() {
                        self.params.remove(f);
                    }
                }
            }
            FlowKey::Returns(f) => {
                self.returns.remove(f);
                self.returned_params.remove(f);
            }
            FlowKey::Yields(f) => {
                self.yields.remove(f);
            }
            FlowKey::Decorated(q) => {
                self.decorated.remove(q);
            }
            FlowKey::Stored(c) => {
                self.stored.remove(c);
            }
            FlowKey::Attr(c, a) => {
                if let Some(m) = self.attrs.get_mut(c) {
                    m.remove(a);
                    if m.is_empty() {
                        self.attrs.remove(c);
                    }
                }
            }
        }
    }

    /// Joins entry `key` of `other` into that of `self` (as [`PyFlow::merge`] does).
    pub(crate) fn merge_entry(&mut self, other: &PyFlow, key: &FlowKey) {
        let mut part = PyFlow::default();
        match key {
            FlowKey::Param(f, i) => {
                if let Some(v) = other.params.get(f).and_then(|p| p.get(i)) {
                    part.params
                        .entry(f.clone())
                        .or_default()
                        .insert(*i, v.clone());
                }
            }
            FlowKey::Returns(f) => {
                if let Some(v) = other.returns.get(f) {
                    part.returns.insert(f.clone(), v.clone());
                }
                if let Some(v) = other.returned_params.get(f) {
                    part.returned_params.insert(f.clone(), v.clone());
                }
            }
            FlowKey::Yields(f) => {
                if let Some(v) = other.yields.get(f) {
                    part.yields.insert(f.clone(), v.clone());
                }
            }
            FlowKey::Decorated(q) => {
                if let Some(v) = other.decorated.get(q) {
                    part.decorated.insert(q.clone(), v.clone());
                }
            }
            FlowKey::Stored(c) => {
                if let Some(v) = other.stored.get(c) {
                    part.stored.insert(c.clone(), v.clone());
                }
            }
            FlowKey::Attr(c, a) => {
                if let Some(v) = other.attrs.get(c).and_then(|m| m.get(a)) {
                    part.attrs
                        .entry(c.clone())
                        .or_default()
                        .insert(a.clone(), v.clone());
                }
            }
        }
        self.merge(part, &mut ReadSet::default());
    }
}

/// Adds `more` to a table entry; returns whether the entry changed. Entries hold known values
/// only, so an entry that is just [`Val::Unknown`] overflowed [`super::values::MAX_VALUES`]: it
/// stays so (otherwise rounds could oscillate between overflowing and not).
pub(crate) fn join_entry(into: &mut Vals, more: Vals) -> bool {
    if into.as_slice() == [Val::Unknown] || more.is_empty() {
        return false;
    }
    if more.as_slice() == [Val::Unknown] {
        *into = more;
        return true;
    }
    let before = into.len();
    join(into, more);
    // A union only grows, unless it overflowed into `[Unknown]` (from known values).
    into.len() != before || into.as_slice() == [Val::Unknown]
}
