//! Tracker providers and configured tracker names; [`web`] holds each provider's web links.

pub mod web;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The kind of issue tracker behind a configured tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    #[serde(rename = "github")]
    GitHub,
    #[serde(rename = "gitlab")]
    GitLab,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::GitHub => "github",
            Provider::GitLab => "gitlab",
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The configured name of a tracker; it is also the last segment of its webhook URL
/// (`/webhooks/<name>`), so it is restricted to `[a-z0-9_-]{1,64}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct TrackerName(String);

/// Why a tracker name was rejected.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("invalid tracker name {0:?}: use 1-64 characters from a-z, 0-9, '-' and '_'")]
pub struct InvalidTrackerName(pub String);

impl TrackerName {
    pub fn parse(name: &str) -> Result<TrackerName, InvalidTrackerName> {
        let valid = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if valid {
            Ok(TrackerName(name.to_owned()))
        } else {
            Err(InvalidTrackerName(name.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for TrackerName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        TrackerName::parse(&raw).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for TrackerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracker_names() {
        for ok in ["github", "gitlab-prod", "a_1"] {
            assert!(TrackerName::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "GitHub", "a/b", "a b", &"x".repeat(65)] {
            assert!(TrackerName::parse(bad).is_err(), "{bad}");
        }
    }
}

/// Default pacing of tracker writes: at most one write per second…
pub const DEFAULT_WRITE_RATE_PER_SEC: f64 = 1.0;
/// …after a burst of five.
pub const DEFAULT_WRITE_BURST: u32 = 5;
/// Default timeout of one tracker HTTP request.
pub const DEFAULT_TRACKER_REQUEST_TIMEOUT_SECS: u64 = 30;
/// Longest accepted request timeout: a hung tracker must not hold a job lease for long.
pub const MAX_TRACKER_REQUEST_TIMEOUT_SECS: u64 = 600;

/// How a token is sent to GitLab (GitHub always uses `Authorization: Bearer`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenAuth {
    /// `PRIVATE-TOKEN: <token>` (personal, project and group access tokens).
    #[default]
    Token,
    /// `Authorization: Bearer <token>` (OAuth2 access tokens).
    Bearer,
}

fn empty_secret() -> secrecy::SecretString {
    secrecy::SecretString::from("")
}

fn default_write_rate() -> f64 {
    DEFAULT_WRITE_RATE_PER_SEC
}

fn default_write_burst() -> u32 {
    DEFAULT_WRITE_BURST
}

fn default_request_timeout() -> u64 {
    DEFAULT_TRACKER_REQUEST_TIMEOUT_SECS
}

/// One `[[trackers]]` entry: a GitHub or GitLab instance Relay receives webhooks from and writes to.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrackerSettings {
    /// Unique name; the webhook URL is `/webhooks/<name>`.
    pub name: TrackerName,
    /// `github` or `gitlab`.
    pub provider: Provider,
    /// API base URL: `https://api.github.com`, `https://ghe.example.com/api/v3`, or the GitLab
    /// instance root such as `https://gitlab.example.com` (self-managed instances are first-class).
    pub base_url: String,
    /// API token used to read issues and write comments (GitHub PAT, GitLab personal/project/group
    /// access token). Empty when a GitHub App authenticates instead (`app_id`).
    #[serde(default = "empty_secret")]
    pub token: secrecy::SecretString,
    /// The webhook secret: GitHub's HMAC key, or GitLab's `X-Gitlab-Token` value.
    pub webhook_secret: secrecy::SecretString,
    /// The bot's username on this tracker, without `@`. Mentions of it engage Relay; events it
    /// authors never do.
    pub bot_username: String,
    /// Adding one of these labels to an issue engages Relay.
    #[serde(default)]
    pub trigger_labels: Vec<String>,
    /// GitHub App id: with a private key, Relay authenticates as the App (installation tokens)
    /// instead of with `token`.
    #[serde(default)]
    pub app_id: Option<u64>,
    /// File holding the GitHub App's private key (PEM).
    #[serde(default)]
    pub private_key_path: Option<std::path::PathBuf>,
    /// The GitHub App's private key (PEM) inline; prefer `private_key_path` or the environment.
    #[serde(default)]
    pub private_key: Option<secrecy::SecretString>,
    /// GitLab only: how `token` is sent.
    #[serde(default)]
    pub auth: TokenAuth,
    /// Tracker writes (POST/PUT/PATCH) per second, sustained; 0 disables pacing.
    #[serde(default = "default_write_rate")]
    pub write_rate_per_sec: f64,
    /// Writes allowed back to back before pacing applies.
    #[serde(default = "default_write_burst")]
    pub write_burst: u32,
    /// Timeout of one tracker HTTP request, in seconds.
    #[serde(default = "default_request_timeout")]
    pub request_timeout_secs: u64,
    /// Projects Relay works on (`owner/repo`, `group/sub/project`, or a numeric project id).
    /// Unset: every project that sends webhooks. Set: webhooks of other projects are recorded as
    /// ignored (`project_not_allowed`), and the reconciler also polls the listed projects even
    /// before any webhook arrives from them.
    #[serde(default)]
    pub projects: Option<Vec<String>>,
    /// Related repositories the server declares, by repository path, added after those a
    /// repository's `.relay.toml` names (for repositories that have no file):
    /// `related = { "acme/app" = ["acme/sdk"] }`. Judged by the same rules (`crate::related`).
    #[serde(default)]
    pub related: BTreeMap<String, Vec<String>>,
}

impl fmt::Debug for TrackerSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TrackerSettings")
            .field("name", &self.name)
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .field("token", &"[REDACTED]")
            .field("webhook_secret", &"[REDACTED]")
            .field("bot_username", &self.bot_username)
            .field("trigger_labels", &self.trigger_labels)
            .field("app_id", &self.app_id)
            .field("private_key_path", &self.private_key_path)
            .field(
                "private_key",
                &self.private_key.as_ref().map(|_| "[REDACTED]"),
            )
            .field("auth", &self.auth)
            .field("write_rate_per_sec", &self.write_rate_per_sec)
            .field("write_burst", &self.write_burst)
            .field("request_timeout_secs", &self.request_timeout_secs)
            .field("projects", &self.projects)
            .field("related", &self.related)
            .finish()
    }
}

/// The shortest `webhook_secret` accepted. GitLab sends its hook's secret token as it is
/// (`X-Gitlab-Token`), so a short one could be guessed online; GitHub's HMAC key is no stronger
/// than its length either. Sixteen random characters are past any online guessing.
pub const MIN_WEBHOOK_SECRET_CHARS: usize = 16;

impl TrackerSettings {
    /// Whether the `projects` allow-list admits a project (by path, case-insensitively, or by
    /// id). Without a list every project is admitted.
    pub fn allows_project(&self, project_id: &str, project_path: &str) -> bool {
        self.projects.as_ref().is_none_or(|listed| {
            listed.iter().any(|p| {
                let p = p.trim().trim_matches('/');
                p.eq_ignore_ascii_case(project_path) || (!project_id.is_empty() && p == project_id)
            })
        })
    }

