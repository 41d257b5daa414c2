//! The `glob` tool: paths matching a glob, with real glob semantics.
//!
//! `*`, `?` and `[...]` never cross a `/`; `**` matches any number of directories (including
//! none); `{a,b}` is alternation. The pattern is matched against paths relative to `path` (default:
//! the repository root), so `*.rs` matches only top-level files and `**/*.rs` matches at any depth.
//! Walking starts at the pattern's literal directory prefix. Results are sorted and capped, and
//! memory is bounded like grep's: every match is counted, but only the first `glob_max_results`
//! by path are kept (a bounded max-heap), so a pattern matching a million paths holds a hundred.
//!
//! Retries when nothing matches (at most two): a pattern without `/` is retried as `**/pattern`,
//! then case-insensitively.

use globset::{GlobBuilder, GlobMatcher};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::closest::with_suggestions;
use crate::error::ToolError;
use crate::grep::resolve_start;
use crate::name::ToolName;
use crate::output::{group_thousands, plural};
use crate::sandbox::{EntryKind, Resolved};
use crate::tool::{Tool, ToolContext, parse_arguments, schema_of};

/// Arguments of the `glob` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// Glob pattern relative to `path`, e.g. `**/*.rs`, `src/*/mod.rs`, `**/{Makefile,*.mk}`.
    pub pattern: String,
    /// Directory the pattern is relative to. Default: the repository root.
    #[serde(default)]
    pub path: Option<String>,
}

/// The `glob` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GlobTool;

const DESCRIPTION: &str = "Find files and directories by glob pattern, relative to the repository \
root (or `path`). Real glob semantics: `*` and `?` stay within one directory, `**` spans any number \
of directories, `{a,b}` alternates — so `*.rs` matches only top-level files and `**/*.rs` matches at \
any depth. Respects .gitignore; skips .git/, vendor/ and node_modules/. Returns sorted paths \
(directories end with `/`), at most 100, with the count of the rest.";

impl Tool for GlobTool {
    fn tool_name(&self) -> ToolName {
        ToolName::Glob
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn parameters_schema(&self) -> serde_json::Value {
        schema_of::<GlobArgs>()
    }

    fn call(
        &self,
        context: &ToolContext,
        arguments: serde_json::Value,
    ) -> Result<String, ToolError> {
        let arguments: GlobArgs = parse_arguments(arguments)?;
        let sandbox = context.sandbox();
        let path = arguments.path.as_deref().map(|path| context.local(path));
        let base =
            resolve_start(sandbox, path).map_err(|error| with_suggestions(context, error))?;
        if base.kind != EntryKind::Dir {
            return Err(ToolError::InvalidArguments(format!(
                "`path` {} is a file, not a directory",
                context.place(&base.rel)
            )));
        }
        let pattern = normalise_pattern(context.local(&arguments.pattern))?;

        let keep = context.limits().glob_max_results;
        let mut attempts: Vec<(String, usize)> = Vec::new();
        let mut paths = find(context, &base, &pattern, false, keep)?;
        attempts.push((pattern.clone(), paths.total));
        let mut retries: Vec<(String, bool)> = Vec::new();
        if !pattern.contains('/') && !pattern.starts_with("**") {
            retries.push((format!("**/{pattern}"), false));
        }
        let last = retries
            .last()
            .map_or(pattern.clone(), |(retry, _)| retry.clone());
        retries.push((last, true));
        if paths.total == 0 {
            for (retry, case_insensitive) in retries {
                paths = find(context, &base, &retry, case_insensitive, keep)?;
                let label = if case_insensitive {
                    format!("{retry} (case-insensitive)")
                } else {
                    retry
                };
                attempts.push((label, paths.total));
                if paths.total > 0 {
                    break;
                }
            }
        }
        Ok(render(context, &base, &paths, &attempts))
    }
}

/// Strips `./` and a leading `/`, and refuses `..` components.
fn normalise_pattern(pattern: &str) -> Result<String, ToolError> {
    let trimmed = pattern.trim();
    if trimmed.is_empty() {
        return Err(ToolError::InvalidArguments(
            "`pattern` must not be empty".into(),
        ));
    }
    if trimmed.contains('\0') {
        return Err(ToolError::Refused {
            path: trimmed.replace('\0', "\\0"),
            reason: "pattern contains a NUL byte".into(),
        });
    }
    let mut text = trimmed;
    while let Some(rest) = text.strip_prefix("./") {
        text = rest;
    }
    let text = text.trim_start_matches('/');
    if text.split('/').any(|component| component == "..") {
        return Err(ToolError::Refused {
            path: trimmed.to_string(),
            reason: "`..` is not allowed in glob patterns; patterns are relative to the repository"
                .into(),
        });
    }
    Ok(text.to_string())
}

fn compile(pattern: &str, case_insensitive: bool) -> Result<GlobMatcher, ToolError> {
    Ok(GlobBuilder::new(pattern)
        .literal_separator(true)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|error| ToolError::InvalidPattern(format!("glob `{pattern}`: {error}")))?
        .compile_matcher())
}

/// The leading directory components of `pattern` that contain no glob syntax.
fn literal_prefix(pattern: &str) -> Vec<&str> {
    let components: Vec<&str> = pattern.split('/').collect();
    components[..components.len() - 1]
        .iter()
        .take_while(|component| {
            !component.contains(['*', '?', '[', ']', '{', '}', '\\']) && !component.is_empty()
        })
        .copied()
        .collect()
}

