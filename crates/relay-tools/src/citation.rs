//! Citation checks: does `path:start-end` (and its quote) exist in this checkout?
//!
//! Used by the ExploreAgent on its report's evidence and by the validator on findings' sources,
//! always against the snapshot the job explored and always through the [`Sandbox`], so a citation
//! can never be used to probe outside the checkout.

use std::io::Read;

use relay_core::Citation;

use crate::place::write_place;
use crate::sandbox::{EntryKind, Sandbox};
use crate::sandboxes::{NotRelated, SandboxSet};

/// Largest file a citation may point into. Larger files are not source a person reads.
pub const MAX_CITED_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// Why a citation was rejected. `Display` is terse and model-readable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CitationProblem {
    /// The path does not name a file in the checkout (or the sandbox refused it).
    #[error("{path}: no such file in the explored commit")]
    MissingFile { path: String },
    /// The path is a directory.
    #[error("{path}: is a directory, cite a file")]
    NotAFile { path: String },
    /// The file is binary or too large to cite.
    #[error("{path}: not a text file that can be cited")]
    NotText { path: String },
    /// `start_line` is 0 or after `end_line`.
    #[error("{citation}: invalid line range (lines are 1-based and start <= end)")]
    BadRange { citation: String },
    /// The range ends past the end of the file.
    #[error("{citation}: the file has only {lines} lines")]
    OutOfRange { citation: String, lines: usize },
    /// The quote does not occur in the cited lines.
    #[error("{citation}: the quote does not match those lines")]
    QuoteMismatch { citation: String },
    /// The citation names a repository that is not related to the issue (nothing was read).
    #[error("{citation}: {not_related}")]
    NotRelated {
        citation: String,
        not_related: NotRelated,
    },
}

impl CitationProblem {
    /// The problem with its path written as a place of the related repository `label`.
    fn placed(self, label: Option<&str>) -> CitationProblem {
        let Some(label) = label else {
            return self;
        };
        let place = |text: String| write_place(Some(label), &text);
        match self {
            Self::MissingFile { path } => Self::MissingFile { path: place(path) },
            Self::NotAFile { path } => Self::NotAFile { path: place(path) },
            Self::NotText { path } => Self::NotText { path: place(path) },
            Self::BadRange { citation } => Self::BadRange {
                citation: place(citation),
            },
            Self::OutOfRange { citation, lines } => Self::OutOfRange {
                citation: place(citation),
                lines,
            },
            Self::QuoteMismatch { citation } => Self::QuoteMismatch {
                citation: place(citation),
            },
            other @ Self::NotRelated { .. } => other,
        }
    }
}

/// A citation that passed every check, with its path normalised relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedCitation {
    pub citation: Citation,
    /// The cited lines as they are in the file (for display and for storing with a finding).
    pub text: String,
}

/// Checks one citation against the checkout behind `sandbox`: the file exists and is text, the
/// lines are in range, and the quote (if any) occurs in those lines once whitespace runs are
/// collapsed (models re-indent and re-wrap quotes; the words must still be there).
pub fn verify(sandbox: &Sandbox, citation: &Citation) -> Result<VerifiedCitation, CitationProblem> {
    let shown = citation.to_string();
    if citation.start_line == 0 || citation.start_line > citation.end_line {
        return Err(CitationProblem::BadRange { citation: shown });
    }
    let (rel, content) = read_text(sandbox, &citation.path)?;
    let lines: Vec<&str> = content.lines().collect();
    let normalised = Citation {
        path: rel,
        ..citation.clone()
    };
    let end = citation.end_line as usize;
    if end > lines.len() {
        return Err(CitationProblem::OutOfRange {
            citation: normalised.to_string(),
            lines: lines.len(),
        });
    }
    let text = lines[citation.start_line as usize - 1..end].join("\n");
    if let Some(quote) = &citation.quote {
        let wanted = collapse_whitespace(quote);
        if !wanted.is_empty() && !collapse_whitespace(&text).contains(&wanted) {
            return Err(CitationProblem::QuoteMismatch {
                citation: normalised.to_string(),
            });
        }
    }
    Ok(VerifiedCitation {
        citation: normalised,
        text,
    })
}

/// [`verify`] across the checkout and its related repositories': a `label:path`
/// citation is checked in that repository's checkout and keeps its label in the verified
/// citation (and in any problem); a label that is not a related repository's is
/// [`CitationProblem::NotRelated`], without reading anything.
pub fn verify_in(
    sandboxes: &SandboxSet,
    citation: &Citation,
) -> Result<VerifiedCitation, CitationProblem> {
    let routed =
        sandboxes
            .route(&citation.path)
            .map_err(|not_related| CitationProblem::NotRelated {
                citation: Citation {
                    path: crate::sandbox::display_input(&citation.path),
                    ..citation.clone()
                }
                .to_string(),
                not_related,
            })?;
    let local = Citation {
        path: routed.path.to_owned(),
        ..citation.clone()
    };
    let verified =
        verify(routed.sandbox, &local).map_err(|problem| problem.placed(routed.label))?;
    Ok(VerifiedCitation {
        citation: Citation {
            path: write_place(routed.label, &verified.citation.path),
            ..verified.citation
        },
        text: verified.text,
    })
}

