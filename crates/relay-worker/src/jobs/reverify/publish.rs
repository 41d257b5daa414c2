//! Telling people what a push's re-verification changed: the issue's living summary is
//! refreshed (or, with `[agent] summary_comment = false`, one short notice names the findings
//! that went stale), through the outbox. The tracker writes are sent by the issue's own
//! `process_issue` job (queued or joined here), so one job at a time writes for an issue.

use anyhow::Context as _;
use relay_actions::summary::{self, SummaryWrite};
use relay_core::ProcessIssue;
use relay_core::{IssueId, JobId};
use relay_store::PgPool;
use relay_store::queue::Job as _;

use super::IssueChange;

/// What publishing a push's changes queued.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Published {
    /// Summaries queued (new, edited or rewritten before sending).
    pub summaries: usize,
    /// Stale notices queued (summary off).
    pub notices: usize,
    /// Issues whose summary would not have changed.
    pub unchanged: usize,
}

/// How the issue hears about changed citations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Channel<'a> {
    /// The living summary comment (`[agent] summary_comment = true`), its footer's cost from
    /// `[prices]`.
    Summary {
        prices: &'a relay_core::prices::Prices,
    },
    /// One short notice per push naming the findings that went stale.
    StaleNotice,
}

/// Queues the writes for each changed issue and the issue's job that sends them.
pub async fn publish(
    pool: &PgPool,
    job_id: JobId,
    commit: &str,
    channel: Channel<'_>,
    max_attempts: i32,
    issues: &[IssueChange],
) -> anyhow::Result<Published> {
    let mut published = Published::default();
    for change in issues {
        let queued = match channel {
            Channel::Summary { prices } => {
                match summary::refresh_summary(pool, change.issue_id, Some(job_id), prices)
                    .await
                    .context("failed to queue the summary")?
                {
                    SummaryWrite::Unchanged | SummaryWrite::Deferred => {
                        published.unchanged += 1;
                        false
                    }
                    _ => {
                        published.summaries += 1;
                        true
                    }
                }
            }
            Channel::StaleNotice => {
                let mut conn = pool.acquire().await.context("no database connection")?;
                let queued = summary::enqueue_stale_notice(
                    &mut conn,
                    change.issue_id,
                    Some(job_id),
                    commit,
                    &change.newly_stale,
                )
                .await
                .context("failed to queue the stale notice")?;
                published.notices += usize::from(queued);
                queued
            }
        };
        if queued {
            send_with_issue_job(pool, change.issue_id, max_attempts).await?;
        }
    }
    if published.summaries + published.notices > 0 {
        relay_store::queue::notify_workers(pool)
            .await
            .context("failed to wake the workers")?;
    }
    Ok(published)
}

/// Queues (or joins) the issue's `process_issue` job: with no events pending it only drains
/// the issue's outbox.
async fn send_with_issue_job(
    pool: &PgPool,
    issue_id: IssueId,
    max_attempts: i32,
) -> anyhow::Result<()> {
    let mut conn = pool.acquire().await.context("no database connection")?;
    ProcessIssue { issue_id }
        .enqueue(&mut conn, max_attempts)
        .await
        .context("failed to queue the issue's job")?;
    Ok(())
}
