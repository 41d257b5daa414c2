//! Intake under a crash: the real `relay gateway` takes signed deliveries over 16 connections and
//! is SIGKILLed mid-load. Every delivery it answered
//! 2xx is in the database exactly once (with its comment and its job), none twice; and once a
//! gateway is back, the tracker's redelivery of everything it sent leaves each delivery recorded
//! exactly once (the answered ones refused as duplicates): nothing lost, nothing doubled.

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use sqlx::PgPool;

const SECRET: &str = "intake-kill-secret";
const CONNECTIONS: usize = 16;
const ISSUES: usize = 20;
/// Deliveries the load sends at most (the gateway is killed well before: ≥ 200 answered).
const DELIVERIES: usize = 20_000;
const KILL_AFTER_ANSWERED: usize = 200;

struct Gateway {
    child: Child,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start(config: &std::path::Path, url: &str) -> Gateway {
    let child = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["--config", config.to_str().unwrap(), "gateway"])
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("relay starts");
    Gateway { child }
}

async fn ready(client: &reqwest::Client, origin: &str) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        if let Ok(r) = client.get(format!("{origin}/readyz")).send().await
            && r.status() == 200
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the gateway did not become ready");
}

/// The `i`th delivery: a comment mentioning the bot on one of [`ISSUES`] issues.
fn delivery(i: usize) -> (String, Vec<u8>) {
    let issue = i % ISSUES + 1;
    let body = serde_json::to_vec(&json!({
        "action": "created",
        "issue": { "number": issue, "title": format!("Issue {issue}"), "body": "", "state": "open",
                   "user": { "login": "alice" }, "labels": [], "assignees": [],
                   "html_url": format!("https://github.com/o/r/issues/{issue}"),
                   "updated_at": "2026-11-23T10:00:00Z" },
        "comment": { "id": 1_000_000 + i, "body": format!("@relay-bot look ({i})"),
                     "user": { "login": "alice" },
                     "created_at": "2026-11-23T10:00:00Z", "updated_at": "2026-11-23T10:00:00Z" },
        "repository": { "id": 1, "full_name": "o/r" },
        "sender": { "login": "alice", "type": "User" }
    }))
    .unwrap();
    (format!("kill-{i}"), body)
}

async fn send(client: &reqwest::Client, origin: &str, i: usize) -> Option<u16> {
    let (key, body) = delivery(i);
    let response = client
        .post(format!("{origin}/webhooks/github"))
        .header("x-github-event", "issue_comment")
        .header("x-github-delivery", key)
        .header(
            "x-hub-signature-256",
            relay_gateway::providers::github::sign(&body, SECRET.as_bytes()),
        )
        .body(body)
        .send()
        .await
        .ok()?;
    Some(response.status().as_u16())
}

/// Per delivery key: (deliveries rows, comments of its comment id).
async fn recorded(pool: &PgPool) -> Vec<(String, i64, i64)> {
    sqlx::query_as(
        "SELECT d.delivery_key, count(*) OVER (PARTITION BY d.delivery_key),
                (SELECT count(*) FROM issue_notes n WHERE n.note_id = d.note_id)
         FROM deliveries d WHERE d.delivery_key LIKE 'unscoped:kill-%'",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_gateway_killed_mid_load_loses_and_doubles_nothing() {
    let base =
        std::env::var("DATABASE_URL").expect("DATABASE_URL must point at the test PostgreSQL");
    let database = format!("relay_intake_kill_{}", std::process::id());
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
# Group commit's keys were removed: a configuration that still sets them starts (one warning).
intake_batch_window_us = 2000
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
    let origin = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();

    let mut gateway = start(&config, &url);
    ready(&client, &origin).await;

    // The load: 16 connections, each sending the next delivery as soon as the last is answered.
    let next = Arc::new(AtomicUsize::new(0));
    let answered_count = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut senders = tokio::task::JoinSet::new();
    for _ in 0..CONNECTIONS {
        let (client, origin) = (client.clone(), origin.clone());
        let (next, answered_count, stop) = (next.clone(), answered_count.clone(), stop.clone());
        senders.spawn(async move {
            let mut answered = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= DELIVERIES {
                    break;
                }
                match send(&client, &origin, i).await {
                    Some(status) if (200..300).contains(&status) => {
                        answered.push(i);
                        answered_count.fetch_add(1, Ordering::Relaxed);
                    }
                    Some(_) => {}
                    // The gateway is gone.
                    None => break,
                }
            }
            answered
        });
    }
    let started = Instant::now();
    while answered_count.load(Ordering::Relaxed) < KILL_AFTER_ANSWERED {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the load never got going"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // SIGKILL, mid-load: deliveries are in flight and committing.
    gateway.child.kill().unwrap();
    gateway.child.wait().unwrap();
    stop.store(true, Ordering::Relaxed);
    let mut answered = BTreeSet::new();
    while let Some(joined) = senders.join_next().await {
        answered.extend(joined.unwrap());
    }
    let sent = next.load(Ordering::Relaxed).min(DELIVERIES);
    assert!(answered.len() >= KILL_AFTER_ANSWERED);
    assert!(sent > answered.len(), "some deliveries were in flight");

    let pool = PgPool::connect(&url).await.unwrap();
    let rows = recorded(&pool).await;
    let keys: BTreeSet<&str> = rows.iter().map(|(key, _, _)| key.as_str()).collect();
    for i in &answered {
        assert!(
            // Stored with the key's scope (`providers::github::delivery`: no installation here).
            keys.contains(format!("unscoped:{}", delivery(*i).0).as_str()),
            "delivery {i} was answered 2xx but is not recorded"
        );
    }
    for (key, deliveries, notes) in &rows {
        assert_eq!(
            (*deliveries, *notes),
            (1, 1),
            "{key} recorded more than once"
        );
    }

    // A gateway again; the tracker redelivers everything it sent.
    drop(gateway);
    let _gateway = start(&config, &url);
    ready(&client, &origin).await;
    for i in 0..sent {
        let status = send(&client, &origin, i)
            .await
            .expect("the gateway answers");
        if answered.contains(&i) {
            assert_eq!(status, 200, "delivery {i} was recorded: a duplicate now");
        } else {
            assert!(status == 200 || status == 202, "delivery {i}: {status}");
        }
    }
    let rows = recorded(&pool).await;
    assert_eq!(rows.len(), sent, "every delivery recorded once");
    for (key, deliveries, notes) in &rows {
        assert_eq!(
            (*deliveries, *notes),
            (1, 1),
            "{key} recorded more than once"
        );
    }
    let jobs: i64 = sqlx::query_scalar(
        "SELECT count(DISTINCT job_id) FROM deliveries WHERE delivery_key LIKE 'unscoped:kill-%'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert!(jobs >= 1 && jobs <= ISSUES as i64, "jobs: {jobs}");
    pool.close().await;
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
