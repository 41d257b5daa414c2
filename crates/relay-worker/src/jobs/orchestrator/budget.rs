//! The per-issue token budget across jobs (`[agent] issue_token_budget`).
//!
//! Before a cycle the issue's spend (every `llm_usage` row of the issue, all roles and jobs) is
//! compared with its allowance. Past it, Relay posts ONE note and stops engaging until a human
//! mentions the bot again; that mention opens the next budget epoch, which allows another
//! `issue_token_budget` tokens.
//!
//! No table of its own: the epochs are the budget notes in the outbox. A note's idempotency key
//! is `budget:{issue}:{epoch}:{through}` where `through` is the last delivery the note consumed
//! (the note and the watermark raise commit in one transaction, and one job per issue runs at a
//! time, so there is at most one key per issue and epoch). A `mention` delivery after `through`
//! re-opens the issue.

use std::sync::Arc;

use anyhow::Context as _;
use relay_actions::Executor;
use relay_store::PgPool;
use relay_tracker::{IssueRef, IssueTracker};
use serde_json::{Value, json};

use super::Orchestrator;
use relay_actions::keys::{BudgetNoteKey, parse_budget_note_key};

/// Where the issue stands against its budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BudgetGate {
    /// Spend is below the allowance of the current epoch.
    Within { spent: u64, allowance: u64 },
    /// The budget note of the last epoch was posted and nobody mentioned the bot since.
    Paused { spent: u64 },
    /// Spend reached the allowance: note `epoch` is due.
    Exceeded {
        spent: u64,
        allowance: u64,
        epoch: u32,
    },
}

/// Evaluates the issue's budget (`budget`: tokens per epoch; 0 disables the check).
pub async fn gate(pool: &PgPool, issue_id: i64, budget: u64) -> anyhow::Result<BudgetGate> {
    let spent: u64 = relay_store::browse::spend_by_role(pool, issue_id)
        .await
        .context("failed to sum the issue's token spend")?
        .iter()
        .map(|role| {
            u64::try_from(role.prompt_tokens.saturating_add(role.completion_tokens)).unwrap_or(0)
        })
        .sum();
    if budget == 0 {
        return Ok(BudgetGate::Within {
            spent,
            allowance: u64::MAX,
        });
    }
    let mut conn = pool.acquire().await.context("no database connection")?;
    let notes: Vec<BudgetNoteKey> = relay_store::outbox::for_issue(&mut conn, issue_id)
        .await
        .context("failed to load the issue's writes")?
        .iter()
        .filter_map(|row| parse_budget_note_key(&row.idempotency_key, issue_id))
        .collect();
    let last = notes.iter().max_by_key(|note| note.epoch).copied();
    let epochs = last.map_or(0, |note| note.epoch);
    if let Some(note) = last {
        let mentioned = relay_store::issues::mentioned_after(&mut conn, issue_id, note.through)
            .await
            .context("failed to look for a new mention")?;
        if !mentioned {
            return Ok(BudgetGate::Paused { spent });
        }
    }
    let allowance = budget.saturating_mul(u64::from(epochs) + 1);
    Ok(if spent < allowance {
        BudgetGate::Within { spent, allowance }
    } else {
        BudgetGate::Exceeded {
            spent,
            allowance,
            epoch: epochs + 1,
        }
    })
}

/// Queues budget note `epoch` and consumes the issue's events through delivery `through`, in one
/// transaction. Returns whether the note is new.
pub async fn enqueue_note(
    pool: &PgPool,
    issue_id: i64,
    job_id: i64,
    epoch: u32,
    through: i64,
    body: &str,
) -> anyhow::Result<bool> {
    let mut tx = pool
        .begin()
        .await
        .context("failed to begin a transaction")?;
    let note = BudgetNoteKey { epoch, through };
    let new = relay_actions::notices::enqueue_budget_note(&mut tx, issue_id, job_id, note, body)
        .await
        .context("failed to queue the budget note")?;
    relay_store::issues::mark_events_handled(&mut tx, issue_id, through)
        .await
        .context("failed to consume the events")?;
    tx.commit()
        .await
        .context("failed to commit the budget note")?;
    Ok(new)
}

/// The note's text.
pub fn note_body(spent: u64, allowance: u64, budget: u64, bot_username: &str) -> String {
    format!(
        "I have used this issue's token budget ({spent} of {allowance} tokens) and stopped here. \
         Mention @{bot_username} to continue: that allows another {budget} tokens."
    )
}

impl Orchestrator {
    /// Checks the issue's token budget before a cycle. `Some` (the job's result) when the job must
    /// stop: the budget note was queued and sent (first time past the allowance), or the issue is
    /// paused (the pending events are consumed without an LLM call). `None` when nothing is
    /// pending or the budget allows another cycle.
    pub(crate) async fn budget_stop(
        &self,
        pool: &PgPool,
        tracker: &Arc<dyn IssueTracker>,
        issue_ref: &IssueRef,
        issue_id: i64,
        job_id: i64,
        bot_username: &str,
    ) -> anyhow::Result<Option<Value>> {
        let mut conn = pool.acquire().await.context("no database connection")?;
        let events = relay_store::issues::pending_events(&mut conn, issue_id)
            .await
            .context("failed to load pending events")?;
        let Some(through) = events.last().map(|e| e.id) else {
            return Ok(None);
        };
        let budget = self.agent.issue_token_budget;
        match gate(pool, issue_id, budget).await? {
            BudgetGate::Within { .. } => Ok(None),
            BudgetGate::Paused { spent } => {
                relay_store::issues::mark_events_handled(&mut conn, issue_id, through)
                    .await
                    .context("failed to consume the events")?;
                tracing::info!(
                    issue.id = issue_id,
                    spent,
                    "issue paused on its token budget"
                );
                Ok(Some(
                    json!({ "cycles": 0, "paused": "issue token budget", "spent": spent }),
                ))
            }
            BudgetGate::Exceeded {
                spent,
                allowance,
                epoch,
            } => {
                drop(conn);
                let body = note_body(spent, allowance, budget, bot_username);
                enqueue_note(pool, issue_id, job_id, epoch, through, &body).await?;
                let drain = Executor::new(pool.clone(), tracker.clone())
                    .drain_outbox(issue_id, issue_ref)
                    .await?;
                tracing::warn!(
                    issue.id = issue_id,
                    spent,
                    allowance,
                    epoch,
                    "issue token budget reached"
                );
                Ok(Some(json!({
                    "cycles": 0,
                    "budget_reached": { "spent": spent, "allowance": allowance, "epoch": epoch },
                    "drain_failures": drain.failures.len(),
                })))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn the_budget_note_carries_its_idempotency_marker(pool: PgPool) {
        assert!(enqueue_note(&pool, 7, 3, 1, 0, "stopped").await.unwrap());
        let mut conn = pool.acquire().await.unwrap();
        let row = relay_store::outbox::get(&mut conn, "budget:7:1:0")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            row.body, "stopped\n\n<!-- relay:write:budget:7:1:0 -->",
            "the drain looks a maybe-sent note up by this marker"
        );
    }
}
