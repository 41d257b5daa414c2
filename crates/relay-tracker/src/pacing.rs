//! Write pacing: a token bucket per tracker installation, so a busy worker never trips GitHub's
//! secondary rate limits (which punish bursts of content creation) or GitLab's note limits.
//! Reads are never paced.
//!
//! The bucket reserves: a write takes its token at once (the balance may go negative) and waits
//! until the balance it left behind is paid back. Concurrent writers therefore queue in arrival
//! order without polling, and the achieved rate is exact. Time is `tokio::time::Instant`, so tests
//! drive it with a paused clock instead of sleeping.

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

/// How fast writes may go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WritePacing {
    /// Sustained writes per second; 0 (or less) disables pacing.
    pub rate_per_sec: f64,
    /// Writes allowed back to back from a rested bucket.
    pub burst: u32,
}

impl WritePacing {
    /// No pacing at all.
    pub const OFF: WritePacing = WritePacing {
        rate_per_sec: 0.0,
        burst: 1,
    };

    fn enabled(&self) -> bool {
        self.rate_per_sec > 0.0 && self.rate_per_sec.is_finite()
    }
}

/// Which bucket a write draws from: the tracker's token, or one GitHub App installation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum PaceKey {
    Token,
    Installation(i64),
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl Bucket {
    /// Takes one token at `now`; returns how long the caller must wait before writing.
    fn reserve(&mut self, now: Instant, pacing: WritePacing) -> Duration {
        let burst = f64::from(pacing.burst.max(1));
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * pacing.rate_per_sec).min(burst);
        self.updated = now;
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / pacing.rate_per_sec)
        }
    }
}

/// The buckets of one tracker client.
#[derive(Debug)]
pub(crate) struct Pacer {
    pacing: WritePacing,
    buckets: Mutex<HashMap<PaceKey, Bucket>>,
}

impl Pacer {
    pub(crate) fn new(pacing: WritePacing) -> Pacer {
        Pacer {
            pacing,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Waits until one more write may go out on `key`.
    pub(crate) async fn acquire(&self, key: PaceKey) {
        if !self.pacing.enabled() {
            return;
        }
        let wait = {
            let now = Instant::now();
            let mut buckets = self.buckets.lock().await;
            let bucket = buckets.entry(key).or_insert_with(|| Bucket {
                tokens: f64::from(self.pacing.burst.max(1)),
                updated: now,
            });
            bucket.reserve(now, self.pacing)
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE_PER_SEC: WritePacing = WritePacing {
        rate_per_sec: 1.0,
        burst: 5,
    };

    #[tokio::test(start_paused = true)]
    async fn burst_then_rate() {
        let pacer = Pacer::new(ONE_PER_SEC);
        let start = Instant::now();
        for _ in 0..5 {
            pacer.acquire(PaceKey::Token).await;
        }
        assert_eq!(
            start.elapsed(),
            Duration::ZERO,
            "the burst goes out at once"
        );
        for _ in 0..10 {
            pacer.acquire(PaceKey::Token).await;
        }
        // 10 writes past the burst at 1/s: exactly 10 s of (virtual) time.
        assert_eq!(start.elapsed().as_secs(), 10);
    }

    #[tokio::test(start_paused = true)]
    async fn installations_have_their_own_buckets() {
        let pacer = Pacer::new(ONE_PER_SEC);
        let start = Instant::now();
        for _ in 0..5 {
            pacer.acquire(PaceKey::Installation(1)).await;
            pacer.acquire(PaceKey::Installation(2)).await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO);
        pacer.acquire(PaceKey::Installation(1)).await;
        assert_eq!(start.elapsed().as_secs(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_writers_share_the_rate() {
        let pacer = std::sync::Arc::new(Pacer::new(WritePacing {
            rate_per_sec: 50.0,
            burst: 1,
        }));
        let start = Instant::now();
        let tasks: Vec<_> = (0..101)
            .map(|_| {
                let pacer = pacer.clone();
                tokio::spawn(async move { pacer.acquire(PaceKey::Token).await })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
        // First write free, then 100 at 50/s.
        assert_eq!(start.elapsed().as_millis(), 2000);
    }

    #[tokio::test(start_paused = true)]
    async fn a_rested_bucket_refills_to_the_burst_only() {
        let pacer = Pacer::new(ONE_PER_SEC);
        pacer.acquire(PaceKey::Token).await;
        tokio::time::advance(Duration::from_secs(3600)).await;
        let start = Instant::now();
        for _ in 0..6 {
            pacer.acquire(PaceKey::Token).await;
        }
        assert_eq!(start.elapsed().as_secs(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn off_never_waits() {
        let pacer = Pacer::new(WritePacing::OFF);
        let start = Instant::now();
        for _ in 0..1000 {
            pacer.acquire(PaceKey::Token).await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO);
    }
}
