//! [`GitLabClient`]: GitLab REST v4. Self-managed instances under a path prefix are first-class:
//! `https://host/gitlab` → `https://host/gitlab/api/v4/…`. One file per concern: `discussions`
//! (thread, post, reply, edit, marker search), `issues` (issue, member role), `write` (each
//! [`crate::TrackerWrite`] to its method; award emoji), `changes` (the reconciler's poll), `model`.

mod changes;
mod discussions;
mod issues;
mod model;
mod write;

use std::time::Duration;

use chrono::Utc;
use relay_core::{IssueSnapshot, Provider, TokenAuth, TrackerSettings};
use reqwest::{Method, RequestBuilder, Response};
use secrecy::{ExposeSecret, SecretString};

use crate::classify::{self, DEFAULT_RATE_LIMIT_WAIT, Failure};
use crate::http::{Http, json};
use crate::pacing::{PaceKey, WritePacing};
use crate::{
    AuthorRole, BotIdentity, IssueRef, IssueTracker, PostedComment, Result, ThreadNote,
    TrackerError, TrackerWrite, WriteAck,
};

/// GitLab's note body limit (characters).
pub const MAX_NOTE_CHARS: usize = 1_000_000;

/// A GitLab v4 client for one configured tracker.
pub struct GitLabClient {
    http: Http,
    /// `<base_url>/api/v4`, without a trailing slash.
    api: String,
    token: SecretString,
    auth: TokenAuth,
    bot: relay_core::BotAccount,
}

impl GitLabClient {
    pub fn new(settings: &TrackerSettings, client: reqwest::Client) -> Result<GitLabClient> {
        if settings.token.expose_secret().is_empty() {
            return Err(TrackerError::Config("the tracker token is empty".into()));
        }
        Ok(GitLabClient {
            http: Http::new(
                client,
                Duration::from_secs(settings.request_timeout_secs),
                WritePacing {
                    rate_per_sec: settings.write_rate_per_sec,
                    burst: settings.write_burst,
                },
                classify_failure,
            ),
            api: api_base(&settings.base_url),
            token: settings.token.clone(),
            auth: settings.auth,
            bot: settings.bot_account(),
        })
    }

    fn request(&self, method: Method, path_or_url: &str) -> RequestBuilder {
        let url = if path_or_url.starts_with("http://") || path_or_url.starts_with("https://") {
            path_or_url.to_owned()
        } else {
            format!("{}{path_or_url}", self.api)
        };
        let request = self.http.request(method, &url);
        match self.auth {
            TokenAuth::Token => request.header("PRIVATE-TOKEN", self.token.expose_secret()),
            TokenAuth::Bearer => request.bearer_auth(self.token.expose_secret()),
        }
    }

    async fn call(
        &self,
        method: Method,
        path_or_url: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<Response> {
        let mut request = self.request(method.clone(), path_or_url);
        if let Some(body) = body {
            request = request.json(body);
        }
        let path = path_or_url.strip_prefix(&self.api).unwrap_or(path_or_url);
        let what = format!("{method} {}", path.split('?').next().unwrap_or(path));
        self.http
            .send(&method, request, &what, PaceKey::Token)
            .await
    }

    /// `GET /projects/:path`: its id and visibility; `None` for a 404 (unknown, or not
    /// readable with the token).
    pub async fn repository(&self, path: &str) -> Result<Option<crate::RepositoryInfo>> {
        let id = project(&IssueRef {
            project_id: String::new(),
            project_path: path.to_owned(),
            number: 0,
            installation_id: None,
        })?;
        let what = "GET /projects/:id";
        let response = match self
            .call(Method::GET, &format!("/projects/{id}"), None)
            .await
        {
            Ok(response) => response,
            Err(TrackerError::NotFound(_)) => return Ok(None),
            Err(error) => return Err(error),
        };
        let got: model::Project = json(response, what).await?;
        Ok(Some(crate::RepositoryInfo {
            project_id: got.id.to_string(),
            visibility: got.visibility(),
            project_path: got.path_with_namespace,
        }))
    }

    /// Who the token belongs to (`GET /user`).
    pub async fn whoami(&self) -> Result<BotIdentity> {
        let user: model::User =
            json(self.call(Method::GET, "/user", None).await?, "GET /user").await?;
        Ok(BotIdentity {
            login: user.username,
            app_slug: None,
        })
    }
}

/// `https://host/prefix/` → `https://host/prefix/api/v4` (an `/api/v4` already given is kept).
pub(crate) fn api_base(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    if base.ends_with("/api/v4") {
        base.to_owned()
    } else {
        format!("{base}/api/v4")
    }
}

/// `:id` of `/projects/:id/…`: the numeric project id when known, else the URL-encoded path
/// (checked: only characters GitLab allows in paths, so nothing can change the URL).
pub(crate) fn project(issue: &IssueRef) -> Result<String> {
    let id = issue.project_id.trim();
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(id.to_owned());
    }
    let path = issue.project_path.trim_matches('/');
    let valid = !path.is_empty()
        && path.split('/').all(|part| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        });
    if !valid {
        return Err(TrackerError::Validation(format!(
            "{:?} is not a GitLab project id or path",
            issue.project_path
        )));
    }
    Ok(path.replace('/', "%2F"))
}

