//! What differs between trackers on the web: where an issue's project is and how a file at a
//! commit is linked, one row per provider (its API is `relay-tracker`'s, its clone rules are
//! `relay-repo`'s `rules.rs`). The living summary and the status page link citations with
//! [`file_url`], so both link the same way, with the one path encoder [`encode_path`].

use super::Provider;

/// One provider's web layout.
#[derive(Debug)]
struct WebRules {
    /// What comes between the project's web URL and an issue number.
    issues: &'static [&'static str],
    /// What comes between the project's web URL and a commit, for a file at that commit.
    blob: &'static str,
    /// What the end of a line range starts with after `-` (`#L9-L10` on GitHub, `#L9-10` on GitLab).
    line_end: &'static str,
}

const GITHUB: WebRules = WebRules {
    issues: &["/issues/"],
    blob: "/blob/",
    line_end: "L",
};

const GITLAB: WebRules = WebRules {
    // Old GitLab versions had no `/-/` scope; they still redirect.
    issues: &["/-/issues/", "/issues/"],
    blob: "/-/blob/",
    line_end: "",
};

fn rules(provider: Provider) -> &'static WebRules {
    match provider {
        Provider::GitHub => &GITHUB,
        Provider::GitLab => &GITLAB,
    }
}

/// A cited file: its path, the lines and the commit they were read at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileAt<'a> {
    pub path: &'a str,
    pub commit: &'a str,
    pub start_line: i32,
    pub end_line: i32,
}

/// `url` when it is a web address (`http://` or `https://`, in any case); anything else
/// (`javascript:`, `data:`) is never a link.
pub fn web_url(url: &str) -> Option<&str> {
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then_some(url)
}

/// The provider whose issue URLs look like `issue_url`, when the configuration does not say:
/// GitLab's have `/-/issues/`, GitHub's `/issues/`.
pub fn provider_of_issue_url(issue_url: &str) -> Option<Provider> {
    [Provider::GitLab, Provider::GitHub]
        .into_iter()
        .find(|p| issue_url.contains(rules(*p).issues[0]))
}

/// The project's web URL, from the web URL of one of its issues (everything before the issues
/// path, so self-managed instances and subgroups work). `None` when `issue_url` is not a web
/// address of that shape.
pub fn project_url(provider: Provider, issue_url: &str) -> Option<&str> {
    let issue_url = web_url(issue_url)?;
    rules(provider)
        .issues
        .iter()
        .find_map(|issues| issue_url.rsplit_once(issues))
        .map(|(project, _)| project)
}

/// Where the tracker shows `file` at its commit, lines highlighted. `provider` is the configured
/// tracker's, or `None` to go by the issue URL's shape ([`provider_of_issue_url`]).
///
/// A place in a related repository (`owner/name:path`) links into that repository on the same
/// instance: GitHub's repositories are `owner/name` under the instance's root; a GitLab
/// project's path under the host (an instance under a relative URL root links wrongly: the issue
/// URL does not say where its project path starts).
pub fn file_url(provider: Option<Provider>, issue_url: &str, file: &FileAt<'_>) -> Option<String> {
    let provider = provider.or_else(|| provider_of_issue_url(issue_url))?;
    let project = project_url(provider, issue_url)?;
    let (project, path) = match crate::related::split_place_text(file.path) {
        Some((label, path)) => (related_project_url(provider, project, label)?, path),
        None => (project.to_owned(), file.path),
    };
    let rules = rules(provider);
    Some(format!(
        "{project}{}{}/{}#L{}-{}{}",
        rules.blob,
        encode_path(file.commit),
        encode_path(path),
        file.start_line,
        rules.line_end,
        file.end_line
    ))
}

/// The web URL of the related repository `label` on the instance of `project` (the issue's
/// project's web URL).
fn related_project_url(provider: Provider, project: &str, label: &str) -> Option<String> {
    let root = match provider {
        // `https://host[/prefix]/owner/name`: the root is the project's URL less two segments.
        Provider::GitHub => project.rsplitn(3, '/').nth(2)?,
        Provider::GitLab => {
            let start = project.find("://")? + 3;
            let end = project[start..]
                .find('/')
                .map_or(project.len(), |i| start + i);
            &project[..end]
        }
    };
    Some(format!("{root}/{}", encode_path(label)))
}

