//! Request bodies are read into one buffer per request, charged against a process-wide budget.
//!
//! Each body frame is copied into a buffer sized from `Content-Length` (or grown in steps) and
//! dropped at once. Keeping the frames instead would pin hyper's read buffer behind each one: a
//! body trickled one byte per read costs kilobytes per byte that way, which a budget counting body
//! bytes would never see. What is charged is the buffer's capacity, i.e. the memory really held.
//!
//! The last quarter of the budget is kept for small bodies (at most [`SMALL_BODY`]; every recorded
//! issue and comment delivery is far below it), so bodies near the limit, such as an attacker's,
//! cannot take the whole budget from ordinary deliveries.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use relay_telemetry::metrics::HTTP_BODY_BUFFERED_BYTES;

use super::{Refusal, refuse};

/// A body that stays at or below this size may use the budget's reserve.
pub const SMALL_BODY: usize = 64 * 1024;
/// The smallest step a buffer grows by when the body's length is not declared.
const MIN_GROWTH: usize = 16 * 1024;
/// The share of the budget kept for small bodies: one part in this many.
const RESERVE_PARTS: usize = 4;

/// Bytes buffered across in-flight requests, with a cap. Cheap to clone.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    total: usize,
    used: Arc<AtomicUsize>,
}

/// Bytes one request holds from the budget; given back on drop.
#[derive(Debug)]
pub struct Charge {
    bytes: usize,
    used: Arc<AtomicUsize>,
}

impl BodyBudget {
    pub fn new(total: usize) -> BodyBudget {
        BodyBudget {
            total,
            used: Arc::default(),
        }
    }

    /// Bytes currently charged.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// An empty charge to grow.
    pub fn charge(&self) -> Charge {
        Charge {
            bytes: 0,
            used: self.used.clone(),
        }
    }

    /// Adds `more` bytes to `charge` if the budget has them; `body_capacity` is what the
    /// request will hold in all (it decides whether the reserve is open to it).
    fn grow(&self, charge: &mut Charge, more: usize, body_capacity: usize) -> bool {
        let cap = if body_capacity <= SMALL_BODY {
            self.total
        } else {
            self.total - self.total / RESERVE_PARTS
        };
        let taken = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(more).filter(|after| *after <= cap)
            })
            .is_ok();
        if taken {
            charge.bytes += more;
            metrics::gauge!(HTTP_BODY_BUFFERED_BYTES).increment(more as f64);
        }
        taken
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        if self.bytes > 0 {
            self.used.fetch_sub(self.bytes, Ordering::AcqRel);
            metrics::gauge!(HTTP_BODY_BUFFERED_BYTES).decrement(self.bytes as f64);
        }
    }
}

/// What [`buffer_body`] needs: the budget and the route's body limit.
#[derive(Debug, Clone)]
pub struct BodyLimit {
    pub budget: BodyBudget,
    pub limit: usize,
}

/// Reads the whole body within the route's limit and the budget, then passes the request on with
/// the buffered body. The charge is held until the response head is ready, i.e. while the
/// handler can still hold the bytes.
pub async fn buffer_body(
    State(limits): State<BodyLimit>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let expected = match declared {
        Some(length) if length > limits.limit as u64 => return refuse(Refusal::BodyLimit),
        Some(length) => length as usize,
        None => limits.limit,
    };
    let mut charge = limits.budget.charge();
    let mut buffer: Vec<u8> = Vec::new();
    let mut frames = body.into_data_stream();
    while let Some(frame) = frames.next().await {
        let frame = match frame {
            Ok(frame) => frame,
            Err(error) => {
                tracing::debug!(error.message = %error, "request body failed");
                return refuse(Refusal::BodyFailed);
            }
        };
        let needed = buffer.len() + frame.len();
        if needed > limits.limit {
            return refuse(Refusal::BodyLimit);
        }
        if needed > buffer.capacity() {
            // The declared length in one step; otherwise doubling, from a useful minimum.
            let capacity = if declared.is_some() {
                expected.max(needed)
            } else {
                needed
                    .max(buffer.capacity() * 2)
                    .max(MIN_GROWTH)
                    .min(limits.limit)
            };
            if !limits
                .budget
                .grow(&mut charge, capacity - buffer.capacity(), capacity)
            {
                return refuse(Refusal::BodyBudget);
            }
            buffer.reserve_exact(capacity - buffer.len());
        }
        buffer.extend_from_slice(&frame);
    }
    let request = Request::from_parts(parts, Body::from(Bytes::from(buffer)));
    let response = next.run(request).await;
    drop(charge);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_kept_for_small_bodies() {
        let budget = BodyBudget::new(400 * 1024);
        let mut big = budget.charge();
        // Large bodies get at most three quarters.
        assert!(budget.grow(&mut big, 300 * 1024, 1024 * 1024));
        assert!(!budget.grow(&mut big, 1, 1024 * 1024));
        // A small one still fits, up to the whole budget.
        let mut small = budget.charge();
        assert!(budget.grow(&mut small, SMALL_BODY, SMALL_BODY));
        assert!(!budget.grow(&mut small, 64 * 1024, SMALL_BODY));
        assert_eq!(budget.used(), 300 * 1024 + SMALL_BODY);
        drop(big);
        drop(small);
        assert_eq!(budget.used(), 0);
    }
}
