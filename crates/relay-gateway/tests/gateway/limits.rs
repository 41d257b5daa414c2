//! What keeps slow and greedy clients from starving the gateway, over real TCP against real
//! Postgres: the total request deadline, the per-client connection cap (direct and behind a
//! trusted proxy), the body limit and the body budget.

use std::time::Duration;

use relay_gateway::ServerSettings;
use relay_store::PgPool;
use tokio::io::AsyncWriteExt;

use crate::support::{
    HANG, connect_from, exchange, get, read_answer, serve, signed_ping, status, webhook_head,
};

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_body_trickled_within_the_idle_timeout_is_cut_at_the_deadline(pool: PgPool) {
    let settings = ServerSettings {
        request_deadline_ms: 1_000,
        body_read_timeout_ms: 30_000,
        ..ServerSettings::default()
    };
    let server = serve(pool, settings).await;
    let mut stream = connect_from("127.0.0.2", server.address).await;
    stream.write_all(&webhook_head(1_000)).await.unwrap();
    // One byte every 50 ms: always well within the idle timeout, and 1,000 bytes would take 50 s
    // (longer than the hang guard).
    let trickle = async {
        for _ in 0..1_000 {
            if stream.write_all(b" ").await.is_err() || answered(&mut stream).await {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(HANG, trickle)
        .await
        .expect("the trickle was never cut");
    let answer = read_answer(&mut stream).await;
    assert_eq!(status(&answer), 408, "{answer}");
}

/// Whether the gateway has sent something (its answer) on `stream`, without consuming it.
async fn answered(stream: &mut tokio::net::TcpStream) -> bool {
    let mut byte = [0u8; 1];
    tokio::time::timeout(Duration::from_millis(1), stream.peek(&mut byte))
        .await
        .is_ok()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn past_the_connection_cap_a_client_is_answered_at_once(pool: PgPool) {
    let settings = ServerSettings {
        max_connections: 1,
        ..ServerSettings::default()
    };
    let server = serve(pool, settings).await;
    // The one connection, kept open mid-request.
    let mut first = connect_from("127.0.0.2", server.address).await;
    first.write_all(b"GET /healthz HTTP/1.1\r\n").await.unwrap();
    // Give the accept loop the first socket before the second arrives.
    let answer = loop {
        let answer = exchange("127.0.0.3", server.address, &get("/healthz")).await;
        if status(&answer) != 200 {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status(&answer), 503, "{answer}");

    drop(first);
    let served = tokio::time::timeout(HANG, async {
        loop {
            let answer = exchange("127.0.0.3", server.address, &get("/healthz")).await;
            if status(&answer) == 200 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(served.is_ok(), "the freed connection was never reused");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn one_client_holding_its_connections_starves_no_one_else(pool: PgPool) {
    let settings = ServerSettings {
        max_connections: 8,
        max_connections_per_client: 2,
        ..ServerSettings::default()
    };
    let server = serve(pool, settings).await;
    // The attacker's connections, each mid-body.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = connect_from("127.0.0.2", server.address).await;
        stream.write_all(&webhook_head(100)).await.unwrap();
        stream.write_all(b"{").await.unwrap();
        held.push(stream);
    }
    // Its next ones are refused, whatever it sends...
    let mut refused = 0;
    for _ in 0..6 {
        let answer = exchange("127.0.0.2", server.address, &get("/healthz")).await;
        if status(&answer) == 429 {
            refused += 1;
        }
    }
    assert_eq!(refused, 6, "the client got past its cap");
    // ...and everyone else is served.
    let answer = exchange("127.0.0.1", server.address, &get("/healthz")).await;
    assert_eq!(status(&answer), 200, "{answer}");
    let answer = exchange("127.0.0.1", server.address, &signed_ping("limits-1")).await;
    assert_eq!(status(&answer), 200, "{answer}");
    drop(held);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn behind_a_trusted_proxy_each_forwarded_client_has_its_own_cap(pool: PgPool) {
    let settings = ServerSettings {
        max_connections_per_client: 1,
        trusted_proxies: "127.0.0.1".parse().unwrap(),
        ..ServerSettings::default()
    };
    let server = serve(pool, settings).await;
    // The proxy opens as many connections as it likes; one forwarded client holds a request.
    let mut held = connect_from("127.0.0.1", server.address).await;
    held.write_all(
        b"POST /webhooks/github HTTP/1.1\r\nhost: relay\r\nx-forwarded-for: 198.51.100.1\r\n\
          x-github-event: issues\r\ncontent-length: 100\r\n\r\n{",
    )
    .await
    .unwrap();
    let as_client = |client: &str| {
        format!(
            "GET /healthz HTTP/1.1\r\nhost: relay\r\nconnection: close\r\nx-forwarded-for: {client}\r\n\r\n"
        )
        .into_bytes()
    };
    let refused = tokio::time::timeout(HANG, async {
        loop {
            let answer = exchange("127.0.0.1", server.address, &as_client("198.51.100.1")).await;
            if status(&answer) == 429 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(refused.is_ok(), "a forwarded client got past its cap");
    let answer = exchange("127.0.0.1", server.address, &as_client("198.51.100.2")).await;
    assert_eq!(status(&answer), 200, "{answer}");
    // A peer that is not a trusted proxy cannot pose as another client: its own cap applies.
    let answer = exchange("127.0.0.2", server.address, &as_client("198.51.100.1")).await;
    assert_eq!(status(&answer), 200, "{answer}");
    drop(held);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn bodies_past_the_limit_or_the_budget_are_refused_and_small_ones_still_pass(pool: PgPool) {
    let settings = ServerSettings {
        body_limit_bytes: 512 * 1024,
        body_budget_bytes: 400 * 1024,
        ..ServerSettings::default()
    };
    let server = serve(pool, settings).await;
    // Declared past the limit: refused before a byte of the body is read.
    let mut stream = connect_from("127.0.0.2", server.address).await;
    stream
        .write_all(&webhook_head(9 * 1024 * 1024))
        .await
        .unwrap();
    let answer = read_answer(&mut stream).await;
    assert_eq!(status(&answer), 413, "{answer}");

    // A large body in flight takes 200 KiB; large bodies may use three quarters (300 KiB), so
    // the next one does not fit...
    let mut first = connect_from("127.0.0.2", server.address).await;
    first.write_all(&webhook_head(200 * 1024)).await.unwrap();
    first.write_all(&[b' '; 1024]).await.unwrap();
    let refused = tokio::time::timeout(HANG, async {
        loop {
            let mut second = connect_from("127.0.0.3", server.address).await;
            second.write_all(&webhook_head(200 * 1024)).await.unwrap();
            second.write_all(&[b' '; 1024]).await.unwrap();
            let answer = read_answer(&mut second).await;
            if status(&answer) == 503 {
                return;
            }
        }
    })
    .await;
    assert!(refused.is_ok(), "the budget admitted more than it has");
    // ...while an ordinary delivery still is answered.
    let answer = exchange("127.0.0.1", server.address, &signed_ping("limits-2")).await;
    assert_eq!(status(&answer), 200, "{answer}");
    drop(first);
}

/// A GitLab hook's token arrives as it is, so each wrong one is a guess at the secret: past
/// `[ui] signin_max_failures` wrong tokens in the window, the client's deliveries are refused
/// with 429 without a comparison, even with the right token; another client is unaffected, and
/// the sign-in throttle counts apart.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn wrong_gitlab_tokens_are_throttled_per_client(pool: PgPool) {
    use relay_gateway::{AppState, UiSettings};
    const GITLAB_SECRET: &str = "gitlab-hook-token-0123";
    let gitlab: relay_core::TrackerSettings = serde_json::from_value(serde_json::json!({
        "name": "gitlab",
        "provider": "gitlab",
        "base_url": "http://127.0.0.1:9",
        "webhook_secret": GITLAB_SECRET,
        "bot_username": "relay",
    }))
    .unwrap();
    let ui = UiSettings {
        signin_max_failures: 2,
        ..UiSettings::default()
    };
    let state = AppState::new(
        pool,
        vec![crate::support::github(), gitlab],
        ServerSettings::default(),
        3,
    )
    .with_api(relay_gateway::ApiSettings {
        token: Some(crate::support::TOKEN.to_string().into()),
    })
    .with_ui(ui);
    let server = crate::support::serve_state(state).await;
    let push = |token: &str, uuid: &str| {
        let body = r#"{"object_kind":"push","ref":"refs/heads/main","project":{"id":1,"path_with_namespace":"o/r"}}"#;
        format!(
            "POST /webhooks/gitlab HTTP/1.1\r\nhost: relay\r\nconnection: close\r\n\
             content-type: application/json\r\nx-gitlab-event: Push Hook\r\n\
             x-gitlab-token: {token}\r\nx-gitlab-event-uuid: {uuid}\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    };
    for n in 0..2 {
        let answer = exchange(
            "127.0.0.2",
            server.address,
            &push("guess", &format!("g{n}")),
        )
        .await;
        assert_eq!(status(&answer), 401, "{answer}");
    }
    let answer = exchange("127.0.0.2", server.address, &push(GITLAB_SECRET, "right-1")).await;
    assert_eq!(
        status(&answer),
        429,
        "throttled even with the right token: {answer}"
    );
    let answer = exchange("127.0.0.3", server.address, &push(GITLAB_SECRET, "right-2")).await;
    assert!(
        [200, 202].contains(&status(&answer)),
        "another client is unaffected: {answer}"
    );
    // The status page's sign-in keeps its own count: the same client signs in.
    let login = format!("token={}", crate::support::TOKEN);
    let request = format!(
        "POST /ui/login HTTP/1.1\r\nhost: relay\r\nconnection: close\r\n\
         content-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\r\n{login}",
        login.len()
    );
    let answer = exchange("127.0.0.2", server.address, request.as_bytes()).await;
    assert_eq!(status(&answer), 303, "{answer}");
}
