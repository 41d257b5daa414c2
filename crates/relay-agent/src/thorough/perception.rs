//! Perception (no LLM): the question made safe to reason about — control characters removed,
//! whitespace collapsed, length bounded — and classified as empty or not before any LLM call;
//! and what the loaded traversal state already establishes, said in a few lines that every
//! stage's prompt carries (so a later query starts from what earlier ones found).

use super::state::TraversalState;

/// Characters of a question kept at most.
pub const MAX_QUESTION_CHARS: usize = 2_000;

/// A question ready for the Intent stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Perceived {
    pub question: String,
    /// Characters cut to fit [`MAX_QUESTION_CHARS`].
    pub truncated_chars: usize,
}

/// Normalises `raw`; `None` when nothing readable is left (the run asks for clarification
/// without spending an LLM call).
pub fn perceive(raw: &str) -> Option<Perceived> {
    let cleaned: String = raw
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let collapsed = cleaned.split_whitespace().collect::<Vec<_>>().join(" ");
    if !collapsed.chars().any(char::is_alphanumeric) {
        return None;
    }
    let total = collapsed.chars().count();
    let question: String = collapsed.chars().take(MAX_QUESTION_CHARS).collect();
    Some(Perceived {
        question,
        truncated_chars: total.saturating_sub(MAX_QUESTION_CHARS),
    })
}

/// What earlier queries on this issue established, from the loaded traversal state: their
/// summaries (newest last) and how much ground they covered. `None` for a first query.
pub fn established(state: &TraversalState) -> Option<String> {
    if state.is_empty() {
        return None;
    }
    let mut out = String::from("Established by earlier queries on this issue:\n");
    for summary in state.summaries.iter() {
        out.push_str(&format!("- {summary}\n"));
    }
    out.push_str(&format!(
        "- ground covered: {} files read, {} symbols traced, {} calls seen\n",
        state.files.len(),
        state.symbols.len(),
        state.edges.len()
    ));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loaded_state_is_summarised_and_a_first_query_has_nothing_to_say() {
        let mut state = TraversalState::default();
        assert_eq!(established(&state), None);
        state.files.push("queue/queue.go".into());
        state
            .summaries
            .push("Verified: 1 claim over 1 file read (queue/queue.go).".into());
        assert_eq!(
            established(&state).unwrap(),
            "Established by earlier queries on this issue:\n\
             - Verified: 1 claim over 1 file read (queue/queue.go).\n\
             - ground covered: 1 files read, 0 symbols traced, 0 calls seen\n"
        );
    }

    #[test]
    fn control_characters_and_length_are_normalised() {
        let p = perceive("how does a\u{0}webhook\r\n become \u{1b}[31ma comment?\t").unwrap();
        assert_eq!(p.question, "how does a webhook become [31ma comment?");
        assert_eq!(p.truncated_chars, 0);
        let long = perceive(&"word ".repeat(1_000)).unwrap();
        assert_eq!(long.question.chars().count(), MAX_QUESTION_CHARS);
        assert_eq!(long.truncated_chars, 4_999 - MAX_QUESTION_CHARS);
    }

    #[test]
    fn an_empty_or_unreadable_question_is_none() {
        assert_eq!(perceive(""), None);
        assert_eq!(perceive(" \u{0}\u{7f}\n ?! "), None);
    }
}
