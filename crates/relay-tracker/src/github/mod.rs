//! [`GitHubClient`]: GitHub REST (github.com or GitHub Enterprise `…/api/v3`), with token or
//! GitHub App auth. One file per concern: `auth` (token, App JWT, installation tokens),
//! `comments` (thread, post, reply, edit, marker search), `issues` (issue, author role),
//! `write` (each [`crate::TrackerWrite`] to its method; reactions), `changes` (the reconciler's
//! poll), `rate_limit` (failure classification), `model` (the JSON read).

mod auth;
mod changes;
mod comments;
mod issues;
mod model;
mod rate_limit;
mod write;

use std::time::Duration;

use relay_core::{IssueSnapshot, Provider, TrackerSettings};
use reqwest::header::ACCEPT;
use reqwest::{Method, RequestBuilder, Response};
use secrecy::{ExposeSecret, SecretString};

pub use auth::INSTALLATION_TOKEN_REFRESH_MARGIN;
use auth::{AppAuth, Auth};

use crate::http::{Http, json};
use crate::pacing::WritePacing;
use crate::{
    AuthorRole, BotIdentity, IssueRef, IssueTracker, PostedComment, Result, ThreadNote,
    TrackerError, TrackerWrite, WriteAck,
};

/// GitHub's media type; the default one changes over time, this one does not.
const MEDIA_TYPE: &str = "application/vnd.github+json";
/// The REST API version every request pins.
const API_VERSION: &str = "2022-11-28";
/// GitHub refuses comment bodies longer than this (characters).
pub const MAX_COMMENT_CHARS: usize = relay_core::action::TRACKER_COMMENT_CHARS;

/// A GitHub REST client for one configured tracker.
pub struct GitHubClient {
    http: Http,
    /// Base URL without a trailing slash, e.g. `https://api.github.com`.
    api: String,
    auth: Auth,
    bot: relay_core::BotAccount,
}

impl GitHubClient {
    /// Builds the client from its settings, reading the App private key file if configured.
    pub fn new(settings: &TrackerSettings, client: reqwest::Client) -> Result<GitHubClient> {
        let auth = match settings.app_id {
            Some(app_id) => {
                let pem: Vec<u8> = match (&settings.private_key, &settings.private_key_path) {
                    (Some(inline), _) => inline.expose_secret().as_bytes().to_vec(),
                    (None, Some(path)) => std::fs::read(path).map_err(|e| {
                        TrackerError::Config(format!(
                            "cannot read the GitHub App private key {}: {e}",
                            path.display()
                        ))
                    })?,
                    (None, None) => {
                        return Err(TrackerError::Config(
                            "a GitHub App (app_id) needs private_key_path or private_key".into(),
                        ));
                    }
                };
                Auth::App(AppAuth::new(app_id, &pem)?)
            }
            None => {
                auth::ensure_present(&settings.token)?;
                Auth::Token(settings.token.clone())
            }
        };
        Ok(GitHubClient {
            http: Http::new(
                client,
                Duration::from_secs(settings.request_timeout_secs),
                WritePacing {
                    rate_per_sec: settings.write_rate_per_sec,
                    burst: settings.write_burst,
                },
                rate_limit::classify,
            ),
            api: settings.base_url.trim_end_matches('/').to_owned(),
            auth,
            bot: settings.bot_account(),
        })
    }

    /// A request to `path_or_url` (a path under the API base, or a pagination URL) with GitHub's
    /// headers and `bearer` as credential.
    fn request(&self, method: Method, path_or_url: &str, bearer: &SecretString) -> RequestBuilder {
        let url = if path_or_url.starts_with("http://") || path_or_url.starts_with("https://") {
            path_or_url.to_owned()
        } else {
            format!("{}{path_or_url}", self.api)
        };
        self.http
            .request(method, &url)
            .header(ACCEPT, MEDIA_TYPE)
            .header("X-GitHub-Api-Version", API_VERSION)
            .bearer_auth(bearer.expose_secret())
    }

    /// One authenticated, paced (if a write), classified request about `issue`.
    async fn call(
        &self,
        method: Method,
        path_or_url: &str,
        issue: &IssueRef,
        body: Option<&serde_json::Value>,
    ) -> Result<Response> {
        let (bearer, pace) = self.credential(Some(issue)).await?;
        let mut request = self.request(method.clone(), path_or_url, &bearer);
        if let Some(body) = body {
            request = request.json(body);
        }
        let what = describe(&method, path_or_url, &self.api);
        self.http.send(&method, request, &what, pace).await
    }

