//! Status-page sign-ins over real HTTP against real Postgres: sessions live in the database
//! (two gateways, a restart), sign-out holds everywhere and ends live event streams, shutdown
//! ends them too, failed sign-ins are throttled per client and logged with its address, and the
//! cookie is `Secure` when the page was served over https.

use relay_gateway::{AppState, ServerSettings, UiSettings};
use relay_store::PgPool;
use reqwest::StatusCode;
use tokio::io::AsyncWriteExt;

use crate::support::{
    HANG, Server, TOKEN, another_pool, connect_from, exchange, logs_of, running_job, serve_state,
    state, status, webhook_head,
};

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Signs in on `server` and returns the `name=value` cookie pair.
async fn sign_in(server: &Server) -> String {
    let response = client()
        .post(format!("http://{}/ui/login", server.address))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={TOKEN}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = response.headers()["set-cookie"].to_str().unwrap();
    cookie.split(';').next().unwrap().to_owned()
}

/// Whether `cookie` is signed in on `server` (the issues page, not the sign-in form).
async fn signed_in(server: &Server, cookie: &str) -> bool {
    let page = client()
        .get(format!("http://{}/ui", server.address))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("<html"), "{page}");
    !page.contains(r#"name="token""#)
}

async fn post(server: &Server, path: &str, cookie: &str) {
    let response = client()
        .post(format!("http://{}{path}", server.address))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
}

