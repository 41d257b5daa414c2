//! The per-issue cap across jobs: tokens (`[agent] issue_token_budget`) and dollars
//! (`issue_cost_budget_usd`, priced with `[prices]`), each narrowed by the repository's
//! `.relay.toml` `[budget]` and raised by a maintainer's `@bot budget <amount>`.
//!
//! Before a cycle the issue's spend (every `llm_usage` row of the issue, all roles and jobs) is
//! compared with its allowance: the cap plus the raises so far. Past it, Relay posts ONE note
//! saying so and how to continue, and stays silent on the issue (later events are consumed
//! without an LLM call) until a raise lifts the allowance above the spend. A pending spec is
//! never written past the cap, so no partial spec is ever posted.
//!
//! No table for the notes: they are the budget notes in the outbox. A note's idempotency key is
//! `budget:{issue}:{epoch}:{through}` where `epoch` is 1 + the number of raises when it was
//! posted and `through` the last delivery it consumed: one note per allowance, whatever retries
//! happen; after a raise, reaching the new allowance posts the next one.

use anyhow::Context as _;
use relay_actions::keys::{BudgetNoteKey, parse_budget_note_key};
use relay_core::prices::{Cost, Prices};
use relay_core::repo_config::{EffectiveConfig, Origin};
use relay_store::PgPool;
use serde_json::{Value, json};

use super::super::job::{Job, JobRun};
use relay_core::{IssueId, JobId};

/// An issue's cap (0: none), from the server narrowed by the repository.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IssueCap {
    pub tokens: u64,
    pub usd: f64,
    /// Whether the repository's `.relay.toml` set it (the note says where the cap comes from).
    pub from_repository: bool,
}

impl IssueCap {
    /// The cap under the repository's configuration (the server's, narrowed by it).
    pub fn of(config: &EffectiveConfig) -> IssueCap {
        IssueCap {
            tokens: config.issue_token_budget,
            usd: config.issue_cost_budget_usd,
            from_repository: config
                .keys
                .iter()
                .any(|k| k.key.starts_with("budget.") && k.origin == Origin::Repository),
        }
    }

    fn is_none(&self) -> bool {
        self.tokens == 0 && self.usd <= 0.0
    }
}

/// What an issue spent.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spend {
    pub tokens: u64,
    /// Priced by `[prices]`; calls of a model without a price count for nothing here.
    pub cost: Cost,
}

/// The cap plus the raises (a dimension without a cap stays uncapped).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Allowance {
    pub tokens: Option<u64>,
    pub usd: Option<f64>,
}

impl Allowance {
    /// `12,000 tokens` / `$2.00` / both.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .tokens
            .map(|t| format!("{t} tokens"))
            .into_iter()
            .chain(self.usd.map(relay_core::prices::usd))
            .collect();
        if parts.is_empty() {
            "no cap".into()
        } else {
            parts.join(" and ")
        }
    }
}

/// Where the issue stands against its cap.
#[derive(Debug, Clone, PartialEq)]
pub enum BudgetGate {
    /// Spend is below the allowance (or there is no cap).
    Within { spend: Spend, allowance: Allowance },
    /// The note of this allowance was posted: silent until a raise.
    Paused { spend: Spend },
    /// Spend reached the allowance: note `epoch` is due.
    Exceeded {
        spend: Spend,
        allowance: Allowance,
        epoch: u32,
    },
}

/// The issue's spend, tokens and priced cost.
pub async fn spend(pool: &PgPool, issue_id: IssueId, prices: &Prices) -> anyhow::Result<Spend> {
    let rows = relay_store::status::spend_by_role_and_model(pool, issue_id)
        .await
        .context("failed to sum the issue's spend")?;
    let mut spend = Spend::default();
    for row in rows {
        let (input, output) = (
            row.prompt_tokens.max(0) as u64,
            row.completion_tokens.max(0) as u64,
        );
        spend.tokens = spend.tokens.saturating_add(input).saturating_add(output);
        spend.cost.add(
            prices,
            &row.model,
            input,
            row.cached_tokens.max(0) as u64,
            output,
        );
    }
    Ok(spend)
}

