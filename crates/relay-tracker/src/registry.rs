//! Clients from configuration: [`build`] for one `[[trackers]]` entry, [`Trackers`] for all of
//! them by name (what the worker holds). All clients share one `reqwest::Client`.

use std::collections::HashMap;
use std::sync::Arc;

use relay_core::{Provider, TrackerName, TrackerSettings};

use crate::{GitHubClient, GitLabClient, IssueTracker, Result, TrackerError, http_client};

/// The client for one tracker, with its own `reqwest::Client`.
pub fn build(settings: &TrackerSettings) -> Result<Arc<dyn IssueTracker>> {
    build_with(settings, http_client()?)
}

/// The client for one tracker on a shared `reqwest::Client` (cheap to clone).
pub fn build_with(
    settings: &TrackerSettings,
    client: reqwest::Client,
) -> Result<Arc<dyn IssueTracker>> {
    settings
        .validate()
        .map_err(|(key, message)| TrackerError::Config(format!("{key}: {message}")))?;
    Ok(match settings.provider {
        Provider::GitHub => Arc::new(GitHubClient::new(settings, client)?),
        Provider::GitLab => Arc::new(GitLabClient::new(settings, client)?),
    })
}

/// Every configured tracker's client, by name.
#[derive(Clone, Default)]
pub struct Trackers {
    by_name: HashMap<TrackerName, Arc<dyn IssueTracker>>,
}

impl Trackers {
    /// Builds a client per entry; the first bad entry fails the whole set (names it).
    pub fn from_settings(settings: &[TrackerSettings]) -> Result<Trackers> {
        let client = http_client()?;
        let mut by_name = HashMap::new();
        for entry in settings {
            let tracker = build_with(entry, client.clone())
                .map_err(|e| TrackerError::Config(format!("tracker {}: {e}", entry.name)))?;
            by_name.insert(entry.name.clone(), tracker);
        }
        Ok(Trackers { by_name })
    }

    /// Adds or replaces one client (tests put fakes here).
    pub fn insert(&mut self, name: TrackerName, tracker: Arc<dyn IssueTracker>) {
        self.by_name.insert(name, tracker);
    }

    pub fn get(&self, name: &TrackerName) -> Option<Arc<dyn IssueTracker>> {
        self.by_name.get(name).cloned()
    }

    /// By name as stored in the database (`issues.tracker`).
    pub fn get_str(&self, name: &str) -> Option<Arc<dyn IssueTracker>> {
        self.by_name
            .iter()
            .find(|(n, _)| n.as_str() == name)
            .map(|(_, t)| t.clone())
    }

    pub fn names(&self) -> impl Iterator<Item = &TrackerName> {
        self.by_name.keys()
    }

    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

impl std::fmt::Debug for Trackers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trackers")
            .field("names", &self.by_name.keys().collect::<Vec<_>>())
            .finish()
    }
}
