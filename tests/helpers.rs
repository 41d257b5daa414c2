use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::body::Body;
use http::{Request, StatusCode};
use relay_core::TrackerSettings;
use relay_gateway::{AppState, ServerSettings};
use serde_json::Value;
use sqlx::PgPool;
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

pub const GITHUB_SECRET: &str = "It's a Secret to Everybody";
pub const GITLAB_SECRET: &str = "gitlab-hook-token";

pub fn fixtures_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

#[track_caller]
pub fn fixture(relative: &str) -> Vec<u8> {
    let path = fixtures_dir().join(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {} is missing: {e}", path.display()))
}

#[track_caller]
pub fn fixture_json(relative: &str) -> Value {
    serde_json::from_slice(&fixture(relative)).expect("fixture is JSON")
}

pub fn trackers() -> Vec<TrackerSettings> {
    let github = r#"
        name = "github"
        provider = "github"
        base_url = "https://api.github.com"
        token = "ghp_test"
        webhook_secret = "It's a Secret to Everybody"
        bot_username = "relay-bot"
        trigger_labels = ["relay", "bug"]
    "#;
    let gitlab = r#"
        name = "gitlab"
        provider = "gitlab"
        base_url = "https://gitlab.example.com"
        token = "glpat-test"
        webhook_secret = "gitlab-hook-token"
        bot_username = "relay"
        trigger_labels = ["platform"]
    "#;
    vec![
        toml::from_str(github).unwrap(),
        toml::from_str(gitlab).unwrap(),
    ]
}

pub fn state(pool: PgPool) -> AppState {
    state_with(pool, ServerSettings::default())
}

pub fn state_with(pool: PgPool, settings: ServerSettings) -> AppState {
    relay_telemetry::init_for_test();
    AppState::new(pool, trackers(), settings, 5)
}

/// A response: status and JSON body (or `Value::Null`).
pub struct Answer {
    pub status: StatusCode,
    pub body: Value,
}

impl Answer {
    pub fn outcome(&self) -> &str {
        self.body["outcome"].as_str().unwrap_or("")
    }
    pub fn reason(&self) -> &str {
        self.body["reason"].as_str().unwrap_or("")
    }
}

pub async fn call(app: &Router, request: Request<Body>) -> Answer {
    let response = app
        .clone()
        .oneshot(request)
        .await
        .expect("router never fails");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap();
    Answer {
        status,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    }
}

pub fn github_request(event: &str, delivery: &str, body: Vec<u8>) -> Request<Body> {
    let signature = relay_gateway::providers::github::sign(&body, GITHUB_SECRET.as_bytes());
    Request::post("/webhooks/github")
        .header("content-type", "application/json")
        .header("x-github-event", event)
        .header("x-github-delivery", delivery)
        .header("x-github-hook-id", "1")
        .header("x-hub-signature-256", signature)
        .body(Body::from(body))
        .unwrap()
}

pub fn gitlab_request(event: &str, uuid: &str, body: Vec<u8>) -> Request<Body> {
    Request::post("/webhooks/gitlab")
        .header("content-type", "application/json")
        .header("x-gitlab-event", event)
        .header("x-gitlab-event-uuid", uuid)
        .header("x-gitlab-token", GITLAB_SECRET)
        .body(Body::from(body))
        .unwrap()
}

pub async fn count(pool: &PgPool, table: &str) -> i64 {
    let sql = format!("SELECT count(*) FROM {table}");
    sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .fetch_one(pool)
        .await
        .unwrap()
}

/// A TCP proxy in front of Postgres that can be "unplugged": while down it drops every open
/// connection and refuses new ones, like a database that stopped.
pub struct Proxy {
    pub addr: SocketAddr,
    down: Arc<AtomicBool>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Proxy {
    pub async fn start(target: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let down = Arc::new(AtomicBool::new(false));
        let (generation, _) = tokio::sync::watch::channel(0u64);
        let generation = Arc::new(generation);
        let (down2, generation2) = (down.clone(), generation.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                if down2.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let mut cut = generation2.subscribe();
                tokio::spawn(async move {
                    let Ok(mut server) = TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Proxy {
            addr,
            down,
            generation,
        }
    }

    pub fn unplug(&self) {
        self.down.store(true, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    pub fn plug(&self) {
        self.down.store(false, Ordering::SeqCst);
    }
}

/// Runs git in `dir` with a fixed identity and `main` as the default branch; panics with git's
/// stderr on failure. Returns stdout, trimmed.
#[track_caller]
pub fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}
