//! Which files an update must re-resolve, and dropping big tables off the update path.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::index::facts::{FileFacts, LangFacts};
use crate::index::go::GoIndex;
use crate::index::python::changed_names as py_names;
use crate::index::resolve::{Derived, StoredOutput};
use crate::model::{Confidence, EdgeKind};
/// Adds the Go files whose derived edges change: types whose `implements` edges differ, and
/// call sites of interface methods whose implementations differ (their `dynamic` edges).
pub(super) fn add_derived_changes(
    old: &Derived,
    new: &GoIndex,
    outputs: &BTreeMap<String, StoredOutput>,
    targets: &mut BTreeSet<String>,
) {
    for file in old.implements.keys().chain(new.implements.keys()) {
        if old.implements.get(file) != new.implements.get(file) {
            targets.insert(file.clone());
        }
    }
    // Dynamic call sites that now reach other values.
    targets.extend(old.flow.changed_files(&new.flow));
    // Dispatch keys are `<interface>.<method>`: a call site may reach one by any static
    // edge (or an unresolved `err.Error()`), so files are found by the method's name.
    let changed: HashSet<&str> = old
        .impls
        .keys()
        .chain(new.impls.keys())
        .filter(|m| old.impls.get(*m) != new.impls.get(*m))
        .filter_map(|m| m.rsplit('.').next())
        .collect();
    if changed.is_empty() {
        return;
    }
    for (rel, out) in outputs {
        if targets.contains(rel) || !rel.ends_with(".go") {
            continue;
        }
        let calls_changed = out.graph.edge_views().any(|e| {
            e.kind == EdgeKind::Calls
                && e.confidence != Confidence::Dynamic
                && changed.contains(e.to_name.rsplit('.').next().unwrap_or(e.to_name))
        });
        if calls_changed {
            targets.insert(rel.clone());
        }
    }
}

/// The Python modules to re-resolve after the modules in `old` (previous facts) changed,
/// by changed names ([`py_names`]); `None` if that does not apply (a module added or
/// deleted, or changed in more than names).
pub(super) fn python_dependents(
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
pub(super) fn drop_in_background<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("codegraph-drop".to_owned())
        .spawn(move || drop(value));
}
