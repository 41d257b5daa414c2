//! Text → [`RepoConfigFile`], with every problem located: file, line, key and why.
//!
//! Three passes: TOML syntax (its own span gives the line); the server-only keys taken out
//! and reported as refused (the rest still applies); the typed keys (`serde_path_to_error`
//! names the key, [`locate`] finds its line); then the bounds of each value.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::exclude::ExcludeSet;
use super::file::{
    MAX_CONFIG_BYTES, MAX_EXCLUDE_PATTERNS, MAX_GUIDANCE_FILES, MAX_INSTRUCTIONS_CHARS,
    MAX_LABEL_CHARS, MAX_LABELS, MAX_PATTERN_CHARS, RepoConfigFile, SERVER_ONLY_KEYS,
};

/// One problem with the file, as the status page, the API, the log and `relay config check`
/// say it: `.relay.toml:7: `budget.issue_tokens`: …`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigProblem {
    /// The file's path in the repository.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// The key (`labels.trigger`), when the problem is about one.
    pub key: Option<String>,
    pub why: String,
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": `{key}`")?;
        }
        write!(f, ": {}", self.why)
    }
}

/// A file that parsed: its keys, and the server-only keys it named (refused).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedFile {
    pub file: RepoConfigFile,
    pub refused: Vec<ConfigProblem>,
}

/// Parses the file at `path` (its text `raw`). `Err` with every problem found when the file
/// cannot be used at all (then the server's settings apply whole).
pub fn parse(path: &str, raw: &str) -> Result<ParsedFile, Vec<ConfigProblem>> {
    let problem = |line: Option<usize>, key: Option<String>, why: String| ConfigProblem {
        file: path.to_owned(),
        line,
        key,
        why,
    };
    if raw.len() > MAX_CONFIG_BYTES {
        return Err(vec![problem(
            None,
            None,
            format!(
                "the file is {} bytes, at most {MAX_CONFIG_BYTES} are read",
                raw.len()
            ),
        )]);
    }
    let mut table: toml::Table = match toml::from_str(raw) {
        Ok(table) => table,
        Err(error) => {
            let line = error.span().map(|span| line_of(raw, span.start));
            return Err(vec![problem(line, None, one_line(error.message()))]);
        }
    };
    let mut refused = Vec::new();
    for (key, why) in SERVER_ONLY_KEYS {
        if table.remove(key).is_some() {
            refused.push(problem(
                locate(raw, key),
                Some(key.to_owned()),
                format!("{why} (not applied)"),
            ));
        }
    }
    let file: RepoConfigFile = match serde_path_to_error::deserialize(toml::Value::Table(table)) {
        Ok(file) => file,
        Err(error) => {
            let key = error.path().to_string();
            let key = (key != "." && !key.is_empty()).then_some(key);
            let line = key.as_deref().and_then(|k| locate(raw, k));
            // The TOML value's error already ends with the key, which the problem names.
            let mut why = one_line(&error.inner().to_string());
            if let Some(at) = why.rfind(" in `") {
                why.truncate(at);
            }
            return Err(vec![problem(line, key, why)]);
        }
    };
    let problems: Vec<ConfigProblem> = check_bounds(&file)
        .into_iter()
        .map(|(key, why)| problem(locate(raw, &key), Some(key), why))
        .collect();
    if problems.is_empty() {
        Ok(ParsedFile { file, refused })
    } else {
        Err(problems)
    }
}

