//! When a learning should be looked at again by a person. The rule (documented in the README,
//! "Learnings"):
//!
//! 1. it names a path the repository's current `exclude` skips — the team said that code is not
//!    to be read, so a fact about it contradicts the current configuration;
//! 2. it was drawn while the repository's guidance (instructions and guidance files) said
//!    something else — the guidance changed since, and may now say otherwise;
//! 3. it has not reached a planner's prompt for [`UNUSED_DAYS`] days (or, never used, was made
//!    that long ago) — nothing relied on it lately.
//!
//! A learning marked for review still reaches prompts until someone forgets it: the mark is a
//! prompt for a person, never a silent deletion.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

use crate::repo_config::ExcludeSet;

/// Days without reaching a prompt after which a learning is marked for review.
pub const UNUSED_DAYS: i64 = 90;

/// What is known of one learning for the rule.
#[derive(Debug, Clone, Copy)]
pub struct LearningFacts<'a> {
    pub content: &'a str,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    /// The guidance digest when it was made (`None`: made before digests were kept).
    pub guidance_digest: Option<&'a str>,
}

/// The repository as it is now.
#[derive(Debug, Clone, Copy)]
pub struct RepositoryNow<'a> {
    pub excludes: &'a ExcludeSet,
    /// The current guidance digest (`None`: not read yet).
    pub guidance_digest: Option<&'a str>,
    pub now: DateTime<Utc>,
}

/// Why a learning is marked for review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Review {
    /// It names `path`, which the current `exclude` skips.
    NamesExcludedPath { path: String },
    /// The repository's guidance changed since it was made.
    GuidanceChanged,
    /// No prompt used it for `days` days.
    Unused { days: i64 },
}

impl Review {
    /// One line for people.
    pub fn describe(&self) -> String {
        match self {
            Review::NamesExcludedPath { path } => {
                format!("names `{path}`, which the repository now excludes")
            }
            Review::GuidanceChanged => "the repository's guidance changed since it was made".into(),
            Review::Unused { days } => format!("not used in a prompt for {days} days"),
        }
    }
}

/// Whether (and why) a learning is marked for review; the first rule that holds.
pub fn review(learning: &LearningFacts<'_>, repository: &RepositoryNow<'_>) -> Option<Review> {
    if let Some(path) = named_paths(learning.content)
        .into_iter()
        .find(|path| repository.excludes.is_excluded(path, false))
    {
        return Some(Review::NamesExcludedPath { path });
    }
    if let (Some(then), Some(now)) = (learning.guidance_digest, repository.guidance_digest)
        && then != now
    {
        return Some(Review::GuidanceChanged);
    }
    let last = learning.last_used_at.unwrap_or(learning.created_at);
    let idle = repository.now - last;
    (idle >= Duration::days(UNUSED_DAYS)).then(|| Review::Unused {
        days: idle.num_days(),
    })
}

/// Words of `text` that look like repository paths: they contain a `/` or a file extension,
/// stripped of quotes, backticks and trailing punctuation (at most 50).
fn named_paths(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|word| {
            word.trim_start_matches(['`', '"', '\'', '('])
                .trim_end_matches(['`', '"', '\'', ')', ',', ';', ':', '.', '!', '?'])
        })
        .filter(|word| {
            !word.is_empty()
                && !word.contains("://")
                && (word.contains('/')
                    || word.rsplit_once('.').is_some_and(|(stem, ext)| {
                        !stem.is_empty()
                            && (1..=5).contains(&ext.len())
                            && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    }))
        })
        .take(50)
        .map(|word| word.trim_start_matches("./").to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn the_first_rule_that_holds_is_the_reason() {
        let now = Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap();
        let excludes = ExcludeSet::new(&["vendor/".to_owned(), "*.pb.go".to_owned()]).unwrap();
        let repository = RepositoryNow {
            excludes: &excludes,
            guidance_digest: Some("new"),
            now,
        };
        let fresh = LearningFacts {
            content: "Handlers live in internal/http.",
            created_at: now - Duration::days(1),
            last_used_at: None,
            guidance_digest: Some("new"),
        };
        assert_eq!(review(&fresh, &repository), None);
        let excluded = LearningFacts {
            content: "The client is generated in `vendor/api/client.go`.",
            ..fresh
        };
        assert_eq!(
            review(&excluded, &repository),
            Some(Review::NamesExcludedPath {
                path: "vendor/api/client.go".into()
            })
        );
        let changed = LearningFacts {
            guidance_digest: Some("old"),
            ..fresh
        };
        assert_eq!(review(&changed, &repository), Some(Review::GuidanceChanged));
        let idle = LearningFacts {
            last_used_at: Some(now - Duration::days(120)),
            ..fresh
        };
        assert_eq!(
            review(&idle, &repository),
            Some(Review::Unused { days: 120 })
        );
    }
}
