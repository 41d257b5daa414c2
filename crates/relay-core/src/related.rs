//! Related repositories: the other repositories an issue's exploration may read, and why each one
//! named was admitted or refused.
//!
//! The repository proposes (`.relay.toml` `related`), the server decides: a name is admitted only
//! when every rule holds ([`precheck`], then [`judge`]), and every refusal carries its reason, shown on the project
//! page, in the API and by `relay config check`. Nothing here talks to a tracker: the caller looks
//! each name up ([`Lookup`]) and this module judges.
//!
//! Invariants:
//! - a repository more private than the issue's is never admitted (its code would be quoted into
//!   comments readers of the issue may not see); an issue whose repository's visibility is not
//!   known counts as public;
//! - at most [`MAX_RELATED`] are admitted per repository, in the order named (file first, then the
//!   server's table); the rest are refused as such, never silently dropped.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ProjectVisibility;

/// Most related repositories one repository may have admitted.
pub const MAX_RELATED: usize = 8;
/// Most names read from one list (a longer list is cut: each name costs a tracker lookup).
pub const MAX_RELATED_NAMES: usize = 32;
/// Longest repository path, in characters (GitLab's full paths are at most 255).
pub const MAX_RELATED_PATH_CHARS: usize = 255;
/// Most `/`-separated segments of a repository path (GitLab nests groups at most 20 deep).
pub const MAX_RELATED_PATH_SEGMENTS: usize = 21;

/// Who named a related repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelatedSource {
    /// The repository's `.relay.toml` `related`.
    File,
    /// The server's `[[trackers]] related` table.
    Server,
    /// Not named: the repository depends on it (its `go.mod`, its Python dependencies). Shown
    /// as "could be related", never admitted.
    Suggested,
}

impl RelatedSource {
    pub fn as_str(self) -> &'static str {
        match self {
            RelatedSource::File => "file",
            RelatedSource::Server => "server",
            RelatedSource::Suggested => "suggested",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "file" => Some(RelatedSource::File),
            "server" => Some(RelatedSource::Server),
            "suggested" => Some(RelatedSource::Suggested),
            _ => None,
        }
    }
}

/// One related repository as named, before it is judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelatedRequest {
    /// The tracker path (`acme/sdk`, `group/sub/project`), trimmed of surrounding slashes.
    pub path: String,
    pub source: RelatedSource,
}

/// What the tracker said of a named repository, with Relay's credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// It exists and Relay can read it.
    Readable {
        project_id: String,
        visibility: ProjectVisibility,
    },
    /// The tracker answered that it does not exist or that Relay may not read it (both are a 404
    /// on GitHub and GitLab for a private repository).
    NotFound,
    /// The tracker could not be asked (an outage, a rate limit): refused for this job, asked
    /// again at the next.
    Failed { error: String },
}

/// Why a named repository was not admitted. `Display` is the reason shown to people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `[agent] related_repositories = false`.
    FeatureOff,
    /// Not a repository path of this tracker (a URL, `..`, characters a path cannot have).
    NotAPath,
    /// The issue's own repository.
    Itself,
    /// Named twice.
    Duplicate,
    /// Past the first [`MAX_RELATED`].
    TooMany,
    /// Outside the tracker's `projects` allow-list.
    NotAllowed,
    /// Unknown to the tracker, or not readable with Relay's credentials.
    NotFound,
    /// The tracker could not be asked.
    LookupFailed { error: String },
    /// Admitted by every rule, but its checkout failed (asked again at the next job).
    CheckoutFailed { error: String },
    /// More private than the issue's repository.
    MorePrivate {
        related: ProjectVisibility,
        issue: ProjectVisibility,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::FeatureOff => write!(
                f,
                "the server has related repositories turned off ([agent] related_repositories = false)"
            ),
            Refusal::NotAPath => write!(
                f,
                "not a repository path of this tracker (write owner/name or group/sub/project)"
            ),
            Refusal::Itself => write!(f, "this is the issue's own repository"),
            Refusal::Duplicate => write!(f, "named more than once"),
            Refusal::TooMany => write!(
                f,
                "more than {MAX_RELATED} related repositories; only the first {MAX_RELATED} named are considered"
            ),
            Refusal::NotAllowed => write!(
                f,
                "outside the server's projects allow-list ([[trackers]] projects)"
            ),
            Refusal::NotFound => write!(
                f,
                "the tracker does not know it, or Relay's credentials cannot read it"
            ),
            Refusal::LookupFailed { error } => {
                write!(
                    f,
                    "the tracker could not be asked ({error}); asked again at the next job"
                )
            }
            Refusal::CheckoutFailed { error } => {
                write!(
                    f,
                    "its checkout failed ({error}); tried again at the next job"
                )
            }
            Refusal::MorePrivate { related, issue } => write!(
                f,
                "it is {} and the issue's repository is {}: its code could be quoted where its readers cannot see",
                related.as_str(),
                issue.as_str()
            ),
        }
    }
}

