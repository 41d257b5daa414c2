//! Commands that change how Relay treats one issue (migration 0042): `stop`/`resume`, and a
//! maintainer's `budget` raises. Each is keyed by the command's delivery, so a retried job
//! applies it once, and a replayed older command never undoes a newer one.

use chrono::{DateTime, Utc};
use relay_core::{DeliveryId, IssueId};
use sqlx::PgConnection;

use crate::Result;

/// Whether Relay is stopped on the issue, and by whom since when.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct Stopped {
    pub stopped_at: DateTime<Utc>,
    pub stopped_by: String,
}

/// Stops (`stop = true`) or resumes Relay on the issue, as the command of delivery
/// `delivery_id` by `by` says; a command older than the last applied changes nothing.
pub async fn set_stopped(
    conn: &mut PgConnection,
    issue_id: IssueId,
    delivery_id: DeliveryId,
    by: &str,
    stop: bool,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO issue_controls AS c (issue_id, stopped_at, stopped_by, last_delivery_id)
         VALUES ($1, CASE WHEN $4 THEN now() END, CASE WHEN $4 THEN $3 END, $2)
         ON CONFLICT (issue_id) DO UPDATE
            SET stopped_at = CASE WHEN $4 THEN coalesce(c.stopped_at, now()) END,
                stopped_by = CASE WHEN $4 THEN coalesce(c.stopped_by, $3) END,
                last_delivery_id = $2
            WHERE c.last_delivery_id < $2",
    )
    .bind(issue_id)
    .bind(delivery_id)
    .bind(by)
    .bind(stop)
    .execute(conn)
    .await?;
    Ok(())
}

/// Whether Relay is stopped on the issue.
pub async fn stopped(conn: &mut PgConnection, issue_id: IssueId) -> Result<Option<Stopped>> {
    Ok(sqlx::query_as(
        "SELECT stopped_at, stopped_by FROM issue_controls
         WHERE issue_id = $1 AND stopped_at IS NOT NULL",
    )
    .bind(issue_id)
    .fetch_optional(conn)
    .await?)
}

/// A budget raise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Raise {
    pub tokens: u64,
    pub usd: f64,
}

/// Records the raise of command delivery `delivery_id`; returns whether it is new.
pub async fn raise_budget(
    conn: &mut PgConnection,
    issue_id: IssueId,
    delivery_id: DeliveryId,
    by: &str,
    raise: Raise,
) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO issue_budget_raises (issue_id, delivery_id, raised_by, tokens, usd)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT (delivery_id) DO NOTHING",
    )
    .bind(issue_id)
    .bind(delivery_id)
    .bind(by)
    .bind(i64::try_from(raise.tokens).unwrap_or(i64::MAX))
    .bind(raise.usd)
    .execute(conn)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// The issue's raises so far: their sum and how many there were.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Raises {
    pub tokens: u64,
    pub usd: f64,
    pub count: u32,
}

pub async fn raises(conn: &mut PgConnection, issue_id: IssueId) -> Result<Raises> {
    let (tokens, usd, count): (i64, f64, i64) = sqlx::query_as(
        "SELECT coalesce(sum(tokens), 0)::BIGINT, coalesce(sum(usd), 0)::DOUBLE PRECISION, count(*)
         FROM issue_budget_raises WHERE issue_id = $1",
    )
    .bind(issue_id)
    .fetch_one(conn)
    .await?;
    Ok(Raises {
        tokens: u64::try_from(tokens).unwrap_or(0),
        usd,
        count: u32::try_from(count).unwrap_or(u32::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::PgPool;

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn stop_resume_and_raises_apply_once_in_delivery_order(pool: PgPool) {
        let mut conn = pool.acquire().await.unwrap();
        assert_eq!(
            stopped(&mut conn, relay_core::IssueId(1)).await.unwrap(),
            None
        );
        set_stopped(
            &mut conn,
            relay_core::IssueId(1),
            DeliveryId(10),
            "@alice",
            true,
        )
        .await
        .unwrap();
        assert_eq!(
            stopped(&mut conn, relay_core::IssueId(1))
                .await
                .unwrap()
                .unwrap()
                .stopped_by,
            "@alice"
        );
        set_stopped(
            &mut conn,
            relay_core::IssueId(1),
            DeliveryId(11),
            "@bob",
            true,
        )
        .await
        .unwrap();
        assert_eq!(
            stopped(&mut conn, relay_core::IssueId(1))
                .await
                .unwrap()
                .unwrap()
                .stopped_by,
            "@alice",
            "stopping again keeps who stopped it first"
        );
        set_stopped(
            &mut conn,
            relay_core::IssueId(1),
            DeliveryId(12),
            "@bob",
            false,
        )
        .await
        .unwrap();
        assert_eq!(
            stopped(&mut conn, relay_core::IssueId(1)).await.unwrap(),
            None
        );
        set_stopped(
            &mut conn,
            relay_core::IssueId(1),
            DeliveryId(10),
            "@alice",
            true,
        )
        .await
        .unwrap();
        assert_eq!(
            stopped(&mut conn, relay_core::IssueId(1)).await.unwrap(),
            None,
            "a replayed older stop"
        );

        let raise = Raise {
            tokens: 1000,
            usd: 0.0,
        };
        assert!(
            raise_budget(
                &mut conn,
                relay_core::IssueId(1),
                DeliveryId(20),
                "@owner",
                raise
            )
            .await
            .unwrap()
        );
        assert!(
            !raise_budget(
                &mut conn,
                relay_core::IssueId(1),
                DeliveryId(20),
                "@owner",
                raise
            )
            .await
            .unwrap()
        );
        let usd = Raise {
            tokens: 0,
            usd: 1.5,
        };
        assert!(
            raise_budget(
                &mut conn,
                relay_core::IssueId(1),
                DeliveryId(21),
                "@owner",
                usd
            )
            .await
            .unwrap()
        );
        let total = raises(&mut conn, relay_core::IssueId(1)).await.unwrap();
        assert_eq!((total.tokens, total.usd, total.count), (1000, 1.5, 2));
    }
}
