//! The `history` tool: the commits that touched a file or directory at the explored commit, or,
//! for a line range, who last changed each line (blame) and the commits that touched them.
//!
//! The path goes through the sandbox like `read`'s (the same refusals, the same "did you mean");
//! git runs in relay-repo ([`relay_repo::code_history`], the only crate that runs it), under its
//! bounds and this call's deadline and cancellation. Like grep, what is shown is bounded and the
//! rest is counted honestly ("Showing 10 of at least 1,001 commits").

use schemars::JsonSchema;
use serde::Deserialize;

use relay_repo::code_history::{
    BlameRange, CommitCount, CommitLog, CommitSummary, HistoryError, HistoryPath, LineRange,
    MAX_BLAME_LINES, PathKind,
};

use crate::closest::closest_paths;
use crate::error::ToolError;
use crate::name::ToolName;
use crate::output::group_thousands;
use crate::sandbox::EntryKind;
use crate::tool::{Tool, ToolContext, parse_arguments, schema_of};

/// Commits shown when `limit` is not given.
pub const DEFAULT_SHOWN_COMMITS: usize = 10;
/// Largest accepted `limit`.
pub const MAX_SHOWN_COMMITS: usize = 30;
/// Blame groups (consecutive lines of one commit) shown; the rest is counted.
pub const MAX_SHOWN_BLAME_GROUPS: usize = 40;
/// Characters of a short SHA.
const SHORT_SHA: usize = 10;

/// Arguments of the `history` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryArgs {
    /// File or directory, relative to the repository root.
    pub path: String,
    /// First line of a range of the file (1-based): adds who last changed each line (blame) and
    /// limits the commits to those that touched the range.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub start_line: Option<u32>,
    /// Last line of the range (inclusive; default: `start_line`). At most 200 lines.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub end_line: Option<u32>,
    /// Commits to show, newest first. Default 10, at most 30.
    #[serde(default)]
    #[schemars(range(min = 1, max = 30))]
    pub limit: Option<usize>,
}

/// The `history` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct HistoryTool;

const DESCRIPTION: &str = "Git history of a file or directory at the explored commit: the commits \
that touched it, newest first (short SHA, date, author, subject), following a file's renames. With \
`start_line` (and `end_line`, at most 200 lines) it shows who last changed each of those lines \
(blame) and the commits that touched them. Use it for \"why is this like this?\" and \"since when?\": \
the subjects say why, the dates say when. Shows `limit` commits (default 10, at most 30) and counts \
the rest.";

