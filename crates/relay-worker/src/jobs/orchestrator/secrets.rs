//! The configured secrets of trackers and LLMs, registered for the outgoing scan
//! ([`relay_core::outgoing::scrub_secrets`], applied by the outbox to every body it stores).

use relay_agent::llm::{LlmSettings, Role};
use relay_core::TrackerSettings;
use relay_core::outgoing::{Registration, register_secret};
use secrecy::SecretString;

/// Registers every tracker token, webhook secret and App private key, and every role's LLM key.
/// Returns how many values were newly registered. Idempotent.
pub fn register_outgoing_secrets(trackers: &[TrackerSettings], llm: &LlmSettings) -> usize {
    let mut secrets: Vec<(String, SecretString)> = Vec::new();
    for tracker in trackers {
        let name = tracker.name.as_str();
        secrets.push((format!("trackers.{name}.token"), tracker.token.clone()));
        secrets.push((
            format!("trackers.{name}.webhook_secret"),
            tracker.webhook_secret.clone(),
        ));
        if let Some(key) = &tracker.private_key {
            secrets.push((format!("trackers.{name}.private_key"), key.clone()));
        }
    }
    for role in Role::ALL {
        if let Ok(resolved) = llm.resolve(role)
            && let Some(key) = resolved.api_key
        {
            secrets.push((format!("llm.{}.api_key", role.as_str()), key));
        }
    }
    register_all(&secrets)
}

/// Registers `(label, value)` pairs; values too short to scan for are skipped with a warning.
pub fn register_all(secrets: &[(String, SecretString)]) -> usize {
    let mut added = 0;
    for (label, value) in secrets {
        match register_secret(label, value) {
            Registration::Added => added += 1,
            Registration::AlreadyKnown => {}
            Registration::TooShort => {
                if !secrecy::ExposeSecret::expose_secret(value).is_empty() {
                    tracing::warn!(
                        secret = %label,
                        "a configured secret is too short to be scanned for in outgoing comments"
                    );
                }
            }
        }
    }
    added
}
