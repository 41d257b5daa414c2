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
        let request = reqwest::Request::try_from(request)
            .map_err(|e| ClientError::HttpClient(format!("invalid request: {e}")))?;
        let response = self
            .client
            .execute(request)
            .await
            .map_err(|e| ClientError::HttpClient(format!("request failed: {e}")))?;
        let status = response.status();
        let version = response.version();
        let headers = response.headers().clone();
        let body = response
            .text()
            .await
            .map_err(|e| ClientError::HttpClient(format!("failed to read response body: {e}")))?;
        let mut builder = http::Response::builder().status(status).version(version);
        if let Some(h) = builder.headers_mut() {
            *h = headers;
        }
        builder
            .body(body)
            .map_err(|e| ClientError::HttpClient(format!("invalid response: {e}")))
    }
}
