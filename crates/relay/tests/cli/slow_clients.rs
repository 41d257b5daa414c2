//! The real `relay gateway` under slow-client attacks (issue #33 §1), on 127.0.0.1: sockets
//! trickling one body byte per second, and unfinished bodies of about 9 MiB (declared, and
//! chunked without a length). Throughout, `/healthz` and a signed webhook sent from another
//! address are answered, and the process's RSS (read from /proc) stays within a generous bound of
//! a baseline taken in the same test. Then SIGTERM stops the gateway within its grace period
//! while an event stream and a slow body are open.
//!
//! The configurations use only keys the gateway had before the fix, so the same test can be run
//! against an older build: `RELAY_TEST_BIN=/path/to/relay cargo test -p relay --test cli slow_clients`.

use std::net::{IpAddr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const SECRET: &str = "slow-clients-test-secret";
const TOKEN: &str = "slow-clients-test-token-of-32-characters";
/// How long each attack lasts: past the default request deadline (10 s), so slow requests are
/// cut and reopened during it.
const ATTACK: Duration = Duration::from_secs(13);
/// A probe not answered within this counts as unanswered (a hang guard, far above a normal
/// answer; not a timing assertion).
const PROBE_GUARD: Duration = Duration::from_secs(10);
/// The bound on RSS growth during an attack. Before the fix the big-body attack below grew the
/// gateway by hundreds of MiB; after it, the body budget (64 MiB) and the connection buffers
/// bound it.
const RSS_GROWTH_BOUND_KIB: u64 = 160 * 1024;

struct Gateway {
    child: Child,
    origin: SocketAddr,
    url: String,
    database: String,
    base: String,
    _dir: tempfile::TempDir,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = Command::new("psql")
            .args([
                &self.base,
                "-qc",
                &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.database),
            ])
            .status();
    }
}

fn relay_bin() -> String {
    std::env::var("RELAY_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_relay").to_owned())
}

async fn start(name: &str, server: &str) -> Gateway {
    let base =
        std::env::var("DATABASE_URL").expect("DATABASE_URL must point at the test PostgreSQL");
    let database = format!("relay_{name}_{}", std::process::id());
    let (prefix, _) = base
        .rsplit_once('/')
        .expect("DATABASE_URL has a database name");
    let url = format!("{prefix}/{database}");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("relay.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\nlisten = \"127.0.0.1:{port}\"\nadmin_listen = \"off\"\n{server}\n[api]\ntoken = \"{TOKEN}\"\n\
             [repo]\ndata_dir = \"{data}\"\n[[trackers]]\nname = \"github\"\nprovider = \"github\"\n\
             base_url = \"http://127.0.0.1:9\"\ntoken = \"t\"\nwebhook_secret = \"{SECRET}\"\n\
             bot_username = \"relay-bot\"\n",
            data = dir.path().join("data").display()
        ),
    )
    .unwrap();
    let child = Command::new(relay_bin())
        .args(["--config", config.to_str().unwrap(), "gateway"])
        .env("DATABASE_URL", &url)
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("relay starts");
    let gateway = Gateway {
        child,
        origin: SocketAddr::from(([127, 0, 0, 1], port)),
        url,
        database,
        base,
        _dir: dir,
    };
    let started = Instant::now();
    while status(
        &exchange(
            gateway.origin,
            b"GET /readyz HTTP/1.1\r\nhost: relay\r\nconnection: close\r\n\r\n",
        )
        .await,
    ) != 200
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "relay never became ready"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    gateway
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

async fn exchange(target: SocketAddr, request: impl AsRef<[u8]>) -> String {
    let answer = tokio::time::timeout(PROBE_GUARD, async {
        let mut stream = TcpStream::connect(target).await.ok()?;
        stream.write_all(request.as_ref()).await.ok()?;
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        Some(answer)
    })
    .await;
    String::from_utf8_lossy(&answer.ok().flatten().unwrap_or_default()).into_owned()
}