    /// The related repositories this server declares for the repository at `project_path`
    /// (matched case-insensitively, surrounding slashes ignored).
    pub fn related_of(&self, project_path: &str) -> &[String] {
        let wanted = project_path.trim_matches('/');
        self.related
            .iter()
            .find(|(path, _)| path.trim_matches('/').eq_ignore_ascii_case(wanted))
            .map_or(&[], |(_, related)| related.as_slice())
    }

    /// Checks what serde cannot: returns the offending key and why.
    pub fn validate(&self) -> Result<(), (String, String)> {
        use secrecy::ExposeSecret;
        if self.webhook_secret.expose_secret().is_empty() {
            return Err((
                "webhook_secret".into(),
                "must not be empty (unauthenticated webhooks are refused)".into(),
            ));
        }
        if self.webhook_secret.expose_secret().chars().count() < MIN_WEBHOOK_SECRET_CHARS {
            return Err((
                "webhook_secret".into(),
                format!(
                    "must be at least {MIN_WEBHOOK_SECRET_CHARS} characters: a GitLab hook's token \
                     is compared as it is, so a short one can be guessed (e.g. `openssl rand -hex 32`)"
                ),
            ));
        }
        let bot = self.bot_username.trim_start_matches('@');
        if bot.is_empty() || bot.contains(char::is_whitespace) {
            return Err((
                "bot_username".into(),
                "must be a username without spaces".into(),
            ));
        }
        if !(self.base_url.starts_with("https://") || self.base_url.starts_with("http://")) {
            return Err(("base_url".into(), "must be an http(s) URL".into()));
        }
        self.validate_auth()?;
        if !self.write_rate_per_sec.is_finite() || self.write_rate_per_sec < 0.0 {
            return Err((
                "write_rate_per_sec".into(),
                "must be a number >= 0 (0 disables pacing)".into(),
            ));
        }
        if self.write_burst == 0 {
            return Err(("write_burst".into(), "must be at least 1".into()));
        }
        if !(1..=MAX_TRACKER_REQUEST_TIMEOUT_SECS).contains(&self.request_timeout_secs) {
            return Err((
                "request_timeout_secs".into(),
                format!("must be between 1 and {MAX_TRACKER_REQUEST_TIMEOUT_SECS}"),
            ));
        }
        Ok(())
    }

