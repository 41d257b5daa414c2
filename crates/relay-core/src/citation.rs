//! A citation of code: `path:start_line-end_line`, optionally with the quoted text.
//!
//! The same type is what the ExploreAgent reports as evidence, what a finding's sources are, and
//! what the validator checks against the explored snapshot (`relay_tools::citation`).

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One cited line range of one file, relative to the repository root.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Citation {
    /// File path relative to the repository root, with `/` separators.
    pub path: String,
    /// First cited line, 1-based.
    pub start_line: u32,
    /// Last cited line, 1-based, inclusive (at least `start_line`).
    pub end_line: u32,
    /// Optional verbatim text of the cited lines; checked whitespace-normalised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
}

impl fmt::Display for Citation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.start_line == self.end_line {
            write!(f, "{}:{}", self.path, self.start_line)
        } else {
            write!(f, "{}:{}-{}", self.path, self.start_line, self.end_line)
        }
    }
}
