//! GitHub's failure rules: primary rate limits (`x-ratelimit-remaining: 0` until
//! `x-ratelimit-reset`) and secondary limits (403 or 429, with `retry-after` or without it — then
//! at least 60 s) are [`TrackerError::RateLimited`]; every other status goes through the shared
//! table.

use chrono::Utc;

use crate::TrackerError;
use crate::classify::{self, DEFAULT_RATE_LIMIT_WAIT, Failure};

pub(crate) fn classify(f: &Failure<'_>) -> TrackerError {
    let status = f.status.as_u16();
    if status == 403 || status == 429 {
        let now = Utc::now();
        if let Some(wait) = classify::retry_after(f.headers, now) {
            return TrackerError::RateLimited { retry_after: wait };
        }
        let exhausted = f
            .headers
            .get("x-ratelimit-remaining")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() == "0");
        if exhausted {
            let wait = classify::until_epoch_header(f.headers, "x-ratelimit-reset", now)
                .unwrap_or(DEFAULT_RATE_LIMIT_WAIT);
            return TrackerError::RateLimited { retry_after: wait };
        }
        // A secondary limit without headers says so only in its message.
        if status == 429 || f.body.to_ascii_lowercase().contains("rate limit") {
            return TrackerError::RateLimited {
                retry_after: DEFAULT_RATE_LIMIT_WAIT,
            };
        }
    }
    classify::by_status(f)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use reqwest::StatusCode;
    use reqwest::header::HeaderMap;

    use super::*;

    fn run(status: u16, headers: &[(&'static str, String)], body: &str) -> TrackerError {
        let mut map = HeaderMap::new();
        for (k, v) in headers {
            map.insert(*k, v.parse().unwrap());
        }
        classify(&Failure {
            what: "POST /repos/o/r/issues/1/comments",
            status: StatusCode::from_u16(status).unwrap(),
            headers: &map,
            body,
        })
    }

    #[test]
    fn table() {
        let secondary = r#"{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again."}"#;
        let reset = (Utc::now().timestamp() + 120).to_string();
        let limited = |e: TrackerError| e.retry_after();
        assert_eq!(
            limited(run(403, &[], secondary)),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            limited(run(403, &[("retry-after", "7".into())], secondary)),
            Some(Duration::from_secs(7))
        );
        assert_eq!(limited(run(429, &[], "")), Some(Duration::from_secs(60)));
        let primary = run(
            403,
            &[
                ("x-ratelimit-remaining", "0".into()),
                ("x-ratelimit-reset", reset),
            ],
            r#"{"message":"API rate limit exceeded"}"#,
        );
        let wait = primary.retry_after().unwrap().as_secs();
        assert!((110..=120).contains(&wait), "{wait}");
        assert!(matches!(
            run(403, &[("x-ratelimit-remaining", "4999".into())], r#"{"message":"Resource not accessible by integration"}"#),
            TrackerError::Forbidden(m) if m.contains("Resource not accessible")
        ));
        assert!(matches!(
            run(401, &[], r#"{"message":"Bad credentials"}"#),
            TrackerError::Unauthorized(_)
        ));
        assert!(matches!(
            run(404, &[], r#"{"message":"Not Found"}"#),
            TrackerError::NotFound(_)
        ));
        assert!(matches!(
            run(410, &[], r#"{"message":"Issue deleted"}"#),
            TrackerError::NotFound(_)
        ));
        assert!(matches!(
            run(422, &[], r#"{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}]}"#),
            TrackerError::Validation(m) if m.contains("body is too long")
        ));
        let e = run(502, &[], "<html>bad gateway</html>");
        assert!(matches!(&e, TrackerError::Transient(m) if m.starts_with("502 on POST")));
        assert!(e.is_retryable());
        assert!(!run(422, &[], "{}").is_retryable());
    }
}
