//! Which Go files can see a package's declarations: read from the files' imports alone.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::GoFile;
use crate::index::facts::{FileFacts, LangFacts};

/// Files of the patched packages' importers, transitively (and the packages' own files): the
/// files whose resolution can see the packages' declarations.
pub(crate) fn importers(
    facts: &BTreeMap<String, FileFacts>,
    packages: &BTreeSet<String>,
) -> BTreeSet<String> {
    let mut readers: HashMap<&str, Vec<(&String, &GoFile)>> = HashMap::default();
    for (rel, f) in facts {
        if let LangFacts::Go(g) = &f.lang {
            readers
                .entry(g.pkg_path.as_str())
                .or_default()
                .push((rel, g));
            for imp in &g.imports {
                readers.entry(imp.path.as_str()).or_default().push((rel, g));
            }
        }
    }
    let mut out: BTreeSet<String> = BTreeSet::new();
    let mut seen: HashSet<&str> = HashSet::default();
    let mut queue: Vec<&str> = packages.iter().map(String::as_str).collect();
    while let Some(p) = queue.pop() {
        if !seen.insert(p) {
            continue;
        }
        for (rel, g) in readers.get(p).into_iter().flatten() {
            // A test file's declarations are not visible to importers of its package.
            if out.insert((*rel).clone()) && !rel.ends_with("_test.go") {
                queue.push(g.pkg_path.as_str());
            }
        }
    }
    out
}
