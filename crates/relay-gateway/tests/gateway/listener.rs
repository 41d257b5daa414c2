//! The listener's limits over real TCP against real Postgres: a client that sends its headers
//! slowly is cut, an SSE stream outlives the read timeouts, and the admin listener serves what the
//! public one does not. (Connection caps: `limits.rs`.)

use relay_core::JobId;
use std::time::Duration;

use relay_gateway::{ApiSettings, AppState, ServerSettings, UiSettings};
use relay_store::PgPool;
use relay_store::trace::{self, NewEvent, NewRun, RunOutcome};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "listener-test-token";
/// The short read timeouts these tests run with.
const READ_TIMEOUT_MS: u64 = 300;
/// A guard against a hung test (never a timing assertion).
const HANG: Duration = Duration::from_secs(30);

struct Server {
    address: std::net::SocketAddr,
    shutdown: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn serve(pool: PgPool, settings: ServerSettings) -> Server {
    relay_telemetry::init_for_test();
    let state = AppState::new(pool, Vec::new(), settings, 3).with_api(ApiSettings {
        token: Some(TOKEN.to_string().into()),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    tokio::spawn(relay_gateway::run(listener, state, shutdown.clone()));
    Server { address, shutdown }
}

fn short_timeouts() -> ServerSettings {
    ServerSettings {
        header_read_timeout_ms: READ_TIMEOUT_MS,
        body_read_timeout_ms: READ_TIMEOUT_MS,
        ..ServerSettings::default()
    }
}

/// Whether the server closed the connection (or answered and closed) while we were sending.
async fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut buffer = [0u8; 512];
    match tokio::time::timeout(Duration::from_millis(50), stream.read(&mut buffer)).await {
        Err(_) => false,
        Ok(Ok(0)) | Ok(Err(_)) => true,
        // hyper may answer 408 before closing.
        Ok(Ok(_)) => true,
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn slow_headers_are_cut(pool: PgPool) {
    let server = serve(pool, short_timeouts()).await;
    let mut stream = TcpStream::connect(server.address).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\n")
        .await
        .unwrap();
    // One header line every 100 ms for up to 20 s: each byte arrives well within any per-read
    // timeout, only a deadline on the whole head stops it.
    let mut cut = false;
    for n in 0..200 {
        if stream
            .write_all(format!("x-slow-{n}: a\r\n").as_bytes())
            .await
            .is_err()
            || closed_by_server(&mut stream).await
        {
            cut = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        cut,
        "a client sending its headers slowly kept its connection"
    );

    // A normal client is still served.
    let response = reqwest::get(format!("http://{}/healthz", server.address))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn an_sse_stream_outlives_the_read_timeouts(pool: PgPool) {
    let job_id: i64 = sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, max_attempts, status)
         VALUES ('process_issue', '{}', 3, 'running') RETURNING id",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    let run = trace::start_run(
        &pool,
        &NewRun {
            job_id: JobId(job_id),
            issue_id: None,
            attempt: 1,
            worker: "w",
        },
    )
    .await
    .unwrap();
    let server = serve(pool.clone(), short_timeouts()).await;
    let mut response = reqwest::Client::new()
        .get(format!(
            "http://{}/api/jobs/{job_id}/events",
            server.address
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);

    // Events written across several read timeouts all arrive on the one stream.
    let mut seen = String::new();
    for n in 0..4 {
        let payload = json!({ "n": n });
        let event = NewEvent {
            seq: n,
            at: chrono::Utc::now(),
            kind: "tool_call",
            agent: "explore",
            payload: &payload,
        };
        trace::insert_events(&pool, run, JobId(job_id), &[event])
            .await
            .unwrap();
        while !seen.contains(&format!("\"n\":{n}")) {
            let chunk = tokio::time::timeout(HANG, response.chunk())
                .await
                .expect("the stream hung")
                .unwrap()
                .expect("the stream ended early");
            seen.push_str(std::str::from_utf8(&chunk).unwrap());
        }
        tokio::time::sleep(Duration::from_millis(READ_TIMEOUT_MS * 2)).await;
    }
    trace::finish_run(&pool, run, JobId(job_id), RunOutcome::Succeeded, 0)
        .await
        .unwrap();
    sqlx::query("UPDATE jobs SET status = 'succeeded' WHERE id = $1")
        .bind(job_id)
        .execute(&pool)
        .await
        .unwrap();
    while !seen.contains("event: end") {
        let chunk = tokio::time::timeout(HANG, response.chunk())
            .await
            .expect("the stream hung")
            .unwrap()
            .expect("the stream ended before its end event");
        seen.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn with_an_admin_listener_the_public_one_serves_only_webhooks(pool: PgPool) {
    use crate::support::{exchange, get, serve_split, signed_ping, status};
    let server = serve_split(pool, ServerSettings::default()).await;
    let admin = server.admin.unwrap();
    let public = server.address;
    for path in ["/ui", "/api/issues", "/metrics", "/readyz"] {
        let answer = exchange("127.0.0.1", public, &get(path)).await;
        assert_eq!(status(&answer), 404, "public {path}: {answer}");
    }
    let answer = exchange("127.0.0.1", public, &get("/healthz")).await;
    assert_eq!(status(&answer), 200, "{answer}");
    let answer = exchange("127.0.0.1", public, &signed_ping("split-1")).await;
    assert_eq!(status(&answer), 200, "{answer}");

    for (path, expected) in [
        ("/ui", 200),
        ("/api/issues", 401),
        ("/metrics", 200),
        ("/readyz", 200),
        ("/healthz", 200),
    ] {
        let answer = exchange("127.0.0.1", admin, &get(path)).await;
        assert_eq!(status(&answer), expected, "admin {path}: {answer}");
    }
    let answer = exchange("127.0.0.1", admin, &signed_ping("split-2")).await;
    assert_eq!(
        status(&answer),
        404,
        "webhooks on the admin listener: {answer}"
    );
}

/// `/readyz` on a listener anyone may reach names a degraded part and what still works, never
/// the reason (an error's text: a URL, a server's message); the admin listener gives the reason.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn readyz_names_components_publicly_and_reasons_only_on_the_admin_listener(pool: PgPool) {
    use crate::support::{exchange, get, serve_split_state, serve_state, state, status};
    const WORKS: &str = "store unavailable: explores use grep and read meanwhile";
    const REASON: &str = "request failed (http://root:Arango-Pw-7731@db:8529/_api/version)";
    let degraded = |state: &relay_gateway::AppState| {
        state.degraded().note("codegraph", WORKS, REASON);
    };

    let one = state(
        pool.clone(),
        ServerSettings::default(),
        UiSettings::default(),
    );
    degraded(&one);
    let public = serve_state(one).await;
    let answer = exchange("127.0.0.1", public.address, &get("/readyz")).await;
    assert_eq!(status(&answer), 200, "{answer}");
    assert!(
        answer.contains("\"degraded\"") && answer.contains(WORKS),
        "{answer}"
    );
    assert!(!answer.contains("Arango-Pw"), "{answer}");
    assert!(!answer.contains("request failed"), "{answer}");

    let split = state(pool, ServerSettings::default(), UiSettings::default());
    degraded(&split);
    let server = serve_split_state(split).await;
    let answer = exchange("127.0.0.1", server.admin.unwrap(), &get("/readyz")).await;
    assert!(
        answer.contains(WORKS) && answer.contains("request failed"),
        "{answer}"
    );
}