/// The matches of one pattern: the first `keep` paths by path order, and how many matched in all.
#[derive(Debug, Default)]
struct Found {
    /// Sorted; at most `keep`.
    shown: Vec<String>,
    total: usize,
}

/// Keeps the `keep` smallest paths seen (a max-heap whose top is the largest kept) and counts
/// every path: memory stays at `keep` paths however many match.
#[derive(Debug)]
struct Kept {
    keep: usize,
    heap: std::collections::BinaryHeap<String>,
    total: usize,
}

impl Kept {
    fn new(keep: usize) -> Kept {
        Kept {
            keep,
            heap: std::collections::BinaryHeap::new(),
            total: 0,
        }
    }

    fn push(&mut self, path: String) {
        self.total += 1;
        if self.heap.len() < self.keep {
            self.heap.push(path);
        } else if self.heap.peek().is_some_and(|largest| path < *largest) {
            self.heap.pop();
            self.heap.push(path);
        }
    }

    fn finish(self) -> Found {
        Found {
            shown: self.heap.into_sorted_vec(),
            total: self.total,
        }
    }
}

/// Paths under `base` (relative to `base`) matching `pattern`: the first `keep` sorted, and the
/// count of all; directories end with `/`.
fn find(
    context: &ToolContext,
    base: &Resolved,
    pattern: &str,
    case_insensitive: bool,
    keep: usize,
) -> Result<Found, ToolError> {
    let matcher = compile(pattern, case_insensitive)?;
    let sandbox = context.sandbox();
    let prefix = literal_prefix(pattern);
    let start = if prefix.is_empty() || case_insensitive {
        base.clone()
    } else {
        let joined = if base.rel.is_empty() {
            prefix.join("/")
        } else {
            format!("{}/{}", base.rel, prefix.join("/"))
        };
        match sandbox.resolve(&joined) {
            Ok(start) if start.kind == EntryKind::Dir => start,
            Ok(_) | Err(ToolError::NotFound { .. }) => return Ok(Found::default()),
            Err(error) => return Err(error),
        }
    };
    let mut paths = Kept::new(keep);
    for entry in sandbox.walker(&start.abs).build().flatten() {
        context.check_stop()?;
        if entry.depth() == 0 && start.abs == base.abs {
            continue;
        }
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        let Ok(rel) = entry.path().strip_prefix(&base.abs) else {
            continue;
        };
        let rel = rel.to_string_lossy();
        if rel.is_empty() || !matcher.is_match(rel.as_ref()) {
            continue;
        }
        paths.push(if file_type.is_dir() {
            format!("{rel}/")
        } else {
            rel.into_owned()
        });
    }
    Ok(paths.finish())
}

fn render(
    context: &ToolContext,
    base: &Resolved,
    found: &Found,
    attempts: &[(String, usize)],
) -> String {
    let paths = &found.shown;
    let mut out = String::new();
    if attempts.len() > 1 {
        let tried: Vec<String> = attempts
            .iter()
            .map(|(pattern, count)| format!("tried {pattern}: {}", plural(*count, "path", "paths")))
            .collect();
        out.push_str(&format!("Attempts: {}\n", tried.join("; ")));
    }
    let prefix = if base.rel.is_empty() {
        String::new()
    } else {
        format!("{}/", base.rel)
    };
    for path in paths {
        out.push_str(&context.place(&format!("{prefix}{path}")));
        out.push('\n');
    }
    let pattern = &attempts
        .last()
        .map_or(String::new(), |(pattern, _)| pattern.clone());
    let place = match (base.rel.is_empty(), context.label()) {
        (true, None) => String::new(),
        (true, Some(label)) => format!(" in {label}"),
        (false, _) => format!(" in {}", context.place(&base.rel)),
    };
    if found.total == 0 {
        out.push_str(&format!("No paths match {pattern}{place}\n"));
    } else if found.total > paths.len() {
        out.push_str(&format!(
            "… and {} more ({} match {pattern}{place}) — narrow the pattern\n",
            group_thousands(found.total - paths.len()),
            plural(found.total, "path", "paths")
        ));
    } else {
        out.push_str(&format!(
            "{} match {pattern}{place}\n",
            plural(found.total, "path", "paths")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the first paths by path order are kept, however many match, and all are counted.
    #[test]
    fn kept_paths_are_bounded_and_counted() {
        let mut kept = Kept::new(3);
        for n in (0..10_000).rev() {
            kept.push(format!("f{n:05}"));
            assert!(kept.heap.len() <= 3);
        }
        let found = kept.finish();
        assert_eq!(found.shown, ["f00000", "f00001", "f00002"]);
        assert_eq!(found.total, 10_000);
    }

    #[test]
    fn prefixes() {
        assert_eq!(literal_prefix("src/lib/*.rs"), ["src", "lib"]);
        assert_eq!(literal_prefix("src/**/x.rs"), ["src"]);
        assert!(literal_prefix("*.rs").is_empty());
        assert!(literal_prefix("{a,b}/x").is_empty());
    }

    #[test]
    fn patterns() {
        assert_eq!(normalise_pattern("./src/*.rs").unwrap(), "src/*.rs");
        assert_eq!(normalise_pattern("/src/*.rs").unwrap(), "src/*.rs");
        assert!(normalise_pattern("../*").is_err());
        assert!(normalise_pattern("a/../../b").is_err());
        assert!(normalise_pattern("").is_err());
    }
}
