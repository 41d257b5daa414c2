//! Who the client is, and how many connections or requests each client holds.
//!
//! The client is the TCP peer, except when the peer is one of `[server] trusted_proxies`: then it
//! is the address the proxy put in `X-Forwarded-For` (the rightmost entry that is not itself a
//! trusted proxy, so a client cannot choose its own address by sending the header). An untrusted
//! peer's `X-Forwarded-For` is ignored.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use ipnet::IpNet;
use serde::{Deserialize, Deserializer};

/// The TCP peer of the connection a request came on (set by the listener).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerAddr(pub SocketAddr);

/// The client a request is attributed to (set by [`super::admit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr {
    pub ip: IpAddr,
    /// Whether `ip` came from a trusted proxy's forwarded header rather than the TCP peer.
    pub forwarded: bool,
}

impl fmt::Display for ClientAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.forwarded {
            write!(f, "{} (forwarded)", self.ip)
        } else {
            write!(f, "{}", self.ip)
        }
    }
}

/// `[server] trusted_proxies`: addresses or networks (`10.0.0.0/8`, `::1`) of reverse proxies
/// whose `X-Forwarded-For` names the real client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = canonical(ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The client behind `peer`: the forwarded one when `peer` is trusted and says so.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> ClientAddr {
        let peer = canonical(peer);
        if !self.contains(peer) {
            return ClientAddr {
                ip: peer,
                forwarded: false,
            };
        }
        // Each proxy appends the address it received from; walk from the right past our own
        // proxies. Several header lines count as one list, in order.
        let hops: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        for hop in hops.iter().rev() {
            match parse_hop(hop) {
                Some(ip) if self.contains(ip) => continue,
                Some(ip) => {
                    return ClientAddr {
                        ip: canonical(ip),
                        forwarded: true,
                    };
                }
                // Garbage from beyond our proxies: the last trusted hop is all we know.
                None => break,
            }
        }
        ClientAddr {
            ip: peer,
            forwarded: false,
        }
    }
}

impl FromStr for TrustedProxies {
    type Err = String;

    /// One entry (an address or a network).
    fn from_str(entry: &str) -> Result<Self, Self::Err> {
        let entry = entry.trim();
        let net = entry
            .parse::<IpNet>()
            .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
            .map_err(|_| format!("{entry:?} is not an IP address or network (CIDR)"))?;
        Ok(TrustedProxies(vec![net]))
    }
}

impl<'de> Deserialize<'de> for TrustedProxies {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let entries = Vec::<String>::deserialize(deserializer)?;
        let mut nets = Vec::with_capacity(entries.len());
        for entry in entries {
            let parsed: TrustedProxies = entry.parse().map_err(serde::de::Error::custom)?;
            nets.extend(parsed.0);
        }
        Ok(TrustedProxies(nets))
    }
}

/// What a gateway that trusts no proxy says at start-up: each TCP peer is one client, which is
/// right only when no reverse proxy stands in front of it.
pub const NO_TRUSTED_PROXY_WARNING: &str = "[server] trusted_proxies is empty: each TCP peer is one \
     client. Behind a reverse proxy every client then has the proxy's address and shares one \
     connection cap and one sign-in throttle: one client's wrong tokens lock every operator out of \
     /ui and /api for [ui] signin_failure_window_secs. List the proxy in trusted_proxies (and keep \
     the status page on admin_listen, where only operators reach it)";

/// Whether a request carries a proxy's forwarding header (`X-Forwarded-For`, `Forwarded`): from a
/// peer that is not trusted, the sign of a proxy missing from `trusted_proxies`.
pub fn names_a_forwarded_client(headers: &HeaderMap) -> bool {
    headers.contains_key("x-forwarded-for") || headers.contains_key(axum::http::header::FORWARDED)
}

