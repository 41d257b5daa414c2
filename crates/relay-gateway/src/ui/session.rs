//! Status-page sessions: the cookie carries only a random id (256 bits); the database keeps the
//! id's SHA-256 digest with its expiry (`relay_store::ui_sessions`), so every gateway knows every
//! session, and a session ends server-side (expiry, sign-out, sign-out everywhere) whatever the
//! browser keeps. A live event stream opened with a session ends when the session does.

use std::time::Duration;

use axum::http::{HeaderMap, header};
use relay_store::ui_sessions::{self, NewSession, SessionDigest, TokenFingerprint};
use sha2::{Digest, Sha256};
use tokio::sync::broadcast;

use crate::AppState;
use crate::error::ApiError;

/// The session cookie's name.
pub const COOKIE_NAME: &str = "relay_session";
/// Bytes of randomness in a session id.
const ID_BYTES: usize = 32;
/// How often a live event stream re-reads its session (a sign-out on another gateway, expiry);
/// a sign-out on this gateway ends the stream at once.
pub const SESSION_RECHECK: Duration = Duration::from_secs(5);
/// Sign-outs buffered for the streams of this process (a lagging stream re-reads its session).
const SIGN_OUT_CAPACITY: usize = 64;

/// A session that ended on this gateway, for the event streams it serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedOut {
    One(SessionDigest),
    Everyone,
}

/// The process's side of the sessions: the settings and the sign-out fan-out.
pub struct Sessions {
    ttl: Duration,
    max: u64,
    signed_out: broadcast::Sender<SignedOut>,
}

impl Sessions {
    pub fn new(ttl: Duration, max: usize) -> Sessions {
        Sessions {
            ttl,
            max: max.max(1) as u64,
            signed_out: broadcast::channel(SIGN_OUT_CAPACITY).0,
        }
    }

    /// Starts a session bound to the API token in force and returns its id (the cookie value).
    pub async fn start(&self, state: &AppState, client: &str) -> Result<String, ApiError> {
        let Some(token) = token_fingerprint(state) else {
            // The sign-in route exists only with a token; no session without one.
            return Err(ApiError::Unauthorized("no API token is configured".into()));
        };
        let id = hex::encode(rand::random::<[u8; ID_BYTES]>());
        let new = NewSession {
            digest: &digest(&id),
            ttl: self.ttl,
            max_sessions: self.max,
            client,
            token: &token,
        };
        crate::routes::api::with_timeout(state, async {
            Ok(ui_sessions::start(&state.pool, &new).await?)
        })
        .await?;
        Ok(id)
    }

    /// Ends one session, everywhere.
    pub async fn end(&self, state: &AppState, session: SessionDigest) -> Result<(), ApiError> {
        crate::routes::api::with_timeout(state, async {
            Ok(ui_sessions::end(&state.pool, &session).await?)
        })
        .await?;
        let _ = self.signed_out.send(SignedOut::One(session));
        Ok(())
    }

    /// Ends every session on every gateway; how many there were.
    pub async fn end_all(&self, state: &AppState) -> Result<u64, ApiError> {
        let ended = crate::routes::api::with_timeout(state, async {
            Ok(ui_sessions::end_all(&state.pool).await?)
        })
        .await?;
        let _ = self.signed_out.send(SignedOut::Everyone);
        Ok(ended)
    }

    /// Sessions ended on this gateway from now on.
    pub fn signed_out(&self) -> broadcast::Receiver<SignedOut> {
        self.signed_out.subscribe()
    }
}

fn digest(id: &str) -> SessionDigest {
    Sha256::digest(id.as_bytes()).into()
}

/// Labels the token's digest, so that it is no digest of the token anything else computes.
const TOKEN_FINGERPRINT_LABEL: &[u8] = b"relay ui session token v1\0";

/// The fingerprint of `[api] token` sessions are bound to (none without a token): a session
/// created under another token (before a rotation) is not live under this one.
fn token_fingerprint(state: &AppState) -> Option<TokenFingerprint> {
    use secrecy::ExposeSecret as _;
    let token = state.api.token.as_ref()?;
    let mut hasher = Sha256::new();
    hasher.update(TOKEN_FINGERPRINT_LABEL);
    hasher.update(token.expose_secret().as_bytes());
    Some(hasher.finalize().into())
}

/// The session id the request's cookie carries, if any, and only if it has the shape of one
/// (so junk never reaches the database).
pub fn cookie_id(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE_NAME)
        .map(|(_, value)| value)
        .filter(|value| value.len() == ID_BYTES * 2 && value.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The digest of the session id the request's cookie carries, live or not.
pub fn cookie_session(headers: &HeaderMap) -> Option<SessionDigest> {
    cookie_id(headers).map(digest)
}

/// The live session the request carries, if any (always none without `[api] token`).
pub async fn signed_in(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Option<SessionDigest>, ApiError> {
    let Some(token) = token_fingerprint(state) else {
        return Ok(None);
    };
    let Some(id) = cookie_id(headers) else {
        return Ok(None);
    };
    let session = digest(id);
    let live = crate::routes::api::with_timeout(state, async {
        Ok(ui_sessions::is_live(&state.pool, &session, &token).await?)
    })
    .await?;
    Ok(live.then_some(session))
}

/// Resolves when `session` ends: signed out here (at once), or found gone on a re-read (signed
/// out on another gateway, expired). A failed re-read keeps the stream: the database being slow
/// is not a sign-out.
pub async fn ended(state: &AppState, session: SessionDigest) {
    let Some(token) = token_fingerprint(state) else {
        return;
    };
    let mut signed_out = state.ui.sessions.signed_out();
    let mut recheck = tokio::time::interval(SESSION_RECHECK);
    recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    recheck.tick().await;
    loop {
        let reread = tokio::select! {
            message = signed_out.recv() => match message {
                Ok(SignedOut::Everyone) => return,
                Ok(SignedOut::One(ended)) if ended == session => return,
                Ok(SignedOut::One(_)) => false,
                Err(broadcast::error::RecvError::Lagged(_)) => true,
                Err(broadcast::error::RecvError::Closed) => {
                    recheck.tick().await;
                    true
                }
            },
            _ = recheck.tick() => true,
        };
        if reread
            && let Ok(Ok(false)) = tokio::time::timeout(
                state.db_timeout(),
                ui_sessions::is_live(&state.pool, &session, &token),
            )
            .await
        {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn only_a_well_formed_cookie_is_an_id() {
        let id = "ab".repeat(ID_BYTES);
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("a=1; relay_session={id}; b=2")).unwrap(),
        );
        assert_eq!(cookie_id(&headers), Some(id.as_str()));
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("relay_session=abc"),
        );
        assert_eq!(cookie_id(&headers), None);
        headers.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("relay_session={}", "zz".repeat(ID_BYTES))).unwrap(),
        );
        assert_eq!(cookie_id(&headers), None);
    }
}
