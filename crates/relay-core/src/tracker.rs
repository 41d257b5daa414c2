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
