//! What each command does beyond its bookkeeping, and the words of its answer.

use anyhow::Context as _;
use relay_core::command::BudgetAmount;
use relay_core::prices::Prices;
use relay_repo::RepoManager;
use relay_store::PgPool;
use relay_store::learnings::Forgotten;

use super::super::checkout::CheckedOut;
use super::super::gates::budget::{self, BudgetGate, IssueCap};
use super::super::job::{Job, JobRun};
use super::super::pending::PendingCommand;
use crate::handler::JobError;
use relay_core::DeliveryId;
use relay_core::IssueId;

/// `status`: the living summary refreshed now, or (summary off) a short status reply.
pub async fn status(
    pool: &PgPool,
    run: &JobRun,
    prices: &Prices,
    checkout: &CheckedOut,
) -> Result<String, JobError> {
    if checkout.config.effective.summary_comment {
        relay_actions::summary::refresh_summary(pool, run.issue_id, Some(run.job_id), prices)
            .await
            .context("failed to refresh the summary")?;
        return Ok("The summary comment of this issue is up to date (refreshed now).".into());
    }
    let mut conn = pool.acquire().await.context("no database connection")?;
    let gaps = relay_store::gaps::list(&mut conn, run.issue_id)
        .await
        .context("failed to load the gaps")?;
    let findings = relay_store::findings::live(&mut conn, run.issue_id)
        .await
        .context("failed to load the findings")?;
    let spec = relay_store::specs::current(&mut conn, run.issue_id)
        .await
        .context("failed to load the spec")?;
    let stopped = relay_store::issue_controls::stopped(&mut conn, run.issue_id)
        .await
        .context("failed to load the issue's state")?;
    drop(conn);
    let open: Vec<_> = gaps.iter().filter(|g| g.is_open()).collect();
    let blocking = open.iter().filter(|g| g.severity == "blocking").count();
    let stale = findings.iter().filter(|f| f.stale).count();
    let spec = spec.map_or_else(
        || "no spec yet".to_owned(),
        |s| format!("spec v{} {}", s.version, s.status),
    );
    let cap = IssueCap::of(&checkout.config.effective);
    let gate = budget::gate(pool, run.issue_id, cap, prices).await?;
    let spent = match gate {
        BudgetGate::Within { spend, allowance } => format!(
            "{} tokens spent (allowed: {})",
            spend.tokens,
            allowance.describe()
        ),
        BudgetGate::Paused { spend } | BudgetGate::Exceeded { spend, .. } => {
            format!("{} tokens spent, budget reached", spend.tokens)
        }
    };
    let state = match stopped {
        Some(stopped) => format!("stopped by {}", stopped.stopped_by),
        None => "active".to_owned(),
    };
    Ok(format!(
        "Status: {} open questions ({blocking} blocking), {} findings ({stale} stale), {spec}; {spent}; Relay is {state} on this issue.",
        open.len(),
        findings.len(),
    ))
}

/// `refresh`: the findings re-checked at the remote head the checkout now stands at.
pub async fn refresh(
    pool: &PgPool,
    repos: &RepoManager,
    run: &JobRun,
    prices: &Prices,
    job: &Job,
    checkout: &CheckedOut,
) -> String {
    let commit = checkout.snapshot.commit().to_owned();
    let short: String = commit.chars().take(12).collect();
    let target = crate::jobs::reverify::PushTarget {
        tracker: &job.issue.tracker,
        project_id: &job.issue.project_id,
        project_path: &job.issue.project_path,
        commit: &commit,
    };
    match crate::jobs::reverify::reverify_project(
        pool,
        repos,
        &checkout.spec,
        target,
        checkout.snapshot.path(),
    )
    .await
    {
        Ok(outcome) => {
            if checkout.config.effective.summary_comment
                && let Err(error) = relay_actions::summary::refresh_summary(
                    pool,
                    run.issue_id,
                    Some(run.job_id),
                    prices,
                )
                .await
            {
                tracing::warn!(error.message = %error, "summary refresh after a refresh command failed");
            }
            if outcome.untouched {
                format!(
                    "Refreshed at commit {short}: no cited file changed since the findings were last checked. Planning again."
                )
            } else {
                format!(
                    "Refreshed at commit {short}: re-checked {} cited places ({} verified, {} moved, {} stale). Planning again.",
                    outcome.sources, outcome.verified, outcome.reanchored, outcome.stale
                )
            }
        }
        Err(error) => {
            tracing::warn!(error.message = %error, error.cause_chain = %format!("{error:#}"), "refresh: re-verification failed");
            format!(
                "Refreshed to commit {short}, but the findings could not be re-checked now; planning again."
            )
        }
    }
}

