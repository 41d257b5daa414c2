//! Slow-client attacks against a running gateway, with probes that show whether it still answers.
//!
//! Attackers open `--sockets` connections spread over `--sources` loopback source addresses
//! (127.0.0.2, 127.0.0.3, …: each one "client" to the gateway) and post to `/webhooks/github`:
//! - `slow-body`: headers announcing a 64 KiB body, then one byte per second per socket;
//! - `big-body`: headers announcing 9 MiB, then 9 MiB minus one byte as fast as the gateway takes
//!   it, then nothing (the body never finishes);
//! - `big-chunked`: a chunked body without a length, 960 KiB (under the default 1 MiB limit) sent
//!   as fast as the gateway takes it, then nothing: what the body budget is for.
//!
//! A socket the gateway closes is reopened, so the pressure lasts the whole run. Meanwhile, once
//! per second, a probe from 127.0.0.1 asks `GET /healthz` and posts a signed GitHub `ping`
//! (fresh connections, as a tracker's delivery would be). At the end it prints how many probes
//! were answered, the slowest answer, and the bytes per second the attack sent.
//!
//! Loopback only (it refuses any other target). Used by `scripts/bench-slowloris.sh`, which
//! starts `relay gateway` and samples its RSS:
//! `cargo run -p relay-gateway --example slowloris -- --target 127.0.0.1:8080 --mode slow-body \
//!      --sockets 1100 --sources 4 --seconds 30 --secret S`

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// The announced size of a big body (just under the old 10 MiB default limit).
const BIG_BODY: usize = 9 * 1024 * 1024;
/// What a chunked attacker sends before it stalls: under the default body limit.
const CHUNKED_BODY: usize = 960 * 1024;
/// The announced size of a slow body.
const SLOW_BODY: usize = 64 * 1024;
/// How long one probe may take before it counts as unanswered.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// Pause before reopening a socket the gateway closed.
const REOPEN_PAUSE: Duration = Duration::from_millis(200);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    SlowBody,
    BigBody,
    BigChunked,
}

#[derive(Debug, Clone)]
struct Args {
    target: SocketAddr,
    mode: Mode,
    sockets: usize,
    sources: u8,
    seconds: u64,
    secret: String,
}

