//! Repository guidance: the file's `instructions` and the guidance files' texts, bounded and
//! labelled with their origin (path and commit) so the planner and the explorers see them as
//! the repository's words, below Relay's own rules.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::file::{MAX_GUIDANCE_FILE_CHARS, MAX_GUIDANCE_TOTAL_CHARS};

/// One guidance text and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuidanceDoc {
    /// `.relay.toml (instructions)` or the guidance file's path.
    pub origin: String,
    /// The commit it was read at.
    pub commit: String,
    pub text: String,
    /// Cut to the bounds (the text ends with a marker saying so).
    pub truncated: bool,
}

/// All guidance of a repository at one commit, instructions first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuidanceText {
    pub docs: Vec<GuidanceDoc>,
}

impl GuidanceText {
    /// Bounds `instructions` (from `file`) and the guidance `files` (path, text; in order) to
    /// [`MAX_GUIDANCE_FILE_CHARS`] each and [`MAX_GUIDANCE_TOTAL_CHARS`] together. Control
    /// characters other than newlines and tabs are dropped; empty texts are skipped.
    pub fn bound(
        commit: &str,
        instructions: Option<(&str, &str)>,
        files: &[(String, String)],
    ) -> GuidanceText {
        let mut docs = Vec::new();
        let mut room = MAX_GUIDANCE_TOTAL_CHARS;
        let entries = instructions
            .map(|(file, text)| (format!("{file} (instructions)"), text))
            .into_iter()
            .chain(
                files
                    .iter()
                    .map(|(path, text)| (path.clone(), text.as_str())),
            );
        for (origin, text) in entries {
            let clean: String = text
                .chars()
                .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
                .collect();
            let clean = clean.trim();
            if clean.is_empty() {
                continue;
            }
            if room == 0 {
                break;
            }
            let cap = MAX_GUIDANCE_FILE_CHARS.min(room);
            let count = clean.chars().count();
            let (text, truncated) = if count > cap {
                let kept: String = clean.chars().take(cap).collect();
                (
                    format!("{kept}\n[… {} more characters not shown …]", count - cap),
                    true,
                )
            } else {
                (clean.to_owned(), false)
            };
            room = room.saturating_sub(count.min(cap));
            docs.push(GuidanceDoc {
                origin,
                commit: commit.to_owned(),
                text,
                truncated,
            });
        }
        GuidanceText { docs }
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// A digest of the texts (not the commit): it changes when the guidance's words change, so
    /// a learning made under other guidance can be marked for review.
    pub fn digest(&self) -> String {
        let mut hasher = Sha256::new();
        for doc in &self.docs {
            hasher.update(doc.origin.as_bytes());
            hasher.update([0]);
            hasher.update(doc.text.as_bytes());
            hasher.update([0]);
        }
        hex::encode(hasher.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_bounded_each_and_together() {
        let big = "x".repeat(MAX_GUIDANCE_FILE_CHARS + 10);
        let files: Vec<(String, String)> =
            (0..5).map(|i| (format!("f{i}.md"), big.clone())).collect();
        let guidance = GuidanceText::bound("c1", Some((".relay.toml", "be brief\u{7}")), &files);
        assert_eq!(guidance.docs[0].origin, ".relay.toml (instructions)");
        assert_eq!(guidance.docs[0].text, "be brief");
        assert!(guidance.docs[1].truncated);
        assert!(
            guidance.docs[1]
                .text
                .ends_with("[… 10 more characters not shown …]")
        );
        let total: usize = guidance
            .docs
            .iter()
            .map(|d| d.text.chars().count().min(MAX_GUIDANCE_FILE_CHARS))
            .sum();
        assert!(total <= MAX_GUIDANCE_TOTAL_CHARS + MAX_GUIDANCE_FILE_CHARS);
        assert_eq!(guidance.docs.len(), 4, "the total bound stops the list");
        assert_ne!(guidance.digest(), GuidanceText::default().digest());
    }
}
