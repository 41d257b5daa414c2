//! Small formatting helpers shared by the pages: times, numbers, links to the tracker.

use chrono::{DateTime, Utc};
use relay_core::tracker::web::{self, FileAt};

use crate::AppState;

pub fn time(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M UTC").to_string()
}

/// A time with milliseconds, for a trace timeline (the live script formats the same way).
pub fn clock(at: DateTime<Utc>) -> String {
    at.format("%H:%M:%S%.3f").to_string()
}

/// `12345678` → `12,345,678`.
pub fn count(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn usd(cost: f64) -> String {
    relay_core::prices::usd(cost)
}

/// `url` when it is a web address; anything else (`javascript:`, `data:`) is never a link.
pub fn web_url(url: &str) -> Option<&str> {
    web::web_url(url)
}

/// Where the tracker shows a file at a commit, lines highlighted ([`web::file_url`]: the
/// configured tracker's provider, else the issue URL's shape).
pub fn file_url(
    state: &AppState,
    tracker: &str,
    issue_url: &str,
    source: &FileAt<'_>,
) -> Option<String> {
    let provider = state.trackers.get(tracker).map(|t| t.provider);
    web::file_url(provider, issue_url, source)
}

/// The first `max` characters of `text`, with `…` when cut.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_urls() {
        assert_eq!(count(12_345_678), "12,345,678");
        assert_eq!(count(999), "999");
        assert_eq!(usd(1.234), "$1.23");
        assert_eq!(usd(0.0012), "$0.0012");
        assert_eq!(web_url("javascript:alert(1)"), None);
        assert_eq!(web_url("HTTPS://x"), Some("HTTPS://x"));
        assert_eq!(web::encode_path("a b/c#d?.rs"), "a%20b/c%23d%3F.rs");
        assert_eq!(clip("héllo", 2), "hé…");
    }
}
