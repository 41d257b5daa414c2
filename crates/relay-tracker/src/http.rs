//! The HTTP plumbing both clients share: one `reqwest::Client`, per-request timeout, write
//! pacing, and classification of every failure before it leaves the crate.

use std::time::Duration;

use reqwest::{Method, RequestBuilder, Response};
use serde::de::DeserializeOwned;

use crate::classify::{self, Failure};
use crate::pacing::{PaceKey, Pacer, WritePacing};
use crate::{Result, TrackerError};

/// `User-Agent` of every tracker request (GitHub refuses requests without one).
pub const USER_AGENT: &str = concat!("relay/", env!("CARGO_PKG_VERSION"));
/// Connecting is fast or broken: fail early and let the caller retry.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Most bytes of one successful answer read (a page of 100 comments at GitHub's 65,536
/// characters each is under 27 MB even in 4-byte characters); a longer answer is refused.
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;
/// Most bytes of an error answer read (the rest is dropped: the message is for classification).
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Most redirects one request follows.
const MAX_REDIRECTS: usize = 5;

/// A `reqwest::Client` for tracker clients: our `User-Agent`, a connect timeout, no proxy
/// surprises, redirects followed only within the same origin (`same_origin_redirects`). Share
/// one across trackers (`Trackers` does); request timeouts are per tracker.
pub fn http_client() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .user_agent(USER_AGENT)
        .connect_timeout(CONNECT_TIMEOUT)
        .redirect(same_origin_redirects())
        .build()
        .map_err(|e| TrackerError::Config(format!("cannot build the HTTP client: {e}")))
}

/// Follows a redirect only to the same origin (scheme, host and port), at most
/// [`MAX_REDIRECTS`] times. reqwest drops `Authorization` on a cross-host hop but not the token
/// headers it does not know (`PRIVATE-TOKEN`): a redirect elsewhere is not followed at all, and
/// the redirect answer itself is the (classified) failure.
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
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
    })
}

/// Whether a request changes something on the tracker (and is therefore paced).
pub(crate) fn is_write(method: &Method) -> bool {
    *method == Method::POST || *method == Method::PUT || *method == Method::PATCH
}

/// Classifies a non-success answer.
pub(crate) type Classifier = fn(&Failure<'_>) -> TrackerError;

pub(crate) struct Http {
    client: reqwest::Client,
    timeout: Duration,
    pacer: Pacer,
    classify: Classifier,
}

impl Http {
    pub(crate) fn new(
        client: reqwest::Client,
        timeout: Duration,
        pacing: WritePacing,
        classify: Classifier,
    ) -> Http {
        Http {
            client,
            timeout,
            pacer: Pacer::new(pacing),
            classify,
        }
    }

    pub(crate) fn request(&self, method: Method, url: &str) -> RequestBuilder {
        self.client.request(method, url).timeout(self.timeout)
    }

    /// Sends `request` (paced on `pace` when it is a write) and returns the successful answer;
    /// every failure is classified. `what` is `METHOD /path` for messages.
    pub(crate) async fn send(
        &self,
        method: &Method,
        request: RequestBuilder,
        what: &str,
        pace: PaceKey,
    ) -> Result<Response> {
        if is_write(method) {
            self.pacer.acquire(pace).await;
        }
        self.send_unpaced(request, what).await
    }

    /// Sends without pacing (token exchanges, identity checks).
    pub(crate) async fn send_unpaced(
        &self,
        request: RequestBuilder,
        what: &str,
    ) -> Result<Response> {
        let response = request
            .send()
            .await
            .map_err(|e| classify::transport(what, e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let headers = response.headers().clone();
        let (bytes, _) = read_capped(response, MAX_ERROR_BODY_BYTES, what).await?;
        let body = String::from_utf8_lossy(&bytes);
        Err((self.classify)(&Failure {
            what,
            status,
            headers: &headers,
            body: &body,
        }))
    }
}

/// Reads at most `cap` bytes of an answer's body; whether more was cut off. Never holds more than
/// `cap` bytes and one chunk, whatever the server sends or announces.
pub(crate) async fn read_capped(
    mut response: Response,
    cap: usize,
    what: &str,
) -> Result<(Vec<u8>, bool)> {
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| classify::transport(what, e))?
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

/// Reads and decodes a JSON answer (at most [`MAX_RESPONSE_BYTES`]).
pub(crate) async fn json<T: DeserializeOwned>(response: Response, what: &str) -> Result<T> {
    Ok(json_sized(response, what).await?.0)
}

/// [`json`], with the size of the answer in bytes (lists count it against their budget).
pub(crate) async fn json_sized<T: DeserializeOwned>(
    response: Response,
    what: &str,
) -> Result<(T, usize)> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_RESPONSE_BYTES as u64)
    {
        return Err(too_large(what));
    }
    let (body, cut) = read_capped(response, MAX_RESPONSE_BYTES, what).await?;
    if cut {
        return Err(too_large(what));
    }
    let value = serde_json::from_slice(&body)
        .map_err(|e| TrackerError::Protocol(format!("unexpected answer to {what}: {e}")))?;
    Ok((value, body.len()))
}

fn too_large(what: &str) -> TrackerError {
    TrackerError::Protocol(format!(
        "the answer to {what} is larger than {} MiB",
        MAX_RESPONSE_BYTES / (1024 * 1024)
    ))
}
