//! Failed sign-ins per client: after `[ui] signin_max_failures` wrong tokens within
//! `[ui] signin_failure_window_secs`, the client's attempts (the sign-in form and bearer tokens
//! on `/api`, which check the same token) are refused with 429 until its window ends, without
//! looking at the token. Kept per gateway process, in a bounded map.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Clients tracked at once; past it, expired windows are dropped, then the oldest.
const MAX_TRACKED_CLIENTS: usize = 10_000;

/// The failed attempts of each client in its current window.
#[derive(Debug)]
pub struct SigninThrottle {
    max_failures: u32,
    window: Duration,
    clients: Mutex<HashMap<IpAddr, Failures>>,
}

#[derive(Debug, Clone, Copy)]
struct Failures {
    since: Instant,
    count: u32,
}

impl SigninThrottle {
    pub fn new(max_failures: u32, window: Duration) -> SigninThrottle {
        SigninThrottle {
            max_failures: max_failures.max(1),
            window,
            clients: Mutex::default(),
        }
    }

    /// Whether `client` may try a token now.
    pub fn allows(&self, client: Option<IpAddr>) -> bool {
        let key = key(client);
        let clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        match clients.get(&key) {
            Some(failures) => {
                failures.since.elapsed() >= self.window || failures.count < self.max_failures
            }
            None => true,
        }
    }

    /// Notes a wrong token from `client`.
    pub fn failed(&self, client: Option<IpAddr>) {
        let key = key(client);
        let now = Instant::now();
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if clients.len() >= MAX_TRACKED_CLIENTS && !clients.contains_key(&key) {
            clients.retain(|_, f| now.duration_since(f.since) < self.window);
            if clients.len() >= MAX_TRACKED_CLIENTS
                && let Some(oldest) = clients.iter().min_by_key(|(_, f)| f.since).map(|(k, _)| *k)
            {
                clients.remove(&oldest);
            }
        }
        let failures = clients.entry(key).or_insert(Failures {
            since: now,
            count: 0,
        });
        if now.duration_since(failures.since) >= self.window {
            *failures = Failures {
                since: now,
                count: 0,
            };
        }
        failures.count = failures.count.saturating_add(1);
    }

    /// A right token: the client's failures are forgotten.
    pub fn succeeded(&self, client: Option<IpAddr>) {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        clients.remove(&key(client));
    }
}

/// One key per client; an IPv6 host usually has a whole /64, so that is one client. Requests
/// with no known client (not from a listener) share one key. (IPv4-mapped peers arrive
/// as IPv4: see [`super::client`].)
fn key(client: Option<IpAddr>) -> IpAddr {
    match client {
        Some(IpAddr::V6(v6)) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !u128::from(u64::MAX))),
        Some(v4) => v4,
        None => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_is_refused_after_its_failures_until_the_window_ends() {
        let throttle = SigninThrottle::new(3, Duration::from_secs(60));
        let attacker = Some("192.0.2.1".parse().unwrap());
        let neighbour = Some("192.0.2.2".parse().unwrap());
        for _ in 0..3 {
            assert!(throttle.allows(attacker));
            throttle.failed(attacker);
        }
        assert!(!throttle.allows(attacker));
        assert!(throttle.allows(neighbour));

        let expired = SigninThrottle::new(1, Duration::ZERO);
        expired.failed(attacker);
        assert!(expired.allows(attacker));
    }

    #[test]
    fn an_ipv6_host_is_its_slash_64() {
        let throttle = SigninThrottle::new(1, Duration::from_secs(60));
        throttle.failed(Some("2001:db8:1:2::1".parse().unwrap()));
        assert!(!throttle.allows(Some("2001:db8:1:2::ffff".parse().unwrap())));
        assert!(throttle.allows(Some("2001:db8:1:3::1".parse().unwrap())));
    }

    #[test]
    fn success_forgets_the_failures() {
        let throttle = SigninThrottle::new(1, Duration::from_secs(60));
        let client = Some("192.0.2.1".parse().unwrap());
        throttle.failed(client);
        assert!(!throttle.allows(client));
        throttle.succeeded(client);
        assert!(throttle.allows(client));
    }
}
