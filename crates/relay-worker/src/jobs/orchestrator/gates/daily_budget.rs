//! `[agent] daily_token_budget`: a ceiling on what all issues of one tracker may spend per UTC
//! day, whatever the per-issue budgets allow (many issues, or many trackers' worth of mentions,
//! cannot run the bill up in one day).
//!
//! Read before each cycle from `llm_usage` (today's rows of the tracker's issues). Past it the job
//! makes no LLM call: its events stay pending and the issue's next job is held until midnight UTC,
//! when it answers them. The first job of a tracker to find the budget reached in a day logs one
//! line and counts `relay_daily_token_budget_reached_total{tracker}` (per process).

use relay_core::IssueId;
use relay_core::JobId;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use anyhow::Context as _;
use chrono::{DateTime, Days, NaiveDate, Utc};
use relay_core::ProcessIssue;
use relay_store::PgPool;
use relay_store::queue::Job as _;

/// Counter: times a tracker's daily budget was found reached (once per tracker, day and process).
pub const DAILY_BUDGET_REACHED_TOTAL: &str = "relay_daily_token_budget_reached_total";

/// Where a tracker stands against its daily budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DailyGate {
    /// Below the budget, or no budget.
    Within,
    /// Today's spend reached the budget; it resets at `resets_at` (next midnight UTC).
    Reached {
        spent: u64,
        budget: u64,
        resets_at: DateTime<Utc>,
    },
}

/// Reads today's spend of `tracker` against `budget` (0: no budget, nothing read).
pub async fn gate(
    pool: &PgPool,
    tracker: &str,
    budget: u64,
    now: DateTime<Utc>,
) -> anyhow::Result<DailyGate> {
    if budget == 0 {
        return Ok(DailyGate::Within);
    }
    let today = now.date_naive();
    let start = midnight(today);
    let spent = relay_store::llm_usage::tracker_spend_since(pool, tracker, start)
        .await
        .context("failed to sum the tracker's spend today")?;
    let spent = u64::try_from(spent).unwrap_or(0);
    if spent < budget {
        return Ok(DailyGate::Within);
    }
    let tomorrow = today.checked_add_days(Days::new(1)).unwrap_or(today);
    Ok(DailyGate::Reached {
        spent,
        budget,
        resets_at: midnight(tomorrow),
    })
}

fn midnight(day: NaiveDate) -> DateTime<Utc> {
    day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc()
}

/// Says, once per tracker and day in this process, that the daily budget was reached (one log
/// line and the counter). Returns whether this call was the first.
pub fn announce(tracker: &str, spent: u64, budget: u64, resets_at: DateTime<Utc>) -> bool {
    static ANNOUNCED: OnceLock<Mutex<HashMap<String, DateTime<Utc>>>> = OnceLock::new();
    let mut announced = ANNOUNCED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if announced.get(tracker) == Some(&resets_at) {
        return false;
    }
    announced.insert(tracker.to_owned(), resets_at);
    drop(announced);
    tracing::warn!(
        tracker,
        spent,
        budget,
        resets_at = %resets_at,
        "daily token budget reached: issues are recorded and answered after the reset"
    );
    metrics::counter!(DAILY_BUDGET_REACHED_TOTAL, "tracker" => tracker.to_owned()).increment(1);
    true
}

/// Creates `relay_daily_token_budget_reached_total` at 0 for each configured tracker: it counts
/// once per tracker and day, so without the zero the first time a budget is reached after a start
/// would be no increase to the alert (see [`relay_telemetry::metrics::zero_counter`]).
pub fn zero_counters(trackers: &[&str]) {
    for tracker in trackers {
        relay_telemetry::metrics::zero_counter(DAILY_BUDGET_REACHED_TOTAL, &[("tracker", tracker)]);
    }
}

/// Queues (or joins) the issue's next job and holds it until `resets_at`; the pending events stay
/// for it. Returns the job id.
pub async fn defer_issue(
    pool: &PgPool,
    issue_id: IssueId,
    max_attempts: i32,
    resets_at: DateTime<Utc>,
) -> anyhow::Result<JobId> {
    let mut tx = pool.begin().await.context("no database connection")?;
    let enqueued = ProcessIssue { issue_id }
        .enqueue(&mut tx, max_attempts)
        .await
        .context("failed to queue the deferred job")?;
    relay_store::queue::defer_queued(&mut tx, enqueued.job_id(), resets_at)
        .await
        .context("failed to hold the deferred job")?;
    tx.commit()
        .await
        .context("failed to commit the deferred job")?;
    Ok(enqueued.job_id())
}

/// Checks the tracker's daily budget before a cycle. `Some` (the job's result) when it is reached:
/// the issue's next job was held until the reset and no LLM call may be made now.
pub async fn stop(
    pool: &PgPool,
    tracker: &str,
    budget: u64,
    issue_id: IssueId,
    max_attempts: i32,
) -> anyhow::Result<Option<serde_json::Value>> {
    match gate(pool, tracker, budget, Utc::now()).await? {
        DailyGate::Within => Ok(None),
        DailyGate::Reached {
            spent,
            budget,
            resets_at,
        } => {
            announce(tracker, spent, budget, resets_at);
            let job = defer_issue(pool, issue_id, max_attempts, resets_at).await?;
            tracing::info!(
                issue.id = issue_id.get(),
                job.id = job.get(),
                resets_at = %resets_at,
                "issue deferred until the daily token budget resets"
            );
            Ok(Some(serde_json::json!({
                "daily_budget_reached": { "spent": spent, "budget": budget },
                "deferred_until": resets_at,
                "deferred_job": job,
            })))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announced_once_per_tracker_and_day() {
        let day = midnight(NaiveDate::from_ymd_opt(2026, 1, 2).unwrap());
        let next = midnight(NaiveDate::from_ymd_opt(2026, 1, 3).unwrap());
        assert!(announce("t-once", 10, 5, day));
        assert!(!announce("t-once", 11, 5, day));
        assert!(announce("t-other", 10, 5, day));
        assert!(announce("t-once", 10, 5, next));
    }
}
