//! Status-page sessions in Postgres: live until expiry or sign-out, bounded, ended everywhere.

use std::time::Duration;

use relay_store::PgPool;
use relay_store::ui_sessions::{self, NewSession, SessionDigest, TokenFingerprint};

/// The fingerprint of the API token these sessions were created with.
const TOKEN: TokenFingerprint = [7; 32];

fn digest(n: u8) -> SessionDigest {
    [n; 32]
}

fn session(digest: &SessionDigest, ttl: Duration, max_sessions: u64) -> NewSession<'_> {
    NewSession {
        digest,
        ttl,
        max_sessions,
        client: "127.0.0.1",
        token: &TOKEN,
    }
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_session_lives_until_it_expires_or_ends(pool: PgPool) {
    let hour = Duration::from_secs(3600);
    ui_sessions::start(&pool, &session(&digest(1), hour, 10))
        .await
        .unwrap();
    assert!(
        ui_sessions::is_live(&pool, &digest(1), &TOKEN)
            .await
            .unwrap()
    );
    assert!(
        !ui_sessions::is_live(&pool, &digest(2), &TOKEN)
            .await
            .unwrap()
    );
    assert!(ui_sessions::end(&pool, &digest(1)).await.unwrap());
    assert!(
        !ui_sessions::is_live(&pool, &digest(1), &TOKEN)
            .await
            .unwrap()
    );
    assert!(!ui_sessions::end(&pool, &digest(1)).await.unwrap());

    ui_sessions::start(&pool, &session(&digest(3), Duration::ZERO, 10))
        .await
        .unwrap();
    assert!(
        !ui_sessions::is_live(&pool, &digest(3), &TOKEN)
            .await
            .unwrap()
    );
    // The next sign-in deletes the expired row.
    ui_sessions::start(&pool, &session(&digest(4), hour, 10))
        .await
        .unwrap();
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM ui_sessions")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(rows, 1);
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn past_the_cap_the_oldest_sessions_end(pool: PgPool) {
    let hour = Duration::from_secs(3600);
    for n in 1..=3 {
        ui_sessions::start(&pool, &session(&digest(n), hour, 2))
            .await
            .unwrap();
    }
    assert!(
        !ui_sessions::is_live(&pool, &digest(1), &TOKEN)
            .await
            .unwrap()
    );
    assert!(
        ui_sessions::is_live(&pool, &digest(2), &TOKEN)
            .await
            .unwrap()
    );
    assert!(
        ui_sessions::is_live(&pool, &digest(3), &TOKEN)
            .await
            .unwrap()
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn sign_out_everywhere_ends_every_session(pool: PgPool) {
    let hour = Duration::from_secs(3600);
    for n in 1..=3 {
        ui_sessions::start(&pool, &session(&digest(n), hour, 10))
            .await
            .unwrap();
    }
    assert_eq!(ui_sessions::end_all(&pool).await.unwrap(), 3);
    for n in 1..=3 {
        assert!(
            !ui_sessions::is_live(&pool, &digest(n), &TOKEN)
                .await
                .unwrap()
        );
    }
}

/// A session is live only under the token it was created with: after a rotation, none is.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn a_session_ends_with_the_token_it_was_created_with(pool: PgPool) {
    ui_sessions::start(&pool, &session(&digest(1), Duration::from_secs(3600), 10))
        .await
        .unwrap();
    assert!(
        ui_sessions::is_live(&pool, &digest(1), &TOKEN)
            .await
            .unwrap()
    );
    assert!(
        !ui_sessions::is_live(&pool, &digest(1), &[8; 32])
            .await
            .unwrap()
    );
    // A row from before the fingerprint (migration 0097) is live under no token.
    sqlx::query("UPDATE ui_sessions SET token_fingerprint = NULL")
        .execute(&pool)
        .await
        .unwrap();
    assert!(
        !ui_sessions::is_live(&pool, &digest(1), &TOKEN)
            .await
            .unwrap()
    );
}
