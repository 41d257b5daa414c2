//! Small formatting helpers shared by the pages: times, numbers, links to the tracker.

use chrono::{DateTime, Utc};
use relay_core::Provider;

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
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then_some(url)
}

/// Where the tracker shows a file at a commit, lines highlighted. The web root comes from the
/// issue's own URL (everything before the project path), so self-managed instances work.
pub fn file_url(
    state: &AppState,
    tracker: &str,
    issue_url: &str,
    project_path: &str,
    source: &FileRef<'_>,
) -> Option<String> {
    let issue_url = web_url(issue_url)?;
    let root = issue_url.split_once(&format!("/{project_path}/"))?.0;
    let gitlab = match state.trackers.get(tracker) {
        Some(t) => t.provider == Provider::GitLab,
        None => issue_url.contains("/-/issues/"),
    };
    let path = encode_path(source.path);
    let (start, end) = (source.start_line, source.end_line);
    let commit = encode_path(source.commit);
    Some(if gitlab {
        format!("{root}/{project_path}/-/blob/{commit}/{path}#L{start}-{end}")
    } else {
        format!("{root}/{project_path}/blob/{commit}/{path}#L{start}-L{end}")
    })
}

/// A cited file: path, lines and the commit it was verified at.
pub struct FileRef<'a> {
    pub path: &'a str,
    pub start_line: i32,
    pub end_line: i32,
    pub commit: &'a str,
}

/// Percent-encodes what would end or change a URL path (`%`, `#`, `?`, spaces, quotes).
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.trim_start_matches('/').chars() {
        match c {
            '%' | '#' | '?' | ' ' | '"' | '\'' | '<' | '>' | '\\' => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
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
        assert_eq!(encode_path("a b/c#d?.rs"), "a%20b/c%23d%3F.rs");
        assert_eq!(clip("héllo", 2), "hé…");
    }
}
