//! "File not found" recovery: the closest existing paths by fuzzy match.
//!
//! Candidates are the files and directories the walker sees (so ignored files are never offered).
//! Each is scored against the requested path:
//! `score = 0.6 × name similarity + 0.4 × whole-path similarity`, where similarity is
//! `1 − distance / longer length` with the optimal-string-alignment distance on lower-cased text.
//! A candidate whose path ends with the requested path scores 1, and one whose name equals the
//! requested name up to the extension gets a name similarity of at least 0.9. The best candidate is
//! *unambiguous* when it scores at least [`AUTO_PICK_MIN_SCORE`] and leads the runner-up by at least
//! [`AUTO_PICK_MIN_LEAD`].
//!
//! Bounded whatever the repository holds: at most `fuzzy_max_candidates` entries are walked (the
//! walk stops when the call is cancelled or past its deadline), and the distance is computed on
//! at most the last [`MAX_COMPARED_CHARS`] characters of each side, so one comparison costs at
//! most `MAX_COMPARED_CHARS²` cells however long the requested or the existing path is.

use crate::error::ToolError;
use crate::tool::ToolContext;

/// Suggestions offered.
pub const MAX_SUGGESTIONS: usize = 3;
/// Minimum score for a suggestion at all.
pub const MIN_SCORE: f64 = 0.45;
/// Minimum score for the best candidate to be used automatically.
pub const AUTO_PICK_MIN_SCORE: f64 = 0.7;
/// Minimum lead over the runner-up for the best candidate to be used automatically.
pub const AUTO_PICK_MIN_LEAD: f64 = 0.08;
/// Candidates that get the (more expensive) whole-path comparison.
const SHORTLIST: usize = 64;
/// Characters of a path (or name) a comparison considers: the last ones, where paths differ
/// most and file names live. Real paths are shorter; a model can send a megabyte.
pub const MAX_COMPARED_CHARS: usize = 256;

/// A candidate path and its score in `[0, 1]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Path relative to the repository root (`/` after directories).
    pub path: String,
    /// Similarity score.
    pub score: f64,
}

/// The closest existing paths to `requested`, best first (at most [`MAX_SUGGESTIONS`]).
pub fn closest_paths(context: &ToolContext, requested: &str) -> Vec<Candidate> {
    let sandbox = context.sandbox();
    let limits = context.limits();
    let query = normalise(tail(requested.trim(), MAX_COMPARED_CHARS * 2));
    if query.is_empty() {
        return Vec::new();
    }
    let query_name = file_name(&query);
    let mut scored: Vec<(f64, String, bool)> = Vec::new();
    for entry in sandbox
        .walker(sandbox.root())
        .build()
        .flatten()
        .take(limits.fuzzy_max_candidates)
    {
        if context.control().stop().is_some() {
            break;
        }
        if entry.depth() == 0 {
            continue;
        }
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        let rel = sandbox.relative(entry.path());
        let name_score = name_similarity(query_name, file_name(&rel.to_lowercase()));
        scored.push((name_score, rel, file_type.is_dir()));
    }
    scored.sort_by(|left, right| {
        right
            .0
            .total_cmp(&left.0)
            .then_with(|| left.1.cmp(&right.1))
    });
    let mut candidates: Vec<Candidate> = scored
        .into_iter()
        .take(SHORTLIST)
        .map(|(name_score, rel, is_dir)| {
            let lower = rel.to_lowercase();
            let score = if lower == query || lower.ends_with(&format!("/{query}")) {
                1.0
            } else {
                0.6 * name_score + 0.4 * similarity(&query, &lower)
            };
            Candidate {
                path: if is_dir { format!("{rel}/") } else { rel },
                score,
            }
        })
        .filter(|candidate| candidate.score >= MIN_SCORE)
        .collect();
    candidates.sort_by(|left, right| {
        right
            .score
            .total_cmp(&left.score)
            .then_with(|| left.path.cmp(&right.path))
    });
    candidates.truncate(MAX_SUGGESTIONS);
    candidates
}

