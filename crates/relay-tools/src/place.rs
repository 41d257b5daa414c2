//! Places: how a path in a *related* repository is written.
//!
//! An issue on `acme/app` may have its answer in `acme/sdk`. A path in a related repository is
//! written `acme/sdk:pkg/client.go` everywhere a path appears (tool results, citations,
//! findings); the issue's own repository keeps bare paths. The label before the `:` is the
//! repository's tracker path (`owner/name`, GitLab `group/sub/project`), which never contains a
//! `:`, so the first `:` of a place ends its label.
//!
//! [`split_place`] reads a place given the known labels, [`write_place`] writes one, and
//! [`label_like_prefix`] says whether a path *looks* like a place of some repository (so an
//! unknown label can be refused instead of being read as a file name).

use relay_core::Citation;

/// What separates a place's label from its path.
pub const LABEL_SEPARATOR: char = ':';
/// Most places read from one piece of prose by [`cited_places_in_text`].
pub const MAX_PLACES_IN_TEXT: usize = relay_core::citation::MAX_CITED_IN_TEXT;

/// A path split into the repository it names (`None`: the issue's own) and the path inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place<'a> {
    /// The related repository's label, when the text named a known one.
    pub label: Option<&'a str>,
    /// The path inside that repository (the whole text when there is no known label).
    pub path: &'a str,
}

/// Splits `text` into a known label and its path: `acme/sdk:pkg/x.go` with `acme/sdk` among
/// `labels` is `(Some("acme/sdk"), "pkg/x.go")`. A bare path, or a prefix that is not one of
/// `labels`, is left whole (use [`label_like_prefix`] to tell an unknown label from a path).
pub fn split_place<'a, L: AsRef<str>>(labels: &[L], text: &'a str) -> Place<'a> {
    let whole = Place {
        label: None,
        path: text,
    };
    let Some((prefix, path)) = text.split_once(LABEL_SEPARATOR) else {
        return whole;
    };
    if labels.iter().any(|label| label.as_ref() == prefix) {
        Place {
            label: Some(prefix),
            path,
        }
    } else {
        whole
    }
}

/// Writes a place: the bare path for the issue's own repository, `label:path` for a related one.
pub fn write_place(label: Option<&str>, path: &str) -> String {
    match label {
        None => path.to_owned(),
        Some(label) => format!("{label}{LABEL_SEPARATOR}{path}"),
    }
}

/// The text before the first `:` when it looks like a repository's label (`owner/name`,
/// `group/sub/project`: at least two `/`-separated segments of letters, digits, `-`, `_` and `.`,
/// none `.` or `..`), known or not. `pkg/x.go` (no `:`) and `C:/x` (one segment) are not.
pub fn label_like_prefix(text: &str) -> Option<&str> {
    let (prefix, _) = text.split_once(LABEL_SEPARATOR)?;
    is_label(prefix).then_some(prefix)
}

/// Whether `label` is written like a repository's label (see [`label_like_prefix`]): the one
/// rule, `relay_core::related::is_repository_path`, that admission judges names by too.
pub fn is_label(label: &str) -> bool {
    relay_core::related::is_repository_path(label)
}

/// Whether `text` names a place of `label` (`label:` followed by a path character), compared
/// ASCII case-insensitively (trackers resolve `Acme/SDK` to `acme/sdk`). Linear in `text`.
pub fn names_place_of(text: &str, label: &str) -> bool {
    if label.is_empty() {
        return false;
    }
    let haystack = text.as_bytes();
    let needle = label.as_bytes();
    let mut start = 0usize;
    while start + needle.len() < haystack.len() {
        let Some(offset) = haystack[start..]
            .windows(needle.len())
            .position(|window| window.eq_ignore_ascii_case(needle))
        else {
            return false;
        };
        let at = start + offset;
        let before_ok = at == 0 || !is_label_byte(haystack[at - 1]);
        let after = at + needle.len();
        let followed = haystack.get(after) == Some(&(LABEL_SEPARATOR as u8))
            && haystack
                .get(after + 1)
                .is_some_and(|byte| is_label_byte(*byte) || *byte == b'/');
        if before_ok && followed {
            return true;
        }
        start = at + 1;
    }
    false
}