    /// Who the configured credential is: the token's user, or the App's bot account.
    pub async fn whoami(&self) -> Result<BotIdentity> {
        if let Some(jwt) = self.app_jwt()? {
            let what = "GET /app";
            let app: model::App = json(
                self.http
                    .send_unpaced(self.request(Method::GET, "/app", &jwt), what)
                    .await?,
                what,
            )
            .await?;
            return Ok(BotIdentity {
                login: format!("{}[bot]", app.slug),
                app_slug: Some(app.slug),
            });
        }
        let token = self
            .token()
            .cloned()
            .unwrap_or_else(|| SecretString::from(""));
        let what = "GET /user";
        let user: model::User = json(
            self.http
                .send_unpaced(self.request(Method::GET, "/user", &token), what)
                .await?,
            what,
        )
        .await?;
        Ok(BotIdentity {
            login: user.login,
            app_slug: None,
        })
    }
}

/// `METHOD /path` for messages: no scheme, host or query.
fn describe(method: &Method, path_or_url: &str, api: &str) -> String {
    let path = path_or_url.strip_prefix(api).unwrap_or(path_or_url);
    let path = path.split('?').next().unwrap_or(path);
    format!("{method} {path}")
}

/// `owner/repo`, checked: it is interpolated into URL paths, so nothing that could change the
/// path (`..`, `?`, `#`, `%`, more slashes) gets through.
pub(crate) fn repo_path(project_path: &str) -> Result<&str> {
    let mut parts = project_path.split('/');
    let valid_part = |p: Option<&str>| {
        p.is_some_and(|p| {
            !p.is_empty()
                && p != "."
                && p != ".."
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        })
    };
    if valid_part(parts.next()) && valid_part(parts.next()) && parts.next().is_none() {
        Ok(project_path)
    } else {
        Err(TrackerError::Validation(format!(
            "{project_path:?} is not a GitHub owner/repo"
        )))
    }
}

#[async_trait::async_trait]
impl IssueTracker for GitHubClient {
    fn provider(&self) -> Provider {
        Provider::GitHub
    }

    fn bot_username(&self) -> &str {
        self.bot.username()
    }

    async fn get_issue(&self, issue: &IssueRef) -> Result<IssueSnapshot> {
        GitHubClient::get_issue(self, issue).await
    }

    async fn list_thread(&self, issue: &IssueRef) -> Result<Vec<ThreadNote>> {
        GitHubClient::list_thread(self, issue).await
    }

    async fn write(&self, issue: &IssueRef, write: &TrackerWrite) -> Result<WriteAck> {
        GitHubClient::write(self, issue, write).await
    }

    async fn find_marked_comment(
        &self,
        issue: &IssueRef,
        marker: &str,
    ) -> Result<Option<PostedComment>> {
        GitHubClient::find_marked_comment(self, issue, marker).await
    }

    async fn author_role(&self, issue: &IssueRef, username: &str) -> Result<AuthorRole> {
        GitHubClient::author_role(self, issue, username).await
    }

    async fn clone_credential(&self, issue: &IssueRef) -> Result<Option<SecretString>> {
        let (token, _) = self.credential(Some(issue)).await?;
        Ok(Some(token))
    }

    async fn whoami(&self) -> Result<BotIdentity> {
        GitHubClient::whoami(self).await
    }

    async fn repository(
        &self,
        issue: &IssueRef,
        path: &str,
    ) -> Result<Option<crate::RepositoryInfo>> {
        GitHubClient::repository(self, issue, path).await
    }

    async fn read_credential(&self, issue: &IssueRef, path: &str) -> Result<Option<SecretString>> {
        let (token, _) = self.read_credential_for(issue, repo_path(path)?).await?;
        Ok(Some(token))
    }

    async fn changes_since(
        &self,
        project: &crate::ProjectRef,
        since: chrono::DateTime<chrono::Utc>,
    ) -> Result<crate::ProjectChanges> {
        GitHubClient::changes_since(self, project, since).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repo_paths() {
        assert!(repo_path("octo-org/hello.world_1").is_ok());
        for bad in [
            "octo", "a/b/c", "a/..", "../b", "a/b?x=1", "a/b#c", "a/%2e", "/b", "a/",
        ] {
            assert!(repo_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn descriptions_have_no_host_or_query() {
        let d = describe(
            &Method::GET,
            "https://api.github.com/repos/o/r/issues/1/comments?page=2",
            "https://api.github.com",
        );
        assert_eq!(d, "GET /repos/o/r/issues/1/comments");
    }
}
