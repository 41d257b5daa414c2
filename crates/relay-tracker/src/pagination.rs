//! Following pages: GitHub's `Link: <…>; rel="next"` and GitLab's `x-next-page` (with `Link` as
//! the fallback GitLab also sends).

use reqwest::header::HeaderMap;

/// Most pages followed for one list: a guard against a server that links pages in a loop.
pub const MAX_PAGES: usize = 1000;
/// Items asked per page (the maximum both trackers allow).
pub const PER_PAGE: u32 = 100;

/// The `rel="next"` URL of a `Link` header.
pub(crate) fn link_next(headers: &HeaderMap) -> Option<String> {
    for value in headers.get_all(reqwest::header::LINK) {
        let Ok(value) = value.to_str() else { continue };
        for part in value.split(',') {
            let mut pieces = part.split(';');
            let Some(url) = pieces.next() else { continue };
            let is_next = pieces.any(|p| {
                let p = p.trim();
                p == "rel=\"next\"" || p == "rel=next"
            });
            if is_next {
                let url = url.trim().trim_start_matches('<').trim_end_matches('>');
                return Some(url.to_owned());
            }
        }
    }
    None
}

/// GitLab's `x-next-page` (empty on the last page).
pub(crate) fn gitlab_next_page(headers: &HeaderMap) -> Option<u32> {
    headers
        .get("x-next-page")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_link_headers() {
        let mut h = HeaderMap::new();
        h.insert(
            "link",
            r#"<https://api.github.com/repositories/1/issues/1/comments?page=2>; rel="next", <https://api.github.com/repositories/1/issues/1/comments?page=5>; rel="last""#
                .parse()
                .unwrap(),
        );
        assert_eq!(
            link_next(&h).as_deref(),
            Some("https://api.github.com/repositories/1/issues/1/comments?page=2")
        );
        h.insert(
            "link",
            r#"<https://x/?page=1>; rel="prev""#.parse().unwrap(),
        );
        assert_eq!(link_next(&h), None);
        h.insert("x-next-page", "".parse().unwrap());
        assert_eq!(gitlab_next_page(&h), None);
        h.insert("x-next-page", "3".parse().unwrap());
        assert_eq!(gitlab_next_page(&h), Some(3));
    }
}
