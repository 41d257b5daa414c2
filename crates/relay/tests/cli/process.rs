//! The real `relay` binary: start `serve` on a fresh database, take a signed webhook, run its job,
//! expose it in `/metrics`, and stop cleanly on SIGTERM.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use relay_codegraph::store::arangodb::double::FakeArango;

const SECRET: &str = "process-test-secret";

struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}

fn base_database_url() -> String {
    std::env::var("DATABASE_URL").expect("DATABASE_URL must point at the test PostgreSQL")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn wait_for<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn serve_takes_a_webhook_runs_its_job_and_stops_on_sigterm() {
    let base = base_database_url();
    let database = format!("relay_process_{}", std::process::id());
    let (prefix, _) = base
        .rsplit_once('/')
        .expect("DATABASE_URL has a database name");
    let url = format!("{prefix}/{database}");
    let port = free_port();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("relay.toml");
    std::fs::write(
        &config,
        format!(
            r#"
[server]
listen = "127.0.0.1:{port}"
admin_listen = "off"
[worker]
poll_interval_secs = 1
shutdown_grace_secs = 5
[repo]
data_dir = "{data}"
[[trackers]]
name = "github"
provider = "github"
base_url = "https://api.github.com"
token = "t"
webhook_secret = "{SECRET}"
bot_username = "relay-bot"
"#,
            data = dir.path().join("data").display()
        ),
    )
    .unwrap();

    let child = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["--config", config.to_str().unwrap(), "serve"])
        .env("DATABASE_URL", &url)
        .env("RELAY__LOG__FORMAT", "json")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("relay starts");
    let mut server = Server { child };
    let client = reqwest::Client::new();
    let origin = format!("http://127.0.0.1:{port}");

    wait_for("/readyz", || {
        let request = client.get(format!("{origin}/readyz")).send();
        async move { request.await.is_ok_and(|r| r.status() == 200) }
    })
    .await;

    let body = serde_json::to_vec(&serde_json::json!({
        "action": "created",
        "issue": { "number": 7, "title": "Slow checkout", "body": "", "state": "open",
                   "user": { "login": "alice" }, "labels": [], "assignees": [],
                   "html_url": "https://github.com/o/r/issues/7", "updated_at": "2026-11-23T10:00:00Z" },
        "comment": { "id": 1, "body": "@relay-bot please scope this", "user": { "login": "alice" },
                     "created_at": "2026-11-23T10:00:00Z", "updated_at": "2026-11-23T10:00:00Z" },
        "repository": { "id": 1, "full_name": "o/r" },
        "sender": { "login": "alice", "type": "User" }
    }))
    .unwrap();
    let response = client
        .post(format!("{origin}/webhooks/github"))
        .header("x-github-event", "issue_comment")
        .header("x-github-delivery", "process-1")
        .header(
            "x-hub-signature-256",
            relay_gateway::providers::github::sign(&body, SECRET.as_bytes()),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);

    // The job ran: it succeeds, or (when it orchestrates, and the author's role cannot be looked
    // up: there is no GitHub here) it is retried, never taken as "ignored".
    wait_for("the job to run", || {
        let request = client.get(format!("{origin}/metrics")).send();
        async move {
            match request.await {
                Ok(r) => {
                    let text = r.text().await.unwrap_or_default();
                    text.contains(
                        "relay_jobs_total{kind=\"process_issue\",outcome=\"succeeded\"} 1",
                    ) || text
                        .contains("relay_jobs_total{kind=\"process_issue\",outcome=\"retried\"}")
                }
                Err(_) => false,
            }
        }
    })
    .await;

    let pid = server.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let started = Instant::now();
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "relay did not stop on SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(status.success(), "relay exited with {status}");

    let admin = Command::new("psql")
        .args([
            &base,
            "-qc",
            &format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"),
        ])
        .status();
    assert!(
        admin.is_ok_and(|s| s.success()),
        "failed to drop {database}"
    );
}

/// Graceful degradation, then recovery: a worker whose graph store cannot be reached at start-up
/// keeps running without the code graph and says so in its log, in `/readyz` (`degraded`, with
/// the reason) and in the metrics; when the store comes up (the ArangoDB double starting late)
/// the same process connects without a restart, and when it goes away mid-run the process
/// notices and reconnects again. The store is chosen by the environment
/// (`RELAY__CODEGRAPH__BACKEND`, as the compose file sets it), which also shows the override
/// reaches `[codegraph]`.
/// The ArangoDB password of [`a_worker_reconnects_to_a_graph_store_that_starts_late_and_drops_mid_run`]:
/// it reaches neither the log nor `/readyz`.
const ARANGO_PASSWORD: &str = "Arango-Pw-7731";