/// Reads a citable file through the sandbox: its normalised relative path and its text. Refuses
/// what a citation may not point into (missing, a directory, binary, larger than
/// [`MAX_CITED_FILE_BYTES`]).
pub fn read_text(sandbox: &Sandbox, path: &str) -> Result<(String, String), CitationProblem> {
    let missing = || CitationProblem::MissingFile {
        path: crate::sandbox::display_input(path),
    };
    let resolved = sandbox.resolve(path).map_err(|_| missing())?;
    if resolved.kind == EntryKind::Dir {
        return Err(CitationProblem::NotAFile {
            path: resolved.rel.clone(),
        });
    }
    let not_text = || CitationProblem::NotText {
        path: resolved.rel.clone(),
    };
    if resolved.len > MAX_CITED_FILE_BYTES {
        return Err(not_text());
    }
    let (mut file, _) = sandbox.open_file(&resolved).map_err(|_| missing())?;
    let mut bytes = Vec::with_capacity(resolved.len as usize);
    file.by_ref()
        .take(MAX_CITED_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| missing())?;
    if bytes.contains(&0) || bytes.len() as u64 > MAX_CITED_FILE_BYTES {
        return Err(not_text());
    }
    Ok((resolved.rel, String::from_utf8_lossy(&bytes).into_owned()))
}

/// Collapses every run of whitespace to one space and trims the ends.
pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkout() -> (tempfile::TempDir, Sandbox) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("pkg")).unwrap();
        std::fs::write(
            dir.path().join("pkg/a.go"),
            "package pkg\n\nfunc Plan() error {\n\treturn nil\n}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("blob.bin"), b"a\0b").unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        (dir, sandbox)
    }

    fn cite(path: &str, start: u32, end: u32, quote: Option<&str>) -> Citation {
        Citation {
            path: path.into(),
            start_line: start,
            end_line: end,
            quote: quote.map(Into::into),
        }
    }

    #[test]
    fn accepts_real_lines_and_whitespace_normalised_quotes() {
        let (_dir, sandbox) = checkout();
        let ok = verify(
            &sandbox,
            &cite("./pkg/a.go", 3, 5, Some("func Plan() error {   return nil")),
        )
        .unwrap();
        assert_eq!(ok.citation.path, "pkg/a.go");
        assert_eq!(ok.text, "func Plan() error {\n\treturn nil\n}");
    }

    #[test]
    fn rejects_each_kind_of_bad_citation() {
        let (_dir, sandbox) = checkout();
        let cases = [
            (
                cite("pkg/a.go", 4, 9, None),
                "pkg/a.go:4-9: the file has only 5 lines",
            ),
            (
                cite("pkg/a.go", 0, 1, None),
                "pkg/a.go:0-1: invalid line range (lines are 1-based and start <= end)",
            ),
            (
                cite("pkg/a.go", 3, 2, None),
                "pkg/a.go:3-2: invalid line range (lines are 1-based and start <= end)",
            ),
            (
                cite("pkg/nope.go", 1, 1, None),
                "pkg/nope.go: no such file in the explored commit",
            ),
            (
                cite("../etc/passwd", 1, 1, None),
                "../etc/passwd: no such file in the explored commit",
            ),
            (
                cite("/etc/passwd", 1, 1, None),
                "/etc/passwd: no such file in the explored commit",
            ),
            (cite("pkg", 1, 1, None), "pkg: is a directory, cite a file"),
            (
                cite("blob.bin", 1, 1, None),
                "blob.bin: not a text file that can be cited",
            ),
            (
                cite("pkg/a.go", 3, 3, Some("func Execute()")),
                "pkg/a.go:3: the quote does not match those lines",
            ),
        ];
        for (citation, want) in cases {
            let got = verify(&sandbox, &citation).unwrap_err();
            assert_eq!(got.to_string(), want, "{citation:?}");
        }
    }

    #[test]
    fn places_are_verified_in_their_related_checkout_and_keep_their_label() {
        let (_app, app) = checkout();
        let sdk_dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(sdk_dir.path().join("pkg")).unwrap();
        std::fs::write(
            sdk_dir.path().join("pkg/x.go"),
            "package pkg\n\nfunc Dial() {}\n",
        )
        .unwrap();
        let set =
            SandboxSet::new(app).with_related("acme/sdk", Sandbox::new(sdk_dir.path()).unwrap());

        let ok = verify_in(
            &set,
            &cite("acme/sdk:./pkg/x.go", 3, 3, Some("func Dial()")),
        )
        .unwrap();
        assert_eq!(ok.citation.path, "acme/sdk:pkg/x.go");
        assert_eq!(ok.text, "func Dial() {}");
        // A bare path is the issue's own checkout, where the SDK's file does not exist.
        assert_eq!(
            verify_in(&set, &cite("pkg/x.go", 3, 3, None))
                .unwrap_err()
                .to_string(),
            "pkg/x.go: no such file in the explored commit"
        );
        assert!(verify_in(&set, &cite("pkg/a.go", 3, 3, None)).is_ok());
        let cases = [
            (
                cite("acme/sdk:pkg/x.go", 9, 9, None),
                "acme/sdk:pkg/x.go:9: the file has only 3 lines",
            ),
            (
                cite("acme/sdk:pkg/a.go", 1, 1, None),
                "acme/sdk:pkg/a.go: no such file in the explored commit",
            ),
            (
                cite("acme/secret:pkg/x.go", 3, 3, None),
                "acme/secret:pkg/x.go:3: repository \"acme/secret\" is not related to this issue; related repositories: acme/sdk",
            ),
        ];
        for (citation, want) in cases {
            assert_eq!(
                verify_in(&set, &citation).unwrap_err().to_string(),
                want,
                "{citation:?}"
            );
        }
    }
}
