//! HTTP plumbing shared by both providers: sending a request and classifying failures from the
//! status, headers and error body exactly once.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::error::LlmError;

/// User agent sent to every provider.
pub const USER_AGENT: &str = concat!("relay/", env!("CARGO_PKG_VERSION"));

/// Most bytes of a successful answer read (a reply is at most `max_output_tokens`, a few hundred
/// KiB even streamed as SSE events); a longer one is refused, never held.
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
/// Most bytes of an error answer read (the rest is dropped: it is for classification).
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Most redirects one request follows.
const MAX_REDIRECTS: usize = 5;

/// Builds the shared reqwest client for one provider. Redirects are followed only within the
/// same origin (scheme, host and port): reqwest drops `Authorization` on a cross-host hop but not
/// `x-api-key` or `api-key`, so a redirect elsewhere is not followed and its answer is the error.
pub fn client(timeout: Duration) -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() > MAX_REDIRECTS {
                return attempt.error("too many redirects");
            }
            let same_origin = attempt
                .previous()
                .last()
                .is_some_and(|previous| previous.origin() == attempt.url().origin());
            if same_origin {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }))
        .timeout(timeout)
        .connect_timeout(timeout.min(Duration::from_secs(10)))
        .build()
        .map_err(|error| LlmError::Config(format!("cannot build http client: {error}")))
}

/// Sends a prepared request and returns the JSON body of a 2xx response, or the classified error.
pub async fn send(request: reqwest::RequestBuilder, timeout: Duration) -> Result<Value, LlmError> {
    let body = send_text(request, timeout).await?;
    serde_json::from_str(&body)
        .map_err(|error| LlmError::InvalidResponse(format!("response body is not JSON ({error})")))
}

/// Sends a prepared request and returns the text body of a 2xx response (e.g. an SSE stream), or
/// the classified error.
pub async fn send_text(
    request: reqwest::RequestBuilder,
    timeout: Duration,
) -> Result<String, LlmError> {
    let response = request
        .send()
        .await
        .map_err(|error| from_reqwest(error, timeout))?;
    let status = response.status();
    let headers = response.headers().clone();
    if !status.is_success() {
        let (bytes, _) = read_capped(response, MAX_ERROR_BODY_BYTES, timeout).await?;
        return Err(classify(
            status.as_u16(),
            &headers,
            &String::from_utf8_lossy(&bytes),
        ));
    }
    if response
        .content_length()
        .is_some_and(|n| n > MAX_RESPONSE_BYTES as u64)
    {
        return Err(too_large());
    }
    let (bytes, cut) = read_capped(response, MAX_RESPONSE_BYTES, timeout).await?;
    if cut {
        return Err(too_large());
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

fn too_large() -> LlmError {
    LlmError::InvalidResponse(format!(
        "response body is larger than {} MiB",
        MAX_RESPONSE_BYTES / (1024 * 1024)
    ))
}

/// Reads at most `cap` bytes of a body; whether more was cut off. Never holds more than `cap`
/// bytes and one chunk, whatever the server sends or announces.
async fn read_capped(
    mut response: reqwest::Response,
    cap: usize,
    timeout: Duration,
) -> Result<(Vec<u8>, bool), LlmError> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| from_reqwest(error, timeout))?
    {
        let room = cap - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body, true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body, false))
}

/// Classifies a transport error.
pub fn from_reqwest(error: reqwest::Error, timeout: Duration) -> LlmError {
    if error.is_timeout() {
        LlmError::Timeout(timeout)
    } else if error.is_decode() {
        LlmError::InvalidResponse(relay_core::error::cause_chain(&error))
    } else if error.is_builder() {
        LlmError::Config(relay_core::error::cause_chain(&error))
    } else {
        // Kept whole: reqwest's own message ("error sending request") says nothing; the cause
        // (refused, reset, DNS) is in the source chain.
        LlmError::Network(error)
    }
}

