//! The database stops mid-test: webhooks get 503 quickly (the sender retries), then everything
//! recovers and nothing is lost.

use std::time::{Duration, Instant};

use http::StatusCode;
use relay_gateway::ServerSettings;
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::helpers::*;

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn database_outage_answers_503_then_recovers(_: PgPoolOptions, options: PgConnectOptions) {
    let target = format!("{}:{}", options.get_host(), options.get_port());
    let target = tokio::net::lookup_host(target)
        .await
        .unwrap()
        .next()
        .unwrap();
    let proxy = Proxy::start(target).await;
    let proxied: PgPool = PgPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(Duration::from_millis(500))
        .test_before_acquire(true)
        .connect_with(options.clone().host("127.0.0.1").port(proxy.addr.port()))
        .await
        .unwrap();
    let settings = ServerSettings {
        db_timeout_ms: 1500,
        ..Default::default()
    };
    let app = relay_gateway::app(state_with(proxied.clone(), settings));
    let body = fixture("webhooks/github/issues.labeled.json");
    // The delivery that meets the outage is another event (a later label change): the same
    // content under a new delivery id would be a duplicate.
    let mut later: serde_json::Value = serde_json::from_slice(&body).unwrap();
    later["issue"]["updated_at"] = "2019-05-15T15:21:00Z".into();
    let later = serde_json::to_vec(&later).unwrap();

    let answer = call(&app, github_request("issues", "before", body.clone())).await;
    assert_eq!(answer.status, StatusCode::ACCEPTED);

    proxy.unplug();
    let started = Instant::now();
    let answer = call(&app, github_request("issues", "during", later.clone())).await;
    assert_eq!(
        answer.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{:?}",
        answer.body
    );
    // Not a speed assertion: it must not hang until some far-away TCP timeout.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "503 took {:?}",
        started.elapsed()
    );
    let ready = call(
        &app,
        http::Request::get("/readyz")
            .body(axum::body::Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(ready.status, StatusCode::SERVICE_UNAVAILABLE);

    proxy.plug();
    // The sender retries the delivery that got 503; it is new to us, since nothing was stored.
    let mut answer = call(&app, github_request("issues", "during", later.clone())).await;
    for _ in 0..20 {
        if answer.status != StatusCode::SERVICE_UNAVAILABLE {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        answer = call(&app, github_request("issues", "during", later.clone())).await;
    }
    assert_eq!(answer.status, StatusCode::ACCEPTED, "{:?}", answer.body);

    let direct = PgPoolOptions::new().connect_with(options).await.unwrap();
    let keys: Vec<String> = sqlx::query_scalar("SELECT delivery_key FROM deliveries ORDER BY id")
        .fetch_all(&direct)
        .await
        .unwrap();
    assert_eq!(keys, vec!["hook:1:before", "hook:1:during"]);
}