/// The verdict on one named repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admission {
    pub request: RelatedRequest,
    pub verdict: Verdict,
}

/// Admitted (with what the tracker said) or refused (with why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Admitted {
        project_id: String,
        visibility: ProjectVisibility,
    },
    Refused(Refusal),
}

impl Admission {
    pub fn admitted(&self) -> bool {
        matches!(self.verdict, Verdict::Admitted { .. })
    }

    /// Whether the tracker was asked about it (it passed [`precheck`]).
    fn looked_up(&self) -> bool {
        matches!(
            self.verdict,
            Verdict::Admitted { .. }
                | Verdict::Refused(
                    Refusal::NotFound
                        | Refusal::LookupFailed { .. }
                        | Refusal::CheckoutFailed { .. }
                        | Refusal::MorePrivate { .. }
                )
        )
    }
}

/// How private a visibility is, as a rank (public < internal < private): a place of a repository
/// may appear only on an issue of at least its rank.
pub fn privacy_rank(visibility: ProjectVisibility) -> u8 {
    match visibility {
        ProjectVisibility::Public => 0,
        ProjectVisibility::Internal => 1,
        ProjectVisibility::Private => 2,
    }
}

/// Whether a repository of `related` visibility may be read for an issue of `issue` visibility:
/// never a more private one.
pub fn may_quote(related: ProjectVisibility, issue: ProjectVisibility) -> bool {
    privacy_rank(related) <= privacy_rank(issue)
}

/// Whether `path` can name a repository of a tracker: `owner/name` or `group/sub/project`,
/// segments of letters, digits, `.`, `_`, `-`, none `.`/`..`, no URL.
pub fn is_repository_path(path: &str) -> bool {
    if path.len() > 4 * MAX_RELATED_PATH_CHARS || path.chars().count() > MAX_RELATED_PATH_CHARS {
        return false;
    }
    let segments: Vec<&str> = path
        .split('/')
        .take(MAX_RELATED_PATH_SEGMENTS + 1)
        .collect();
    (2..=MAX_RELATED_PATH_SEGMENTS).contains(&segments.len())
        && segments.iter().all(|segment| {
            !segment.is_empty()
                && *segment != "."
                && *segment != ".."
                && segment
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        })
}

/// `(label, path)` of a place in a related repository, `owner/name:path` (the label is a
/// repository path, which never holds a `:`, so the first `:` ends it); `None` for a bare path.
pub fn split_place_text(place: &str) -> Option<(&str, &str)> {
    let (label, path) = place.split_once(':')?;
    (is_repository_path(label) && !path.is_empty()).then_some((label, path))
}

/// The named repositories in order (the file's, then the server's table), cut to
/// [`MAX_RELATED_NAMES`] each.
pub fn requests(file: &[String], server: &[String]) -> Vec<RelatedRequest> {
    let named = |names: &[String], source: RelatedSource| {
        names
            .iter()
            .take(MAX_RELATED_NAMES)
            .map(move |name| RelatedRequest {
                path: name.trim().trim_matches('/').to_owned(),
                source,
            })
            .collect::<Vec<_>>()
    };
    let mut out = named(file, RelatedSource::File);
    out.extend(named(server, RelatedSource::Server));
    out
}

/// Most "could be related" suggestions kept per repository.
pub const MAX_SUGGESTIONS: usize = 16;

/// The host repositories of a tracker live on, from its API base URL: GitHub's API host
/// `api.github.com` serves `github.com`; GitHub Enterprise (`https://ghe.example.com/api/v3`) and
/// GitLab serve their own host.
pub fn tracker_host(base_url: &str) -> Option<String> {
    let rest = base_url
        .strip_prefix("https://")
        .or_else(|| base_url.strip_prefix("http://"))?;
    let host = rest.split(['/', '?', '#']).next()?.to_ascii_lowercase();
    let host = host.split('@').next_back()?.to_owned();
    (!host.is_empty()).then(|| host.strip_prefix("api.").unwrap_or(&host).to_owned())
}