/// GitLab's failure rules: 429 (with `Retry-After`, else `RateLimit-Reset`, else 60 s) is a rate
/// limit; everything else goes through the shared table.
fn classify_failure(f: &Failure<'_>) -> TrackerError {
    if f.status.as_u16() == 429 {
        let now = Utc::now();
        let wait = classify::retry_after(f.headers, now)
            .or_else(|| classify::until_epoch_header(f.headers, "ratelimit-reset", now))
            .unwrap_or(DEFAULT_RATE_LIMIT_WAIT);
        return TrackerError::RateLimited { retry_after: wait };
    }
    classify::by_status(f)
}

#[async_trait::async_trait]
impl IssueTracker for GitLabClient {
    fn provider(&self) -> Provider {
        Provider::GitLab
    }

    fn bot_username(&self) -> &str {
        self.bot.username()
    }

    async fn get_issue(&self, issue: &IssueRef) -> Result<IssueSnapshot> {
        GitLabClient::get_issue(self, issue).await
    }

    async fn list_thread(&self, issue: &IssueRef) -> Result<Vec<ThreadNote>> {
        GitLabClient::list_thread(self, issue).await
    }

    async fn write(&self, issue: &IssueRef, write: &TrackerWrite) -> Result<WriteAck> {
        GitLabClient::write(self, issue, write).await
    }

    async fn find_marked_comment(
        &self,
        issue: &IssueRef,
        marker: &str,
    ) -> Result<Option<PostedComment>> {
        GitLabClient::find_marked_comment(self, issue, marker).await
    }

    async fn author_role(&self, issue: &IssueRef, username: &str) -> Result<AuthorRole> {
        GitLabClient::author_role(self, issue, username).await
    }

    async fn author_role_by_id(
        &self,
        issue: &IssueRef,
        username: &str,
        user_id: Option<i64>,
    ) -> Result<AuthorRole> {
        GitLabClient::author_role_by_id(self, issue, username, user_id).await
    }

    async fn clone_credential(&self, _issue: &IssueRef) -> Result<Option<SecretString>> {
        Ok(Some(self.token.clone()))
    }

    async fn whoami(&self) -> Result<BotIdentity> {
        GitLabClient::whoami(self).await
    }

    async fn repository(
        &self,
        _issue: &IssueRef,
        path: &str,
    ) -> Result<Option<crate::RepositoryInfo>> {
        GitLabClient::repository(self, path).await
    }

    async fn read_credential(
        &self,
        _issue: &IssueRef,
        _path: &str,
    ) -> Result<Option<SecretString>> {
        // One token serves every project; its scopes are the operator's (README: `read_api`,
        // `read_repository` and `api` for the writes).
        Ok(Some(self.token.clone()))
    }

    async fn changes_since(
        &self,
        project: &crate::ProjectRef,
        since: chrono::DateTime<chrono::Utc>,
    ) -> Result<crate::ProjectChanges> {
        GitLabClient::changes_since(self, project, since).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(id: &str, path: &str) -> IssueRef {
        IssueRef {
            project_id: id.into(),
            project_path: path.into(),
            number: 1,
            installation_id: None,
        }
    }

    #[test]
    fn bases_with_prefixes() {
        assert_eq!(api_base("https://gitlab.com"), "https://gitlab.com/api/v4");
        assert_eq!(api_base("https://h/gitlab/"), "https://h/gitlab/api/v4");
        assert_eq!(
            api_base("https://h/gitlab/api/v4"),
            "https://h/gitlab/api/v4"
        );
    }

    #[test]
    fn project_ids() {
        assert_eq!(project(&issue("42", "g/p")).unwrap(), "42");
        assert_eq!(project(&issue("", "g/sub/p.x")).unwrap(), "g%2Fsub%2Fp.x");
        for bad in ["", "g/../p", "g/p?x", "g//p", "g/p#"] {
            assert!(project(&issue("", bad)).is_err(), "{bad}");
        }
    }
}