/// The `path:line` places written in prose, like [`relay_core::citation::cited_in_text`], and
/// also `label:path:line` places of the known `labels` (their path keeps the label). In order,
/// distinct, at most [`MAX_PLACES_IN_TEXT`].
pub fn cited_places_in_text<L: AsRef<str>>(text: &str, labels: &[L]) -> Vec<Citation> {
    let mut found: Vec<Citation> = Vec::new();
    for token in text.split(char::is_whitespace) {
        if found.len() == MAX_PLACES_IN_TEXT {
            break;
        }
        let trimmed = token.trim_start_matches(['`', '(', '[', '"', '\'', '<']);
        let place = split_place(labels, trimmed);
        let cited = match place.label {
            // The label is cut off and the rest read as a bare place, then the label put back.
            Some(label) => relay_core::citation::cited_in_text(place.path)
                .into_iter()
                .next()
                .map(|citation| Citation {
                    path: write_place(Some(label), &citation.path),
                    ..citation
                }),
            None => relay_core::citation::cited_in_text(token)
                .into_iter()
                .next(),
        };
        if let Some(citation) = cited
            && !found.contains(&citation)
        {
            found.push(citation);
        }
    }
    found
}

fn is_label_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    const LABELS: [&str; 2] = ["acme/sdk", "group/sub/proj"];

    #[test]
    fn places_split_only_on_known_labels() {
        let cases = [
            ("acme/sdk:pkg/x.go", Some("acme/sdk"), "pkg/x.go"),
            ("group/sub/proj:a/b.rs", Some("group/sub/proj"), "a/b.rs"),
            ("pkg/x.go", None, "pkg/x.go"),
            ("acme/other:pkg/x.go", None, "acme/other:pkg/x.go"),
            ("acme/sdk", None, "acme/sdk"),
            ("acme/sdk:", Some("acme/sdk"), ""),
        ];
        for (text, label, path) in cases {
            assert_eq!(split_place(&LABELS, text), Place { label, path }, "{text}");
        }
    }

    #[test]
    fn a_written_place_splits_back() {
        let written = write_place(Some("acme/sdk"), "pkg/x.go");
        assert_eq!(written, "acme/sdk:pkg/x.go");
        assert_eq!(
            split_place(&LABELS, &written),
            Place {
                label: Some("acme/sdk"),
                path: "pkg/x.go"
            }
        );
        assert_eq!(write_place(None, "pkg/x.go"), "pkg/x.go");
    }

    #[test]
    fn label_like_prefixes() {
        assert_eq!(label_like_prefix("acme/other:pkg/x.go"), Some("acme/other"));
        assert_eq!(label_like_prefix("a/b/c:x"), Some("a/b/c"));
        for text in [
            "pkg/x.go",
            "C:/x",
            "https://x/y",
            "../x:y",
            "a//b:x",
            "a b/c:x",
        ] {
            assert_eq!(label_like_prefix(text), None, "{text}");
        }
        use relay_core::related::{MAX_RELATED_PATH_CHARS, MAX_RELATED_PATH_SEGMENTS};
        let deep = vec!["g"; MAX_RELATED_PATH_SEGMENTS + 1].join("/");
        assert!(!is_label(&deep));
        assert!(!is_label(&format!(
            "a/{}",
            "b".repeat(MAX_RELATED_PATH_CHARS)
        )));
    }

    #[test]
    fn names_a_place_case_insensitively_and_only_as_a_place() {
        assert!(names_place_of("see acme/sdk:pkg/x.go:3", "acme/sdk"));
        assert!(names_place_of("(`Acme/SDK:pkg/x.go`)", "acme/sdk"));
        assert!(!names_place_of("the acme/sdk repository", "acme/sdk"));
        assert!(!names_place_of("bigacme/sdk:x.go", "acme/sdk"));
        assert!(!names_place_of("acme/sdk: a note", "acme/sdk"));
        assert!(!names_place_of("acme/sdk:", "acme/sdk"));
    }

    #[test]
    fn places_in_prose_keep_their_label() {
        let cited = cited_places_in_text(
            "See `acme/sdk:pkg/x.go:3-4`, app/main.go:7 and acme/other:y.go:2.",
            &LABELS,
        );
        let shown: Vec<String> = cited.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["acme/sdk:pkg/x.go:3-4", "app/main.go:7"]);
    }
}