/// Every value outside its bounds, as (key, why).
fn check_bounds(file: &RepoConfigFile) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(version) = file.version
        && version != 1
    {
        out.push((
            "version".into(),
            format!("unknown version {version}; use 1"),
        ));
    }
    if let Some(text) = &file.instructions {
        let chars = text.chars().count();
        if chars > MAX_INSTRUCTIONS_CHARS {
            out.push((
                "instructions".into(),
                format!("{chars} characters, at most {MAX_INSTRUCTIONS_CHARS}"),
            ));
        }
    }
    if let Some(files) = &file.guidance_files {
        if files.len() > MAX_GUIDANCE_FILES {
            out.push((
                "guidance_files".into(),
                format!("{} files, at most {MAX_GUIDANCE_FILES}", files.len()),
            ));
        }
        for (index, path) in files.iter().enumerate() {
            if let Some(why) = bad_repo_path(path) {
                out.push((format!("guidance_files[{index}]"), why));
            }
        }
    }
    if file.exclude.len() > MAX_EXCLUDE_PATTERNS {
        out.push((
            "exclude".into(),
            format!(
                "{} patterns, at most {MAX_EXCLUDE_PATTERNS}",
                file.exclude.len()
            ),
        ));
    }
    for (index, pattern) in file.exclude.iter().enumerate() {
        if let Err(error) = ExcludeSet::new(std::slice::from_ref(pattern)) {
            out.push((format!("exclude[{index}]"), error.to_string()));
        }
    }
    if let Some(labels) = &file.labels {
        let lists = [
            ("labels.trigger", labels.trigger.as_deref().unwrap_or(&[])),
            ("labels.opt_out", labels.opt_out.as_slice()),
        ];
        for (key, list) in lists {
            if list.len() > MAX_LABELS {
                out.push((
                    key.into(),
                    format!("{} labels, at most {MAX_LABELS}", list.len()),
                ));
            }
            for (index, label) in list.iter().enumerate() {
                let chars = label.chars().count();
                if label.trim().is_empty() || chars > MAX_LABEL_CHARS {
                    out.push((
                        format!("{key}[{index}]"),
                        format!("a label has 1 to {MAX_LABEL_CHARS} characters"),
                    ));
                }
            }
        }
    }
    if let Some(budget) = &file.budget
        && let Some(usd) = budget.issue_cost_usd
        && !(usd.is_finite() && usd >= 0.0)
    {
        out.push((
            "budget.issue_cost_usd".into(),
            "a cost is a number of dollars, 0 or more".into(),
        ));
    }
    if file.related.len() > crate::related::MAX_RELATED_NAMES {
        out.push((
            "related".into(),
            format!(
                "{} names; at most {} are read (and {} admitted)",
                file.related.len(),
                crate::related::MAX_RELATED_NAMES,
                crate::related::MAX_RELATED
            ),
        ));
    }
    if let Some(long) = file
        .related
        .iter()
        .find(|name| name.chars().count() > crate::related::MAX_RELATED_PATH_CHARS)
    {
        out.push((
            "related".into(),
            format!(
                "a name of {} characters; at most {}",
                long.chars().count(),
                crate::related::MAX_RELATED_PATH_CHARS
            ),
        ));
    }
    out
}

/// Why `path` cannot name a file of the repository, if it cannot.
fn bad_repo_path(path: &str) -> Option<String> {
    if path.is_empty() || path.chars().count() > MAX_PATTERN_CHARS {
        return Some(format!("a path has 1 to {MAX_PATTERN_CHARS} characters"));
    }
    if path.starts_with('/') || path.contains('\\') || path.chars().any(char::is_control) {
        return Some("a path is relative to the repository root, with `/` separators".into());
    }
    if path.split('/').any(|part| part == ".." || part.is_empty()) {
        return Some("a path may not contain `..` or empty segments".into());
    }
    None
}

