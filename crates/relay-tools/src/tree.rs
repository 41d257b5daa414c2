//! The `tree` tool: a directory outline to a depth, with file counts for directories.
//!
//! One walk counts every (non-ignored) file under each directory; directories at the depth limit
//! are folded into `name/ (N files)`. Skipped directories (`vendor/`, `node_modules/`) are shown as
//! `(skipped)` without being walked; `.git/` is not shown at all.

use crate::sandbox::Sandbox;
use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::closest::with_suggestions;
use crate::control::CallControl;
use crate::error::ToolError;
use crate::grep::resolve_start;
use crate::name::ToolName;
use crate::output::{group_thousands, plural};
use crate::sandbox::{EntryKind, Resolved};
use crate::tool::{Tool, ToolContext, parse_arguments, schema_of};
use crate::walk::SkipRecorder;

/// Arguments of the `tree` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TreeArgs {
    /// Directory to outline, relative to the repository root. Default: the root.
    #[serde(default)]
    pub path: Option<String>,
    /// How many levels to expand (1-6). Default 2.
    #[serde(default)]
    #[schemars(range(min = 1, max = 6))]
    pub depth: Option<usize>,
}

/// The `tree` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TreeTool;

const DESCRIPTION: &str = "Show the directory outline of the repository (or of `path`) to a depth \
(default 2, at most 6). Directories show how many files they contain; directories below the depth \
are folded. Respects .gitignore; vendor/ and node_modules/ are listed as skipped. Use it first to \
get the lay of the land, then glob/grep/read.";

impl Tool for TreeTool {
    fn tool_name(&self) -> ToolName {
        ToolName::Tree
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn parameters_schema(&self) -> serde_json::Value {
        schema_of::<TreeArgs>()
    }

    fn call(
        &self,
        context: &ToolContext,
        arguments: serde_json::Value,
    ) -> Result<String, ToolError> {
        let arguments: TreeArgs = parse_arguments(arguments)?;
        let limits = context.limits();
        let depth = arguments.depth.unwrap_or(limits.tree_default_depth);
        if depth == 0 || depth > limits.tree_max_depth {
            return Err(ToolError::InvalidArguments(format!(
                "`depth` must be between 1 and {}",
                limits.tree_max_depth
            )));
        }
        let sandbox = context.sandbox();
        let path = arguments.path.as_deref().map(|path| context.local(path));
        let start =
            resolve_start(sandbox, path).map_err(|error| with_suggestions(context, error))?;
        if start.kind != EntryKind::Dir {
            return Err(ToolError::InvalidArguments(format!(
                "{} is a file; use read to see it",
                context.place(&start.rel)
            )));
        }
        let text = outline(
            context,
            sandbox,
            &start,
            depth,
            limits.tree_max_entries,
            context.control(),
        );
        context.check_stop()?;
        Ok(text)
    }
}

#[derive(Debug, Default)]
struct Node {
    files: usize,
    children: BTreeMap<(bool, String), Node>,
    skipped: bool,
    symlink: bool,
}

fn outline(
    context: &ToolContext,
    sandbox: &Sandbox,
    start: &Resolved,
    depth: usize,
    max_entries: usize,
    control: &CallControl,
) -> String {
    let skipped: SkipRecorder = Arc::default();
    let builder = sandbox.walker_recording(&start.abs, Arc::clone(&skipped));
    let mut root = Node::default();
    for entry in builder.build().flatten() {
        if control.stop().is_some() {
            break;
        }
        if entry.depth() == 0 {
            continue;
        }
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        let Ok(rel) = entry.path().strip_prefix(&start.abs) else {
            continue;
        };
        let parts: Vec<String> = rel
            .iter()
            .map(|part| part.to_string_lossy().into_owned())
            .collect();
        insert(
            &mut root,
            &parts,
            file_type.is_dir(),
            file_type.is_symlink(),
            false,
            depth,
        );
    }
    for path in skipped
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .iter()
    {
        if let Ok(rel) = path.strip_prefix(&start.abs) {
            let parts: Vec<String> = rel
                .iter()
                .map(|part| part.to_string_lossy().into_owned())
                .collect();
            insert(&mut root, &parts, true, false, true, depth);
        }
    }
    let title = if start.rel.is_empty() {
        context.place(".")
    } else {
        context.place(&start.rel)
    };
    let mut out = format!("{title}/ ({})\n", plural(root.files, "file", "files"));
    let mut budget = max_entries;
    let mut hidden = 0usize;
    render(&root, "", &mut out, &mut budget, &mut hidden);
    if hidden > 0 {
        out.push_str(&format!(
            "… {} more entries not shown — outline a subdirectory with `path`\n",
            group_thousands(hidden)
        ));
    }
    out
}

/// Adds an entry: counts a file in every ancestor, and records the entry itself when it is within
/// the depth limit.
fn insert(
    root: &mut Node,
    parts: &[String],
    is_dir: bool,
    symlink: bool,
    skipped: bool,
    depth: usize,
) {
    let is_file = !is_dir;
    if is_file {
        root.files += 1;
    }
    let mut node = root;
    for (index, part) in parts.iter().take(depth).enumerate() {
        let last = index + 1 == parts.len();
        let child_is_dir = !last || is_dir;
        node = node
            .children
            .entry((!child_is_dir, part.clone()))
            .or_default();
        if last {
            node.skipped |= skipped;
            node.symlink |= symlink;
        } else if is_file {
            // `node` is a directory containing the file (folded when at the depth limit).
            node.files += 1;
        }
    }
}

fn render(node: &Node, indent: &str, out: &mut String, budget: &mut usize, hidden: &mut usize) {
    let count = node.children.len();
    for (index, ((is_file, name), child)) in node.children.iter().enumerate() {
        if *budget == 0 {
            let _ = child;
            *hidden += node
                .children
                .values()
                .skip(index)
                .map(|rest| 1 + descendants(rest))
                .sum::<usize>();
            return;
        }
        *budget -= 1;
        let last = index + 1 == count;
        let branch = if last { "└── " } else { "├── " };
        let label = if *is_file {
            if child.symlink {
                format!("{name}@")
            } else {
                name.clone()
            }
        } else if child.skipped {
            format!("{name}/ (skipped)")
        } else {
            format!("{name}/ ({})", plural(child.files, "file", "files"))
        };
        out.push_str(&format!("{indent}{branch}{label}\n"));
        let next_indent = format!("{indent}{}", if last { "    " } else { "│   " });
        render(child, &next_indent, out, budget, hidden);
    }
}

fn descendants(node: &Node) -> usize {
    node.children
        .values()
        .map(|child| 1 + descendants(child))
        .sum()
}
