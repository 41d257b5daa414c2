//! The webhook delivery log. One row per delivery identity; a redelivery finds its row and creates
//! nothing. Rows are written by [`crate::intake`].

use crate::Result;
use relay_core::DeliveryId;
use relay_core::{IssueId, JobId};

/// A recorded delivery, for tests and operators.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct DeliveryRow {
    pub id: DeliveryId,
    pub tracker: String,
    pub event_type: String,
    pub action: Option<String>,
    pub delivery_key: String,
    pub outcome: String,
    pub reason: String,
    pub issue_id: Option<IssueId>,
    pub job_id: Option<JobId>,
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
