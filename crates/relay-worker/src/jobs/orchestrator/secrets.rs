//! The configured secrets of trackers and LLMs, registered in [`relay_core::secrets`]: the outbox
//! scrubs every body it stores with them, prompts are redacted with them and job errors are
//! scrubbed of them before they are logged or stored.

use relay_agent::llm::LlmSettings;
use relay_core::TrackerSettings;
use relay_core::secrets::{Registration, register_secret, tracker_secrets};
use secrecy::SecretString;

/// Registers every tracker token, webhook secret and App private key, and every role's LLM key.
/// Returns how many values were newly registered. Idempotent.
pub fn register_outgoing_secrets(trackers: &[TrackerSettings], llm: &LlmSettings) -> usize {
    let mut secrets = tracker_secrets(trackers);
    secrets.extend(llm.secrets());
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

/// What a prompt is redacted with: every registered secret, and the tracker tokens (also those
/// too short for the outgoing scan: a prompt is never shown, so nothing is mangled for a reader).
pub fn prompt_redactions(trackers: &[TrackerSettings]) -> Vec<SecretString> {
    let mut values: Vec<SecretString> = trackers.iter().map(|t| t.token.clone()).collect();
    for secret in relay_core::secrets::registered() {
        let known = values.iter().any(|v| {
            secrecy::ExposeSecret::expose_secret(v) == secrecy::ExposeSecret::expose_secret(&secret)
        });
        if !known {
            values.push(secret);
        }
    }
    values
}
