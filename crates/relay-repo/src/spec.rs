//! [`RepoSpec`]: which repository to check out, and how its HTTPS clone URL and credentials are
//! built.
//!
//! # Clone URLs
//! The clone URL is `{web base}/{project_path}.git`, where the web base is `base_url` without a
//! trailing `/` and normalised per provider:
//! - **GitHub** (github.com and GitHub Enterprise Server): `https://github.com/owner/repo.git`,
//!   `https://ghe.example.com/owner/repo.git`. An API URL is accepted and mapped to the web host:
//!   `https://api.github.com` → `https://github.com`, `https://ghe.example.com/api/v3` →
//!   `https://ghe.example.com`. The project path must be exactly `owner/repo`.
//! - **GitLab** (gitlab.com and self-managed, with or without a relative URL root):
//!   `https://gitlab.com/group/sub/project.git`,
//!   `https://example.com/gitlab/group/project.git` for `base_url = "https://example.com/gitlab"`.
//!   A trailing `/api/v4` is removed. The project path has at least two segments.
//!
//! The URL never contains credentials; a `base_url` with `user@` or `user:pass@` is refused.
//! `https` is required, except that `http` is accepted for loopback hosts (tests).
//!
//! # Credentials
//! The token is sent as an HTTP header scoped to the base URL, passed to git through
//! `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` environment variables (never in the
//! argv or the URL): `http.{web base}/.extraHeader = Authorization: Basic base64(user:token)` with
//! user `x-access-token` for GitHub (works for installation tokens and PATs) and `oauth2` for GitLab
//! (works for OAuth, project, group and personal access tokens).

use std::path::PathBuf;

use secrecy::{ExposeSecret, SecretString};

use crate::error::{Error, Result};
use crate::rules::rules;

/// The tracker hosting a repository (shared with the rest of Relay).
pub use relay_core::Provider;

/// The username git sends with the token in Basic auth.
fn basic_auth_user(provider: Provider) -> &'static str {
    rules(provider).basic_auth_user
}

/// One tracked repository. `Debug` redacts the token.
#[derive(Clone)]
pub struct RepoSpec {
    /// GitHub or GitLab.
    pub provider: Provider,
    /// Web (or API) base URL of the tracker, e.g. `https://github.com`,
    /// `https://gitlab.example.com/gitlab`.
    pub base_url: String,
    /// Project path: `owner/repo` (GitHub) or `group/sub/project` (GitLab).
    pub project_path: String,
    /// Token used to clone and fetch over HTTPS; `None` for public repositories.
    pub token: Option<SecretString>,
    /// Development: clone from this local repository (a directory or `file://` URL) instead of
    /// the tracker. The token is not used.
    pub local_path: Option<PathBuf>,
}

impl std::fmt::Debug for RepoSpec {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("RepoSpec")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("project_path", &self.project_path)
            .field("token", &self.token.as_ref().map(|_| "[redacted]"))
            .field("local_path", &self.local_path)
            .finish()
    }
}

impl RepoSpec {
    /// A spec for a repository on a tracker.
    pub fn new(
        provider: Provider,
        base_url: impl Into<String>,
        project_path: impl Into<String>,
    ) -> Self {
        Self {
            provider,
            base_url: base_url.into(),
            project_path: project_path.into(),
            token: None,
            local_path: None,
        }
    }

    /// Sets the clone token.
    #[must_use]
    pub fn with_token(mut self, token: SecretString) -> Self {
        self.token = Some(token);
        self
    }

