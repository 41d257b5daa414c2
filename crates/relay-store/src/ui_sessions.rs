//! Status-page sign-ins (migration 0030): one row per session, keyed by the SHA-256 digest of the
//! random id the cookie carries. Every gateway reads the same rows, so a restart or a second
//! gateway signs no one out, and a sign-out (or "sign out everywhere") holds on all of them. Each
//! session keeps the fingerprint of the API token it was created with (migration 0097) and is
//! live only under the same one: rotating the token ends every session.

use std::time::Duration;

use sqlx::PgPool;

use crate::Result;

/// Bytes of a session id digest (SHA-256).
pub const DIGEST_BYTES: usize = 32;

/// A session id's digest; the id itself is never stored.
pub type SessionDigest = [u8; DIGEST_BYTES];

/// A fingerprint of the API token a session was created with (a digest, never the token).
pub type TokenFingerprint = [u8; DIGEST_BYTES];

/// A sign-in to record.
#[derive(Debug, Clone, Copy)]
pub struct NewSession<'a> {
    pub digest: &'a SessionDigest,
    /// How long the session lasts from now.
    pub ttl: Duration,
    /// Most sessions kept: past it, the oldest ones end.
    pub max_sessions: u64,
    /// The client as the gateway saw it (for the operator's eyes only).
    pub client: &'a str,
    /// The API token the client signed in with, fingerprinted.
    pub token: &'a TokenFingerprint,
}

/// Records a sign-in. Expired sessions are deleted on the way, and the oldest ones past
/// `max_sessions` end (newest first is kept), so the table stays bounded.
pub async fn start(pool: &PgPool, session: &NewSession<'_>) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("DELETE FROM ui_sessions WHERE expires_at <= now()")
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO ui_sessions (id_digest, expires_at, client, token_fingerprint)
         VALUES ($1, now() + make_interval(secs => $2), $3, $4)",
    )
    .bind(session.digest.as_slice())
    .bind(session.ttl.as_secs_f64())
    .bind(session.client)
    .bind(session.token.as_slice())
    .execute(&mut *tx)
    .await?;
    // The new row has the latest `created_at` of the transaction's clock, so it is kept.
    sqlx::query(
        "DELETE FROM ui_sessions WHERE id_digest IN (
             SELECT id_digest FROM ui_sessions
             ORDER BY created_at DESC, (id_digest = $1) DESC
             OFFSET $2)",
    )
    .bind(session.digest.as_slice())
    .bind(i64::try_from(session.max_sessions.max(1)).unwrap_or(i64::MAX))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Whether the digest names a session that has not expired and was created with the token
/// whose fingerprint is `token` (a session of a rotated token, or of none, is not).
pub async fn is_live(
    pool: &PgPool,
    digest: &SessionDigest,
    token: &TokenFingerprint,
) -> Result<bool> {
    Ok(sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM ui_sessions
                        WHERE id_digest = $1 AND expires_at > now() AND token_fingerprint = $2)",
    )
    .bind(digest.as_slice())
    .bind(token.as_slice())
    .fetch_one(pool)
    .await?)
}

/// Ends one session (sign-out); whether it existed.
pub async fn end(pool: &PgPool, digest: &SessionDigest) -> Result<bool> {
    let done = sqlx::query("DELETE FROM ui_sessions WHERE id_digest = $1")
        .bind(digest.as_slice())
        .execute(pool)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Ends every session on every gateway ("sign out everywhere"); how many there were.
pub async fn end_all(pool: &PgPool) -> Result<u64> {
    let done = sqlx::query("DELETE FROM ui_sessions").execute(pool).await?;
    Ok(done.rows_affected())
}
