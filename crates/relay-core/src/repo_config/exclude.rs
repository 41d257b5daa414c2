//! The `exclude` globs as one matcher, shared by the code tools (their sandbox and walker) and
//! the code graph (its walk), so both skip exactly the same paths.
//!
//! Syntax (gitignore's, without negation): a pattern is matched against repository-relative
//! paths with `/` separators; `*` and `?` never cross a `/`, `**` does; a pattern with no `/`
//! (other than a trailing one) matches at any depth (`*.pb.go`, `testdata`); one with a `/`
//! is anchored at the root (`docs/api/`, `/vendor`); a trailing `/` matches only directories.
//! A path is excluded when it or any of its parent directories matches, so excluding a
//! directory excludes everything under it.

use std::fmt;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// A pattern that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{pattern}`: {why}")]
pub struct BadPattern {
    pub pattern: String,
    pub why: String,
}

/// The compiled `exclude` patterns. Empty by default (nothing excluded).
#[derive(Clone, Default)]
pub struct ExcludeSet {
    patterns: Vec<String>,
    /// Patterns that match files and directories.
    any: GlobSet,
    /// Patterns with a trailing `/`: directories only.
    dirs: GlobSet,
}

impl fmt::Debug for ExcludeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ExcludeSet").field(&self.patterns).finish()
    }
}

impl PartialEq for ExcludeSet {
    fn eq(&self, other: &Self) -> bool {
        self.patterns == other.patterns
    }
}

impl ExcludeSet {
    /// Compiles `patterns`; the first unusable one is the error.
    pub fn new(patterns: &[String]) -> Result<ExcludeSet, BadPattern> {
        let mut any = GlobSetBuilder::new();
        let mut dirs = GlobSetBuilder::new();
        for pattern in patterns {
            let bad = |why: &str| BadPattern {
                pattern: pattern.clone(),
                why: why.to_owned(),
            };
            let trimmed = pattern.trim();
            if trimmed.is_empty() {
                return Err(bad("an empty pattern matches nothing"));
            }
            if trimmed.starts_with('!') {
                return Err(bad(
                    "negation (`!`) is not supported; list only what to skip",
                ));
            }
            if trimmed.chars().any(char::is_control) || trimmed.contains('\\') {
                return Err(bad("control characters and `\\` are not allowed"));
            }
            let dir_only = trimmed.ends_with('/');
            let body = trimmed.trim_end_matches('/');
            let anchored = body.contains('/');
            let body = body.trim_start_matches('/');
            if body.is_empty() || body.split('/').any(|part| part == "..") {
                return Err(bad("a pattern names paths inside the repository"));
            }
            let glob = if anchored {
                body.to_owned()
            } else {
                format!("**/{body}")
            };
            let compiled = GlobBuilder::new(&glob)
                .literal_separator(true)
                .build()
                .map_err(|error| bad(&error.kind().to_string()))?;
            if dir_only {
                dirs.add(compiled);
            } else {
                any.add(compiled);
            }
        }
        let build = |builder: GlobSetBuilder| {
            builder.build().map_err(|error| BadPattern {
                pattern: patterns.join(", "),
                why: error.to_string(),
            })
        };
        Ok(ExcludeSet {
            patterns: patterns.to_vec(),
            any: build(any)?,
            dirs: build(dirs)?,
        })
    }

    /// The patterns as written.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// Whether nothing is excluded.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether the repository-relative path `rel` (`/`-separated; `is_dir` when it names a
    /// directory) is excluded: it, or a directory above it, matches a pattern.
    pub fn is_excluded(&self, rel: &str, is_dir: bool) -> bool {
        if self.patterns.is_empty() {
            return false;
        }
        let rel = rel.trim_matches('/');
        if rel.is_empty() {
            return false;
        }
        let mut end = 0;
        loop {
            let next = rel[end..].find('/').map(|i| end + i);
            let prefix = &rel[..next.unwrap_or(rel.len())];
            let a_directory = next.is_some() || is_dir;
            if self.any.is_match(prefix) || (a_directory && self.dirs.is_match(prefix)) {
                return true;
            }
            match next {
                Some(slash) => end = slash + 1,
                None => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(patterns: &[&str], cases: &[(&str, bool, bool)]) {
        let set =
            ExcludeSet::new(&patterns.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>()).unwrap();
        for (path, is_dir, excluded) in cases {
            assert_eq!(
                set.is_excluded(path, *is_dir),
                *excluded,
                "{patterns:?} on {path} (dir: {is_dir})"
            );
        }
    }

    #[test]
    fn patterns_follow_gitignore_without_negation() {
        check(
            &["vendor/", "*.pb.go", "docs/api", "/gen/**/*.py"],
            &[
                ("vendor", true, true),
                ("vendor", false, false),
                ("vendor/a/b.go", false, true),
                ("src/vendor/x.go", false, true),
                ("api.pb.go", false, true),
                ("deep/er/api.pb.go", false, true),
                ("api.go", false, false),
                ("docs/api", true, true),
                ("docs/api/index.md", false, true),
                ("src/docs/api/x", false, false),
                ("gen/a/b.py", false, true),
                ("gen/b.py", false, true),
                ("src/gen/b.py", false, false),
            ],
        );
        check(
            &["testdata"],
            &[("a/testdata/f", false, true), ("testdatax", false, false)],
        );
        check(&[], &[("anything", false, false)]);
    }

    #[test]
    fn unusable_patterns_say_why() {
        for (pattern, why) in [
            ("!keep", "negation"),
            ("", "empty"),
            ("../up", "inside the repository"),
            ("a[", "unclosed character class"),
        ] {
            let error = ExcludeSet::new(&[pattern.to_owned()]).unwrap_err();
            assert!(error.to_string().contains(why), "{pattern}: {error}");
        }
    }
}