/// The repository path a dependency names on the tracker at `host`, if it names one there: a Go
/// module path `host/owner/name[/sub]` or a URL `https://host/owner/name(.git)`. GitHub
/// repositories are the first two segments; a GitLab project is every segment of a module root
/// or a URL (groups nest), less a Go major version suffix (`/v2`).
pub fn repository_of(
    dependency: &str,
    host: &str,
    provider: crate::tracker::Provider,
) -> Option<String> {
    let rest = dependency
        .strip_prefix("https://")
        .or_else(|| dependency.strip_prefix("http://"))
        .unwrap_or(dependency);
    let (dep_host, path) = rest.split_once('/')?;
    if !dep_host.eq_ignore_ascii_case(host) {
        return None;
    }
    let path = path.split(['?', '#', '@']).next()?.trim_end_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let mut segments: Vec<&str> = path.split('/').collect();
    let is_major = |s: &str| {
        s.strip_prefix('v')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if segments.len() > 2 && segments.last().is_some_and(|s| is_major(s)) {
        segments.pop();
    }
    if provider == crate::tracker::Provider::GitHub {
        segments.truncate(2);
    }
    let path = segments.join("/");
    is_repository_path(&path).then_some(path)
}

/// What the server allows, the bound every named repository is judged against.
#[derive(Debug, Clone, Copy)]
pub struct RelatedPolicy<'a> {
    /// `[agent] related_repositories`.
    pub enabled: bool,
    /// The issue's own repository path.
    pub own_path: &'a str,
    /// The issue's repository's visibility (`None`: not known, counts as public).
    pub issue_visibility: Option<ProjectVisibility>,
}

/// The rules that need no tracker: the refusal of `request`, or `None` when it must be looked up
/// (then [`judge`] decides). `earlier` are the verdicts on the names before it; `allowed` is the
/// tracker's `projects` allow-list check.
pub fn precheck(
    policy: &RelatedPolicy<'_>,
    request: &RelatedRequest,
    earlier: &[Admission],
    allowed: impl Fn(&str) -> bool,
) -> Option<Refusal> {
    let path = request.path.as_str();
    if !policy.enabled {
        return Some(Refusal::FeatureOff);
    }
    if !is_repository_path(path) {
        return Some(Refusal::NotAPath);
    }
    if path.eq_ignore_ascii_case(policy.own_path) {
        return Some(Refusal::Itself);
    }
    if earlier
        .iter()
        .any(|a| a.request.path.eq_ignore_ascii_case(path))
    {
        return Some(Refusal::Duplicate);
    }
    if !allowed(path) {
        return Some(Refusal::NotAllowed);
    }
    // Counted over the names that were looked up, so a malformed or duplicate name does not
    // take a place.
    let candidates = earlier.iter().filter(|a| a.looked_up()).count();
    (candidates >= MAX_RELATED).then_some(Refusal::TooMany)
}

