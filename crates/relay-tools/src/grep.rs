//! The `grep` tool: regex or literal search over the checkout with ripgrep's library crates.
//!
//! The engine is in [`crate::search`], the deterministic retries in [`crate::retry`]; this module
//! holds the tool itself and the output format.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::ToolError;
use crate::name::ToolName;
use crate::output::{group_thousands, plural};
use crate::sandbox::{EntryKind, Resolved, Sandbox};
use crate::search::{LineKind, SearchOutcome};
use crate::tool::{Tool, ToolContext, parse_arguments, schema_of};

/// Arguments of the `grep` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regular expression (Rust regex syntax, like ripgrep), or a plain string when `literal` is true.
    pub pattern: String,
    /// File or directory to search, relative to the repository root. Default: the whole repository.
    #[serde(default)]
    pub path: Option<String>,
    /// Only search files matching this glob. Without a `/` it matches file names (`*.rs`); with a
    /// `/` it matches paths from the repository root (`src/**/*.go`).
    #[serde(default)]
    pub glob: Option<String>,
    /// Match case-insensitively.
    #[serde(default)]
    pub case_insensitive: bool,
    /// Treat `pattern` as a literal string instead of a regular expression.
    #[serde(default)]
    pub literal: bool,
    /// Lines of context to show before and after each match (0-10).
    #[serde(default)]
    #[schemars(range(min = 0, max = 10))]
    pub context: Option<usize>,
}

/// The `grep` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrepTool;

const DESCRIPTION: &str = "Search file contents in the repository with a regular expression \
(Rust/ripgrep syntax) or a literal string. Respects .gitignore and skips binary files, .git/, vendor/ \
and node_modules/. Returns matching lines as `path:line: text`, sorted by path, at most 50 per call, \
with the total count of matches and files. Narrow with `path` (file or directory) or `glob` \
(`*.py`, `src/**/*.go`). Use `context` for surrounding lines. When nothing matches, the tool \
retries by itself (case-insensitive, then a broadened pattern, then the parent directory) and \
says what it tried.";

impl Tool for GrepTool {
    fn tool_name(&self) -> ToolName {
        ToolName::Grep
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn parameters_schema(&self) -> serde_json::Value {
        schema_of::<GrepArgs>()
    }

    fn call(
        &self,
        context: &ToolContext,
        arguments: serde_json::Value,
    ) -> Result<String, ToolError> {
        let arguments: GrepArgs = parse_arguments(arguments)?;
        crate::retry::grep_with_retries(context, &arguments)
    }
}

/// Renders hits as `path:line: text` (context lines as `path-line- text`), showing at most
/// `max_shown` matching lines, followed by the summary line.
pub fn format_hits(
    outcome: &SearchOutcome,
    max_shown: usize,
    with_context: bool,
) -> (String, bool) {
    let mut out = String::new();
    let mut shown = 0usize;
    let mut truncated = false;
    'files: for (index, file) in outcome.files.iter().enumerate() {
        if shown >= max_shown {
            truncated = true;
            break;
        }
        if with_context && index > 0 {
            out.push_str("--\n");
        }
        for line in &file.lines {
            if line.kind == LineKind::Match {
                if shown >= max_shown {
                    truncated = true;
                    break 'files;
                }
                shown += 1;
            } else if line.kind == LineKind::Before && shown >= max_shown {
                truncated = true;
                break 'files;
            }
            if line.break_before {
                out.push_str("--\n");
            }
            let separator = if line.kind == LineKind::Match {
                ':'
            } else {
                '-'
            };
            out.push_str(&file.path);
            out.push(separator);
            out.push_str(&line.number.to_string());
            out.push(separator);
            out.push(' ');
            out.push_str(&line.text);
            out.push('\n');
        }
    }
    truncated |= shown < outcome.total_matches;
    (out, truncated)
}

/// The summary line after the hits. (Skipped binary files are mentioned only when nothing
/// matched, see [`crate::retry`]: in a normal result they are noise.)
pub fn summary_line(outcome: &SearchOutcome, max_shown: usize, truncated: bool) -> String {
    let mut line = counts_line(outcome, max_shown, truncated);
    if outcome.stopped.is_some() {
        line.push_str(" — the search hit the call's deadline: these counts are lower bounds");
    }
    if outcome.long_line_files > 0 {
        line.push_str(&format!(
            "; {} with a line over {} MiB not searched",
            plural(outcome.long_line_files, "file", "files"),
            crate::search::MAX_LINE_BUFFER_BYTES / (1024 * 1024)
        ));
    }
    line
}

fn counts_line(outcome: &SearchOutcome, max_shown: usize, truncated: bool) -> String {
    if truncated {
        format!(
            "Showing {} of {} in {} — narrow with path or a more specific pattern",
            group_thousands(max_shown.min(outcome.total_matches)),
            plural(outcome.total_matches, "match", "matches"),
            plural(outcome.total_files(), "file", "files"),
        )
    } else {
        format!(
            "{} in {}",
            plural(outcome.total_matches, "match", "matches"),
            plural(outcome.total_files(), "file", "files")
        )
    }
}

/// Resolves the `path` argument (default: the root) for a search.
pub fn resolve_start(sandbox: &Sandbox, path: Option<&str>) -> Result<Resolved, ToolError> {
    match path.map(str::trim).filter(|path| !path.is_empty()) {
        None => sandbox.resolve("."),
        Some(path) => sandbox.resolve(path),
    }
}

/// Whether a resolved start is the repository root.
pub fn is_root(resolved: &Resolved) -> bool {
    resolved.kind == EntryKind::Dir && resolved.rel.is_empty()
}