impl Tool for HistoryTool {
    fn tool_name(&self) -> ToolName {
        ToolName::History
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn parameters_schema(&self) -> serde_json::Value {
        schema_of::<HistoryArgs>()
    }

    fn available(&self, context: &ToolContext) -> bool {
        context.history().is_some()
    }

    fn call(
        &self,
        context: &ToolContext,
        arguments: serde_json::Value,
    ) -> Result<String, ToolError> {
        let arguments: HistoryArgs = parse_arguments(arguments)?;
        let history = context.history().ok_or_else(|| {
            ToolError::Unavailable(
                "history is not available: this checkout is not a git repository; use grep and read"
                    .into(),
            )
        })?;
        let shown = arguments.limit.unwrap_or(DEFAULT_SHOWN_COMMITS);
        if shown == 0 || shown > MAX_SHOWN_COMMITS {
            return Err(ToolError::InvalidArguments(format!(
                "`limit` must be between 1 and {MAX_SHOWN_COMMITS}"
            )));
        }
        let lines = line_range(&arguments)?;
        let sandbox = context.sandbox();
        let requested = context.local(&arguments.path);
        let resolved = match sandbox.resolve(requested) {
            Err(ToolError::NotFound { path, .. }) => {
                let suggestions = closest_paths(context, requested)
                    .into_iter()
                    .map(|candidate| candidate.path)
                    .collect();
                return Err(ToolError::NotFound { path, suggestions });
            }
            other => other?,
        };
        let kind = match resolved.kind {
            EntryKind::File => PathKind::File,
            EntryKind::Dir => PathKind::Directory,
        };
        // A directory's log would list commits that only touched paths the repository excludes.
        if kind == PathKind::Directory && !sandbox.excludes().is_empty() {
            return Err(ToolError::Refused {
                path: display(&resolved.rel),
                reason: "this repository excludes paths, so only a file's history is shown".into(),
            });
        }
        let path = HistoryPath {
            path: &resolved.rel,
            kind,
        };
        let stop = || context.control().stop().is_some();
        let failed = |error| history_error(context, error);
        let commit = short(history.commit());
        let name = context.place(&display(&resolved.rel));
        let mut out = String::new();
        match lines {
            None => {
                let log = history.log(path, None, shown, &stop).map_err(failed)?;
                let follows = if kind == PathKind::File {
                    "; renames followed"
                } else {
                    ""
                };
                out.push_str(&format!(
                    "History of {name} at {commit} (newest first{follows}):\n"
                ));
                render_log(&mut out, &log, &name);
            }
            Some(range) => {
                let blame = history.blame(&resolved.rel, range, &stop).map_err(failed)?;
                let lines_name = span(range.start, range.end);
                out.push_str(&format!(
                    "{lines_name} of {name} at {commit}, each last changed by (blame):\n"
                ));
                render_blame(&mut out, &blame);
                let log = history
                    .log(path, Some(range), shown, &stop)
                    .map_err(failed)?;
                out.push_str(&format!(
                    "\nCommits that touched {} (newest first):\n",
                    span(range.start, range.end).to_lowercase()
                ));
                render_log(&mut out, &log, &name);
            }
        }
        Ok(out)
    }
}

/// The range the arguments ask for, checked against the tool's bound.
fn line_range(arguments: &HistoryArgs) -> Result<Option<LineRange>, ToolError> {
    let (start, end) = match (arguments.start_line, arguments.end_line) {
        (None, None) => return Ok(None),
        (None, Some(_)) => {
            return Err(ToolError::InvalidArguments(
                "`end_line` needs `start_line`".into(),
            ));
        }
        (Some(start), end) => (start, end.unwrap_or(start)),
    };
    if start == 0 || end < start || end - start >= MAX_BLAME_LINES {
        return Err(ToolError::InvalidArguments(format!(
            "the line range must be 1-based with `end_line` ≥ `start_line`, at most {MAX_BLAME_LINES} lines"
        )));
    }
    Ok(Some(LineRange { start, end }))
}

fn render_log(out: &mut String, log: &CommitLog, name: &str) {
    for commit in &log.commits {
        out.push_str(&commit_line(commit));
        out.push('\n');
    }
    let shown = log.commits.len();
    let total = match log.count {
        CommitCount::Exact(total) => group_thousands(total),
        CommitCount::AtLeast(total) => format!("at least {}", group_thousands(total)),
    };
    if shown == 0 {
        out.push_str(&format!("No commit touched {name} up to this commit.\n"));
        return;
    }
    let all = matches!(log.count, CommitCount::Exact(total) if total == shown);
    let commits = if all && shown == 1 {
        "commit"
    } else {
        "commits"
    };
    out.push_str(&format!(
        "Showing {} of {total} {commits}",
        group_thousands(shown)
    ));
    if !all {
        out.push_str(&format!(
            " — ask a line range (`start_line`, `end_line`) or a larger `limit` (at most {MAX_SHOWN_COMMITS}) to see others"
        ));
    }
    out.push('\n');
}

fn render_blame(out: &mut String, blame: &[BlameRange]) {
    for range in blame.iter().take(MAX_SHOWN_BLAME_GROUPS) {
        out.push_str(&format!(
            "{}: {}\n",
            span(range.start, range.end),
            commit_line(&range.commit)
        ));
    }
    if blame.len() > MAX_SHOWN_BLAME_GROUPS {
        out.push_str(&format!(
            "… {} more line groups not shown — ask a narrower range\n",
            group_thousands(blame.len() - MAX_SHOWN_BLAME_GROUPS)
        ));
    }
}

/// `abcdef1234 2024-05-01 Ann Author — subject`.
fn commit_line(commit: &CommitSummary) -> String {
    format!(
        "{} {} {} — {}",
        short(&commit.sha),
        commit.date,
        commit.author,
        commit.subject
    )
}

/// `Line 7` or `Lines 7-9`.
fn span(start: u32, end: u32) -> String {
    if start == end {
        format!("Line {start}")
    } else {
        format!("Lines {start}-{end}")
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(SHORT_SHA)]
}

/// The path as the agent reads it; the root is `.`.
fn display(rel: &str) -> String {
    if rel.is_empty() {
        ".".to_owned()
    } else {
        rel.to_owned()
    }
}

/// What the agent reads when git did not answer: a stopped call is this call's own deadline or
/// cancellation error.
fn history_error(context: &ToolContext, error: HistoryError) -> ToolError {
    match error {
        HistoryError::Stopped => context
            .control()
            .stop()
            .map_or(ToolError::Cancelled, |stop| context.stop_error(stop)),
        HistoryError::Timeout { seconds } => ToolError::DeadlineExceeded { seconds },
        HistoryError::Refused(reason) => ToolError::InvalidArguments(reason),
        HistoryError::Git(message) => ToolError::History(message),
        other => ToolError::History(other.to_string()),
    }
}
