//! A total deadline per request: from the moment its head was read until its response head is
//! ready, body included. An idle-between-frames timeout alone lets a client keep a request alive
//! forever by sending one byte just before each timeout; a deadline does not reset.
//!
//! Response bodies are not limited: an SSE stream has sent its head long before it ends.

use std::time::Duration;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

use super::{Refusal, refuse};

/// Fails the request with 408 (and closes the connection) when it is not answered in `deadline`.
pub async fn deadline(State(deadline): State<Duration>, request: Request, next: Next) -> Response {
    match tokio::time::timeout(deadline, next.run(request)).await {
        Ok(response) => response,
        Err(_) => refuse(Refusal::Deadline),
    }
}