/// Classifies a non-2xx response of either provider.
///
/// OpenAI bodies look like `{"error":{"message","type","code"}}`, Anthropic bodies like
/// `{"type":"error","error":{"type","message"}}`; both carry the fields this needs.
pub fn classify(status: u16, headers: &HeaderMap, body: &str) -> LlmError {
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let error = parsed.get("error").unwrap_or(&Value::Null);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| error.as_str().map(str::to_owned))
        // vLLM: `{"object": "error", "message": …}`; FastAPI (llama-cpp-python): `{"detail": […]}`.
        .or_else(|| {
            parsed
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .or_else(|| fastapi_detail(&parsed))
        .unwrap_or_else(|| truncate(body, 300));
    let error_type = error.get("type").and_then(Value::as_str).unwrap_or("");
    let code = error.get("code").and_then(Value::as_str).unwrap_or("");
    let detail_code = error
        .pointer("/details/error_code")
        .and_then(Value::as_str)
        .unwrap_or("");
    let retry_after = retry_after(headers);
    let should_retry = headers
        .get("x-should-retry")
        .and_then(|value| value.to_str().ok())
        .map(|value| value.eq_ignore_ascii_case("true"));

    let lowered = message.to_ascii_lowercase();
    let context_length = code == "context_length_exceeded"
        || lowered.contains("context length")
        || lowered.contains("context window")
        || lowered.contains("prompt is too long");
    match status {
        400 | 413 if context_length => LlmError::ContextLengthExceeded(message),
        400 | 422 | 500 | 501 if refuses_output_mode(body) => {
            LlmError::UnsupportedOutput { status, message }
        }
        400 | 413 | 422 => LlmError::InvalidRequest { status, message },
        401 => LlmError::Authentication(message),
        403 => LlmError::PermissionDenied(message),
        404 => LlmError::NotFound(message),
        429 if code == "insufficient_quota"
            || error_type == "insufficient_quota"
            || detail_code == "enforced_spend_limit_reached"
            || should_retry == Some(false) =>
        {
            LlmError::QuotaExceeded(message)
        }
        429 => LlmError::RateLimited {
            retry_after,
            message,
        },
        529 => LlmError::Overloaded {
            retry_after,
            message,
        },
        503 if error_type == "overloaded_error" || lowered.contains("slow down") => {
            LlmError::Overloaded {
                retry_after,
                message,
            }
        }
        _ if error_type == "overloaded_error" => LlmError::Overloaded {
            retry_after,
            message,
        },
        408 | 409 | 500..=599 if should_retry != Some(false) => {
            LlmError::Server { status, message }
        }
        _ => LlmError::Http { status, message },
    }
}

/// Whether an error body says the server cannot produce output the way it was asked: the
/// structured-output modes (`response_format`, `json_schema`, `json_object`, vLLM's guided
/// decoding, llama.cpp's grammars) or forced tool calls (llama.cpp without `--jinja`).
pub fn refuses_output_mode(body: &str) -> bool {
    const MARKS: [&str; 9] = [
        "response_format",
        "json_schema",
        "json_object",
        "guided_json",
        "guided_decoding",
        "grammar",
        "tool_choice",
        "tools param requires",
        "does not support tools",
    ];
    let lowered = truncate(body, 4_000).to_ascii_lowercase();
    MARKS.iter().any(|mark| lowered.contains(mark))
}

/// FastAPI's validation error (`{"detail": [{"loc": ["body", "response_format", "type"],
/// "msg": "Input should be 'text' or 'json_object'"}]}`) as `response_format.type: Input …`.
fn fastapi_detail(parsed: &Value) -> Option<String> {
    let details = parsed.get("detail")?.as_array()?;
    let lines: Vec<String> = details
        .iter()
        .take(5)
        .filter_map(|d| {
            let msg = d.get("msg")?.as_str()?;
            let loc: Vec<String> = d
                .get("loc")
                .and_then(Value::as_array)
                .map(|parts| {
                    parts
                        .iter()
                        .filter(|p| p.as_str() != Some("body"))
                        .map(|p| p.as_str().map_or_else(|| p.to_string(), str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            Some(if loc.is_empty() {
                msg.to_owned()
            } else {
                format!("{}: {msg}", loc.join("."))
            })
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("; "))
}

/// The delay a response asks for: `retry-after-ms`, then `retry-after` (seconds or HTTP date),
/// then the reset time of an exhausted rate limit (OpenAI `x-ratelimit-reset-*` durations such as
/// `6m0s`, Anthropic `anthropic-ratelimit-*-reset` RFC 3339 times).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(clamped_secs(ms / 1000.0));
    }
    if let Some(value) = header("retry-after") {
        let value = value.trim();
        if let Ok(seconds) = value.parse::<f64>()
            && seconds.is_finite()
            && seconds >= 0.0
        {
            return Some(clamped_secs(seconds));
        }
        if let Ok(date) = chrono::DateTime::parse_from_rfc2822(value) {
            return until(date.with_timezone(&chrono::Utc));
        }
    }
    let mut longest: Option<Duration> = None;
    for kind in ["requests", "tokens"] {
        let exhausted = header(&format!("x-ratelimit-remaining-{kind}")) == Some("0");
        if exhausted
            && let Some(delay) =
                header(&format!("x-ratelimit-reset-{kind}")).and_then(parse_go_duration)
        {
            longest = Some(longest.map_or(delay, |current| current.max(delay)));
        }
    }
    for kind in ["requests", "tokens", "input-tokens", "output-tokens"] {
        let exhausted = header(&format!("anthropic-ratelimit-{kind}-remaining")) == Some("0");
        if exhausted
            && let Some(delay) = header(&format!("anthropic-ratelimit-{kind}-reset"))
                .and_then(|value| chrono::DateTime::parse_from_rfc3339(value).ok())
                .and_then(|date| until(date.with_timezone(&chrono::Utc)))
        {
            longest = Some(longest.map_or(delay, |current| current.max(delay)));
        }
    }
    longest
}

/// Longest delay a response header can ask for. Headers are input from the network: a huge value
/// (`retry-after: 1e20`) would overflow `Duration` and `Instant` arithmetic; anything past this is
/// far beyond every call's deadline anyway, so the caller gives up instead of waiting.
pub const MAX_HEADER_DELAY: Duration = Duration::from_secs(24 * 60 * 60);

/// `seconds` as a duration, clamped to `0..=MAX_HEADER_DELAY` (NaN counts as zero).
fn clamped_secs(seconds: f64) -> Duration {
    if seconds.is_nan() || seconds <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(seconds)
        .unwrap_or(MAX_HEADER_DELAY)
        .min(MAX_HEADER_DELAY)
}

fn until(time: chrono::DateTime<chrono::Utc>) -> Option<Duration> {
    (time - chrono::Utc::now())
        .to_std()
        .ok()
        .map(|delay| delay.min(MAX_HEADER_DELAY))
        .or(Some(Duration::ZERO))
}

/// Parses Go-style durations as OpenAI sends them: `12ms`, `1s`, `6m0s`, `1h2m3.5s`.
pub fn parse_go_duration(text: &str) -> Option<Duration> {
    let mut total = 0.0_f64;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..number_len].parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            "us" | "µs" => 0.000_001,
            "ns" => 0.000_000_001,
            _ => return None,
        };
        total += number * factor;
        rest = &rest[unit_len..];
    }
    Some(clamped_secs(total))
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use reqwest::header::{HeaderMap, HeaderValue};

    use super::{MAX_HEADER_DELAY, classify, parse_go_duration, retry_after};
    use crate::llm::error::ErrorKind;

    #[track_caller]
    fn kind(status: u16, headers: &[(&'static str, &'static str)], body: &str) -> ErrorKind {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(*name, HeaderValue::from_static(value));
        }
        classify(status, &map, body).kind()
    }

    #[test]
    fn classifies_statuses_and_bodies() {
        let openai = |code: &str, message: &str| {
            format!(
                r#"{{"error":{{"message":"{message}","type":"invalid_request_error","param":null,"code":"{code}"}}}}"#
            )
        };
        assert_eq!(
            kind(400, &[], &openai("context_length_exceeded", "too long")),
            ErrorKind::ContextLength
        );
        assert_eq!(
            kind(400, &[], &openai("", "prompt is too long: 210000 tokens")),
            ErrorKind::ContextLength
        );
        assert_eq!(
            kind(400, &[], &openai("", "bad")),
            ErrorKind::InvalidRequest
        );
        assert_eq!(kind(401, &[], "{}"), ErrorKind::Authentication);
        assert_eq!(kind(403, &[], "{}"), ErrorKind::PermissionDenied);
        assert_eq!(kind(404, &[], "not json"), ErrorKind::NotFound);
        assert_eq!(
            kind(429, &[], &openai("rate_limit_exceeded", "slow")),
            ErrorKind::RateLimited
        );
        assert_eq!(
            kind(429, &[], &openai("insufficient_quota", "pay")),
            ErrorKind::Quota
        );
        let spend = r#"{"type":"error","error":{"type":"rate_limit_error","message":"cap","details":{"error_code":"enforced_spend_limit_reached"}}}"#;
        assert_eq!(kind(429, &[], spend), ErrorKind::Quota);
        let overloaded =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(kind(529, &[], overloaded), ErrorKind::Overloaded);
        assert_eq!(
            kind(503, &[], r#"{"error":{"message":"Slow Down"}}"#),
            ErrorKind::Overloaded
        );
        assert_eq!(kind(500, &[], "{}"), ErrorKind::Server);
        assert_eq!(
            kind(500, &[("x-should-retry", "false")], "{}"),
            ErrorKind::Http
        );
        assert_eq!(kind(409, &[], "{}"), ErrorKind::Server);
        assert_eq!(kind(418, &[], "{}"), ErrorKind::Http);
    }

    #[test]
    fn messages_come_from_either_error_shape() {
        let anthropic = r#"{"type":"error","error":{"type":"invalid_request_error","message":"messages.0: bad"},"request_id":"req_1"}"#;
        assert_eq!(
            classify(400, &HeaderMap::new(), anthropic).to_string(),
            "invalid request (status 400): messages.0: bad"
        );
        assert_eq!(
            classify(502, &HeaderMap::new(), "<html>bad gateway</html>").to_string(),
            "server error 502: <html>bad gateway</html>"
        );
    }

    #[test]
    fn retry_after_headers() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(
            "x-ratelimit-remaining-requests",
            HeaderValue::from_static("0"),
        );
        headers.insert(
            "x-ratelimit-reset-requests",
            HeaderValue::from_static("1m30s"),
        );
        headers.insert(
            "x-ratelimit-remaining-tokens",
            HeaderValue::from_static("10"),
        );
        headers.insert("x-ratelimit-reset-tokens", HeaderValue::from_static("6m0s"));
        assert_eq!(
            retry_after(&headers),
            Some(Duration::from_secs(90)),
            "only exhausted limits count"
        );
        headers.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(
            retry_after(&headers),
            Some(Duration::ZERO),
            "a date in the past means now"
        );
    }

    #[test]
    fn huge_retry_after_values_are_clamped_not_a_panic() {
        for (name, value) in [
            ("retry-after", "1e20"),
            ("retry-after", "1e308"),
            ("retry-after-ms", "1e300"),
            ("retry-after", "18446744073709551616"),
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(name, HeaderValue::from_static(value));
            assert_eq!(
                retry_after(&headers),
                Some(MAX_HEADER_DELAY),
                "{name}: {value}"
            );
        }
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("inf"));
        assert_eq!(retry_after(&headers), None, "non-finite values are ignored");
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("12ms"), Some(Duration::from_millis(12)));
        assert_eq!(parse_go_duration("6m0s"), Some(Duration::from_secs(360)));
        assert_eq!(
            parse_go_duration("1h2m3.5s"),
            Some(Duration::from_secs_f64(3723.5))
        );
        assert_eq!(parse_go_duration("soon"), None);
        assert_eq!(
            parse_go_duration("99999999999999999999999999h"),
            Some(MAX_HEADER_DELAY)
        );
        assert_eq!(parse_go_duration(""), None);
    }
}
