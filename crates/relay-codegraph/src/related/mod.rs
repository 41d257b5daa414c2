//! What a repository checkout offers other repositories for linking, and what it depends on.
//!
//! The worker indexes each related repository as its own snapshot and asks
//! [`crate::ops::execute_set`] across them; the links themselves are made at query time from
//! the graphs (see `ops/set.rs`). These functions read a checkout's manifests so the worker
//! can tell which repositories may be related: [`link_names`] says under which names a
//! repository's code is imported (its Go module path, its Python top-level packages) and
//! [`suggested_dependencies`] what it imports from elsewhere (Go `require`/`replace` module
//! paths, Python dependencies and VCS URLs). Every manifest is read at most
//! [`MAX_MANIFEST_BYTES`]; a larger or unreadable one is ignored.

mod python;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::Path;

pub use crate::index::go::gomod::{GoReplace, ReplaceTarget};

/// Manifests (`go.mod`, `pyproject.toml`, `requirements*.txt`) larger than this are not read.
pub const MAX_MANIFEST_BYTES: u64 = 1024 * 1024;

/// The names under which other repositories import a repository's code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkNames {
    /// The `module` of the root `go.mod`: Go imports of paths under it reach this repository.
    pub go_module: Option<String>,
    /// The root `go.mod`'s `replace` directives: an import of `module` reaches the repository
    /// whose module path is the replacement (a directory replacement keeps the import path).
    pub go_replaces: Vec<GoReplace>,
    /// Top-level Python packages it provides, sorted: directories with an `__init__.py` at the
    /// root or under `src/`, the `pyproject.toml` `[project] name` and package lists, with
    /// `-` normalised to `_`.
    pub python_packages: Vec<String>,
}

/// What the checkout at `root` provides for linking (see [`LinkNames`]).
pub fn link_names(root: &Path) -> LinkNames {
    let gomod = read_manifest(&root.join("go.mod")).map(|t| crate::index::go::gomod::parse(&t));
    let mut packages: BTreeSet<String> = python::package_dirs(root);
    if let Some(text) = read_manifest(&root.join("pyproject.toml")) {
        packages.extend(python::pyproject_packages(&text));
    }
    LinkNames {
        go_module: gomod.as_ref().and_then(|g| g.module.clone()),
        go_replaces: gomod.map(|g| g.replaces).unwrap_or_default(),
        python_packages: packages.into_iter().collect(),
    }
}

/// What the checkout at `root` depends on, sorted: Go `require` and `replace` module paths
/// (replaced and replacement modules) of the root `go.mod`, and Python dependencies: the
/// `pyproject.toml` `[project] dependencies` (and Poetry's) by name, and the root
/// `requirements*.txt` lines, by name or, for VCS requirements
/// (`git+https://host/acme/lib.git@v1#egg=lib`), by repository URL (`https://host/acme/lib.git`).
/// The worker maps them onto repositories it knows.
pub fn suggested_dependencies(root: &Path) -> Vec<String> {
    let mut out: BTreeSet<String> = BTreeSet::new();
    if let Some(text) = read_manifest(&root.join("go.mod")) {
        let gomod = crate::index::go::gomod::parse(&text);
        out.extend(gomod.requires);
        for replace in gomod.replaces {
            if let ReplaceTarget::Module { path, .. } = replace.target {
                out.insert(path);
            }
            out.insert(replace.module);
        }
    }
    if let Some(text) = read_manifest(&root.join("pyproject.toml")) {
        out.extend(python::pyproject_dependencies(&text));
    }
    for path in python::requirements_files(root) {
        if let Some(text) = read_manifest(&path) {
            out.extend(python::requirements(&text));
        }
    }
    out.into_iter().collect()
}

/// A manifest's text (lossy UTF-8), or `None` when it is missing, not a regular file, or
/// larger than [`MAX_MANIFEST_BYTES`].
fn read_manifest(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_MANIFEST_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_MANIFEST_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    if bytes.len() as u64 > MAX_MANIFEST_BYTES {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