    fn validate_auth(&self) -> Result<(), (String, String)> {
        use secrecy::ExposeSecret;
        let has_token = !self.token.expose_secret().is_empty();
        let has_key = self.private_key.is_some() || self.private_key_path.is_some();
        if self.private_key.is_some() && self.private_key_path.is_some() {
            return Err((
                "private_key".into(),
                "set private_key or private_key_path, not both".into(),
            ));
        }
        match (self.provider, self.app_id) {
            (Provider::GitLab, Some(_)) => {
                Err(("app_id".into(), "GitHub App auth is for GitHub only".into()))
            }
            (Provider::GitLab, None) if has_key => Err((
                "private_key".into(),
                "GitHub App auth is for GitHub only".into(),
            )),
            (Provider::GitLab, None) if !has_token => {
                Err(("token".into(), "must not be empty".into()))
            }
            (Provider::GitHub, Some(_)) if has_token => Err((
                "token".into(),
                "set either token or app_id (GitHub App), not both".into(),
            )),
            (Provider::GitHub, Some(_)) if !has_key => Err((
                "private_key_path".into(),
                "a GitHub App (app_id) needs private_key_path or private_key".into(),
            )),
            (Provider::GitHub, None) if has_key => Err((
                "app_id".into(),
                "a private key needs the GitHub App's app_id".into(),
            )),
            (Provider::GitHub, None) if !has_token => Err((
                "token".into(),
                "must not be empty (or configure a GitHub App with app_id)".into(),
            )),
            _ => Ok(()),
        }
    }

    /// The bot username without a leading `@`.
    pub fn bot(&self) -> &str {
        self.bot_username.trim_start_matches('@')
    }

    /// The bot's account: which logins are the bot. A GitHub App (`app_id`) is only its
    /// `slug[bot]` login, never a human who registered the slug as a login.
    pub fn bot_account(&self) -> crate::BotAccount {
        if self.provider == Provider::GitHub && self.app_id.is_some() {
            crate::BotAccount::github_app(&self.bot_username)
        } else {
            crate::BotAccount::new(&self.bot_username)
        }
    }

    /// Whether `login` is the bot on this tracker (a GitHub App comments as `name[bot]`).
    pub fn is_bot(&self, login: &str) -> bool {
        self.bot_account().is(login)
    }
}

#[cfg(test)]
mod settings_tests {
    use super::*;

    fn parse(extra: &str, provider: &str) -> TrackerSettings {
        let text = format!(
            "name = \"t\"\nprovider = \"{provider}\"\nbase_url = \"https://example.com\"\n\
             webhook_secret = \"sixteen-chars-ok\"\nbot_username = \"relay\"\n{extra}"
        );
        toml::from_str(&text).unwrap()
    }