async fn gateway(pool: PgPool) -> Server {
    serve_state(state(
        pool,
        ServerSettings::default(),
        UiSettings::default(),
    ))
    .await
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_sign_in_holds_on_every_gateway_and_across_a_restart(pool: PgPool) {
    let first = gateway(another_pool(&pool).await).await;
    let second = gateway(another_pool(&pool).await).await;
    let cookie = sign_in(&first).await;
    assert!(signed_in(&first, &cookie).await);
    assert!(
        signed_in(&second, &cookie).await,
        "the second gateway did not know the session"
    );

    drop(first);
    let restarted = gateway(another_pool(&pool).await).await;
    assert!(
        signed_in(&restarted, &cookie).await,
        "a restart signed the session out"
    );

    // Signing out on one gateway ends the session on every one.
    post(&second, "/ui/logout", &cookie).await;
    assert!(!signed_in(&restarted, &cookie).await);
    assert!(!signed_in(&second, &cookie).await);
    // Only the digest is stored, never the id.
    let ids: Vec<Vec<u8>> = sqlx::query_scalar("SELECT id_digest FROM ui_sessions")
        .fetch_all(&pool)
        .await
        .unwrap();
    let id = cookie.split_once('=').unwrap().1;
    assert!(ids.iter().all(|digest| hex_of(digest) != id));
}

/// A session is bound to the API token it was created with: a gateway restarted with a rotated
/// token knows none of the old sessions (the read API's cookie path included), and a sign-in with
/// the new token works.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn rotating_the_api_token_ends_every_session(pool: PgPool) {
    let before = gateway(another_pool(&pool).await).await;
    let cookie = sign_in(&before).await;
    assert!(signed_in(&before, &cookie).await);
    drop(before);

    const ROTATED: &str = "gateway-test-token-rotated-to-32-characters";
    let after = serve_state(
        state(
            another_pool(&pool).await,
            ServerSettings::default(),
            UiSettings::default(),
        )
        .with_api(relay_gateway::ApiSettings {
            token: Some(ROTATED.to_string().into()),
        }),
    )
    .await;
    assert!(
        !signed_in(&after, &cookie).await,
        "a session of the old token survived its rotation"
    );
    let api = client()
        .get(format!("http://{}/api/issues", after.address))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(api.status(), StatusCode::UNAUTHORIZED);
    let response = client()
        .post(format!("http://{}/ui/login", after.address))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={ROTATED}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let fresh = response.headers()["set-cookie"].to_str().unwrap();
    let fresh = fresh.split(';').next().unwrap().to_owned();
    assert!(signed_in(&after, &fresh).await);
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn sign_out_everywhere_ends_every_session(pool: PgPool) {
    let server = gateway(pool).await;
    let mine = sign_in(&server).await;
    let theirs = sign_in(&server).await;
    assert!(signed_in(&server, &theirs).await);
    post(&server, "/ui/logout/everywhere", &mine).await;
    assert!(!signed_in(&server, &mine).await);
    assert!(!signed_in(&server, &theirs).await);
}

/// Reads the stream until it ends; false if it did not end within the hang guard.
async fn ends(mut response: reqwest::Response) -> bool {
    tokio::time::timeout(HANG, async {
        while let Ok(Some(_)) = response.chunk().await {}
    })
    .await
    .is_ok()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_live_stream_ends_when_its_session_signs_out_on_any_gateway(pool: PgPool) {
    let job = running_job(&pool).await;
    let first = gateway(another_pool(&pool).await).await;
    let second = gateway(another_pool(&pool).await).await;
    let open = |server: &Server, cookie: &str| {
        client()
            .get(format!("http://{}/api/jobs/{job}/events", server.address))
            .header("cookie", cookie)
            .send()
    };

    // Signed out on the gateway serving the stream.
    let cookie = sign_in(&first).await;
    let stream = open(&first, &cookie).await.unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    post(&first, "/ui/logout", &cookie).await;
    assert!(ends(stream).await, "the stream outlived its sign-out");

    // Signed out on another gateway: the serving one finds out on its next re-read.
    let cookie = sign_in(&first).await;
    let stream = open(&second, &cookie).await.unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    post(&first, "/ui/logout", &cookie).await;
    assert!(
        ends(stream).await,
        "the stream outlived a sign-out elsewhere"
    );

    // And it cannot be reopened with the ended session.
    let reopened = open(&second, &cookie).await.unwrap();
    assert_eq!(reopened.status(), StatusCode::UNAUTHORIZED);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn shutdown_ends_streams_and_slow_clients_within_the_grace(pool: PgPool) {
    let job = running_job(&pool).await;
    let settings = ServerSettings {
        shutdown_grace_secs: 1,
        ..ServerSettings::default()
    };
    let mut server = serve_state(state(pool, settings, UiSettings::default())).await;
    let stream = client()
        .get(format!("http://{}/api/jobs/{job}/events", server.address))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    // A slow body in flight, and a request head that never ends.
    let mut slow_body = connect_from("127.0.0.2", server.address).await;
    slow_body.write_all(&webhook_head(1_000)).await.unwrap();
    slow_body.write_all(b"{").await.unwrap();
    let mut slow_head = connect_from("127.0.0.3", server.address).await;
    slow_head
        .write_all(b"GET /healthz HTTP/1.1\r\n")
        .await
        .unwrap();
    let answer = exchange(
        "127.0.0.1",
        server.address,
        &crate::support::get("/healthz"),
    )
    .await;
    assert_eq!(status(&answer), 200);

    server.shutdown.cancel();
    let stopped = tokio::time::timeout(HANG, &mut server.stopped).await;
    assert!(
        matches!(stopped, Ok(Ok(Ok(())))),
        "the gateway did not stop: {stopped:?}"
    );
    assert!(ends(stream).await, "the stream outlived the shutdown");
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn shutdown_ends_open_streams_without_waiting_for_the_grace(pool: PgPool) {
    let job = running_job(&pool).await;
    // A grace far longer than the hang guard: only the streams ending lets the gateway stop.
    let settings = ServerSettings {
        shutdown_grace_secs: 3600,
        ..ServerSettings::default()
    };
    let mut server = serve_state(state(pool, settings, UiSettings::default())).await;
    let by_token = client()
        .get(format!("http://{}/api/jobs/{job}/events", server.address))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    let cookie = sign_in(&server).await;
    let by_session = client()
        .get(format!("http://{}/api/jobs/{job}/events", server.address))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(by_token.status(), StatusCode::OK);
    assert_eq!(by_session.status(), StatusCode::OK);

    server.shutdown.cancel();
    assert!(
        ends(by_token).await,
        "a token's stream outlived the shutdown"
    );
    assert!(
        ends(by_session).await,
        "a session's stream outlived the shutdown"
    );
    let stopped = tokio::time::timeout(HANG, &mut server.stopped).await;
    assert!(
        matches!(stopped, Ok(Ok(Ok(())))),
        "the gateway did not stop: {stopped:?}"
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn failed_sign_ins_are_throttled_per_client_and_logged_with_its_address(pool: PgPool) {
    let ui = UiSettings {
        signin_max_failures: 3,
        ..UiSettings::default()
    };
    let state: AppState = state(pool, ServerSettings::default(), ui);
    let (statuses, logs) = logs_of(async {
        let server = serve_state(state).await;
        let form = |token: &str| {
            format!(
                "POST /ui/login HTTP/1.1\r\nhost: relay\r\nconnection: close\r\n\
                 content-type: application/x-www-form-urlencoded\r\ncontent-length: {}\r\n\r\ntoken={token}",
                token.len() + 6
            )
            .into_bytes()
        };
        let bearer = |token: &str| {
            format!(
                "GET /api/issues HTTP/1.1\r\nhost: relay\r\nconnection: close\r\n\
                 authorization: Bearer {token}\r\n\r\n"
            )
            .into_bytes()
        };
        let mut statuses = Vec::new();
        for _ in 0..3 {
            statuses.push(status(&exchange("127.0.0.2", server.address, &form("guess")).await));
        }
        // Past the cap: refused without comparing, even the right token, on both doors.
        statuses.push(status(&exchange("127.0.0.2", server.address, &form(TOKEN)).await));
        statuses.push(status(&exchange("127.0.0.2", server.address, &bearer(TOKEN)).await));
        // Another client is not affected.
        statuses.push(status(&exchange("127.0.0.3", server.address, &form(TOKEN)).await));
        statuses.push(status(&exchange("127.0.0.3", server.address, &bearer(TOKEN)).await));
        statuses
    })
    .await;
    assert_eq!(statuses, [401, 401, 401, 429, 429, 303, 200], "{logs}");
    assert!(
        logs.lines()
            .any(|l| l.contains("sign-in refused: wrong token") && l.contains("127.0.0.2")),
        "{logs}"
    );
    assert!(
        logs.lines()
            .any(|l| l.contains("too many failed attempts") && l.contains("127.0.0.2")),
        "{logs}"
    );
    assert!(!logs.contains(TOKEN), "{logs}");
}

async fn cookie_with(server: &Server, headers: &[(&str, String)]) -> String {
    let mut request = client()
        .post(format!("http://{}/ui/login", server.address))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={TOKEN}"));
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    response.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .to_owned()
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_cookie_is_secure_when_the_page_was_served_over_https(pool: PgPool) {
    let server = gateway(pool).await;
    let host = server.address;
    let cases = [
        (vec![], false),
        (vec![("origin", format!("http://{host}"))], false),
        // The browser says the page it posts from is https (a proxy that adds no header).
        (vec![("origin", format!("https://{host}"))], true),
        (vec![("x-forwarded-proto", "https".to_owned())], true),
        (
            vec![("forwarded", "for=192.0.2.1;proto=https".to_owned())],
            true,
        ),
    ];
    for (headers, secure) in cases {
        let cookie = cookie_with(&server, &headers).await;
        assert_eq!(cookie.contains("; Secure"), secure, "{headers:?}: {cookie}");
    }
}