#[tokio::test]
async fn a_worker_reconnects_to_a_graph_store_that_starts_late_and_drops_mid_run() {
    let base = base_database_url();
    let database = format!("relay_degraded_{}", std::process::id());
    let (prefix, _) = base
        .rsplit_once('/')
        .expect("DATABASE_URL has a database name");
    let url = format!("{prefix}/{database}");
    let port = free_port();
    // Nothing listens there yet.
    let arango_addr = FakeArango::reserve();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("relay.toml");
    std::fs::write(
        &config,
        format!(
            // The worker serves its ops endpoints on the admin listener, where /readyz gives
            // the reason.
            "[server]\nlisten = \"127.0.0.1:{public}\"\nadmin_listen = \"127.0.0.1:{port}\"\n[codegraph]\nbackend = \"postgres\"\n[repo]\ndata_dir = \"{data}\"\n",
            public = free_port(),
            data = dir.path().join("data").display()
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.path().join("stderr.log")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["--config", config.to_str().unwrap(), "worker"])
        .env("DATABASE_URL", &url)
        .env("RELAY__LOG__FORMAT", "json")
        .env("RELAY__CODEGRAPH__BACKEND", "arangodb")
        .env(
            "RELAY__CODEGRAPH__ARANGODB__URL",
            format!("http://{arango_addr}"),
        )
        .env("RELAY__CODEGRAPH__ARANGODB__PASSWORD", ARANGO_PASSWORD)
        .env("RELAY__CODEGRAPH__RECONNECT__INITIAL_MS", "50")
        .env("RELAY__CODEGRAPH__RECONNECT__MAX_SECS", "1")
        .env("RELAY__CODEGRAPH__RECONNECT__PROBE_SECS", "1")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .expect("relay starts");
    let mut server = Server { child };
    let client = reqwest::Client::new();
    let origin = format!("http://127.0.0.1:{port}");
    let readyz = || {
        let request = client.get(format!("{origin}/readyz")).send();
        async move {
            match request.await {
                Ok(response) if response.status() == 200 => {
                    response.json::<serde_json::Value>().await.ok()
                }
                _ => None,
            }
        }
    };
    let metric = |name: &'static str| {
        let request = client.get(format!("{origin}/metrics")).send();
        async move {
            let text = request.await.ok()?.text().await.ok()?;
            text.lines()
                .find_map(|line| line.strip_prefix(name)?.trim().parse::<f64>().ok())
        }
    };
    // Degraded from the start (never "ready" while nothing is connected), then with the reason.
    wait_for("/readyz", || async { readyz().await.is_some() }).await;
    let ready = readyz().await.unwrap();
    assert_eq!(ready["status"], "degraded", "{ready}");
    wait_for("the first attempt's reason", || async {
        readyz().await.is_some_and(|r| {
            r["degraded"]["codegraph"]
                .as_str()
                .is_some_and(|d| !d.contains("not connected yet"))
        })
    })
    .await;
    let ready = readyz().await.unwrap();
    let detail = ready["degraded"]["codegraph"].as_str().unwrap_or_default();
    assert!(
        detail.contains("unavailable") && detail.contains("grep and read"),
        "{ready}"
    );
    assert!(!ready.to_string().contains(ARANGO_PASSWORD), "{ready}");
    assert_eq!(metric("relay_codegraph_store_up").await, Some(0.0));
    assert_eq!(
        metric("relay_codegraph_store_outages_total").await,
        Some(1.0)
    );
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the worker keeps running"
    );
    let log_text = std::fs::read_to_string(dir.path().join("stderr.log")).unwrap();
    assert!(
        log_text
            .lines()
            .any(|line| line.contains("code-graph store unavailable")
                && line.contains("\"level\":\"WARN\"")),
        "{log_text}"
    );
    assert!(!log_text.contains(ARANGO_PASSWORD), "{log_text}");

    // The store starts late: the same process connects, and /readyz is whole again.
    let arango = FakeArango::start_at(arango_addr).await;
    wait_for("the store to connect", || async {
        readyz().await.is_some_and(|r| r["status"] == "ready")
    })
    .await;
    wait_for("the store up metric", || async {
        metric("relay_codegraph_store_up").await == Some(1.0)
    })
    .await;

    // It drops mid-run: the probe notices, and the outage is counted.
    let arango_addr = arango.stop().await;
    wait_for("the outage to show", || async {
        readyz().await.is_some_and(|r| r["status"] == "degraded")
    })
    .await;
    assert_eq!(
        metric("relay_codegraph_store_outages_total").await,
        Some(2.0)
    );

    // It comes back: reconnected, still without a restart.
    let arango = FakeArango::start_at(arango_addr).await;
    wait_for("the store to reconnect", || async {
        readyz().await.is_some_and(|r| r["status"] == "ready")
    })
    .await;
    assert!(server.child.try_wait().unwrap().is_none());
    arango.finish();
    let _ = server.child.kill();
    let _ = server.child.wait();
    let admin = Command::new("psql")
        .args([
            &base,
            "-qc",
            &format!("DROP DATABASE IF EXISTS {database} WITH (FORCE)"),
        ])
        .status();
    assert!(
        admin.is_ok_and(|s| s.success()),
        "failed to drop {database}"
    );
}
