//! `[reconcile]` settings.

use std::time::Duration;

use serde::Deserialize;

/// `[reconcile]`: polling the trackers for events whose webhook never arrived.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReconcileSettings {
    /// Seconds between passes; 0 turns the reconciler off.
    #[serde(default = "default_interval_secs")]
    pub interval_secs: u64,
    /// How far the first pass over a project looks back from when Relay first saw it.
    #[serde(default = "default_lookback_secs")]
    pub lookback_secs: u64,
    /// Each pass asks from the last successful pass's start minus this margin (clock skew between
    /// Relay and the tracker, and changes committed while the last pass ran).
    #[serde(default = "default_overlap_secs")]
    pub overlap_secs: u64,
}

impl Default for ReconcileSettings {
    fn default() -> Self {
        ReconcileSettings {
            interval_secs: default_interval_secs(),
            lookback_secs: default_lookback_secs(),
            overlap_secs: default_overlap_secs(),
        }
    }
}

impl ReconcileSettings {
    /// `None` when the reconciler is off.
    pub fn interval(&self) -> Option<Duration> {
        (self.interval_secs > 0).then(|| Duration::from_secs(self.interval_secs))
    }
    pub fn lookback(&self) -> chrono::Duration {
        chrono::Duration::seconds(i64::try_from(self.lookback_secs).unwrap_or(i64::MAX / 2_000))
    }
    pub fn overlap(&self) -> chrono::Duration {
        chrono::Duration::seconds(i64::try_from(self.overlap_secs).unwrap_or(i64::MAX / 2_000))
    }
}

fn default_interval_secs() -> u64 {
    300
}
fn default_lookback_secs() -> u64 {
    24 * 3600
}
fn default_overlap_secs() -> u64 {
    120
}
