//! Turning a failed HTTP exchange into a [`TrackerError`], once, at the client boundary. The
//! provider-specific rate-limit rules live next to each client (`github/rate_limit.rs`,
//! `gitlab/mod.rs`); this file holds what both share.

use std::time::Duration;

use chrono::{DateTime, Utc};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;

use crate::TrackerError;

/// Longest wait a tracker can ask for: a huge `retry-after` or a reset far in the future must
/// neither overflow nor park a write for days; the outbox re-checks after this anyway.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);
/// GitHub's documented minimum wait after a secondary rate limit without `retry-after`; also
/// the fallback for a GitLab 429 without headers.
pub const DEFAULT_RATE_LIMIT_WAIT: Duration = Duration::from_secs(60);
/// Longest tracker message kept in an error (bodies can be HTML error pages).
const MAX_MESSAGE_CHARS: usize = 300;

/// A failed answer: what the classifier needs.
pub(crate) struct Failure<'a> {
    /// `METHOD /path` of the request, for the message (never the query or a token).
    pub what: &'a str,
    pub status: StatusCode,
    pub headers: &'a HeaderMap,
    pub body: &'a str,
}

/// Clamps a wait to `[1 s, MAX_RETRY_AFTER]`.
pub(crate) fn clamp_wait(wait: Duration) -> Duration {
    wait.clamp(Duration::from_secs(1), MAX_RETRY_AFTER)
}

/// `Retry-After`: delta seconds or an HTTP date.
pub(crate) fn retry_after(headers: &HeaderMap, now: DateTime<Utc>) -> Option<Duration> {
    let raw = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(secs) = raw.parse::<u64>() {
        return Some(clamp_wait(Duration::from_secs(
            secs.min(MAX_RETRY_AFTER.as_secs()),
        )));
    }
    let at = DateTime::parse_from_rfc2822(raw).ok()?.with_timezone(&Utc);
    Some(until(at.timestamp(), now))
}

/// The wait until an epoch-seconds instant (`x-ratelimit-reset`, `RateLimit-Reset`), clamped.
pub(crate) fn until_epoch_header(
    headers: &HeaderMap,
    name: &str,
    now: DateTime<Utc>,
) -> Option<Duration> {
    let raw = headers.get(name)?.to_str().ok()?.trim();
    let epoch = raw.parse::<i64>().ok()?;
    Some(until(epoch, now))
}

fn until(epoch_secs: i64, now: DateTime<Utc>) -> Duration {
    let delta = epoch_secs.saturating_sub(now.timestamp()).max(0);
    clamp_wait(Duration::from_secs(
        u64::try_from(delta)
            .unwrap_or(0)
            .min(MAX_RETRY_AFTER.as_secs()),
    ))
}

/// A readable message from an error body: GitHub `message` + `errors`, GitLab `message` (text or
/// field map) or `error`; otherwise the start of the body.
pub(crate) fn body_message(body: &str) -> String {
    let text = match serde_json::from_str::<serde_json::Value>(body) {
        Ok(json) => json_message(&json).unwrap_or_else(|| body.to_owned()),
        Err(_) => body.to_owned(),
    };
    let text = text.trim();
    if text.chars().count() > MAX_MESSAGE_CHARS {
        let cut: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
        format!("{cut}…")
    } else {
        text.to_owned()
    }
}

fn json_message(json: &serde_json::Value) -> Option<String> {
    let mut parts = Vec::new();
    match json.get("message") {
        Some(serde_json::Value::String(m)) => parts.push(m.clone()),
        Some(serde_json::Value::Object(fields)) => {
            for (field, problems) in fields {
                parts.push(format!("{field} {}", flatten(problems)));
            }
        }
        _ => {}
    }
    if let Some(serde_json::Value::Array(errors)) = json.get("errors") {
        for e in errors {
            parts.push(match e {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Object(o) => {
                    if let Some(m) = o.get("message").and_then(|m| m.as_str()) {
                        m.to_owned()
                    } else {
                        let get = |k: &str| o.get(k).and_then(|v| v.as_str()).unwrap_or("?");
                        format!("{} {} {}", get("resource"), get("field"), get("code"))
                    }
                }
                other => other.to_string(),
            });
        }
    }
    if parts.is_empty()
        && let Some(serde_json::Value::String(e)) = json.get("error")
    {
        parts.push(e.clone());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn flatten(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Array(items) => items.iter().map(flatten).collect::<Vec<_>>().join(", "),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Everything that is not a rate limit (the providers decide those first).
pub(crate) fn by_status(f: &Failure<'_>) -> TrackerError {
    let message = format!(
        "{} on {}: {}",
        f.status.as_u16(),
        f.what,
        body_message(f.body)
    );
    match f.status.as_u16() {
        401 => TrackerError::Unauthorized(message),
        403 => TrackerError::Forbidden(message),
        404 | 410 => TrackerError::NotFound(message),
        400 | 422 => TrackerError::Validation(message),
        408 | 500..=599 => TrackerError::Transient(message),
        _ => TrackerError::Protocol(message),
    }
}

/// A request that got no HTTP answer.
pub(crate) fn transport(what: &str, error: reqwest::Error) -> TrackerError {
    if error.is_timeout() {
        TrackerError::Transient(format!("timed out on {what}"))
    } else if error.is_connect() {
        TrackerError::Transient(format!("cannot connect for {what}"))
    } else if error.is_decode() {
        TrackerError::Protocol(format!("unreadable answer to {what}"))
    } else {
        // reqwest errors carry the URL; ours never hold a token in it, but keep the message
        // short and free of it anyway.
        TrackerError::Transient(format!("{what}: {}", error.without_url()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_validation_message() {
        let body = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/api/github/validation-error-422.recorded.json"
        ));
        let recorded: serde_json::Value = serde_json::from_str(body).unwrap();
        let response = recorded[0]["response"].to_string();
        assert_eq!(
            body_message(&response),
            "Validation Failed; Label color invalid"
        );
    }

    #[test]
    fn gitlab_messages() {
        assert_eq!(
            body_message(r#"{"message":"401 Unauthorized"}"#),
            "401 Unauthorized"
        );
        assert_eq!(
            body_message(r#"{"message":{"name":["has already been taken"]}}"#),
            "name has already been taken"
        );
        assert_eq!(
            body_message(r#"{"error":"insufficient_scope"}"#),
            "insufficient_scope"
        );
        assert_eq!(body_message("Retry later"), "Retry later");
    }

    #[test]
    fn huge_waits_are_clamped() {
        let now = Utc::now();
        let mut h = HeaderMap::new();
        h.insert("retry-after", "99999999999999999999".parse().unwrap());
        // Not a u64: not understood, so the caller's default applies.
        assert_eq!(retry_after(&h, now), None);
        h.insert("retry-after", "18446744073709551615".parse().unwrap());
        assert_eq!(retry_after(&h, now), Some(MAX_RETRY_AFTER));
        h.insert("x-ratelimit-reset", "9223372036854775807".parse().unwrap());
        assert_eq!(
            until_epoch_header(&h, "x-ratelimit-reset", now),
            Some(MAX_RETRY_AFTER)
        );
        h.insert("x-ratelimit-reset", "-9223372036854775808".parse().unwrap());
        assert_eq!(
            until_epoch_header(&h, "x-ratelimit-reset", now),
            Some(Duration::from_secs(1))
        );
        h.insert(
            "retry-after",
            "Tue, 10 Oct 2017 16:00:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(1)));
    }
}