#[derive(Default)]
struct Counters {
    bytes_sent: AtomicU64,
    opened: AtomicU64,
    closed_by_server: AtomicU64,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    let counters = Arc::new(Counters::default());
    let deadline = Instant::now() + Duration::from_secs(args.seconds);
    for n in 0..args.sockets {
        let source = Ipv4Addr::new(127, 0, 0, 2 + (n % usize::from(args.sources)) as u8);
        tokio::spawn(attacker(args.clone(), source, counters.clone(), deadline));
    }
    let started = Instant::now();
    // Probes start on a fixed schedule, each on its own task: an unanswered one does not delay
    // the next.
    let mut probes = tokio::task::JoinSet::new();
    let mut n = 0u64;
    while Instant::now() < deadline {
        let request = b"GET /healthz HTTP/1.1\r\nhost: relay\r\nconnection: close\r\n\r\n";
        probes.spawn(async move { (Kind::Health, probe(args.target, request.to_vec()).await) });
        let ping = signed_ping(&args.secret, n);
        probes.spawn(async move { (Kind::Webhook, probe(args.target, ping).await) });
        n += 1;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let mut health = Probes::default();
    let mut webhook = Probes::default();
    while let Some(joined) = probes.join_next().await {
        let (kind, outcome) = joined?;
        match kind {
            Kind::Health => health.record(outcome),
            Kind::Webhook => webhook.record(outcome),
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let sent = counters.bytes_sent.load(Ordering::Relaxed);
    println!(
        "mode={:?} sockets={} sources={} seconds={:.0}",
        args.mode, args.sockets, args.sources, elapsed
    );
    println!(
        "attack: {} bytes sent ({:.0} B/s), {} connections opened, {} closed by the gateway",
        sent,
        sent as f64 / elapsed,
        counters.opened.load(Ordering::Relaxed),
        counters.closed_by_server.load(Ordering::Relaxed)
    );
    health.print("healthz");
    webhook.print("signed webhook");
    Ok(())
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Health,
    Webhook,
}

#[derive(Default)]
struct Probes {
    answered: u32,
    unanswered: u32,
    slowest: Duration,
    statuses: std::collections::BTreeMap<String, u32>,
}

impl Probes {
    fn record(&mut self, outcome: Option<(String, Duration)>) {
        match outcome {
            Some((status, took)) => {
                self.answered += 1;
                self.slowest = self.slowest.max(took);
                *self.statuses.entry(status).or_default() += 1;
            }
            None => self.unanswered += 1,
        }
    }

    fn print(&self, what: &str) {
        println!(
            "{what}: {} answered, {} unanswered within {:?}, slowest {:?}, statuses {:?}",
            self.answered, self.unanswered, PROBE_TIMEOUT, self.slowest, self.statuses
        );
    }
}

/// Sends `request` on a fresh connection; the status code and how long the answer took.
async fn probe(target: SocketAddr, request: Vec<u8>) -> Option<(String, Duration)> {
    let started = Instant::now();
    let answer = tokio::time::timeout(PROBE_TIMEOUT, async {
        let mut stream = TcpStream::connect(target).await.ok()?;
        stream.write_all(&request).await.ok()?;
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.ok()?;
        Some(String::from_utf8_lossy(&head[9..12]).into_owned())
    })
    .await
    .ok()
    .flatten()?;
    Some((answer, started.elapsed()))
}

fn signed_ping(secret: &str, n: u64) -> Vec<u8> {
    let body = format!(
        r#"{{"zen":"Keep it logically awesome.","hook_id":{n},"hook":{{"type":"Repository","id":{n}}},"repository":{{"id":1,"full_name":"o/r"}},"sender":{{"login":"octocat","type":"User"}}}}"#
    );
    let signature = relay_gateway::providers::github::sign(body.as_bytes(), secret.as_bytes());
    let mut request = format!(
        "POST /webhooks/github HTTP/1.1\r\nhost: relay\r\nconnection: close\r\n\
         content-type: application/json\r\nx-github-event: ping\r\n\
         x-github-delivery: slowloris-probe-{n}-{}\r\nx-hub-signature-256: {signature}\r\n\
         content-length: {}\r\n\r\n",
        std::process::id(),
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body.as_bytes());
    request
}

/// One attacking socket, reopened whenever the gateway closes it, until `deadline`.
async fn attacker(args: Args, source: Ipv4Addr, counters: Arc<Counters>, deadline: Instant) {
    while Instant::now() < deadline {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if let Ok(Err(_)) =
            tokio::time::timeout(remaining, attack_once(&args, source, &counters)).await
        {
            counters.closed_by_server.fetch_add(1, Ordering::Relaxed);
        }
        tokio::time::sleep(REOPEN_PAUSE).await;
    }
}

async fn attack_once(args: &Args, source: Ipv4Addr, counters: &Counters) -> std::io::Result<()> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(IpAddr::V4(source), 0))?;
    let mut stream = socket.connect(args.target).await?;
    counters.opened.fetch_add(1, Ordering::Relaxed);
    // From here on an error means the gateway closed (or refused) the connection.
    let framing = match args.mode {
        Mode::SlowBody => format!("content-length: {SLOW_BODY}"),
        Mode::BigBody => format!("content-length: {BIG_BODY}"),
        Mode::BigChunked => "transfer-encoding: chunked".to_owned(),
    };
    let head = format!(
        "POST /webhooks/github HTTP/1.1\r\nhost: relay\r\ncontent-type: application/json\r\n\
         x-github-event: issues\r\nx-github-delivery: attack\r\n{framing}\r\n\r\n"
    );
    send(&mut stream, head.as_bytes(), counters).await?;
    let chunk = vec![b' '; 64 * 1024];
    match args.mode {
        Mode::SlowBody => {
            for _ in 0..SLOW_BODY - 1 {
                send(&mut stream, b" ", counters).await?;
                if closed(&mut stream, Duration::from_secs(1)).await {
                    return Err(std::io::ErrorKind::ConnectionReset.into());
                }
            }
        }
        Mode::BigBody => {
            for _ in 0..BIG_BODY / chunk.len() - 1 {
                send(&mut stream, &chunk, counters).await?;
            }
        }
        Mode::BigChunked => {
            for _ in 0..CHUNKED_BODY / chunk.len() {
                let size = format!("{:x}\r\n", chunk.len());
                send(&mut stream, size.as_bytes(), counters).await?;
                send(&mut stream, &chunk, counters).await?;
                send(&mut stream, b"\r\n", counters).await?;
            }
        }
    }
    // Unfinished: hold the socket until the gateway gives up on it.
    while !closed(&mut stream, Duration::from_secs(1)).await {}
    Err(std::io::ErrorKind::ConnectionReset.into())
}

async fn send(stream: &mut TcpStream, bytes: &[u8], counters: &Counters) -> std::io::Result<()> {
    stream.write_all(bytes).await?;
    counters
        .bytes_sent
        .fetch_add(bytes.len() as u64, Ordering::Relaxed);
    Ok(())
}

/// Waits up to `wait` for the gateway to answer or close; true if it did.
async fn closed(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut buffer = [0u8; 1024];
    matches!(
        tokio::time::timeout(wait, stream.read(&mut buffer)).await,
        Ok(Ok(_) | Err(_))
    )
}

fn parse_args() -> anyhow::Result<Args> {
    let mut args = Args {
        target: "127.0.0.1:8080".parse()?,
        mode: Mode::SlowBody,
        sockets: 64,
        sources: 1,
        seconds: 30,
        secret: String::new(),
    };
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let value = given
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--target" => args.target = value.parse()?,
            "--mode" => {
                args.mode = match value.as_str() {
                    "slow-body" => Mode::SlowBody,
                    "big-body" => Mode::BigBody,
                    "big-chunked" => Mode::BigChunked,
                    other => bail!("unknown mode {other:?} (slow-body, big-body, big-chunked)"),
                }
            }
            "--sockets" => args.sockets = value.parse()?,
            "--sources" => args.sources = value.parse::<u8>()?.clamp(1, 250),
            "--seconds" => args.seconds = value.parse()?,
            "--secret" => args.secret = value,
            other => bail!("unknown flag {other}"),
        }
    }
    if !args.target.ip().is_loopback() {
        bail!("the target must be a loopback address");
    }
    Ok(args)
}
