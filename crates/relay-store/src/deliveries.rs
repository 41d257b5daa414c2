//! The webhook delivery log. One row per delivery identity; a redelivery finds its row and creates nothing.

use serde_json::Value;
use sqlx::PgConnection;

use crate::Result;

/// What the gateway decided about a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It engaged the bot and created or joined a job.
    Accepted,
    /// Recorded, but nothing to do.
    Ignored,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Accepted => "accepted",
            Outcome::Ignored => "ignored",
        }
    }
}

/// A delivery to record.
#[derive(Debug, Clone)]
pub struct NewDelivery<'a> {
    pub tracker: &'a str,
    pub event_type: &'a str,
    pub action: Option<&'a str>,
    pub delivery_key: &'a str,
    pub payload: &'a Value,
}

/// Records a delivery with a provisional outcome of `ignored`.
/// Returns `None` when this delivery identity was recorded before (a redelivery).
pub async fn insert(conn: &mut PgConnection, delivery: &NewDelivery<'_>) -> Result<Option<i64>> {
    let id = sqlx::query_scalar(
        "INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload)
         VALUES ($1, $2, $3, $4, 'ignored', 'pending', $5)
         ON CONFLICT (tracker, delivery_key) DO NOTHING
         RETURNING id",
    )
    .bind(delivery.tracker)
    .bind(delivery.event_type)
    .bind(delivery.action)
    .bind(delivery.delivery_key)
    .bind(delivery.payload)
    .fetch_optional(conn)
    .await?;
    Ok(id)
}

/// Sets the final outcome of a recorded delivery.
pub async fn set_outcome(
    conn: &mut PgConnection,
    delivery_id: i64,
    outcome: Outcome,
    reason: &str,
    issue_id: Option<i64>,
    job_id: Option<i64>,
) -> Result<()> {
    sqlx::query(
        "UPDATE deliveries SET outcome = $2, reason = $3, issue_id = $4, job_id = $5 WHERE id = $1",
    )
    .bind(delivery_id)
    .bind(outcome.as_str())
    .bind(reason)
    .bind(issue_id)
    .bind(job_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// A recorded delivery, for tests and operators.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DeliveryRow {
    pub id: i64,
    pub tracker: String,
    pub event_type: String,
    pub action: Option<String>,
    pub delivery_key: String,
    pub outcome: String,
    pub reason: String,
    pub issue_id: Option<i64>,
    pub job_id: Option<i64>,
}

/// All deliveries in insertion order.
pub async fn list(pool: &sqlx::PgPool) -> Result<Vec<DeliveryRow>> {
    Ok(sqlx::query_as(
        "SELECT id, tracker, event_type, action, delivery_key, outcome, reason, issue_id, job_id
         FROM deliveries ORDER BY id",
    )
    .fetch_all(pool)
    .await?)
}
