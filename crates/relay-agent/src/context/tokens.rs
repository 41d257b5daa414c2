//! A cheap token estimate and truncation with visible markers.

/// Characters per token assumed by [`estimate_tokens`]: English prose and code average about 4
/// with the common BPE vocabularies; the bound only needs to be roughly right and stable.
pub const CHARS_PER_TOKEN: usize = 4;

/// The estimated token count of `text`.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(CHARS_PER_TOKEN)
}

/// Characters kept free for the truncation marker.
const MARKER_CHARS: usize = 100;

/// `text` cut to about `max_tokens`, keeping its head, with a marker saying how much was cut.
pub fn truncate_to_tokens(text: &str, max_tokens: usize) -> String {
    let max_chars = max_tokens * CHARS_PER_TOKEN;
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let marker_room = MARKER_CHARS.min(max_chars);
    let keep = max_chars - marker_room;
    let head: String = text.chars().take(keep).collect();
    format!(
        "{head}\n[… truncated: {} of {total} characters omitted to fit the context bound …]",
        total - keep
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_is_marked_and_bounded() {
        let text = "x".repeat(1000);
        let cut = truncate_to_tokens(&text, 50);
        assert!(cut.contains("[… truncated: 900 of 1000 characters omitted"));
        assert!(
            estimate_tokens(&cut) <= 50 + 10,
            "{}",
            estimate_tokens(&cut)
        );
        assert_eq!(truncate_to_tokens("short", 50), "short");
    }
}