    #[test]
    fn defaults_keep_old_configs_valid() {
        let t = parse("token = \"x\"", "github");
        assert_eq!(t.validate(), Ok(()));
        assert_eq!(t.write_rate_per_sec, DEFAULT_WRITE_RATE_PER_SEC);
        assert_eq!(t.write_burst, DEFAULT_WRITE_BURST);
        assert_eq!(t.request_timeout_secs, DEFAULT_TRACKER_REQUEST_TIMEOUT_SECS);
        assert_eq!(t.auth, TokenAuth::Token);
    }

    /// A webhook secret shorter than sixteen characters stops Relay at start-up; the message
    /// names the rule, never the secret.
    #[test]
    fn a_short_webhook_secret_is_refused() {
        let mut t = parse("token = \"x\"", "gitlab");
        t.webhook_secret = secrecy::SecretString::from("gl-secret".to_owned());
        let (key, why) = t.validate().unwrap_err();
        assert_eq!(key, "webhook_secret");
        assert!(
            why.contains("at least 16 characters") && !why.contains("gl-secret"),
            "{why}"
        );
        t.webhook_secret = secrecy::SecretString::from("0123456789abcdef".to_owned());
        assert_eq!(t.validate(), Ok(()));
    }

    /// With a GitHub App, the human whose login is the App's slug is not the bot.
    #[test]
    fn a_github_apps_bot_is_only_its_app_login() {
        let app = parse("app_id = 1\nprivate_key_path = \"k.pem\"", "github");
        assert!(app.is_bot("relay[bot]"));
        assert!(!app.is_bot("relay"), "a human named like the App's slug");
        let token = parse("token = \"x\"", "github");
        assert!(token.is_bot("relay") && token.is_bot("relay[bot]"));
    }

    #[test]
    fn auth_combinations() {
        let cases = [
            ("github", "app_id = 1\nprivate_key_path = \"k.pem\"", None),
            ("github", "", Some("token")),
            (
                "github",
                "token = \"x\"\napp_id = 1\nprivate_key = \"k\"",
                Some("token"),
            ),
            ("github", "app_id = 1", Some("private_key_path")),
            (
                "github",
                "token = \"x\"\nprivate_key = \"k\"",
                Some("app_id"),
            ),
            ("gitlab", "token = \"x\"\nauth = \"bearer\"", None),
            ("gitlab", "", Some("token")),
            ("gitlab", "token = \"x\"\napp_id = 1", Some("app_id")),
            (
                "github",
                "token = \"x\"\nwrite_rate_per_sec = -1.0",
                Some("write_rate_per_sec"),
            ),
            (
                "github",
                "token = \"x\"\nwrite_burst = 0",
                Some("write_burst"),
            ),
            (
                "github",
                "token = \"x\"\nrequest_timeout_secs = 0",
                Some("request_timeout_secs"),
            ),
            ("github", "token = \"x\"\nwrite_rate_per_sec = 0.0", None),
        ];
        for (provider, extra, key) in cases {
            let got = parse(extra, provider).validate().err().map(|(k, _)| k);
            assert_eq!(got.as_deref(), key, "{provider}: {extra}");
        }
    }

    #[test]
    fn debug_redacts_private_key() {
        let t = parse("app_id = 1\nprivate_key = \"-----BEGIN SECRET\"", "github");
        assert!(!format!("{t:?}").contains("BEGIN SECRET"));
    }
}

/// A user's standing on a project, from most to least trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AuthorRole {
    /// GitHub OWNER; GitLab Owner (50) or Maintainer (40).
    Owner,
    /// GitHub MEMBER; GitLab Developer (30) or Reporter (20).
    Member,
    /// GitHub COLLABORATOR.
    Collaborator,
    /// GitHub CONTRIBUTOR / FIRST_TIME_CONTRIBUTOR / FIRST_TIMER; GitLab Guest (10) and below.
    Contributor,
    /// No relationship with the project.
    None,
}
