//! Which files an incremental update must re-resolve.
//!
//! A file's references resolve only through the packages/modules it imports (and its own), so the
//! files to re-resolve after a change are the reverse transitive import closure of the changed
//! files' packages/modules. Go's `implements` and `dynamic` edges are global; they are compared
//! separately (see [`super::incremental`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use super::facts::FileFacts;
use super::frontend;

/// Names under which other files can reach this file ([`frontend::Frontend::provides`]: the
/// Go package path; the Python module, every dotted suffix of it (importable from a source root)
/// and prefix (namespace packages)).
pub(crate) fn provides(f: &FileFacts, packages: &HashSet<String>) -> Vec<String> {
    frontend::of(f).provides(&f.lang, packages)
}

/// Names that are packages (Python: modules of `__init__.py` files).
pub(crate) fn packages(facts: &BTreeMap<String, FileFacts>) -> HashSet<String> {
    facts
        .values()
        .filter_map(|f| frontend::of(f).package(&f.lang))
        .collect()
}

/// Names this file's resolution reads: its own package/module and everything it imports (for
/// Python, with every dotted prefix).
pub(crate) fn requires(f: &FileFacts) -> Vec<String> {
    frontend::of(f).requires(&f.lang)
}

/// The changed files plus every file that (transitively) depends on a name in `changed_keys`.
pub(crate) fn affected(
    facts: &BTreeMap<String, FileFacts>,
    changed_files: &BTreeSet<String>,
    changed_keys: HashSet<String>,
) -> BTreeSet<String> {
    // Reverse index: name → files reading it.
    let mut readers: HashMap<String, Vec<&String>> = HashMap::new();
    for (rel, f) in facts {
        for r in requires(f) {
            readers.entry(r).or_default().push(rel);
        }
    }
    let mut affected: BTreeSet<String> = changed_files
        .iter()
        .filter(|f| facts.contains_key(*f))
        .cloned()
        .collect();
    let packages = packages(facts);
    let mut seen_keys: HashSet<String> = HashSet::new();
    let mut queue: Vec<String> = changed_keys.into_iter().collect();
    while let Some(key) = queue.pop() {
        if !seen_keys.insert(key.clone()) {
            continue;
        }
        for rel in readers.get(&key).into_iter().flatten() {
            // A Go test file reached here does not change what its package exports to
            // importers (test declarations are invisible outside the package's own tests), so
            // it does not propagate further; otherwise every package with a test importing
            // `net/http` would make all of its importers dirty.
            if affected.insert((*rel).clone())
                && !rel.ends_with("_test.go")
                && let Some(f) = facts.get(*rel)
            {
                queue.extend(provides(f, &packages));
            }
        }
    }
    affected
}
