//! GitHub authentication: a token, or a GitHub App. The App signs a short RS256 JWT with its
//! private key, exchanges it for an installation token per installation
//! (`POST /app/installations/:id/access_tokens`) and caches each token until five minutes before
//! it expires. The installation comes from the webhook (stored with the issue); when it is
//! unknown, `GET /repos/:owner/:repo/installation` finds it.
//!
//! Each token is minted for the one repository the request is about and with only what Relay
//! uses ([`TOKEN_PERMISSIONS`]: issues read/write, contents and metadata read), whatever the
//! installation was granted; and it joins the outgoing secret scan
//! ([`relay_core::secrets::register_rotating_secret`]) so no tracker write can carry it.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::Method;
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;

use super::GitHubClient;
use super::model::{Installation, InstallationToken};
use crate::http::json;
use crate::pacing::PaceKey;
use crate::{IssueRef, Result, TrackerError};

/// GitHub refuses JWTs valid for more than 10 minutes; stay under it.
const JWT_LIFETIME: Duration = Duration::from_secs(9 * 60);
/// Clock drift allowance: the JWT is issued a minute in the past (GitHub's recommendation).
const JWT_BACKDATE: Duration = Duration::from_secs(60);
/// An installation token is replaced this long before it expires, so no request carries a
/// token that expires in flight.
pub const INSTALLATION_TOKEN_REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

/// The permissions an installation token is minted with: what Relay uses, nothing more.
pub const TOKEN_PERMISSIONS: [(&str, &str); 3] = [
    ("issues", "write"),
    ("contents", "read"),
    ("metadata", "read"),
];

/// The permissions of a token for a related repository: reading its code, nothing else.
pub const READ_PERMISSIONS: [(&str, &str); 2] = [("contents", "read"), ("metadata", "read")];

/// What an installation token is minted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum TokenScope {
    /// The issue's repository: [`TOKEN_PERMISSIONS`].
    Issue,
    /// A related repository: [`READ_PERMISSIONS`].
    ReadOnly,
}

impl TokenScope {
    fn permissions(self) -> &'static [(&'static str, &'static str)] {
        match self {
            TokenScope::Issue => &TOKEN_PERMISSIONS,
            TokenScope::ReadOnly => &READ_PERMISSIONS,
        }
    }
}

pub(crate) enum Auth {
    Token(SecretString),
    App(AppAuth),
}

struct CachedToken {
    token: SecretString,
    refresh_at: DateTime<Utc>,
}

pub(crate) struct AppAuth {
    app_id: u64,
    key: EncodingKey,
    /// Per (installation, repository name, scope). Held across an exchange so concurrent
    /// writers do not all exchange at once.
    tokens: tokio::sync::Mutex<HashMap<(i64, String, TokenScope), CachedToken>>,
    installations: std::sync::Mutex<HashMap<String, i64>>,
}

#[derive(Serialize)]
struct Claims {
    iat: i64,
    exp: i64,
    iss: String,
}

impl AppAuth {
    pub(crate) fn new(app_id: u64, pem: &[u8]) -> Result<AppAuth> {
        let key = EncodingKey::from_rsa_pem(pem).map_err(|e| {
            TrackerError::Config(format!(
                "the GitHub App private key is not an RSA PEM key: {e}"
            ))
        })?;
        Ok(AppAuth {
            app_id,
            key,
            tokens: tokio::sync::Mutex::new(HashMap::new()),
            installations: std::sync::Mutex::new(HashMap::new()),
        })
    }

    /// A fresh App JWT (for `/app/...` endpoints).
    pub(crate) fn jwt(&self) -> Result<SecretString> {
        let now = Utc::now().timestamp();
        let claims = Claims {
            iat: now - JWT_BACKDATE.as_secs() as i64,
            exp: now + JWT_LIFETIME.as_secs() as i64,
            iss: self.app_id.to_string(),
        };
        jsonwebtoken::encode(&Header::new(Algorithm::RS256), &claims, &self.key)
            .map(SecretString::from)
            .map_err(|e| TrackerError::Config(format!("cannot sign the GitHub App JWT: {e}")))
    }
}

impl GitHubClient {
    /// The credential for requests about `issue`, and the pacing bucket its writes draw from.
    pub(crate) async fn credential(
        &self,
        issue: Option<&IssueRef>,
    ) -> Result<(SecretString, PaceKey)> {
        let app = match &self.auth {
            Auth::Token(token) => return Ok((token.clone(), PaceKey::Token)),
            Auth::App(app) => app,
        };
        let issue = issue.ok_or_else(|| {
            TrackerError::Config(
                "a GitHub App request needs an issue to pick the installation".into(),
            )
        })?;
        let installation = match issue.installation_id {
            Some(id) => id,
            None => self.find_installation(app, &issue.project_path).await?,
        };
        let token = self
            .installation_token(app, installation, &issue.project_path, TokenScope::Issue)
            .await?;
        Ok((token, PaceKey::Installation(installation)))
    }

