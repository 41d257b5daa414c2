//! The shared directory walker: `.gitignore`-aware, never follows symlinks, skips `.git/`,
//! `vendor/` and `node_modules/` below the starting directory.
//!
//! Ignore files are read from the repository root down, never from above it: a checkout that lives
//! inside another Git work tree (say `./data/` of a project whose `.gitignore` lists `data/`) must
//! not have its files hidden. Walks that start in a subdirectory therefore apply the `.gitignore`
//! and `.ignore` files of the directories between the root and the start themselves.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{Match, WalkBuilder};
use relay_core::repo_config::ExcludeSet;

/// Directory names never descended into (unless the walk starts inside one).
pub const SKIPPED_DIRS: &[&str] = &[".git", "vendor", "node_modules"];

/// Collects the skipped directories a walk passed by (used by `tree`).
pub type SkipRecorder = Arc<Mutex<Vec<PathBuf>>>;

/// Whether a directory with this name is skipped by walks.
pub fn is_skipped_dir(name: &std::ffi::OsStr) -> bool {
    SKIPPED_DIRS.iter().any(|skipped| name == *skipped)
}

/// A walker over `start` (inside `root`) with Relay's filters:
/// - `.gitignore`, `.ignore` and `.git/info/exclude` rules apply, also outside a Git work tree
///   (snapshots have no `.git`); the user's global excludes and ignore files above `root` do not
///   (results must not depend on the machine);
/// - hidden files are included (CI configuration is worth finding), `.git` is not;
/// - symlinks are reported but never followed.
pub fn walker(root: &Path, start: &Path) -> WalkBuilder {
    walker_recording(root, start, None)
}

/// [`walker`] that also records the skipped directories in `recorder`.
pub fn walker_recording(root: &Path, start: &Path, recorder: Option<SkipRecorder>) -> WalkBuilder {
    walker_with(root, start, recorder, Arc::default())
}

/// [`walker_recording`] that also skips what `excludes` matches (paths relative to `root`);
/// tools reach it through [`crate::sandbox::Sandbox::walker`].
pub fn walker_with(
    root: &Path,
    start: &Path,
    recorder: Option<SkipRecorder>,
    excludes: Arc<ExcludeSet>,
) -> WalkBuilder {
    let ancestors = ancestor_ignores(root, start);
    let root = root.to_path_buf();
    let mut builder = WalkBuilder::new(start);
    builder
        .hidden(false)
        .parents(false)
        .ignore(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            if entry.depth() == 0 {
                return true;
            }
            let is_dir = entry
                .file_type()
                .is_some_and(|file_type| file_type.is_dir());
            if is_dir && is_skipped_dir(entry.file_name()) {
                if let Some(recorder) = &recorder {
                    recorder
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .push(entry.path().to_path_buf());
                }
                return false;
            }
            if !excludes.is_empty()
                && let Ok(rel) = entry.path().strip_prefix(&root)
                && excludes.is_excluded(&rel.to_string_lossy(), is_dir)
            {
                return false;
            }
            // Deepest ancestor first: the first decisive rule wins.
            for ignores in ancestors.iter().rev() {
                match ignores.matched_path_or_any_parents(entry.path(), is_dir) {
                    Match::Ignore(_) => return false,
                    Match::Whitelist(_) => return true,
                    Match::None => {}
                }
            }
            true
        });
    builder
}

/// The ignore files of `root` and every directory between it and `start` (exclusive of `start`,
/// whose own files the walker reads), shallowest first. A file `start` needs none: the walk root
/// itself is never filtered.
fn ancestor_ignores(root: &Path, start: &Path) -> Vec<Gitignore> {
    let Ok(rel) = start.strip_prefix(root) else {
        return Vec::new();
    };
    if rel.as_os_str().is_empty() {
        // The walk starts at the root: the walker reads the root's files itself.
        return Vec::new();
    }
    let mut dirs = vec![root.to_path_buf()];
    let mut current = root.to_path_buf();
    let components: Vec<_> = rel.components().collect();
    for component in components.iter().take(components.len().saturating_sub(1)) {
        current.push(component);
        dirs.push(current.clone());
    }
    dirs.into_iter()
        .filter_map(|dir| {
            let mut builder = GitignoreBuilder::new(&dir);
            let mut any = false;
            for name in [".gitignore", ".ignore"] {
                let file = dir.join(name);
                if file.is_file() {
                    any = true;
                    let _ = builder.add(file);
                }
            }
            any.then(|| builder.build().ok()).flatten()
        })
        .collect()
}
