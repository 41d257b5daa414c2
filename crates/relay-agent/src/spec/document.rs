//! The spec as the model submits it (`submit_spec`), and its Markdown rendering.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `submit_spec` arguments: every section the spec must have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpecDocument {
    /// One short title.
    pub title: String,
    /// What the change achieves and for whom, in a few sentences.
    pub goal: String,
    /// How the code works today, with `path:start-end` citations.
    pub context: String,
    /// Decisions (citing the closed gaps as "gap N") and assumptions (marked as such).
    pub decisions: Vec<String>,
    /// The changes, file by file.
    pub changes: Vec<FileChange>,
    /// Concrete test cases.
    pub test_plan: Vec<String>,
    /// What could break and how to notice.
    pub risks: Vec<String>,
}

/// The change to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileChange {
    /// Repository-relative path (new files too).
    pub path: String,
    /// What changes there and why.
    pub change: String,
}

impl SpecDocument {
    /// The spec as Markdown.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "## {}\n", self.title.trim());
        let _ = writeln!(out, "### Goal\n\n{}\n", self.goal.trim());
        let _ = writeln!(out, "### Context\n\n{}\n", self.context.trim());
        out.push_str("### Decisions and assumptions\n\n");
        bullets(&mut out, &self.decisions);
        out.push_str("### Changes\n\n");
        if self.changes.is_empty() {
            out.push_str("none\n\n");
        }
        for change in &self.changes {
            let _ = writeln!(
                out,
                "#### `{}`\n\n{}\n",
                change.path.trim(),
                change.change.trim()
            );
        }
        out.push_str("### Test plan\n\n");
        bullets(&mut out, &self.test_plan);
        out.push_str("### Risks\n\n");
        bullets(&mut out, &self.risks);
        out.truncate(out.trim_end().len());
        out.push('\n');
        out
    }
}

fn bullets(out: &mut String, items: &[String]) {
    if items.is_empty() {
        out.push_str("none\n");
    }
    for item in items {
        let _ = writeln!(out, "- {}", item.trim());
    }
    out.push('\n');
}
