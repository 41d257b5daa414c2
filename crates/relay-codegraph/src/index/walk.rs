//! Finding source files and Go modules in a checkout.

use std::path::Path;

use relay_core::repo_config::ExcludeSet;

use super::go::modules::{GoModules, parse_module_line};
use super::source::{SkipReason, read_go_mod};
use super::{Error, IndexOptions, Result};
use crate::model::Language;

/// Directories never descended into (besides hidden ones and what `.gitignore` excludes).
const SKIPPED_DIRS: &[&str] = &["testdata", "node_modules", "__pycache__", "site-packages"];

/// A source file found by the walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SourceFile {
    /// Repository-relative path with `/` separators.
    pub rel: String,
    pub language: Language,
}

/// Language of a repository-relative path, if we index it.
pub(crate) fn language_of(rel: &str) -> Option<Language> {
    super::frontend::for_path(rel).map(|frontend| frontend.language())
}

/// Whether a repository-relative path lies in a directory the walk skips.
pub(crate) fn is_skipped_path(rel: &str) -> bool {
    let mut parts: Vec<&str> = rel.split('/').collect();
    parts.pop();
    parts
        .iter()
        .any(|p| p.starts_with('.') || SKIPPED_DIRS.contains(p))
}

/// What a walk found: the Go and Python files to parse (sorted), the Go modules, and the files
/// named like source that are skipped before parsing (with why).
#[derive(Debug, Default)]
pub(crate) struct Discovered {
    pub files: Vec<SourceFile>,
    pub modules: GoModules,
    pub skipped: Vec<(String, SkipReason)>,
}

/// Walks `root` for Go and Python files and `go.mod` files. Nothing in the tree fails the walk:
/// an entry the walk cannot list, a FIFO, symlink or device named like source, and a file over
/// the size cap are skipped and reported in [`Discovered::skipped`]; an unreadable or non-UTF-8
/// `go.mod` is read leniently or skipped with a warning.
pub(crate) fn discover(root: &Path, opts: &IndexOptions) -> Result<Discovered> {
    if !root.is_dir() {
        return Err(Error::NotADirectory(root.to_path_buf()));
    }
    let mut files = Vec::new();
    let mut go_mods = Vec::new();
    let mut go_replaces = Vec::new();
    let mut skipped = Vec::new();
    // `filter_entry` wants owned ('static) captures.
    let (walk_root, exclude) = (root.to_path_buf(), opts.exclude.clone());
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .parents(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let skipped_dir = is_dir
                && entry.depth() > 0
                && entry
                    .file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n));
            !(skipped_dir || is_excluded(&walk_root, entry.path(), is_dir, &exclude))
        })
        .build();
    for entry in walker {
        let entry = match entry {
            Ok(entry) => entry,
            Err(error) => {
                // An unreadable directory or entry: what is below it is not indexed.
                tracing::warn!(error.message = %error, "index walk: entry skipped");
                let rel = walk_error_path(&error)
                    .and_then(|path| path.strip_prefix(root).ok().and_then(rel_string))
                    .unwrap_or_default();
                skipped.push((rel, SkipReason::Unreadable));
                continue;
            }
        };
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(rel) = rel_string(rel) else { continue };
        let is_file = entry.file_type().is_some_and(|t| t.is_file());
        if rel == "go.mod" || rel.ends_with("/go.mod") {
            if !is_file {
                continue;
            }
            let Some(text) = read_go_mod(entry.path(), opts.max_file_bytes) else {
                continue;
            };
            let dir = rel
                .strip_suffix("go.mod")
                .unwrap_or("")
                .trim_end_matches('/');
            if let Some(module) = parse_module_line(&text) {
                go_mods.push((dir.to_owned(), module));
            }
            go_replaces.push((dir.to_owned(), super::go::gomod::parse(&text).replaces));
            continue;
        }
        let Some(language) = language_of(&rel) else {
            continue;
        };
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            continue;
        }
        if !is_file {
            skipped.push((rel, SkipReason::NotRegularFile));
            continue;
        }
        let too_big = entry
            .metadata()
            .is_ok_and(|m| m.len() > opts.max_file_bytes);
        if too_big {
            skipped.push((rel, SkipReason::TooLarge));
        } else {
            files.push(SourceFile { rel, language });
        }
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    skipped.sort();
    Ok(Discovered {
        files,
        modules: GoModules::new(go_mods).with_replaces(go_replaces),
        skipped,
    })
}

/// Whether the repository's configuration excludes `path` (under `root`).
fn is_excluded(root: &Path, path: &Path, is_dir: bool, exclude: &ExcludeSet) -> bool {
    !exclude.is_empty()
        && path
            .strip_prefix(root)
            .ok()
            .and_then(rel_string)
            .is_some_and(|rel| exclude.is_excluded(&rel, is_dir))
}

/// The path an `ignore` walk error is about, if it names one.
fn walk_error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}

/// The files the indexer reads under `root` with `opts` (absolute paths, sorted): the walk's own
/// filter, for tools such as the parse-only benchmark that must read exactly what the index reads.
pub fn indexed_files(root: &Path, opts: &IndexOptions) -> Result<Vec<std::path::PathBuf>> {
    let discovered = discover(root, opts)?;
    Ok(discovered
        .files
        .into_iter()
        .map(|file| root.join(file.rel))
        .collect())
}

/// A path relative to the root as a `/`-separated string (`None` if not UTF-8).
pub(crate) fn rel_string(rel: &Path) -> Option<String> {
    let mut out = String::new();
    for part in rel.components() {
        let part = part.as_os_str().to_str()?;
        if !out.is_empty() {
            out.push('/');
        }
        out.push_str(part);
    }
    Some(out)
}