    /// Clones from a local repository instead (development and tests).
    #[must_use]
    pub fn with_local_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.local_path = Some(path.into());
        self
    }

    /// `host/path` name for messages and logs (no credentials).
    pub fn display_name(&self) -> String {
        match &self.local_path {
            Some(path) => format!("{} (local {})", self.project_path, path.display()),
            None => {
                let base = self.web_base().unwrap_or_else(|_| self.base_url.clone());
                let host = base
                    .split_once("://")
                    .map_or(base.as_str(), |(_, rest)| rest);
                format!("{host}/{}", self.project_path)
            }
        }
    }

    /// Validates the spec: project path, base URL and (for local specs) the path.
    pub fn validate(&self) -> Result<()> {
        validate_project_path(self.provider, &self.project_path)?;
        if self.local_path.is_none() {
            self.web_base()?;
        }
        Ok(())
    }

    /// The URL git clones from: the HTTPS clone URL (see the module docs) or the local path.
    pub fn clone_source(&self) -> Result<String> {
        self.validate()?;
        if let Some(path) = &self.local_path {
            let text = path.to_string_lossy().into_owned();
            if text.starts_with('-') {
                return Err(Error::InvalidSpec(
                    "local path must not start with `-`".into(),
                ));
            }
            return Ok(text);
        }
        self.clone_url()
    }

    /// The HTTPS clone URL (see the module docs).
    pub fn clone_url(&self) -> Result<String> {
        validate_project_path(self.provider, &self.project_path)?;
        let base = self.web_base()?;
        let path = self.project_path.trim_matches('/');
        let path = path.strip_suffix(".git").unwrap_or(path);
        Ok(format!("{base}/{path}.git"))
    }

    /// The web base URL: scheme and host (plus GitLab's relative root), no trailing `/`.
    pub fn web_base(&self) -> Result<String> {
        let raw = self.base_url.trim().trim_end_matches('/');
        let (scheme, rest) = raw
            .split_once("://")
            .ok_or_else(|| Error::InvalidSpec(format!("base url `{raw}` has no scheme")))?;
        let (authority, path) = match rest.find('/') {
            Some(index) => (&rest[..index], &rest[index..]),
            None => (rest, ""),
        };
        if authority.is_empty() {
            return Err(Error::InvalidSpec(format!("base url `{raw}` has no host")));
        }
        if authority.contains('@') {
            return Err(Error::InvalidSpec(
                "base url must not contain credentials; set the token instead".into(),
            ));
        }
        if raw.contains(['?', '#', ' ']) {
            return Err(Error::InvalidSpec(format!(
                "base url `{raw}` must not contain a query, fragment or spaces"
            )));
        }
        let host = authority
            .rsplit_once(':')
            .map_or(authority, |(host, _)| host);
        let loopback = matches!(host, "127.0.0.1" | "localhost" | "[::1]");
        match scheme {
            "https" => {}
            "http" if loopback => {}
            other => {
                return Err(Error::InvalidSpec(format!(
                    "base url scheme `{other}` is not supported; use https"
                )));
            }
        }
        let rules = rules(self.provider);
        let (authority, path) = match &rules.api_host {
            Some(host) if authority.eq_ignore_ascii_case(host.api) => (host.web, ""),
            _ => (
                authority,
                path.strip_suffix(rules.api_path_suffix).unwrap_or(path),
            ),
        };
        Ok(format!("{scheme}://{authority}{path}"))
    }

    /// The git configuration (key, value) pairs carrying the token, if any. Values are secret.
    pub(crate) fn auth_config(&self) -> Result<Option<(String, SecretString)>> {
        let (Some(token), None) = (&self.token, &self.local_path) else {
            return Ok(None);
        };
        let base = self.web_base()?;
        let credentials = format!(
            "{}:{}",
            basic_auth_user(self.provider),
            token.expose_secret()
        );
        let value = format!("Authorization: Basic {}", base64(credentials.as_bytes()));
        Ok(Some((
            format!("http.{base}/.extraHeader"),
            SecretString::from(value),
        )))
    }

    /// Strings that must never appear in messages (the token and its encoded header).
    pub(crate) fn secrets(&self) -> Vec<String> {
        let mut secrets = Vec::new();
        if let Some(token) = &self.token {
            let token = token.expose_secret();
            if !token.is_empty() {
                secrets.push(token.to_string());
                secrets.push(base64(
                    format!("{}:{token}", basic_auth_user(self.provider)).as_bytes(),
                ));
            }
        }
        secrets
    }
}

