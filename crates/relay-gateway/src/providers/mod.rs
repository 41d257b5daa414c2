//! Provider wire formats: authentication, delivery identity and payload parsing, one file per
//! tracker implementing [`WebhookFormat`]. The only place (with `relay-tracker`) that knows
//! GitHub and GitLab JSON; a new tracker adds its file and its arm in [`format()`].

pub mod github;
pub mod gitlab;

use chrono::{DateTime, NaiveDateTime, Utc};
use http::HeaderMap;
use relay_core::Provider;
use serde_json::Value;

use crate::event::ParsedEvent;

/// One tracker's webhook wire format: the provider-specific steps of `POST /webhooks/{tracker}`.
pub trait WebhookFormat: Sync {
    /// Authenticates the request with the tracker's webhook secret (before anything else in it
    /// is looked at).
    fn verify(&self, headers: &HeaderMap, body: &[u8], secret: &[u8]) -> Result<(), Rejection>;
    /// The event name and the delivery's identity (for deduplication).
    fn delivery(&self, headers: &HeaderMap, body: &[u8]) -> Result<DeliveryHeaders, Rejection>;
    /// What the delivery says happened.
    fn parse(&self, event: &str, payload: &Value) -> ParsedEvent;
    /// The payload's action word (`opened`, `created`, `update`, …), recorded with the delivery
    /// and part of an event's identity.
    fn action<'a>(&self, payload: &'a Value) -> Option<&'a str>;
    /// How a failed [`WebhookFormat::verify`] counts against its client.
    fn failed_secret(&self) -> FailedSecret;
}

/// Whether a wrong webhook credential is a guess at the secret that counts against the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedSecret {
    /// The secret itself arrives (GitLab's `X-Gitlab-Token`): each wrong one is a guess, throttled
    /// per client like a wrong API token.
    Guess,
    /// A signature over the body arrives (GitHub's HMAC); not throttled: GitHub delivers every
    /// hook, anyone's, from the same addresses, so throttling them would let a stranger's hook
    /// with a wrong secret hold up the real deliveries.
    Signature,
}

/// The webhook format of `provider`, looked up once per request.
pub fn format(provider: Provider) -> &'static dyn WebhookFormat {
    match provider {
        Provider::GitHub => &github::GitHub,
        Provider::GitLab => &gitlab::GitLab,
    }
}

/// Why a request was refused before anything was stored.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("missing signature header {0}")]
    MissingSignature(&'static str),
    #[error("signature does not match")]
    BadSignature,
    #[error("missing event header {0}")]
    MissingEvent(&'static str),
}

/// Delivery identity and event name taken from the headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryHeaders {
    /// Scoped delivery identity used for deduplication.
    pub delivery_key: String,
    /// The raw delivery id, for logs.
    pub delivery_id: String,
    pub event: String,
}

/// A header's value, trimmed, if present, valid text and not empty.
pub(crate) fn header<'a>(headers: &'a http::HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// A string at a JSON pointer, if it is a string.
pub(crate) fn str_at<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// A JSON value rendered as an id string: numbers and strings alike.
pub(crate) fn id_at(value: &Value, pointer: &str) -> Option<String> {
    match value.pointer(pointer)? {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

pub(crate) fn i64_at(value: &Value, pointer: &str) -> Option<i64> {
    match value.pointer(pointer)? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The years a timestamp may fall in: what RFC 3339 can write. chrono also reads signed years far
/// outside it (`-10000-01-01 00:00:00 +0000`), which Postgres' `timestamptz` rejects; a time outside
/// this range is treated like a missing one.
const STORABLE_YEARS: std::ops::RangeInclusive<i32> = 1..=9999;

/// Parses the timestamp formats trackers use: RFC 3339 and GitLab's `2015-05-17 17:06:40 UTC`.
pub(crate) fn parse_time(raw: Option<&str>) -> Option<DateTime<Utc>> {
    use chrono::Datelike;
    parse_any_time(raw?.trim()).filter(|time| STORABLE_YEARS.contains(&time.year()))
}

fn parse_any_time(raw: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(raw) {
        return Some(t.with_timezone(&Utc));
    }
    if let Ok(t) = DateTime::parse_from_str(raw, "%Y-%m-%d %H:%M:%S %z") {
        return Some(t.with_timezone(&Utc));
    }
    let naive = raw.strip_suffix(" UTC").unwrap_or(raw);
    NaiveDateTime::parse_from_str(naive, "%Y-%m-%d %H:%M:%S")
        .ok()
        .map(|t| t.and_utc())
}

/// Names in an array of objects, e.g. `labels[].name`.
pub(crate) fn names_at(value: &Value, pointer: &str, field: &str) -> Option<Vec<String>> {
    let items = value.pointer(pointer)?.as_array()?;
    Some(
        items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some(s.clone()),
                other => other.get(field).and_then(Value::as_str).map(str::to_owned),
            })
            .collect(),
    )
}

/// Items of `current` that are not in `previous` (case-insensitive).
pub(crate) fn added(previous: &[String], current: &[String]) -> Vec<String> {
    current
        .iter()
        .filter(|c| !previous.iter().any(|p| p.eq_ignore_ascii_case(c)))
        .cloned()
        .collect()
}

/// Git's all-zero object id, used for "no commit" (a deleted branch).
pub(crate) fn is_zero_sha(sha: &str) -> bool {
    !sha.is_empty() && sha.bytes().all(|b| b == b'0')
}

/// A SHA-256 of the body, the delivery identity of last resort when the sender sent none.
pub(crate) fn body_digest(body: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(body))
}

#[cfg(test)]
mod tests {
    use relay_core::Provider;
    use serde_json::json;

    use super::{format, parse_time};

    #[test]
    fn each_format_finds_its_action_word() {
        let github = format(Provider::GitHub);
        assert_eq!(
            github.action(&json!({ "action": "created" })),
            Some("created")
        );
        assert_eq!(github.action(&json!({ "ref": "refs/heads/main" })), None);
        let gitlab = format(Provider::GitLab);
        let note = json!({ "object_attributes": { "action": "update" } });
        assert_eq!(gitlab.action(&note), Some("update"));
        assert_eq!(gitlab.action(&json!({ "object_kind": "push" })), None);
    }

    #[test]
    fn timestamps() {
        for raw in [
            "2015-05-17 17:06:40 UTC",
            "2015-05-17T17:06:40Z",
            "2015-05-17T17:06:40.000Z",
            "2015-05-17 19:06:40 +0200",
        ] {
            assert_eq!(
                parse_time(Some(raw)).map(|t| t.to_rfc3339()),
                Some("2015-05-17T17:06:40+00:00".to_owned()),
                "{raw}"
            );
        }
        assert_eq!(parse_time(Some("yesterday")), None);
    }

    #[test]
    fn times_postgres_cannot_store_are_treated_as_missing() {
        for raw in [
            "-10000-01-01 00:00:00 +0000",
            "-4713-01-01 00:00:00",
            "0000-01-01T00:00:00Z",
        ] {
            assert_eq!(parse_time(Some(raw)), None, "{raw}");
        }
        assert!(parse_time(Some("9999-12-31T23:59:59Z")).is_some());
    }
}