fn status(answer: &str) -> u16 {
    answer.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn signed_ping(n: usize) -> Vec<u8> {
    let body = format!(
        r#"{{"zen":"Avoid administrative distraction.","hook_id":{n},"hook":{{"type":"Repository","id":{n}}},"repository":{{"id":1,"full_name":"o/r"}},"sender":{{"login":"octocat","type":"User"}}}}"#
    );
    let signature = relay_gateway::providers::github::sign(body.as_bytes(), SECRET.as_bytes());
    let mut request = format!(
        "POST /webhooks/github HTTP/1.1\r\nhost: relay\r\nconnection: close\r\ncontent-type: application/json\r\n\
         x-github-event: ping\r\nx-github-delivery: probe-{n}\r\nx-hub-signature-256: {signature}\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body.as_bytes());
    request
}

#[derive(Debug, Clone, Copy)]
enum Attack {
    /// One body byte per second.
    SlowBody,
    /// 9 MiB declared, all but a byte sent, then nothing.
    BigBody,
    /// Chunked, no length: a little under 1 MiB sent, then nothing.
    BigChunked,
}

/// One attacking socket from `source`, reopened whenever the gateway closes it, until `stop`.
async fn attacker(target: SocketAddr, source: IpAddr, attack: Attack, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        let _ = tokio::time::timeout(ATTACK, attack_once(target, source, attack, &stop)).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn attack_once(
    target: SocketAddr,
    source: IpAddr,
    attack: Attack,
    stop: &AtomicBool,
) -> std::io::Result<()> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(source, 0))?;
    let mut stream = socket.connect(target).await?;
    let framing = match attack {
        Attack::SlowBody => "content-length: 65536".to_owned(),
        Attack::BigBody => format!("content-length: {}", 9 * 1024 * 1024),
        Attack::BigChunked => "transfer-encoding: chunked".to_owned(),
    };
    let head = format!(
        "POST /webhooks/github HTTP/1.1\r\nhost: relay\r\ncontent-type: application/json\r\n\
         x-github-event: issues\r\nx-github-delivery: attack\r\n{framing}\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await?;
    let chunk = vec![b' '; 64 * 1024];
    match attack {
        Attack::SlowBody => {
            while !stop.load(Ordering::Relaxed) {
                stream.write_all(b" ").await?;
                if closed(&mut stream, Duration::from_secs(1)).await {
                    break;
                }
            }
        }
        Attack::BigBody => {
            for _ in 0..(9 * 16 - 1) {
                stream.write_all(&chunk).await?;
            }
        }
        Attack::BigChunked => {
            for _ in 0..15 {
                stream
                    .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                    .await?;
                stream.write_all(&chunk).await?;
                stream.write_all(b"\r\n").await?;
            }
        }
    }
    // Unfinished: hold the socket until the gateway gives up on it.
    while !stop.load(Ordering::Relaxed) && !closed(&mut stream, Duration::from_secs(1)).await {}
    Ok(())
}

async fn closed(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut buffer = [0u8; 512];
    matches!(
        tokio::time::timeout(wait, stream.read(&mut buffer)).await,
        Ok(Ok(_) | Err(_))
    )
}

/// Runs `attack` from `sources` × `sockets` for [`ATTACK`], probing from 127.0.0.1 twice a
/// second; returns the probes' statuses and the peak RSS growth in KiB.
async fn under_attack(
    gateway: &Gateway,
    attack: Attack,
    sources: u8,
    sockets: usize,
) -> (Vec<(u16, u16)>, u64) {
    let pid = gateway.child.id();
    // Warm the paths the probes take, then the baseline.
    let _ = exchange(gateway.origin, signed_ping(0)).await;
    let baseline = rss_kib(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let mut attackers = Vec::new();
    for n in 0..usize::from(sources) * sockets {
        let source = IpAddr::from([127, 0, 0, 2 + (n % usize::from(sources)) as u8]);
        attackers.push(tokio::spawn(attacker(
            gateway.origin,
            source,
            attack,
            stop.clone(),
        )));
    }
    let started = Instant::now();
    let mut probes = Vec::new();
    let mut peak = baseline;
    let mut n = 1;
    while started.elapsed() < ATTACK {
        let health = tokio::spawn(exchange(
            gateway.origin,
            b"GET /healthz HTTP/1.1\r\nhost: relay\r\nconnection: close\r\n\r\n",
        ));
        let webhook = tokio::spawn(exchange(gateway.origin, signed_ping(n)));
        probes.push((health, webhook));
        n += 1;
        for _ in 0..4 {
            peak = peak.max(rss_kib(pid));
            tokio::time::sleep(Duration::from_millis(125)).await;
        }
    }
    let mut statuses = Vec::new();
    for (health, webhook) in probes {
        statuses.push((
            status(&health.await.unwrap()),
            status(&webhook.await.unwrap()),
        ));
    }
    stop.store(true, Ordering::Relaxed);
    for attacker in attackers {
        let _ = attacker.await;
    }
    (statuses, peak.saturating_sub(baseline))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_big_bodies_starve_neither_the_listener_nor_its_memory() {
    // A connection cap small enough that the slow attack exceeds it (the default is 1024).
    let gateway = start("slow_clients", "max_connections = 100").await;
    for (attack, sources, sockets) in [
        (Attack::SlowBody, 2, 60),
        (Attack::BigBody, 4, 12),
        (Attack::BigChunked, 4, 12),
    ] {
        let (probes, growth_kib) = under_attack(&gateway, attack, sources, sockets).await;
        eprintln!(
            "{attack:?}: {} probes, RSS growth {} MiB",
            probes.len(),
            growth_kib / 1024
        );
        let unanswered: Vec<_> = probes
            .iter()
            .filter(|(h, w)| *h != 200 || *w != 200)
            .collect();
        assert!(
            unanswered.is_empty(),
            "{attack:?}: {} of {} probes (healthz, signed webhook) not answered 200: {unanswered:?}",
            unanswered.len(),
            probes.len()
        );
        assert!(
            growth_kib < RSS_GROWTH_BOUND_KIB,
            "{attack:?}: the gateway's RSS grew by {} MiB",
            growth_kib / 1024
        );
        // Let the gateway shed the attack before the next one.
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

#[tokio::test]
async fn sigterm_stops_the_gateway_whatever_streams_and_slow_bodies_are_open() {
    let mut gateway = start("sigterm_streams", "").await;
    let pool = sqlx::PgPool::connect(&gateway.url).await.unwrap();
    let job: i64 = sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, max_attempts, status) VALUES ('process_issue', '{}', 3, 'running') RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    pool.close().await;
    let mut stream = TcpStream::connect(gateway.origin).await.unwrap();
    stream
        .write_all(format!("GET /api/jobs/{job}/events HTTP/1.1\r\nhost: relay\r\nauthorization: Bearer {TOKEN}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let stop = Arc::new(AtomicBool::new(false));
    let slow = tokio::spawn(attacker(
        gateway.origin,
        IpAddr::from([127, 0, 0, 2]),
        Attack::SlowBody,
        stop.clone(),
    ));
    tokio::time::sleep(Duration::from_secs(1)).await;

    assert!(
        Command::new("kill")
            .args(["-TERM", &gateway.child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    // The default grace is 10 s; far more is a hang.
    let started = Instant::now();
    let exited = loop {
        if let Some(status) = gateway.child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(40) {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    stop.store(true, Ordering::Relaxed);
    let _ = slow.await;
    let status =
        exited.expect("relay gateway did not stop on SIGTERM with a stream and a slow body open");
    assert!(status.success(), "relay exited with {status}");
}
