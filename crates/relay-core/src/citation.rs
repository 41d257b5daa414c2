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

/// Most code places read from one piece of prose (a gap's evidence); the rest are not tracked.
pub const MAX_CITED_IN_TEXT: usize = 5;

/// The `path:line` and `path:start-end` places written in prose (a gap's evidence), in order,
/// distinct, at most [`MAX_CITED_IN_TEXT`]. A path must look like a file (a `.` or a `/`, no
/// `..` segment, not absolute) so that `gap:3` or `12:30` is not a citation; backticks, brackets
/// and trailing punctuation around it are ignored. Whether the place exists is the caller's
/// check (against a checkout).
pub fn cited_in_text(text: &str) -> Vec<Citation> {
    let mut found: Vec<Citation> = Vec::new();
    let separators = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '(' | ')' | '[' | ']' | '"' | '\'' | ',' | ';' | '<' | '>'
            )
    };
    for token in text.split(separators) {
        if found.len() == MAX_CITED_IN_TEXT {
            break;
        }
        let token = token.trim_end_matches(['.', ':']);
        let Some(citation) = parse_place(token) else {
            continue;
        };
        if !found.contains(&citation) {
            found.push(citation);
        }
    }
    found
}

fn parse_place(token: &str) -> Option<Citation> {
    let (path, lines) = token.rsplit_once(':')?;
    let (start, end) = match lines.split_once('-') {
        Some((start, end)) => (start.parse::<u32>().ok()?, end.parse::<u32>().ok()?),
        None => {
            let line = lines.parse::<u32>().ok()?;
            (line, line)
        }
    };
    let file_like = (path.contains('.') || path.contains('/'))
        && !path.starts_with('/')
        && path
            .split('/')
            .all(|segment| !segment.is_empty() && segment != "..")
        && path
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '/' | '_' | '-'));
    (file_like && start > 0 && end >= start).then(|| Citation {
        path: path.to_owned(),
        start_line: start,
        end_line: end,
        quote: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_read_from_prose_and_nothing_else() {
        let cites = cited_in_text(
            "See `app/settings.py:6` and (pkg/a.go:10-12), also app/settings.py:6 again; \
             not gap:3, not 12:30, not /etc/passwd:1, not ../x.py:2, not a.py:0 or a.py:9-3.",
        );
        let places: Vec<String> = cites.iter().map(ToString::to_string).collect();
        assert_eq!(places, ["app/settings.py:6", "pkg/a.go:10-12"]);
        let many = (1..=9)
            .map(|n| format!("f.py:{n}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(cited_in_text(&many).len(), MAX_CITED_IN_TEXT);
    }
}
