//! The HTTP listener: one hyper HTTP/1.1 connection per accepted socket, with the limits a public
//! endpoint needs so that slow or many clients cannot starve it.
//!
//! - The accept loop never waits for a slot: it takes every connection the kernel queued and
//!   either serves it or answers 503 (`max_connections` open) or 429 (the peer already holds
//!   `max_connections_per_client`) and closes it. Holding sockets therefore starves no one but
//!   the client that holds them. A trusted proxy's connections are not capped per peer (its
//!   clients are, per request, in [`crate::limits::admit`]).
//! - hyper closes a connection whose request head does not arrive within
//!   `header_read_timeout_ms`, which also bounds how long an idle keep-alive connection may stay
//!   open; its read buffer is capped at [`MAX_READ_BUFFER`], so headers cannot be used to hold
//!   memory either.
//! - Each request has a total deadline and its body is charged against the body budget (layers
//!   in [`crate::app`], see [`crate::limits`]). Responses are not limited, so a long SSE stream
//!   keeps working; it ends on shutdown.
//! - On shutdown every connection finishes its in-flight request; after `shutdown_grace_secs`
//!   the ones still open (a slow client, a client that stopped reading) are closed.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt as _;

use crate::limits::Refusal;
use crate::limits::client::{ClientCounts, ClientSlot, PeerAddr, TrustedProxies};

/// Pause after an accept error (e.g. out of file descriptors) before accepting again, so the loop
/// does not spin while the condition lasts.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_secs(1);
/// hyper's read buffer per connection (its default is about 400 KiB): a request head must fit.
pub const MAX_READ_BUFFER: usize = 64 * 1024;

/// Limits of one listener (from `[server]`).
#[derive(Debug, Clone)]
pub struct ListenerLimits {
    pub header_read_timeout: Duration,
    pub max_connections: usize,
    /// Connections per peer address (shared with the per-request cap of proxied clients).
    pub clients: ClientCounts,
    pub trusted_proxies: TrustedProxies,
    pub shutdown_grace: Duration,
}

/// Open connections of one listener.
#[derive(Debug, Default)]
struct Open(AtomicUsize);

/// One open connection; gives its place back on drop.
struct OpenSlot(Arc<Open>);

impl Drop for OpenSlot {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Open {
    fn admit(self: &Arc<Self>, max: usize) -> Option<OpenSlot> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < max).then_some(open + 1)
            })
            .ok()
            .map(|_| OpenSlot(self.clone()))
    }
}

/// Serves `router` on `listener` until `shutdown` is cancelled, then lets every open connection
/// finish its in-flight request for up to the grace period, and closes the rest.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ListenerLimits,
    shutdown: CancellationToken,
) -> io::Result<()> {
    let open = Arc::new(Open::default());
    let connections = TaskTracker::new();
    // Cancelled when the grace period is over: the connections still open are dropped.
    let force_close = CancellationToken::new();
    loop {
        let (stream, peer) = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error.message = %e, "failed to accept a connection");
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    continue;
                }
            },
        };
        let slots = match admit(&open, &limits, peer) {
            Ok(slots) => slots,
            Err(refusal) => {
                turn_away(&stream, refusal, peer);
                continue;
            }
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error.message = %e, "failed to set TCP_NODELAY");
        }
        connections.spawn(connection(
            stream,
            peer,
            router.clone(),
            limits.header_read_timeout,
            slots,
            shutdown.clone(),
            force_close.clone(),
        ));
    }
    connections.close();
    if tokio::time::timeout(limits.shutdown_grace, connections.wait())
        .await
        .is_err()
    {
        tracing::info!(
            connections = connections.len(),
            "shutdown grace over: closing the connections still open"
        );
        force_close.cancel();
        connections.wait().await;
    }
    Ok(())
}

/// The places a new connection takes, or why it gets none.
fn admit(
    open: &Arc<Open>,
    limits: &ListenerLimits,
    peer: SocketAddr,
) -> Result<(OpenSlot, Option<ClientSlot>), Refusal> {
    let client = if limits.trusted_proxies.contains(peer.ip()) {
        None
    } else {
        Some(
            limits
                .clients
                .admit(peer.ip())
                .ok_or(Refusal::ClientConnections)?,
        )
    };
    let open = open
        .admit(limits.max_connections.max(1))
        .ok_or(Refusal::Connections)?;
    Ok((open, client))
}

/// Answers a connection that will not be served and drops it, without waiting: the answer is
/// written only if the socket takes it at once.
fn turn_away(stream: &TcpStream, refusal: Refusal, peer: SocketAddr) {
    refusal.count();
    tracing::debug!(client = %peer.ip(), reason = refusal.as_str(), "connection refused");
    let _ = stream.try_write(&refusal.raw_response());
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    header_read_timeout: Duration,
    slots: (OpenSlot, Option<ClientSlot>),
    shutdown: CancellationToken,
    force_close: CancellationToken,
) {
    // Held until the connection closes: the connection caps.
    let _slots = slots;
    let service = router.map_request(move |mut request: http::Request<hyper::body::Incoming>| {
        request.extensions_mut().insert(PeerAddr(peer));
        request
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_read_timeout)
        .max_buf_size(MAX_READ_BUFFER);
    let connection =
        builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
    tokio::pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = shutdown.cancelled() => {
            connection.as_mut().graceful_shutdown();
            tokio::select! {
                result = connection.as_mut() => result,
                () = force_close.cancelled() => return,
            }
        }
    };
    if let Err(e) = result {
        tracing::debug!(error.message = %e, "connection closed with an error");
    }
}
