//! Finding source files and Go modules in a checkout.

use std::path::Path;

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
    let mut skipped = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .parents(false)
        .follow_links(false)
        .filter_entry(|entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            !(is_dir
                && entry.depth() > 0
                && entry
                    .file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n)))
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
            if let Some(module) = parse_module_line(&text) {
                let dir = rel.strip_suffix("go.mod").unwrap_or("");
                go_mods.push((dir.trim_end_matches('/').to_owned(), module));
            }
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
        modules: GoModules::new(go_mods),
        skipped,
    })
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

/// The `module` directive of a `go.mod` file.
pub(crate) fn parse_module_line(text: &str) -> Option<String> {
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        if let Some(rest) = line.strip_prefix("module") {
            if !rest.starts_with([' ', '\t', '"']) {
                continue;
            }
            let module = rest.trim().trim_matches('"').trim_matches('`').trim();
            if !module.is_empty() {
                return Some(module.to_owned());
            }
        }
    }
    None
}

/// The Go modules of a repository: `(module directory, module path)`, deepest directory first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GoModules {
    modules: Vec<(String, String)>,
}

impl GoModules {
    pub(crate) fn new(mut modules: Vec<(String, String)>) -> GoModules {
        modules.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        GoModules { modules }
    }

    /// The import path of the package in repository directory `dir` (`""` for the root), or
    /// `None` when the directory is outside every module and is the root itself.
    pub(crate) fn package_path(&self, dir: &str) -> Option<String> {
        // Vendored packages are imported by the path below `vendor/`.
        if let Some(pos) = vendor_split(dir) {
            return Some(dir[pos..].to_owned());
        }
        for (mod_dir, module) in &self.modules {
            let rest = if mod_dir.is_empty() {
                Some(dir)
            } else if dir == mod_dir {
                Some("")
            } else {
                dir.strip_prefix(mod_dir.as_str())
                    .and_then(|r| r.strip_prefix('/'))
            };
            if let Some(rest) = rest {
                // The standard library's module "std" has import paths without a prefix.
                if module == "std" {
                    return Some(if rest.is_empty() {
                        "std".to_owned()
                    } else {
                        rest.to_owned()
                    });
                }
                return Some(if rest.is_empty() {
                    module.clone()
                } else {
                    format!("{module}/{rest}")
                });
            }
        }
        if dir.is_empty() {
            None
        } else {
            Some(dir.to_owned())
        }
    }
}

/// Byte offset just after the last `vendor/` directory component of `dir`, if any.
fn vendor_split(dir: &str) -> Option<usize> {
    let mut found = None;
    let mut offset = 0;
    for part in dir.split('/') {
        offset += part.len() + 1;
        if part == "vendor" && offset < dir.len() {
            found = Some(offset);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_paths_follow_the_deepest_module() {
        let mods = GoModules::new(vec![
            (String::new(), "example.com/app".into()),
            ("tools".into(), "example.com/tools".into()),
        ]);
        assert_eq!(
            mods.package_path("internal/brain").as_deref(),
            Some("example.com/app/internal/brain")
        );
        assert_eq!(mods.package_path("").as_deref(), Some("example.com/app"));
        assert_eq!(
            mods.package_path("tools/gen").as_deref(),
            Some("example.com/tools/gen")
        );
        assert_eq!(
            mods.package_path("toolsx").as_deref(),
            Some("example.com/app/toolsx")
        );
        assert_eq!(
            mods.package_path("vendor/golang.org/x/net").as_deref(),
            Some("golang.org/x/net")
        );
        let std = GoModules::new(vec![(String::new(), "std".into())]);
        assert_eq!(std.package_path("net/http").as_deref(), Some("net/http"));
        assert_eq!(GoModules::default().package_path(""), None);
    }

    #[test]
    fn module_lines_are_parsed() {
        assert_eq!(
            parse_module_line("// c\nmodule \"example.com/x\" // y\n").as_deref(),
            Some("example.com/x")
        );
        assert_eq!(parse_module_line("modules x"), None);
    }
}
