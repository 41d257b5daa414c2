//! Who may make Relay decide: authorization per event, not per batch.
//!
//! An approval, a go-ahead or a gap answer counts only when it is the text of a pending event
//! whose author may engage Relay. The orchestrator decides that per event (by each author's role)
//! and hands the validator the texts on both sides; the model cannot talk its way past it, since
//! the decision-making actions must quote an admitted event's words.

use relay_core::action::CloseReason;

/// What the validator knows of the pending events' authority.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Authority {
    /// No per-event check: a context built by hand (`relay plan` on a JSON file, tests of other
    /// rules). The worker never uses it.
    #[default]
    Unrestricted,
    /// The pending events' note texts, split by whether their author may engage Relay.
    Events {
        admitted: Vec<String>,
        /// Context only: never an approval, a go-ahead or a gap answer.
        refused: Vec<String>,
    },
}

impl Authority {
    /// Whether `quote` is the words of an admitted event (case and whitespace ignored).
    pub fn admits(&self, quote: &str) -> bool {
        match self {
            Authority::Unrestricted => true,
            Authority::Events { admitted, .. } => {
                let quote = normalize(quote);
                !quote.is_empty() && admitted.iter().any(|text| normalize(text).contains(&quote))
            }
        }
    }

    /// Whether `quote` is only the words of a refused event.
    pub fn only_refused(&self, quote: &str) -> bool {
        match self {
            Authority::Unrestricted => false,
            Authority::Events { refused, .. } => {
                let needle = normalize(quote);
                !needle.is_empty()
                    && !self.admits(quote)
                    && refused.iter().any(|text| normalize(text).contains(&needle))
            }
        }
    }

    /// Why a gap closed as `reason` with `note` is refused, if it is: an answer that only a
    /// refused event gave is context, not an answer.
    pub fn refuses_answer(&self, reason: CloseReason, note: &str) -> bool {
        reason == CloseReason::Answered && self.only_refused(note)
    }
}

/// Lowercase with whitespace runs collapsed, so a quote survives reflowing.
fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_admitted_words_count() {
        let authority = Authority::Events {
            admitted: vec!["@relay what does the retry do?".into()],
            refused: vec!["@relay Go  ahead, approved.".into()],
        };
        assert!(!authority.admits("go ahead"));
        assert!(authority.only_refused("Go ahead"));
        assert!(authority.admits("what does the RETRY do"));
        assert!(!authority.admits(""));
        assert!(authority.refuses_answer(CloseReason::Answered, "go ahead, approved"));
        assert!(!authority.refuses_answer(CloseReason::Inferred, "go ahead, approved"));
        assert!(Authority::Unrestricted.admits("anything"));
    }
}