fn validate_project_path(provider: Provider, path: &str) -> Result<()> {
    let trimmed = path.trim_matches('/');
    let segments: Vec<&str> = trimmed.split('/').collect();
    let valid_segment = |segment: &&str| {
        !segment.is_empty()
            && *segment != "."
            && *segment != ".."
            && !segment.starts_with('-')
            && segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    if !segments.iter().all(valid_segment) {
        return Err(Error::InvalidSpec(format!(
            "project path `{path}` must be slash-separated names of letters, digits, `.`, `_` and `-`"
        )));
    }
    let rules = rules(provider);
    if rules.path_depth.admits(segments.len()) {
        Ok(())
    } else {
        Err(Error::InvalidSpec(format!(
            "{} project path `{path}` must be {}",
            rules.name, rules.path_shape
        )))
    }
}

/// Standard base64 with padding.
pub(crate) fn base64(input: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let bytes = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let triple = (u32::from(bytes[0]) << 16) | (u32::from(bytes[1]) << 8) | u32::from(bytes[2]);
        for index in 0..4 {
            if index <= chunk.len() {
                out.push(char::from(
                    ALPHABET[((triple >> (18 - 6 * index)) & 0x3f) as usize],
                ));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(provider: Provider, base: &str, path: &str) -> Result<String> {
        RepoSpec::new(provider, base, path).clone_url()
    }

    #[test]
    fn github_urls() {
        assert_eq!(
            url(Provider::GitHub, "https://github.com", "owner/repo").unwrap(),
            "https://github.com/owner/repo.git"
        );
        assert_eq!(
            url(Provider::GitHub, "https://api.github.com/", "o/r").unwrap(),
            "https://github.com/o/r.git"
        );
        assert_eq!(
            url(
                Provider::GitHub,
                "https://ghe.example.com/api/v3",
                "o/r.git"
            )
            .unwrap(),
            "https://ghe.example.com/o/r.git"
        );
        assert!(url(Provider::GitHub, "https://github.com", "a/b/c").is_err());
        assert!(url(Provider::GitHub, "https://github.com", "a/../b").is_err());
        assert!(url(Provider::GitHub, "https://github.com", "-x/b").is_err());
    }

    #[test]
    fn gitlab_urls() {
        assert_eq!(
            url(Provider::GitLab, "https://gitlab.com", "group/sub/project").unwrap(),
            "https://gitlab.com/group/sub/project.git"
        );
        assert_eq!(
            url(Provider::GitLab, "https://example.com/gitlab/api/v4", "g/p").unwrap(),
            "https://example.com/gitlab/g/p.git"
        );
        assert_eq!(
            url(Provider::GitLab, "https://h:8443/", "g/p").unwrap(),
            "https://h:8443/g/p.git"
        );
        assert!(url(Provider::GitLab, "https://gitlab.com", "project").is_err());
    }

    #[test]
    fn unsafe_base_urls_are_refused() {
        assert!(url(Provider::GitLab, "https://user:pw@gitlab.com", "g/p").is_err());
        assert!(url(Provider::GitLab, "ftp://gitlab.com", "g/p").is_err());
        assert!(url(Provider::GitLab, "http://gitlab.com", "g/p").is_err());
        assert!(url(Provider::GitLab, "gitlab.com", "g/p").is_err());
        assert!(url(Provider::GitLab, "http://127.0.0.1:8080", "g/p").is_ok());
    }

    #[test]
    fn base64_vectors() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(b"x-access-token:abc"), "eC1hY2Nlc3MtdG9rZW46YWJj");
    }

    #[test]
    fn debug_redacts_the_token() {
        let spec = RepoSpec::new(Provider::GitHub, "https://github.com", "o/r")
            .with_token(SecretString::from("ghs_supersecret"));
        let debug = format!("{spec:?}");
        assert!(!debug.contains("supersecret"), "{debug}");
        assert!(debug.contains("[redacted]"), "{debug}");
        let (key, _) = spec.auth_config().unwrap().unwrap();
        assert_eq!(key, "http.https://github.com/.extraHeader");
    }
}
