//! Following pages: GitHub's `Link: <…>; rel="next"` and GitLab's `x-next-page` (with `Link` as
//! the fallback GitLab also sends).

use reqwest::header::HeaderMap;

/// Most pages followed for one list: a guard against a server that links pages in a loop.
pub const MAX_PAGES: usize = 1000;
/// Items asked per page (the maximum both trackers allow).
pub const PER_PAGE: u32 = 100;
/// Most bytes of answers one list reads over all its pages; a longer list is refused.
pub const MAX_LIST_BYTES: usize = 128 * 1024 * 1024;

/// Whether the pagination link `next` stays on the API at `api` (an absolute base URL, maybe
/// with a path such as `/gitlab/api/v4`): the same origin (scheme, host and port) and a path under
/// the API's. Compared as parsed URLs, never as string prefixes: `https://api.github.com.evil.example/`
/// starts with `https://api.github.com`.
pub(crate) fn within_api(next: &str, api: &str) -> bool {
    let (Ok(next), Ok(api)) = (reqwest::Url::parse(next), reqwest::Url::parse(api)) else {
        return false;
    };
    if next.origin() != api.origin() || next.username() != "" || next.password().is_some() {
        return false;
    }
    let base = api.path().trim_end_matches('/');
    let path = next.path();
    base.is_empty() || path == base || path.starts_with(&format!("{base}/"))
}

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
    fn links_must_stay_on_the_api_origin() {
        let api = "https://api.github.com";
        assert!(within_api(
            "https://api.github.com/repos/o/r/issues?page=2",
            api
        ));
        assert!(within_api(
            "https://API.github.com:443/repos/o/r?page=2",
            api
        ));
        for bad in [
            "https://api.github.com.evil.example/repos/o/r?page=2",
            "https://api.github.com@evil.example/repos",
            "http://api.github.com/repos/o/r?page=2",
            "https://api.github.com:8443/repos/o/r?page=2",
            "https://user:pw@api.github.com/repos",
            "/repos/o/r?page=2",
        ] {
            assert!(!within_api(bad, api), "{bad}");
        }
        let gitlab = "https://git.example.com/gitlab/api/v4";
        assert!(within_api(
            "https://git.example.com/gitlab/api/v4/projects/1/issues?page=2",
            gitlab
        ));
        assert!(!within_api(
            "https://git.example.com/gitlab/api/v4evil/projects",
            gitlab
        ));
        assert!(!within_api(
            "https://git.example.com/other/api/v4/x",
            gitlab
        ));
    }

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
