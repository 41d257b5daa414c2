//! arangors' HTTP client seam implemented over our reqwest 0.13 (arangors is built with
//! `default-features = false`, so it brings no reqwest 0.12 or OpenSSL of its own).

use std::time::Duration;

use arangors::ClientError;
use arangors::client::ClientExt;
use http::HeaderMap;

/// Per-request timeout: AQL traversals on a large graph are expected to take milliseconds.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// A [`ClientExt`] over `reqwest::Client`. arangors buffers every response body as a `String`.
#[derive(Debug, Clone)]
pub struct ReqwestClient {
    client: reqwest::Client,
    headers: HeaderMap,
}

#[async_trait::async_trait]
impl ClientExt for ReqwestClient {
    fn new<U: Into<Option<HeaderMap>>>(headers: U) -> Result<Self, ClientError> {
        let client = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| ClientError::HttpClient(format!("failed to build http client: {e}")))?;
        Ok(ReqwestClient {
            client,
            headers: headers.into().unwrap_or_default(),
        })
    }

    fn headers(&mut self) -> &mut HeaderMap {
        &mut self.headers
    }

    async fn request(
        &self,
        mut request: http::Request<String>,
    ) -> Result<http::Response<String>, ClientError> {
        let headers = request.headers_mut();
        for (name, value) in &self.headers {
            if !headers.contains_key(name) {
                headers.insert(name, value.clone());
            }
        }
        if !headers.contains_key(http::header::CONTENT_TYPE) && !request.body().is_empty() {
            request.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
        }
        let url = request.uri().to_string();
        let request = reqwest::Request::try_from(request)
            .map_err(|e| request_failed("invalid request", &url, &e))?;
        let response = self
            .client
            .execute(request)
            .await
            .map_err(|e| request_failed("request failed", &url, &e))?;
        let status = response.status();
        let version = response.version();
        let headers = response.headers().clone();
        let body = response
            .text()
            .await
            .map_err(|e| request_failed("failed to read the response body", &url, &e))?;
        let mut builder = http::Response::builder().status(status).version(version);
        if let Some(h) = builder.headers_mut() {
            *h = headers;
        }
        builder
            .body(body)
            .map_err(|e| ClientError::HttpClient(format!("invalid response: {e}")))
    }
}

/// A failed request, said from the redacted URL and the kind of failure only. reqwest's own text
/// repeats the request's URL, userinfo and all, and its causes may too; what reaches the log,
/// the health reason and `/readyz` is built here instead.
fn request_failed(what: &str, url: &str, error: &reqwest::Error) -> ClientError {
    ClientError::HttpClient(format!(
        "{what}: {} ({})",
        failure_kind(error),
        relay_core::secrets::redact_url(url)
    ))
}

/// What kind of failure `error` is: reqwest's classification, and the I/O error kind beneath it
/// (`connection refused`, `timed out`), never a message text.
fn failure_kind(error: &reqwest::Error) -> String {
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else if error.is_body() || error.is_decode() {
        "the body could not be read"
    } else if error.is_redirect() {
        "too many redirects"
    } else if error.is_builder() {
        "invalid request"
    } else {
        "failed"
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return format!("{kind}: {}", io.kind());
        }
        source = cause.source();
    }
    kind.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A URL that carries a password never reaches the error text, whatever reqwest prints.
    #[tokio::test]
    async fn a_failed_request_names_the_redacted_url_and_the_kind_only() {
        let client = ReqwestClient::new(None).unwrap();
        let request = http::Request::get("http://root:Arango-Pw-7731@127.0.0.1:1/_api/version")
            .body(String::new())
            .unwrap();
        let error = client.request(request).await.unwrap_err().to_string();
        assert!(!error.contains("Arango-Pw-7731"), "{error}");
        assert!(error.contains("root:[REDACTED]@127.0.0.1:1"), "{error}");
        assert!(error.contains("could not connect"), "{error}");
    }
}
