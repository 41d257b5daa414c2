//! The HTTP listener: one hyper HTTP/1.1 connection per accepted socket, with the limits a public
//! endpoint needs so that slow or many clients cannot starve it.
//!
//! - A connection holds a permit of a semaphore of `max_connections`; past the cap the listener
//!   stops accepting and new connections wait in the kernel's backlog, so one client opening
//!   sockets cannot exhaust file descriptors or memory.
//! - hyper closes a connection whose request head (request line and headers) does not arrive
//!   within `header_read_timeout_ms`, which also bounds how long an idle keep-alive connection
//!   may hold its permit (slowloris).
//! - Request bodies are bounded by `body_read_timeout_ms` between two chunks (a layer in
//!   [`crate::app`]); responses are not limited, so a long SSE stream keeps working.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Pause after an accept error (e.g. out of file descriptors) before accepting again, so the loop
/// does not spin while the condition lasts.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_secs(1);

/// Limits of one listener (from `[server]`).
#[derive(Debug, Clone, Copy)]
pub struct ListenerLimits {
    pub header_read_timeout: Duration,
    pub max_connections: usize,
}

/// Serves `router` on `listener` until `shutdown` is cancelled, then lets every open connection
/// finish its in-flight request and waits for them.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ListenerLimits,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let connections = TaskTracker::new();
    loop {
        let permit = tokio::select! {
            () = shutdown.cancelled() => break,
            permit = permits.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
        };
        let stream = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(e) => {
                    tracing::warn!(error.message = %e, "failed to accept a connection");
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    continue;
                }
            },
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error.message = %e, "failed to set TCP_NODELAY");
        }
        let service = TowerToHyperService::new(router.clone());
        let shutdown = shutdown.clone();
        connections.spawn(async move {
            // Held until the connection closes: the connection cap.
            let _permit = permit;
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            let result = tokio::select! {
                result = connection.as_mut() => result,
                () = shutdown.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = result {
                tracing::debug!(error.message = %e, "connection closed with an error");
            }
        });
    }
    connections.close();
    connections.wait().await;
    Ok(())
}