/// The best candidate if it is unambiguous (see the module docs).
pub fn unambiguous(candidates: &[Candidate]) -> Option<&Candidate> {
    let best = candidates.first()?;
    let lead = candidates
        .get(1)
        .map_or(1.0, |second| best.score - second.score);
    (best.score >= AUTO_PICK_MIN_SCORE && lead >= AUTO_PICK_MIN_LEAD).then_some(best)
}

/// Adds closest-path suggestions to a `NotFound` error; other errors pass through.
pub fn with_suggestions(context: &ToolContext, error: ToolError) -> ToolError {
    match error {
        ToolError::NotFound { path, suggestions } if suggestions.is_empty() => {
            let suggestions = closest_paths(context, &path)
                .into_iter()
                .map(|c| c.path)
                .collect();
            ToolError::NotFound { path, suggestions }
        }
        other => other,
    }
}

fn normalise(path: &str) -> String {
    let mut text = path
        .trim()
        .trim_start_matches("./")
        .trim_start_matches('/')
        .to_lowercase();
    while text.ends_with('/') {
        text.pop();
    }
    text
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn stem(name: &str) -> &str {
    match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => name,
    }
}

fn name_similarity(query_name: &str, candidate_name: &str) -> f64 {
    let base = similarity(query_name, candidate_name);
    if stem(query_name) == stem(candidate_name) {
        base.max(0.9)
    } else {
        base
    }
}

/// The last `max_chars` characters of `text`.
fn tail(text: &str, max_chars: usize) -> &str {
    match text.char_indices().rev().nth(max_chars.saturating_sub(1)) {
        Some((start, _)) if max_chars > 0 => &text[start..],
        _ if max_chars == 0 => "",
        _ => text,
    }
}

/// `1 − distance / longer length`, over the last [`MAX_COMPARED_CHARS`] characters of each.
fn similarity(left: &str, right: &str) -> f64 {
    let left: Vec<char> = tail(left, MAX_COMPARED_CHARS).chars().collect();
    let right: Vec<char> = tail(right, MAX_COMPARED_CHARS).chars().collect();
    let longer = left.len().max(right.len());
    if longer == 0 {
        return 1.0;
    }
    1.0 - osa_distance(&left, &right) as f64 / longer as f64
}

/// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
fn osa_distance(left: &[char], right: &[char]) -> usize {
    let width = right.len() + 1;
    let mut rows = vec![0usize; (left.len() + 1) * width];
    for (j, cell) in rows.iter_mut().take(width).enumerate() {
        *cell = j;
    }
    for i in 1..=left.len() {
        rows[i * width] = i;
        for j in 1..=right.len() {
            let cost = usize::from(left[i - 1] != right[j - 1]);
            let mut best = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && left[i - 1] == right[j - 2] && left[i - 2] == right[j - 1] {
                best = best.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = best;
        }
    }
    rows[left.len() * width + right.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        let d = |a: &str, b: &str| {
            osa_distance(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            )
        };
        assert_eq!(d("mian.rs", "main.rs"), 1);
        assert_eq!(d("kitten", "sitting"), 3);
        assert_eq!(d("", "abc"), 3);
    }

    #[test]
    fn comparisons_consider_a_bounded_tail() {
        assert_eq!(tail("abcdef", 3), "def");
        assert_eq!(tail("ab", 3), "ab");
        assert_eq!(tail("ééé", 2), "éé");
        // Two long paths that differ only before the compared tail are equal to the comparison,
        // and the distance table stays MAX_COMPARED_CHARS² whatever their length.
        let common = "x/".repeat(MAX_COMPARED_CHARS);
        let left = format!("{}{common}", "a".repeat(2_000));
        let right = format!("{}{common}", "b".repeat(2_000));
        assert_eq!(similarity(&left, &right), 1.0);
    }

    #[test]
    fn ambiguity() {
        let c = |path: &str, score: f64| Candidate {
            path: path.into(),
            score,
        };
        assert_eq!(unambiguous(&[c("a", 0.9), c("b", 0.5)]).unwrap().path, "a");
        assert!(unambiguous(&[c("a", 0.9), c("b", 0.88)]).is_none());
        assert!(unambiguous(&[c("a", 0.6)]).is_none());
        assert!(unambiguous(&[]).is_none());
    }
}
