//! Signing in to the status page with the `[api] token`, and out (here, or everywhere).
//!
//! A wrong token is logged with the client's address and counted against the client
//! ([`crate::limits::throttle`]); past `[ui] signin_max_failures` the client is refused with 429
//! before its token is even compared.

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Form};
use maud::html;
use secrecy::ExposeSecret;
use serde::Deserialize;

use super::session::{COOKIE_NAME, cookie_session, signed_in};
use crate::AppState;
use crate::error::ApiError;
use crate::limits::client::ClientAddr;
use crate::limits::{Refusal, refuse};

/// Largest sign-in form body: a token and its field name.
pub const FORM_BODY_LIMIT: usize = 4 * 1024;

#[derive(Debug, Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    pub token: String,
}

/// `POST /ui/login`: the right token starts a session and goes to `/ui`; a wrong one shows the
/// form again with 401.
pub async fn login(
    State(state): State<AppState>,
    client: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Result<Response, ApiError> {
    if !same_origin(&headers) {
        return Ok((StatusCode::FORBIDDEN, "cross-origin sign-in refused").into_response());
    }
    let Some(expected) = &state.api.token else {
        return Ok((StatusCode::NOT_FOUND, "not found").into_response());
    };
    let client = client.map(|Extension(client)| client);
    let ip = client.map(|c| c.ip);
    let shown = client.map_or_else(|| "unknown".to_owned(), |c| c.to_string());
    if !state.throttle.allows(ip) {
        tracing::warn!(client = %shown, "status page sign-in refused: too many failed attempts");
        return Ok(refuse(Refusal::SigninThrottled));
    }
    if !crate::routes::api::token_matches(&form.token, expected.expose_secret()) {
        state.throttle.failed(ip);
        tracing::warn!(client = %shown, "status page sign-in refused: wrong token");
        return Ok(form_page(
            StatusCode::UNAUTHORIZED,
            Some("That token is not right."),
        ));
    }
    state.throttle.succeeded(ip);
    let id = state.ui.sessions.start(&state, &shown).await?;
    tracing::info!(client = %shown, "status page sign-in");
    let secure = state.ui.settings.secure_cookie || served_over_https(&headers);
    let cookie = format!(
        "{COOKIE_NAME}={id}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
        state.ui.settings.session_ttl_secs,
        if secure { "; Secure" } else { "" }
    );
    Ok(redirect_with_cookie(&cookie))
}

/// `POST /ui/logout`: ends the session on every gateway and clears the cookie.
pub async fn logout(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if !same_origin(&headers) {
        return Ok((StatusCode::FORBIDDEN, "cross-origin sign-out refused").into_response());
    }
    if let Some(session) = cookie_session(&headers) {
        state.ui.sessions.end(&state, session).await?;
    }
    Ok(cleared())
}

/// `POST /ui/logout/everywhere`: ends every session (every person, every browser, every
/// gateway). Only a signed-in visitor may.
pub async fn logout_everywhere(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if !same_origin(&headers) {
        return Ok((StatusCode::FORBIDDEN, "cross-origin sign-out refused").into_response());
    }
    if signed_in(&state, &headers).await?.is_none() {
        return Ok(super::to_sign_in());
    }
    let ended = state.ui.sessions.end_all(&state).await?;
    tracing::info!(sessions = ended, "status page: every session signed out");
    Ok(cleared())
}

fn cleared() -> Response {
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

/// Whether the page was served over https: the browser's `Origin` (it sends one with every form
/// post) has the https scheme, or a TLS-terminating proxy says so in `X-Forwarded-Proto` (any
/// hop) or `Forwarded: proto=https`. These are taken from any peer, trusted or not: they can
/// only add `Secure`, and a client that lies gets a cookie its own plain-http browser drops.
fn served_over_https(headers: &HeaderMap) -> bool {
    let header_values = |name: &str| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|v| v.trim().to_owned())
            .collect::<Vec<_>>()
    };
    let origin_https = headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|origin| {
            origin
                .get(..8)
                .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
        });
    let forwarded_proto = header_values("x-forwarded-proto")
        .iter()
        .any(|v| v.eq_ignore_ascii_case("https"));
    let forwarded = header_values("forwarded").iter().any(|element| {
        element.split(';').any(|pair| {
            pair.trim().split_once('=').is_some_and(|(name, value)| {
                name.trim().eq_ignore_ascii_case("proto")
                    && value.trim().trim_matches('"').eq_ignore_ascii_case("https")
            })
        })
    });
    origin_https || forwarded_proto || forwarded
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

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn origins_must_match_the_host() {
        let host = ("host", "relay.example:8080");
        assert!(same_origin(&headers(&[host])));
        assert!(same_origin(&headers(&[
            host,
            ("origin", "https://relay.example:8080")
        ])));
        assert!(!same_origin(&headers(&[
            host,
            ("origin", "https://evil.example")
        ])));
    }

    #[test]
    fn https_is_seen_from_the_origin_or_a_proxy() {
        let check = |pairs: &[(&'static str, &'static str)], expected: bool| {
            assert_eq!(served_over_https(&headers(pairs)), expected, "{pairs:?}");
        };
        check(&[], false);
        check(&[("origin", "http://relay.example")], false);
        check(&[("origin", "https://relay.example")], true);
        check(&[("origin", "HTTPS://relay.example")], true);
        check(&[("x-forwarded-proto", "https")], true);
        check(&[("x-forwarded-proto", "http, https")], true);
        check(&[("x-forwarded-proto", "http")], false);
        check(
            &[("forwarded", "for=192.0.2.1;proto=https;by=10.0.0.1")],
            true,
        );
        check(
            &[("forwarded", "for=192.0.2.1, for=10.0.0.2;proto=\"https\"")],
            true,
        );
        check(&[("forwarded", "for=192.0.2.1;proto=http")], false);
    }
}
