//! The status page (`/ui`) over real HTTP against a served gateway: 404 without a token,
//! sign-in, sessions (cookie flags, sign-out, server-side expiry, the API accepting the cookie
//! for GETs). `status_content` covers what the pages show, escaping and the CSP; the browser
//! test (`status_browser`) drives the same pages in Chromium.

use std::time::Duration;

use relay_gateway::UiSettings;
use reqwest::StatusCode;
use reqwest::header::{LOCATION, SET_COOKIE};
use sqlx::PgPool;

use crate::helpers::state;
use crate::status_fixture::{PLAIN, UI_TOKEN, client, get, seed, serve, sign_in, ui_state};

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn the_status_page_does_not_exist_without_an_api_token(pool: PgPool) {
    seed(&pool, &PLAIN).await;
    let base = serve(state(pool)).await;
    for path in [
        "/ui",
        "/ui/ops",
        "/ui/issues/1",
        "/ui/jobs/1",
        "/ui/assets/style.css",
    ] {
        assert_eq!(
            get(&base, path, None).await.status(),
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
    let login = client()
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", ""))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), StatusCode::NOT_FOUND);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn signing_in_sets_a_session_cookie_and_a_wrong_token_shows_the_form_again(pool: PgPool) {
    let seeded = seed(&pool, &PLAIN).await;
    let base = serve(ui_state(pool, UiSettings::default())).await;

    let form = get(&base, "/ui", None).await;
    assert_eq!(form.status(), StatusCode::OK);
    let html = form.text().await.unwrap();
    assert!(
        html.contains(r#"name="token""#) && html.contains(r#"action="/ui/login""#),
        "{html}"
    );
    assert!(!html.contains(PLAIN.title), "no data before signing in");
    for path in [
        "/ui/ops".to_owned(),
        format!("/ui/issues/{}", seeded.issue),
        format!("/ui/jobs/{}", seeded.job),
    ] {
        let response = get(&base, &path, None).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{path}");
        assert_eq!(response.headers()[LOCATION], "/ui");
    }

    let wrong = client()
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", "status-page-tokeN"))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    assert!(wrong.headers().get(SET_COOKIE).is_none());
    let html = wrong.text().await.unwrap();
    assert!(
        html.contains(r#"name="token""#) && html.contains("not right"),
        "{html}"
    );

    let right = client()
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", UI_TOKEN))
        .send()
        .await
        .unwrap();
    assert_eq!(right.status(), StatusCode::SEE_OTHER);
    assert_eq!(right.headers()[LOCATION], "/ui");
    let set_cookie = right.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(set_cookie.starts_with("relay_session="), "{set_cookie}");
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set_cookie.contains(flag), "{set_cookie}");
    }
    assert!(!set_cookie.contains("Secure"), "plain http: {set_cookie}");
    let id = set_cookie
        .split(';')
        .next()
        .unwrap()
        .trim_start_matches("relay_session=");
    assert_eq!(id.len(), 64, "256 random bits");
    assert_ne!(
        id,
        sign_in(&base).await.trim_start_matches("relay_session="),
        "random ids"
    );
    let cookie = format!("relay_session={id}");

    let list = get(&base, "/ui", Some(&cookie)).await;
    assert_eq!(list.status(), StatusCode::OK);
    assert!(list.text().await.unwrap().contains(PLAIN.title));
    // The API takes the cookie for GETs (what the live trace's EventSource sends) …
    assert_eq!(
        get(&base, "/api/issues", Some(&cookie)).await.status(),
        StatusCode::OK
    );
    // … but not a made-up one, and never for anything but GET.
    assert_eq!(
        get(&base, "/api/issues", Some("relay_session=00ff"))
            .await
            .status(),
        StatusCode::UNAUTHORIZED
    );
    let post = client()
        .post(format!("{base}/api/issues"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_ne!(post.status(), StatusCode::OK);

    // Behind a TLS-terminating proxy the cookie is Secure.
    let proxied = client()
        .post(format!("{base}/ui/login"))
        .header("x-forwarded-proto", "https")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", UI_TOKEN))
        .send()
        .await
        .unwrap();
    assert!(
        proxied.headers()[SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("; Secure")
    );
    // A form posted from another site is refused.
    let cross = client()
        .post(format!("{base}/ui/login"))
        .header("origin", "https://evil.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", UI_TOKEN))
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), StatusCode::FORBIDDEN);

    // Signing out ends the session on the server, whatever the browser keeps.
    let out = client()
        .post(format!("{base}/ui/logout"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    assert!(
        out.headers()[SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
    assert_eq!(
        get(&base, "/ui/ops", Some(&cookie)).await.status(),
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        get(&base, "/api/issues", Some(&cookie)).await.status(),
        StatusCode::UNAUTHORIZED
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_session_expires_on_the_server(pool: PgPool) {
    seed(&pool, &PLAIN).await;
    let ui = UiSettings {
        session_ttl_secs: 1,
        secure_cookie: true,
        ..UiSettings::default()
    };
    let base = serve(ui_state(pool, ui)).await;
    let response = client()
        .post(format!("{base}/ui/login"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={}", UI_TOKEN))
        .send()
        .await
        .unwrap();
    let set_cookie = response.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    assert!(
        set_cookie.contains("Max-Age=1") && set_cookie.contains("; Secure"),
        "{set_cookie}"
    );
    let cookie = set_cookie.split(';').next().unwrap().to_owned();
    assert_eq!(
        get(&base, "/ui/ops", Some(&cookie)).await.status(),
        StatusCode::OK
    );
    // Past the lifetime (the browser would still send the cookie if it ignored Max-Age).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        get(&base, "/ui/ops", Some(&cookie)).await.status(),
        StatusCode::SEE_OTHER
    );
    assert_eq!(
        get(&base, "/api/issues", Some(&cookie)).await.status(),
        StatusCode::UNAUTHORIZED
    );
    let form = get(&base, "/ui", Some(&cookie)).await.text().await.unwrap();
    assert!(form.contains(r#"name="token""#));
}
