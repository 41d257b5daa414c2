//! What differs between trackers when cloning: one row per provider. A new tracker adds its row
//! here and nowhere else in this crate.

use crate::spec::Provider;

/// How many segments a project path has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathDepth {
    /// Exactly this many (`owner/repo`).
    Exactly(usize),
    /// At least this many (`group/sub/project`).
    AtLeast(usize),
}

impl PathDepth {
    pub(crate) fn admits(self, segments: usize) -> bool {
        match self {
            PathDepth::Exactly(n) => segments == n,
            PathDepth::AtLeast(n) => segments >= n,
        }
    }
}

/// One provider's clone rules.
#[derive(Debug)]
pub(crate) struct ProviderRules {
    /// The name used in messages.
    pub name: &'static str,
    /// The username git sends with the token in Basic auth (one that works for every token kind
    /// the provider issues).
    pub basic_auth_user: &'static str,
    /// An API host whose web host differs (`api.github.com` → `github.com`).
    pub api_host: Option<ApiHost>,
    /// The API path suffix a `base_url` may end with, removed to get the web base.
    pub api_path_suffix: &'static str,
    /// The shape of a project path.
    pub path_depth: PathDepth,
    /// That shape as the error message says it.
    pub path_shape: &'static str,
}

/// An API host and the web host it serves.
#[derive(Debug)]
pub(crate) struct ApiHost {
    pub api: &'static str,
    pub web: &'static str,
}

const GITHUB: ProviderRules = ProviderRules {
    name: "github",
    basic_auth_user: "x-access-token",
    api_host: Some(ApiHost {
        api: "api.github.com",
        web: "github.com",
    }),
    api_path_suffix: "/api/v3",
    path_depth: PathDepth::Exactly(2),
    path_shape: "`owner/repo`",
};

const GITLAB: ProviderRules = ProviderRules {
    name: "gitlab",
    basic_auth_user: "oauth2",
    api_host: None,
    api_path_suffix: "/api/v4",
    path_depth: PathDepth::AtLeast(2),
    path_shape: "`group/project` or deeper",
};

/// The rules of `provider`.
pub(crate) fn rules(provider: Provider) -> &'static ProviderRules {
    match provider {
        Provider::GitHub => &GITHUB,
        Provider::GitLab => &GITLAB,
    }
}
