//! Tracker providers and configured tracker names.

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
    /// API token used to read issues and write comments (GitHub PAT or installation token,
    /// GitLab personal/project/group access token).
    pub token: secrecy::SecretString,
    /// The webhook secret: GitHub's HMAC key, or GitLab's `X-Gitlab-Token` value.
    pub webhook_secret: secrecy::SecretString,
    /// The bot's username on this tracker, without `@`. Mentions of it engage Relay; events it
    /// authors never do.
    pub bot_username: String,
    /// Adding one of these labels to an issue engages Relay.
    #[serde(default)]
    pub trigger_labels: Vec<String>,
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
            .finish()
    }
}

impl TrackerSettings {
    /// Checks what serde cannot: returns the offending key and why.
    pub fn validate(&self) -> Result<(), (String, String)> {
        use secrecy::ExposeSecret;
        if self.webhook_secret.expose_secret().is_empty() {
            return Err((
                "webhook_secret".into(),
                "must not be empty (unauthenticated webhooks are refused)".into(),
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
        Ok(())
    }

    /// The bot username without a leading `@`.
    pub fn bot(&self) -> &str {
        self.bot_username.trim_start_matches('@')
    }
}