/// `for=` of a forwarded hop: an address, maybe with a port or in brackets.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim().trim_matches('"');
    hop.parse::<IpAddr>()
        .ok()
        .or_else(|| hop.parse::<SocketAddr>().ok().map(|a| a.ip()))
        .or_else(|| {
            hop.strip_prefix('[')
                .and_then(|rest| rest.split(']').next())
                .and_then(|ip| ip.parse().ok())
        })
}

/// An IPv4 peer on a dual-stack socket arrives as `::ffff:a.b.c.d`: one client, one key.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

/// Connections (or proxied requests) held per client, with a cap. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ClientCounts {
    cap: usize,
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One connection or request a client holds; released on drop.
#[derive(Debug)]
pub struct ClientSlot {
    ip: IpAddr,
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl ClientCounts {
    pub fn new(cap: usize) -> ClientCounts {
        ClientCounts {
            cap: cap.max(1),
            held: Arc::default(),
        }
    }

    /// A slot for `ip`, or `None` when it already holds the cap. The map has an entry only per
    /// client holding a slot, so it is bounded by what is open.
    pub fn admit(&self, ip: IpAddr) -> Option<ClientSlot> {
        let ip = canonical(ip);
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let count = held.entry(ip).or_insert(0);
        if *count >= self.cap {
            return None;
        }
        *count += 1;
        Some(ClientSlot {
            ip,
            held: self.held.clone(),
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = held.get_mut(&self.ip) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.ip);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn proxies(entries: &[&str]) -> TrustedProxies {
        let json = serde_json::to_value(entries).unwrap();
        serde_json::from_value(json).unwrap()
    }

    fn forwarded(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-for", HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn the_client_is_forwarded_only_by_a_trusted_proxy() {
        let trusted = proxies(&["10.0.0.0/8", "::1"]);
        let proxy: IpAddr = "10.1.2.3".parse().unwrap();
        let outsider: IpAddr = "203.0.113.9".parse().unwrap();
        let check = |peer: IpAddr, header: &str, expected: &str, was_forwarded: bool| {
            let client = trusted.client(peer, &forwarded(header));
            assert_eq!(client.ip.to_string(), expected, "{peer} {header}");
            assert_eq!(client.forwarded, was_forwarded, "{peer} {header}");
        };
        check(proxy, "198.51.100.7", "198.51.100.7", true);
        // A client's own claim left of the real hop is ignored.
        check(proxy, "1.2.3.4, 198.51.100.7", "198.51.100.7", true);
        // Our own proxies in the chain are skipped.
        check(proxy, "198.51.100.7, 10.9.9.9", "198.51.100.7", true);
        check(proxy, "[2001:db8::1]:4711", "2001:db8::1", true);
        // No header, or garbage: the proxy itself.
        check(proxy, "", "10.1.2.3", false);
        check(proxy, "unknown", "10.1.2.3", false);
        // An untrusted peer cannot claim another address.
        check(outsider, "198.51.100.7", "203.0.113.9", false);
        // IPv4-mapped peers count as IPv4.
        check(
            "::ffff:10.0.0.1".parse().unwrap(),
            "192.0.2.1",
            "192.0.2.1",
            true,
        );
    }

    #[test]
    fn bad_entries_are_named() {
        let error = serde_json::from_value::<TrustedProxies>(serde_json::json!(["10.0.0.0/33"]))
            .unwrap_err()
            .to_string();
        assert!(error.contains("10.0.0.0/33"), "{error}");
        assert!(proxies(&["127.0.0.1"]).contains("127.0.0.1".parse().unwrap()));
        assert!(proxies(&[]).is_empty());
    }

    #[test]
    fn slots_are_capped_per_client_and_released() {
        let counts = ClientCounts::new(2);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        let first = counts.admit(a).unwrap();
        let _second = counts.admit(a).unwrap();
        assert!(counts.admit(a).is_none());
        assert!(counts.admit(b).is_some());
        drop(first);
        assert!(counts.admit(a).is_some());
        assert!(counts.held.lock().unwrap().len() <= 2);
    }
}