/// Evaluates the issue's cap.
pub async fn gate(
    pool: &PgPool,
    issue_id: IssueId,
    cap: IssueCap,
    prices: &Prices,
) -> anyhow::Result<BudgetGate> {
    let spend = spend(pool, issue_id, prices).await?;
    if cap.is_none() {
        return Ok(BudgetGate::Within {
            spend,
            allowance: Allowance {
                tokens: None,
                usd: None,
            },
        });
    }
    let mut conn = pool.acquire().await.context("no database connection")?;
    let raises = relay_store::issue_controls::raises(&mut conn, issue_id)
        .await
        .context("failed to load the issue's budget raises")?;
    let allowance = Allowance {
        tokens: (cap.tokens > 0).then(|| cap.tokens.saturating_add(raises.tokens)),
        usd: (cap.usd > 0.0).then_some(cap.usd + raises.usd),
    };
    let epoch = raises.count.saturating_add(1);
    let noted = relay_store::outbox::for_issue(&mut conn, issue_id)
        .await
        .context("failed to load the issue's writes")?
        .iter()
        .filter_map(|row| parse_budget_note_key(&row.idempotency_key, issue_id))
        .any(|note| note.epoch == epoch);
    let reached = allowance.tokens.is_some_and(|t| spend.tokens >= t)
        || allowance.usd.is_some_and(|usd| spend.cost.usd >= usd);
    Ok(match (reached, noted) {
        (false, _) => BudgetGate::Within { spend, allowance },
        (true, true) => BudgetGate::Paused { spend },
        (true, false) => BudgetGate::Exceeded {
            spend,
            allowance,
            epoch,
        },
    })
}

/// Queues budget note `epoch` and consumes the issue's events through delivery `through`, in one
/// transaction. Returns whether the note is new.
pub async fn enqueue_note(
    pool: &PgPool,
    issue_id: IssueId,
    job_id: JobId,
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

/// The note's text: what was reached, where the cap comes from, and how to continue.
pub fn note_body(spend: &Spend, allowance: &Allowance, cap: &IssueCap, bot: &str) -> String {
    let bot = bot.strip_suffix("[bot]").unwrap_or(bot);
    let spent = match allowance.usd {
        Some(_) => format!("{} tokens, {}", spend.tokens, spend.cost.describe()),
        None => format!("{} tokens", spend.tokens),
    };
    let origin = if cap.from_repository {
        "the repository's .relay.toml"
    } else {
        "the server's settings"
    };
    let example = if allowance.tokens.is_some() {
        "200k"
    } else {
        "$2"
    };
    format!(
        "Stopped: this issue reached its budget ({spent} spent; allowed: {}, set by {origin}). \
         I will not work on it further until a maintainer raises this issue's cap, e.g. \
         `@{bot} budget {example}`.",
        allowance.describe()
    )
}

/// Checks the issue's cap before a cycle. `Some` (the job's result) when the job must stop:
/// the note was queued (first time past this allowance; the job's last drain sends it), or the
/// issue is paused (the pending events are consumed without an LLM call). `None` when nothing is
/// pending or the cap allows another cycle.
pub async fn stop(
    pool: &PgPool,
    run: &JobRun,
    job: &Job,
    cap: IssueCap,
    prices: &Prices,
) -> anyhow::Result<Option<Value>> {
    let issue_id = run.issue_id;
    let Some(through) = job.pending.last_event() else {
        return Ok(None);
    };
    match gate(pool, issue_id, cap, prices).await? {
        BudgetGate::Within { .. } => Ok(None),
        BudgetGate::Paused { spend } => {
            let mut conn = pool.acquire().await.context("no database connection")?;
            relay_store::issues::mark_events_handled(&mut conn, issue_id, through)
                .await
                .context("failed to consume the events")?;
            tracing::info!(
                issue.id = issue_id.get(),
                spent = spend.tokens,
                "issue paused on its budget"
            );
            Ok(Some(
                json!({ "cycles": 0, "paused": "issue budget", "spent": spend.tokens }),
            ))
        }
        BudgetGate::Exceeded {
            spend,
            allowance,
            epoch,
        } => {
            let body = note_body(&spend, &allowance, &cap, job.bot());
            enqueue_note(pool, issue_id, run.job_id, epoch, through, &body).await?;
            tracing::warn!(
                issue.id = issue_id.get(),
                spent = spend.tokens,
                allowance = %allowance.describe(),
                epoch,
                "issue budget reached"
            );
            Ok(Some(json!({
                "cycles": 0,
                "budget_reached": {
                    "spent": spend.tokens,
                    "cost_usd": spend.cost.usd,
                    "allowance": allowance.describe(),
                    "epoch": epoch,
                },
            })))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn the_budget_note_carries_its_idempotency_marker(pool: PgPool) {
        assert!(
            enqueue_note(&pool, IssueId(7), JobId(3), 1, 0, "stopped")
                .await
                .unwrap()
        );
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

    #[test]
    fn the_note_says_how_to_continue() {
        let spend = Spend {
            tokens: 1200,
            cost: Cost::default(),
        };
        let allowance = Allowance {
            tokens: Some(1000),
            usd: None,
        };
        let cap = IssueCap {
            tokens: 1000,
            usd: 0.0,
            from_repository: true,
        };
        assert_eq!(
            note_body(&spend, &allowance, &cap, "relay-bot[bot]"),
            "Stopped: this issue reached its budget (1200 tokens spent; allowed: 1000 tokens, set by the repository's .relay.toml). I will not work on it further until a maintainer raises this issue's cap, e.g. `@relay-bot budget 200k`."
        );
    }
}