/// Percent-encodes what would end or change a URL path, or end a Markdown link or an HTML
/// attribute around it: `%`, `#`, `?`, spaces, quotes, `<`, `>`, `\`, `(` and `)`. Control
/// characters are dropped and a leading `/` is removed.
pub fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.trim_start_matches('/').chars() {
        match c {
            '%' | '#' | '?' | ' ' | '"' | '\'' | '<' | '>' | '\\' | '(' | ')' => {
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

#[cfg(test)]
mod tests {
    use super::*;

    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

    fn file(path: &str) -> FileAt<'_> {
        FileAt {
            path,
            commit: COMMIT,
            start_line: 9,
            end_line: 10,
        }
    }

    #[test]
    fn both_trackers_link_a_file_at_a_commit_in_their_own_shape() {
        let github = file_url(
            None,
            "https://github.com/octo/repo/issues/7",
            &file("app/settings.py"),
        );
        assert_eq!(
            github.as_deref(),
            Some(
                "https://github.com/octo/repo/blob/0123456789abcdef0123456789abcdef01234567/app/settings.py#L9-L10"
            )
        );
        let gitlab = file_url(
            None,
            "https://gitlab.example.com/g/sub/p/-/issues/7",
            &file("app/settings.py"),
        );
        assert_eq!(
            gitlab.as_deref(),
            Some(
                "https://gitlab.example.com/g/sub/p/-/blob/0123456789abcdef0123456789abcdef01234567/app/settings.py#L9-10"
            )
        );
        // The configured provider wins over the URL's shape (an old GitLab without `/-/`).
        let old = file_url(
            Some(Provider::GitLab),
            "https://gl.example.com/g/p/issues/7",
            &file("a.rs"),
        );
        assert_eq!(
            old.as_deref(),
            Some(
                "https://gl.example.com/g/p/-/blob/0123456789abcdef0123456789abcdef01234567/a.rs#L9-10"
            )
        );
        // Not a web address, or not an issue URL: no link.
        assert_eq!(
            file_url(None, "javascript:alert(1)//issues/1", &file("a")),
            None
        );
        assert_eq!(file_url(None, "https://example.com/x", &file("a")), None);
        assert_eq!(
            file_url(
                Some(Provider::GitHub),
                "HTTPS://github.com/o/r/issues/1",
                &file("a")
            )
            .as_deref(),
            Some("HTTPS://github.com/o/r/blob/0123456789abcdef0123456789abcdef01234567/a#L9-L10")
        );
    }

    #[test]
    fn a_place_in_a_related_repository_links_into_that_repository() {
        let github = file_url(
            None,
            "https://github.com/acme/app/issues/7",
            &file("acme/sdk:client/client.go"),
        );
        assert_eq!(
            github.as_deref(),
            Some(
                "https://github.com/acme/sdk/blob/0123456789abcdef0123456789abcdef01234567/client/client.go#L9-L10"
            )
        );
        let ghe = file_url(
            Some(Provider::GitHub),
            "https://ghe.example.com/acme/app/issues/7",
            &file("acme/sdk:a.go"),
        );
        assert!(
            ghe.as_deref()
                .is_some_and(|l| l.starts_with("https://ghe.example.com/acme/sdk/blob/")),
            "{ghe:?}"
        );
        let gitlab = file_url(
            None,
            "https://gitlab.example.com/g/sub/app/-/issues/7",
            &file("g/lib:pkg/x.py"),
        );
        assert_eq!(
            gitlab.as_deref(),
            Some(
                "https://gitlab.example.com/g/lib/-/blob/0123456789abcdef0123456789abcdef01234567/pkg/x.py#L9-10"
            )
        );
        // Not a place: a path with a colon that does not start with owner/name.
        let plain = file_url(None, "https://github.com/o/r/issues/1", &file("a:b.md")).unwrap();
        assert!(plain.starts_with("https://github.com/o/r/blob/"), "{plain}");
    }

    #[test]
    fn paths_are_encoded_for_a_url_a_markdown_link_and_an_html_attribute() {
        assert_eq!(encode_path("a b/c#d?.rs"), "a%20b/c%23d%3F.rs");
        assert_eq!(
            encode_path("/x/(y)/100%/\"q\"<t>'s\\.py"),
            "x/%28y%29/100%25/%22q%22%3Ct%3E%27s%5C.py"
        );
        assert_eq!(encode_path("a\u{7}b/é.go"), "ab/é.go");
        let link = file_url(
            None,
            "https://github.com/o/r/issues/1",
            &file("docs/a (draft).md"),
        )
        .unwrap();
        assert!(link.contains("/docs/a%20%28draft%29.md#L9-L10"), "{link}");
    }
}