    /// The credential for reading the related repository `repo` for `issue`: the configured
    /// token, or in App mode a token of the issue's installation for `repo` alone with
    /// [`READ_PERMISSIONS`] (GitHub refuses the exchange when the installation does not cover
    /// `repo`: then `repo` is not readable).
    pub(crate) async fn read_credential_for(
        &self,
        issue: &IssueRef,
        repo: &str,
    ) -> Result<(SecretString, PaceKey)> {
        let app = match &self.auth {
            Auth::Token(token) => return Ok((token.clone(), PaceKey::Token)),
            Auth::App(app) => app,
        };
        let installation = match issue.installation_id {
            Some(id) => id,
            None => self.find_installation(app, &issue.project_path).await?,
        };
        let token = self
            .installation_token(app, installation, repo, TokenScope::ReadOnly)
            .await?;
        Ok((token, PaceKey::Installation(installation)))
    }

    /// A token of `installation` for repository `repo` (`owner/name`) only, with the
    /// permissions of `scope` only.
    async fn installation_token(
        &self,
        app: &AppAuth,
        installation: i64,
        repo: &str,
        scope: TokenScope,
    ) -> Result<SecretString> {
        let name = super::repo_path(repo)?
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        let key = (installation, name.clone(), scope);
        let mut tokens = app.tokens.lock().await;
        if let Some(cached) = tokens.get(&key)
            && Utc::now() < cached.refresh_at
        {
            return Ok(cached.token.clone());
        }
        let path = format!("/app/installations/{installation}/access_tokens");
        let what = format!("POST {path}");
        let permissions: serde_json::Map<String, serde_json::Value> = scope
            .permissions()
            .iter()
            .map(|(scope, level)| ((*scope).to_owned(), serde_json::json!(level)))
            .collect();
        let request = self
            .request(Method::POST, &path, &app.jwt()?)
            .json(&serde_json::json!({ "repositories": [name], "permissions": permissions }));
        let answer: InstallationToken =
            json(self.http.send_unpaced(request, &what).await?, &what).await?;
        let margin =
            chrono::Duration::from_std(INSTALLATION_TOKEN_REFRESH_MARGIN).unwrap_or_default();
        let token = SecretString::from(answer.token);
        // One entry per installation and repository: a refreshed token replaces the old one.
        let suffix = match scope {
            TokenScope::Issue => "",
            TokenScope::ReadOnly => ".read",
        };
        relay_core::secrets::register_rotating_secret(
            &format!("github.installation.{installation}.{name}{suffix}.token"),
            &token,
        );
        tokens.insert(
            key,
            CachedToken {
                token: token.clone(),
                refresh_at: answer.expires_at - margin,
            },
        );
        tracing::debug!(installation, expires_at = %answer.expires_at, "github app installation token");
        Ok(token)
    }

    async fn find_installation(&self, app: &AppAuth, repo: &str) -> Result<i64> {
        let known = app
            .installations
            .lock()
            .map_err(|_| TrackerError::Config("installation cache poisoned".into()))?
            .get(repo)
            .copied();
        if let Some(id) = known {
            return Ok(id);
        }
        let path = format!("/repos/{}/installation", super::repo_path(repo)?);
        let what = format!("GET {path}");
        let request = self.request(Method::GET, &path, &app.jwt()?);
        let found: Installation =
            json(self.http.send_unpaced(request, &what).await?, &what).await?;
        if let Ok(mut cache) = app.installations.lock() {
            cache.insert(repo.to_owned(), found.id);
        }
        Ok(found.id)
    }

    /// The App JWT, or `None` with token auth.
    pub(crate) fn app_jwt(&self) -> Result<Option<SecretString>> {
        match &self.auth {
            Auth::Token(_) => Ok(None),
            Auth::App(app) => app.jwt().map(Some),
        }
    }

    /// The token (token auth only).
    pub(crate) fn token(&self) -> Option<&SecretString> {
        match &self.auth {
            Auth::Token(token) => Some(token),
            Auth::App(_) => None,
        }
    }
}

/// Whether `bearer` is usable at all (an empty token is a configuration error, not a 401).
pub(crate) fn ensure_present(bearer: &SecretString) -> Result<()> {
    if bearer.expose_secret().is_empty() {
        return Err(TrackerError::Config("the tracker token is empty".into()));
    }
    Ok(())
}