/// `stop`.
pub fn stopped(bot: &str) -> String {
    let bot = bot.strip_suffix("[bot]").unwrap_or(bot);
    format!("Stopped: I will stay silent on this issue until someone writes `@{bot} resume`.")
}

/// `resume`.
pub fn resumed(bot: &str) -> String {
    let bot = bot.strip_suffix("[bot]").unwrap_or(bot);
    format!("Resumed: mention `@{bot}` when you want me to look at this issue again.")
}

/// `forget <id>`.
pub fn forgotten(id: i64, forgotten: &Forgotten) -> String {
    match forgotten {
        // The learning's words are not repeated: the answer is in the thread, and a forgotten
        // learning must not reach a prompt again through it.
        Forgotten::Now(_) => format!("Forgot learning {id}: it will not be used again."),
        Forgotten::Already(row) => format!(
            "Learning {id} was already forgotten{}.",
            row.forgotten_by
                .as_deref()
                .map(|by| format!(" by {by}"))
                .unwrap_or_default()
        ),
        Forgotten::NotFound => {
            format!("This repository has no learning {id}; the status page lists them (Projects).")
        }
    }
}

/// A budget command's effect.
pub struct RaiseAnswer {
    pub applied: bool,
    pub body: String,
}

/// `budget <amount>`: a maintainer raises this issue's cap once.
pub async fn budget(
    pool: &PgPool,
    issue_id: IssueId,
    prices: &Prices,
    checkout: &CheckedOut,
    job: &Job,
    command: &PendingCommand,
    amount: BudgetAmount,
) -> Result<RaiseAnswer, JobError> {
    let refused = |body: String| {
        Ok(RaiseAnswer {
            applied: false,
            body,
        })
    };
    if !relay_core::roles::is_maintainer(job.admission.role(&command.actor)) {
        // Says what is checked, on this tracker (GitHub's admin permission, not "the owner").
        let rule = relay_core::roles::maintainer_rule(job.settings.provider);
        return refused(format!("Only {rule} can raise this issue's budget."));
    }
    let cap = IssueCap::of(&checkout.config.effective);
    let raise = match amount {
        BudgetAmount::Tokens(tokens) if cap.tokens > 0 => {
            relay_store::issue_controls::Raise { tokens, usd: 0.0 }
        }
        BudgetAmount::Usd(usd) if cap.usd > 0.0 => {
            relay_store::issue_controls::Raise { tokens: 0, usd }
        }
        _ if cap.tokens == 0 && cap.usd <= 0.0 => {
            return refused("This issue has no budget cap: there is nothing to raise.".into());
        }
        BudgetAmount::Tokens(_) => {
            return refused(
                "This issue's cap is in dollars: raise it in dollars, e.g. `budget $2`.".into(),
            );
        }
        BudgetAmount::Usd(_) => {
            return refused(
                "This issue's cap is in tokens: raise it in tokens, e.g. `budget 200k`.".into(),
            );
        }
    };
    let mut conn = pool.acquire().await.context("no database connection")?;
    relay_store::issue_controls::raise_budget(
        &mut conn,
        issue_id,
        DeliveryId(command.event_id),
        &format!("@{}", command.actor),
        raise,
    )
    .await
    .context("failed to record the raise")?;
    drop(conn);
    let allowance = match budget::gate(pool, issue_id, cap, prices).await? {
        BudgetGate::Within { allowance, .. } | BudgetGate::Exceeded { allowance, .. } => {
            allowance.describe()
        }
        BudgetGate::Paused { .. } => "more than before".into(),
    };
    Ok(RaiseAnswer {
        applied: true,
        body: format!(
            "Raised this issue's cap by {amount}: it now allows {allowance}. Continuing."
        ),
    })
}
