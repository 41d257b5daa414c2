//! Wakes the SSE streams of `GET /api/jobs/{id}/events` when a job's trace grows.
//!
//! One `LISTEN relay_trace` connection per gateway process, started with the first stream and
//! fanned out through a broadcast channel, however many clients watch: a connection per client
//! would exhaust Postgres' connection slots. The worker writing the trace may be another process;
//! the notification crosses. Notifications can be lost (a reconnect, a lagging receiver), so each
//! stream also polls every [`POLL_INTERVAL`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use relay_store::PgPool;
use relay_store::trace::TraceNotifications;
use tokio::sync::{Semaphore, broadcast};

/// How often a stream looks for new events without a notification.
pub const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// Streams one gateway process serves at once; more are answered 503.
pub const MAX_STREAMS: usize = 256;
/// Job ids the broadcast keeps for slow streams (a lagging one just reads its job again).
const FANOUT_CAPACITY: usize = 1024;
/// Wait before reconnecting a lost LISTEN connection.
const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// The process's trace notifications. Cheap to clone.
#[derive(Clone)]
pub struct TraceFeed {
    pool: PgPool,
    sender: broadcast::Sender<i64>,
    started: Arc<AtomicBool>,
    streams: Arc<Semaphore>,
}

impl TraceFeed {
    pub fn new(pool: PgPool) -> TraceFeed {
        TraceFeed {
            pool,
            sender: broadcast::channel(FANOUT_CAPACITY).0,
            started: Arc::new(AtomicBool::new(false)),
            streams: Arc::new(Semaphore::new(MAX_STREAMS)),
        }
    }

    /// A slot for one stream, or `None` when [`MAX_STREAMS`] are open.
    pub fn admit(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        self.streams.clone().try_acquire_owned().ok()
    }

    /// Job ids whose trace changed from now on (starts the listener on first use).
    pub fn subscribe(&self) -> broadcast::Receiver<i64> {
        let receiver = self.sender.subscribe();
        if !self.started.swap(true, Ordering::AcqRel) {
            tokio::spawn(listen(self.pool.clone(), self.sender.clone()));
        }
        receiver
    }
}

async fn listen(pool: PgPool, sender: broadcast::Sender<i64>) {
    loop {
        match TraceNotifications::connect(&pool).await {
            Ok(mut notifications) => loop {
                match notifications.recv().await {
                    Ok(Some(job_id)) => {
                        // No receiver is fine: nobody watches right now.
                        let _ = sender.send(job_id);
                    }
                    Ok(None) => {}
                    Err(error) => {
                        tracing::warn!(error.message = %error, "trace listener lost; reconnecting");
                        break;
                    }
                }
            },
            Err(error) => {
                tracing::warn!(error.message = %error, "trace listener could not connect");
            }
        }
        tokio::time::sleep(RECONNECT_DELAY).await;
    }
}