/// The 1-based line of byte `offset`.
pub fn line_of(raw: &str, offset: usize) -> usize {
    raw.as_bytes()[..offset.min(raw.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The line that sets `key` (`labels.trigger[2]` → the line of `trigger` in `[labels]`, or of a
/// dotted `labels.trigger = …`, or the `[labels]` header for the table itself). Best effort: a
/// key written in an unusual way (quoted, inline table) gives `None`.
pub fn locate(raw: &str, key: &str) -> Option<usize> {
    let segments: Vec<&str> = key
        .split('.')
        .map(|s| s.split('[').next().unwrap_or(s))
        .filter(|s| !s.is_empty())
        .collect();
    let (last, parents) = segments.split_last()?;
    let parent = parents.join(".");
    let mut table = String::new();
    for (index, line) in raw.lines().enumerate() {
        let trimmed = line.trim();
        if let Some(header) = trimmed
            .strip_prefix('[')
            .map(|h| h.trim_start_matches('['))
            .and_then(|h| h.split(']').next())
        {
            table = header.trim().to_owned();
            let whole = key.split('[').next().unwrap_or(key);
            if table == whole || table.starts_with(&format!("{whole}.")) {
                return Some(index + 1);
            }
            continue;
        }
        let Some((name, _)) = trimmed.split_once('=') else {
            continue;
        };
        let name: String = name.split_whitespace().collect();
        let full = if table.is_empty() {
            name.clone()
        } else {
            format!("{table}.{name}")
        };
        let wanted = if parent.is_empty() {
            (*last).to_owned()
        } else {
            format!("{parent}.{last}")
        };
        if full == wanted {
            return Some(index + 1);
        }
    }
    None
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check_error(raw: &str, expected: &[&str]) {
        let problems = parse(".relay.toml", raw).expect_err("the file is refused");
        let said: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(said, expected);
    }

    #[test]
    fn a_complete_file_parses() {
        let parsed = parse(
            ".relay.toml",
            r#"
version = 1
instructions = "Prefer table-driven tests."
guidance_files = ["AGENTS.md", "docs/style.md"]
exclude = ["vendor/", "gen/**", "*.pb.go"]
thoroughness = "quick"
summary_comment = false

[engage]
public = ["owner"]

[labels]
trigger = ["relay"]
opt_out = ["relay-off"]

[budget]
issue_tokens = 100000
issue_cost_usd = 1.5
"#,
        )
        .unwrap();
        assert!(parsed.refused.is_empty());
        assert_eq!(parsed.file.exclude.len(), 3);
        assert_eq!(parsed.file.budget.unwrap().issue_tokens, Some(100_000));
    }

    #[test]
    fn every_problem_names_the_line_and_the_key() {
        check_error(
            "instructions = \"a\"\n[labels]\ntrigger = \"relay\"\n",
            &[
                ".relay.toml:3: `labels.trigger`: invalid type: string \"relay\", expected a sequence",
            ],
        );
        check_error(
            "exclude = [\"ok/\", \"!neg\"]\n",
            &[
                ".relay.toml:1: `exclude[1]`: `!neg`: negation (`!`) is not supported; list only what to skip",
            ],
        );
        check_error(
            "colour = 1\n",
            &[
                ".relay.toml:1: `colour`: unknown field `colour`, expected one of `version`, `instructions`, `guidance_files`, `exclude`, `thoroughness`, `summary_comment`, `engage`, `labels`, `budget`, `related`",
            ],
        );
        check_error(
            "[budget\nissue_tokens = 1\n",
            &[".relay.toml:1: unclosed table, expected `]`"],
        );
        check_error(
            "guidance_files = [\"../secrets\"]\n",
            &[".relay.toml:1: `guidance_files[0]`: a path may not contain `..` or empty segments"],
        );
    }

    #[test]
    fn server_only_keys_are_refused_and_the_rest_applies() {
        let parsed = parse(
            ".relay.toml",
            "instructions = \"x\"\n\n[trackers.github]\ntoken = \"t\"\n",
        )
        .unwrap();
        assert_eq!(parsed.file.instructions.as_deref(), Some("x"));
        assert_eq!(
            parsed.refused[0].to_string(),
            ".relay.toml:3: `trackers`: a repository cannot enable or configure a tracker (not applied)"
        );
    }

    #[test]
    fn a_file_too_large_is_refused_unread() {
        let raw = format!("instructions = \"{}\"", "x".repeat(MAX_CONFIG_BYTES));
        let problems = parse(".relay.toml", &raw).unwrap_err();
        assert!(problems[0].why.contains("at most 65536 are read"));
    }
}
