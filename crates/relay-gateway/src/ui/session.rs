//! Sign-in to the status page: the `[api] token` once, then a session cookie.
//!
//! The cookie carries only a random id (256 bits); the server keeps the id's digest with its
//! expiry, so a session ends server-side (expiry, sign-out, restart) whatever the browser keeps.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::Form;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::html;
use secrecy::ExposeSecret;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::AppState;

/// The session cookie's name.
pub const COOKIE_NAME: &str = "relay_session";
/// Bytes of randomness in a session id.
const ID_BYTES: usize = 32;

type Digest32 = [u8; 32];

/// Live sessions: id digest → when it expires and its start order.
pub struct Sessions {
    ttl: Duration,
    max: usize,
    live: Mutex<Live>,
}

#[derive(Default)]
struct Live {
    sessions: HashMap<Digest32, Session>,
    started: u64,
}

#[derive(Clone, Copy)]
struct Session {
    expires: Instant,
    /// Start order: the lowest is the oldest.
    order: u64,
}

impl Sessions {
    pub fn new(ttl: Duration, max: usize) -> Sessions {
        Sessions {
            ttl,
            max: max.max(1),
            live: Mutex::new(Live::default()),
        }
    }

    /// Starts a session and returns its id (the cookie value).
    pub fn start(&self) -> String {
        let id: [u8; ID_BYTES] = rand::random();
        let id = hex::encode(id);
        let now = Instant::now();
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if live.sessions.len() >= self.max {
            live.sessions.retain(|_, s| s.expires > now);
        }
        if live.sessions.len() >= self.max {
            // Full of live sessions: the oldest ends.
            let oldest = live
                .sessions
                .iter()
                .min_by_key(|(_, s)| s.order)
                .map(|(k, _)| *k);
            if let Some(oldest) = oldest {
                live.sessions.remove(&oldest);
            }
        }
        live.started += 1;
        let session = Session {
            expires: now + self.ttl,
            order: live.started,
        };
        live.sessions.insert(digest(&id), session);
        id
    }

    /// Whether `id` names a live session (an expired one is forgotten).
    pub fn is_live(&self, id: &str) -> bool {
        let key = digest(id);
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        match live.sessions.get(&key) {
            Some(session) if session.expires > Instant::now() => true,
            Some(_) => {
                live.sessions.remove(&key);
                false
            }
            None => false,
        }
    }

    pub fn end(&self, id: &str) {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.sessions.remove(&digest(id));
    }
}

fn digest(id: &str) -> Digest32 {
    Sha256::digest(id.as_bytes()).into()
}

/// The session id the request's cookie carries, if any.
pub fn cookie_id(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value)
}

/// Whether the request carries a live session (always false without `[api] token`).
pub fn signed_in(state: &AppState, headers: &HeaderMap) -> bool {
    state.api.token.is_some() && cookie_id(headers).is_some_and(|id| state.ui.sessions.is_live(id))
}

#[derive(Debug, Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    pub token: String,
}

/// `POST /ui/login`: the right token starts a session and goes to `/ui`; a wrong one shows the
/// form again with 401.
pub async fn login(
    State(state): State<AppState>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    if !same_origin(&headers) {
        return (StatusCode::FORBIDDEN, "cross-origin sign-in refused").into_response();
    }
    let Some(expected) = &state.api.token else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    if !crate::routes::api::token_matches(&form.token, expected.expose_secret()) {
        tracing::info!("status page sign-in refused: wrong token");
        return form_page(StatusCode::UNAUTHORIZED, Some("That token is not right."));
    }
    let id = state.ui.sessions.start();
    let secure = state.ui.settings.secure_cookie || behind_https(&headers);
    let cookie = format!(
        "{COOKIE_NAME}={id}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
        state.ui.settings.session_ttl_secs,
        if secure { "; Secure" } else { "" }
    );
    redirect_with_cookie(&cookie)
}

/// `POST /ui/logout`: ends the session server-side and clears the cookie.
pub async fn logout(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if !same_origin(&headers) {
        return (StatusCode::FORBIDDEN, "cross-origin sign-out refused").into_response();
    }
    if let Some(id) = cookie_id(&headers) {
        state.ui.sessions.end(id);
    }
    redirect_with_cookie(&format!(
        "{COOKIE_NAME}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
    ))
}

fn redirect_with_cookie(cookie: &str) -> Response {
    let mut response = (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, HeaderValue::from_static("/ui"))],
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// A TLS-terminating proxy in front says so.
fn behind_https(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("https")
        })
}

/// A browser's form post from another site carries that site's `Origin` (or `null` from a
/// sandboxed frame): refused. The pages' `Referrer-Policy: same-origin` keeps our own posts'
/// `Origin` (`no-referrer` would turn it into `null`). The session cookie is `SameSite=Strict`
/// too; this also stops signing a victim in with an attacker's token.
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let origin_host = origin.split_once("://").map_or(origin, |(_, rest)| rest);
    !host.is_empty() && origin_host.eq_ignore_ascii_case(host)
}

/// The sign-in form, optionally with an error.
pub fn form_page(status: StatusCode, error: Option<&str>) -> Response {
    let body = html! {
        section.signin {
            h1 { "Relay status" }
            p { "Sign in with the API token (" code { "[api] token" } ")." }
            @if let Some(error) = error {
                p.error role="alert" { (error) }
            }
            form method="post" action="/ui/login" {
                label for="token" { "Token" }
                input #token type="password" name="token" autocomplete="current-password" required autofocus;
                button type="submit" { "Sign in" }
            }
        }
    };
    super::html(status, super::layout::bare("Sign in", body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_expire_and_end() {
        let sessions = Sessions::new(Duration::from_secs(60), 10);
        let id = sessions.start();
        assert_eq!(id.len(), ID_BYTES * 2);
        assert!(sessions.is_live(&id));
        assert!(!sessions.is_live("nope"));
        sessions.end(&id);
        assert!(!sessions.is_live(&id));

        let expired = Sessions::new(Duration::ZERO, 10);
        let id = expired.start();
        assert!(!expired.is_live(&id));
    }

    #[test]
    fn a_full_store_ends_the_oldest_session() {
        let sessions = Sessions::new(Duration::from_secs(60), 2);
        let first = sessions.start();
        let second = sessions.start();
        let third = sessions.start();
        assert!(!sessions.is_live(&first));
        assert!(sessions.is_live(&second) && sessions.is_live(&third));
    }

    #[test]
    fn cookies_and_origins_parse() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; relay_session=abc; b=2"),
        );
        assert_eq!(cookie_id(&headers), Some("abc"));
        headers.insert(header::HOST, HeaderValue::from_static("relay.example:8080"));
        assert!(same_origin(&headers));
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://relay.example:8080"),
        );
        assert!(same_origin(&headers));
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("https://evil.example"),
        );
        assert!(!same_origin(&headers));
        headers.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        assert!(behind_https(&headers));
    }
}
