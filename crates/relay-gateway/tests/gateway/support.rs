//! What the listener, limits and session tests share: a gateway on a real listener, raw sockets
//! from chosen loopback addresses, a signed GitHub delivery.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use relay_core::TrackerSettings;
use relay_gateway::{ApiSettings, AppState, ServerSettings, UiSettings};
use relay_store::PgPool;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio_util::sync::CancellationToken;

/// The API token of these tests (32 characters or more, as the configuration requires).
pub const TOKEN: &str = "gateway-test-token-of-32-characters";
/// The webhook secret of the `github` tracker.
pub const SECRET: &str = "gateway-test-secret";
/// A guard against a hung test (never a timing assertion).
pub const HANG: Duration = Duration::from_secs(30);

/// A gateway served by `relay_gateway::run` (or `run_split`); stopped on drop.
pub struct Server {
    pub address: SocketAddr,
    /// The admin listener, when the gateway was split.
    pub admin: Option<SocketAddr>,
    pub shutdown: CancellationToken,
    pub stopped: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub fn github() -> TrackerSettings {
    serde_json::from_value(serde_json::json!({
        "name": "github",
        "provider": "github",
        "base_url": "http://127.0.0.1:9",
        "webhook_secret": SECRET,
        "bot_username": "relay-bot",
    }))
    .unwrap()
}

pub fn state(pool: PgPool, settings: ServerSettings, ui: UiSettings) -> AppState {
    relay_telemetry::init_for_test();
    AppState::new(pool, vec![github()], settings, 3)
        .with_api(ApiSettings {
            token: Some(TOKEN.to_string().into()),
        })
        .with_ui(ui)
}

/// Serves `state` on one listener.
pub async fn serve_state(state: AppState) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let stopped = tokio::spawn(relay_gateway::run(listener, state, shutdown.clone()));
    Server {
        address,
        admin: None,
        shutdown,
        stopped,
    }
}

pub async fn serve(pool: PgPool, settings: ServerSettings) -> Server {
    serve_state(state(pool, settings, UiSettings::default())).await
}

/// Serves webhooks on one listener and the rest on another (`[server] admin_listen`).
pub async fn serve_split(pool: PgPool, settings: ServerSettings) -> Server {
    serve_split_state(state(pool, settings, UiSettings::default())).await
}

/// [`serve_split`] for a state the test prepared.
pub async fn serve_split_state(state: AppState) -> Server {
    let public = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let admin = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = public.local_addr().unwrap();
    let admin_address = admin.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let stopped = tokio::spawn(relay_gateway::run_split(
        public,
        admin,
        state,
        shutdown.clone(),
    ));
    Server {
        address,
        admin: Some(admin_address),
        shutdown,
        stopped,
    }
}

/// A connection from `source` (any 127.0.0.0/8 address: each one is a client to the gateway).
pub async fn connect_from(source: &str, target: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket
        .bind(SocketAddr::new(source.parse::<IpAddr>().unwrap(), 0))
        .unwrap();
    socket.connect(target).await.unwrap()
}

/// Sends `request` on a fresh connection from `source` and reads the answer to its end.
pub async fn exchange(source: &str, target: SocketAddr, request: &[u8]) -> String {
    let mut stream = connect_from(source, target).await;
    stream.write_all(request).await.unwrap();
    read_answer(&mut stream).await
}

/// Reads until the server closes (the requests here say `connection: close`).
pub async fn read_answer(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(HANG, stream.read_to_end(&mut answer))
        .await
        .expect("the gateway never answered");
    String::from_utf8_lossy(&answer).into_owned()
}

/// The status code of a raw answer (0 if there was none).
pub fn status(answer: &str) -> u16 {
    answer
        .get(9..12)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

pub fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nhost: relay\r\nconnection: close\r\n\r\n").into_bytes()
}

/// A signed GitHub `ping` delivery (recorded and answered 200).
pub fn signed_ping(delivery: &str) -> Vec<u8> {
    let body = format!(
        r#"{{"zen":"Design for failure.","hook_id":1,"hook":{{"type":"Repository","id":1}},"repository":{{"id":1,"full_name":"o/r"}},"sender":{{"login":"octocat","type":"User"}},"delivery":"{delivery}"}}"#
    );
    let signature = relay_gateway::providers::github::sign(body.as_bytes(), SECRET.as_bytes());
    let mut request = format!(
        "POST /webhooks/github HTTP/1.1\r\nhost: relay\r\nconnection: close\r\n\
         content-type: application/json\r\nx-github-event: ping\r\nx-github-delivery: {delivery}\r\n\
         x-hub-signature-256: {signature}\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body.as_bytes());
    request
}

/// The head of a webhook post whose body (of `length` bytes) the caller sends, or not.
pub fn webhook_head(length: usize) -> Vec<u8> {
    format!(
        "POST /webhooks/github HTTP/1.1\r\nhost: relay\r\ncontent-type: application/json\r\n\
         x-github-event: issues\r\nx-github-delivery: slow\r\ncontent-length: {length}\r\n\r\n"
    )
    .into_bytes()
}

/// A second pool on the same database: another gateway process.
pub async fn another_pool(pool: &PgPool) -> PgPool {
    let options = pool.connect_options().as_ref().clone();
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await
        .unwrap()
}

/// A job that is running (its event stream stays open until it finishes).
pub async fn running_job(pool: &PgPool) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, max_attempts, status)
         VALUES ('process_issue', '{}', 3, 'running') RETURNING id",
    )
    .fetch_one(pool)
    .await
    .unwrap()
}

/// What the gateway logs while `work` runs on this thread (the tests' runtime has one thread, so
/// the server's tasks log here too).
pub async fn logs_of<F: std::future::Future>(work: F) -> (F::Output, String) {
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let guard = tracing::subscriber::set_default(subscriber);
    let output = work.await;
    drop(guard);
    let logs = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
    (output, logs)
}