/// The verdict on a request that passed [`precheck`], from what the tracker said.
pub fn judge(policy: &RelatedPolicy<'_>, lookup: Lookup) -> Verdict {
    let issue = policy.issue_visibility.unwrap_or(ProjectVisibility::Public);
    match lookup {
        Lookup::Readable {
            project_id,
            visibility,
        } if may_quote(visibility, issue) => Verdict::Admitted {
            project_id,
            visibility,
        },
        Lookup::Readable { visibility, .. } => Verdict::Refused(Refusal::MorePrivate {
            related: visibility,
            issue,
        }),
        Lookup::NotFound => Verdict::Refused(Refusal::NotFound),
        Lookup::Failed { error } => Verdict::Refused(Refusal::LookupFailed { error }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(issue: Option<ProjectVisibility>) -> RelatedPolicy<'static> {
        RelatedPolicy {
            enabled: true,
            own_path: "acme/app",
            issue_visibility: issue,
        }
    }

    fn readable(visibility: ProjectVisibility) -> Lookup {
        Lookup::Readable {
            project_id: "9".into(),
            visibility,
        }
    }

    /// Judges `names` as the worker does, every lookup answering `lookup(path)`.
    fn admit_all(
        policy: &RelatedPolicy<'_>,
        names: &[&str],
        lookup: impl Fn(&str) -> Lookup,
    ) -> Vec<Admission> {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut out: Vec<Admission> = Vec::new();
        for request in requests(&names, &[]) {
            let verdict = match precheck(policy, &request, &out, |p| !p.starts_with("outside/")) {
                Some(refusal) => Verdict::Refused(refusal),
                None => judge(policy, lookup(&request.path)),
            };
            out.push(Admission { request, verdict });
        }
        out
    }

    #[test]
    fn a_repository_more_private_than_the_issue_is_never_admitted() {
        use ProjectVisibility::*;
        for (issue, related, admitted) in [
            (Some(Public), Public, true),
            (Some(Public), Internal, false),
            (Some(Public), Private, false),
            (Some(Internal), Internal, true),
            (Some(Internal), Private, false),
            (Some(Private), Private, true),
            (Some(Private), Public, true),
            // Not known: counts as public.
            (None, Private, false),
            (None, Public, true),
        ] {
            let verdict = judge(&policy(issue), readable(related));
            assert_eq!(
                matches!(verdict, Verdict::Admitted { .. }),
                admitted,
                "{issue:?} {related:?}"
            );
        }
        assert_eq!(
            judge(&policy(Some(Public)), readable(Private)).clone(),
            Verdict::Refused(Refusal::MorePrivate {
                related: Private,
                issue: Public
            })
        );
    }

    #[test]
    fn every_refusal_has_its_reason_and_only_eight_are_looked_up() {
        let mut names = vec![
            "https://github.com/acme/sdk",
            "acme/app",
            "outside/lib",
            "acme/gone",
            "acme/sdk",
            "Acme/SDK",
        ];
        let extra: Vec<String> = (0..9).map(|n| format!("acme/lib{n}")).collect();
        names.extend(extra.iter().map(String::as_str));
        let admissions = admit_all(&policy(Some(ProjectVisibility::Public)), &names, |path| {
            if path == "acme/gone" {
                Lookup::NotFound
            } else {
                readable(ProjectVisibility::Public)
            }
        });
        let verdicts: Vec<(&str, Option<Refusal>)> = admissions
            .iter()
            .map(|a| {
                (
                    a.request.path.as_str(),
                    match &a.verdict {
                        Verdict::Admitted { .. } => None,
                        Verdict::Refused(r) => Some(r.clone()),
                    },
                )
            })
            .collect();
        assert_eq!(verdicts[0].1, Some(Refusal::NotAPath));
        assert_eq!(verdicts[1].1, Some(Refusal::Itself));
        assert_eq!(verdicts[2].1, Some(Refusal::NotAllowed));
        assert_eq!(verdicts[3].1, Some(Refusal::NotFound));
        assert_eq!(verdicts[4].1, None);
        assert_eq!(verdicts[5].1, Some(Refusal::Duplicate));
        // acme/gone and acme/sdk were looked up: six more are, the last three are too many.
        let looked_up: Vec<_> = verdicts[6..].iter().map(|(_, r)| r.clone()).collect();
        assert_eq!(looked_up[..6], [None, None, None, None, None, None]);
        assert_eq!(
            looked_up[6..],
            [
                Some(Refusal::TooMany),
                Some(Refusal::TooMany),
                Some(Refusal::TooMany)
            ]
        );
        assert_eq!(admissions.iter().filter(|a| a.admitted()).count(), 7);
        for (_, refusal) in verdicts {
            if let Some(refusal) = refusal {
                assert!(!refusal.to_string().is_empty());
            }
        }
    }

    #[test]
    fn a_dependency_names_a_repository_of_the_trackers_host_only() {
        use crate::tracker::Provider::{GitHub, GitLab};
        assert_eq!(
            tracker_host("https://api.github.com").as_deref(),
            Some("github.com")
        );
        assert_eq!(
            tracker_host("https://ghe.example.com/api/v3").as_deref(),
            Some("ghe.example.com")
        );
        assert_eq!(
            tracker_host("https://gitlab.example.com/").as_deref(),
            Some("gitlab.example.com")
        );
        for (dependency, host, provider, expected) in [
            (
                "github.com/acme/sdk",
                "github.com",
                GitHub,
                Some("acme/sdk"),
            ),
            (
                "github.com/acme/sdk/v2/pkg",
                "github.com",
                GitHub,
                Some("acme/sdk"),
            ),
            (
                "https://github.com/acme/lib.git",
                "github.com",
                GitHub,
                Some("acme/lib"),
            ),
            (
                "gitlab.example.com/group/sub/proj/v3",
                "gitlab.example.com",
                GitLab,
                Some("group/sub/proj"),
            ),
            (
                "https://gitlab.example.com/group/lib.git",
                "gitlab.example.com",
                GitLab,
                Some("group/lib"),
            ),
            ("golang.org/x/tools", "github.com", GitHub, None),
            ("requests", "github.com", GitHub, None),
            ("github.com/acme", "github.com", GitHub, None),
        ] {
            assert_eq!(
                repository_of(dependency, host, provider).as_deref(),
                expected,
                "{dependency}"
            );
        }
    }

    #[test]
    fn the_feature_off_refuses_every_name() {
        let mut off = policy(Some(ProjectVisibility::Public));
        off.enabled = false;
        let admissions = admit_all(&off, &["acme/sdk"], |_| unreachable!("no lookup when off"));
        assert_eq!(admissions[0].verdict, Verdict::Refused(Refusal::FeatureOff));
    }
}
