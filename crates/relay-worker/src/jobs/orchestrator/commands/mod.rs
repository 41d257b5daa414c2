//! Commands in a mention (`@bot help`, `status`, `refresh`, `stop`, `resume`, `forget <id>`,
//! `budget <amount>`), answered by the job itself, before any planning and without an LLM call.
//!
//! - Parsed deterministically (`relay_core::command`), never by the model.
//! - Only authors allowed to engage Relay (the server's roles narrowed by the repository's) are
//!   answered; anyone else's command is ignored as any of their mentions is.
//! - Each answer is one outbox write keyed by the command's delivery (`cmd:<issue>:<delivery>`),
//!   in the command note's discussion on GitLab; each effect (stop, resume, forget, a raise) is
//!   keyed by the delivery too, so a retried job neither answers nor applies twice.
//! - `refresh` and an applied `budget` raise go on to the planner; the other commands are
//!   answered and consumed. A stopped issue, or one carrying an opt-out label, consumes its other
//!   events without an LLM call.
//! - Answers are queued, never sent here: the first cycle's drain sends them, or the job's last
//!   when nothing is left to plan.
//!
//! Layout: this file answers ([`answer`]); [`replies`] holds what each command does beyond its
//! bookkeeping, and the words of its answer.

pub mod replies;

use anyhow::Context as _;
use relay_actions::notices::NoticePlace;
use relay_agent::trace::TraceKind;
use relay_core::command::{self, Command, Parsed};
use relay_core::prices::Prices;
use relay_store::PgPool;
use serde_json::json;

use super::checkout::{CheckedOut, Head, Repos};
use super::job::{Job, JobEnd, JobRun, JobStep};
use super::pending::{AnsweredCommand, PendingCommand};
use crate::handler::JobError;
use relay_core::DeliveryId;

/// Where the commands run: the job's run and database, what a `refresh` checks out, and the
/// prices a `status` or `budget` answer counts the spend in.
#[derive(Clone, Copy)]
struct CommandEnv<'a> {
    pool: &'a PgPool,
    run: &'a JobRun,
    repos: Repos<'a>,
    prices: &'a Prices,
}

/// Answers the admitted authors' pending commands (each answer queued: it goes out with the
/// first cycle's drain, or the job's last), then decides whether anything is left to plan; ends
/// the job, its events consumed, when nothing is. `checkout` is replaced by the remote head's
/// when a `refresh` was asked.
pub async fn answer(
    pool: &PgPool,
    run: &JobRun,
    repos: Repos<'_>,
    prices: &Prices,
    job: &mut Job,
    checkout: &mut CheckedOut,
) -> JobStep {
    let env = &CommandEnv {
        pool,
        run,
        repos,
        prices,
    };
    let mut answered = Vec::new();
    // Events that go on to the planner besides ordinary mentions: a refresh, a raise.
    let mut to_plan = 0usize;
    let commands = job.pending.commands.clone();
    for command in commands.iter().filter(|c| job.admission.admits(&c.actor)) {
        let outcome = answer_one(env, job, checkout, command).await?;
        run.tracer.for_agent("orchestrator").event(
            TraceKind::Decision,
            json!({
                "decision": "command", "command": outcome.name,
                "actor": command.actor, "plan": outcome.plan,
            }),
        );
        if outcome.plan {
            to_plan += 1;
        }
        answered.push(AnsweredCommand {
            event_id: command.event_id,
            name: outcome.name,
        });
    }
    let pending = &job.pending;
    let ordinary = pending
        .events
        .iter()
        .filter(|e| job.admission.admits(&e.actor) && !pending.is_command(e.id))
        .count();
    let mut conn = pool.acquire().await.context("no database connection")?;
    let stopped = relay_store::issue_controls::stopped(&mut conn, run.issue_id)
        .await
        .context("failed to read whether relay is stopped on the issue")?;
    let opted_out = checkout.config.effective.opted_out(&job.issue.labels);
    let reason = if let Some(stopped) = &stopped {
        Some(format!("stopped by {}", stopped.stopped_by))
    } else if let Some(label) = &opted_out {
        Some(format!("opt-out label `{label}`"))
    } else if ordinary + to_plan == 0 && pending.spec_request.is_none() {
        Some("only commands".to_owned())
    } else {
        None
    };
    let Some(reason) = reason else {
        job.answered = answered;
        return Ok(());
    };
    if let Some(last) = pending.last_event() {
        relay_store::issues::mark_events_handled(&mut conn, run.issue_id, last)
            .await
            .context("failed to consume the events")?;
    }
    tracing::info!(issue.id = run.issue_id.get(), reason = %reason, "nothing to plan after the commands");
    Err(JobEnd::Done(json!({
        "cycles": 0,
        "commands": answered.iter().map(|c| c.name).collect::<Vec<_>>(),
        "not_planned": reason,
    })))
}

/// Answers one command (its effect applied, its answer queued).
async fn answer_one(
    env: &CommandEnv<'_>,
    job: &Job,
    checkout: &mut CheckedOut,
    command: &PendingCommand,
) -> Result<Outcome, JobError> {
    let (pool, run) = (env.pool, env.run);
    let (event_id, bot) = (DeliveryId(command.event_id), job.bot());
    let actor = format!("@{}", command.actor);
    let help = command::help_text(bot);
    let (name, plan, body) = match &command.parsed {
        Parsed::NotACommand => return Ok(Outcome::default()),
        Parsed::Unknown { word } => (
            "help",
            false,
            format!("I do not know the command `{word}`.\n\n{help}"),
        ),
        Parsed::Invalid { command, usage } => {
            (*command, false, format!("Usage: `{usage}`.\n\n{help}"))
        }
        Parsed::Command(Command::Help) => ("help", false, help),
        Parsed::Command(Command::Status) => {
            let body = replies::status(pool, run, env.prices, checkout).await?;
            ("status", false, body)
        }
        Parsed::Command(Command::Refresh) => {
            *checkout = super::checkout::checkout(env.repos, pool, run, job, Head::Fetch).await?;
            let body =
                replies::refresh(pool, env.repos.repos, run, env.prices, job, checkout).await;
            ("refresh", true, body)
        }
        Parsed::Command(Command::Stop) => {
            let mut conn = pool.acquire().await.context("no database connection")?;
            relay_store::issue_controls::set_stopped(
                &mut conn,
                run.issue_id,
                event_id,
                &actor,
                true,
            )
            .await
            .context("failed to stop")?;
            ("stop", false, replies::stopped(bot))
        }
        Parsed::Command(Command::Resume) => {
            let mut conn = pool.acquire().await.context("no database connection")?;
            relay_store::issue_controls::set_stopped(
                &mut conn,
                run.issue_id,
                event_id,
                &actor,
                false,
            )
            .await
            .context("failed to resume")?;
            ("resume", false, replies::resumed(bot))
        }
        Parsed::Command(Command::Forget(id)) => {
            let mut conn = pool.acquire().await.context("no database connection")?;
            let forgotten = relay_store::learnings::forget(
                &mut conn,
                &job.issue.tracker,
                &job.issue.project_id,
                *id,
                &actor,
            )
            .await
            .context("failed to forget the learning")?;
            ("forget", false, replies::forgotten(*id, &forgotten))
        }
        Parsed::Command(Command::Budget(amount)) => {
            let raise = replies::budget(
                pool,
                run.issue_id,
                env.prices,
                checkout,
                job,
                command,
                *amount,
            )
            .await?;
            ("budget", raise.applied, raise.body)
        }
    };
    let place = NoticePlace::Reply {
        note_id: &command.note_id,
        discussion_id: command.discussion_id.as_deref(),
    };
    let mut conn = pool.acquire().await.context("no database connection")?;
    relay_actions::notices::enqueue_command_reply(
        &mut conn,
        run.issue_id,
        run.job_id,
        event_id,
        &body,
        place,
    )
    .await
    .context("failed to queue the command's answer")?;
    Ok(Outcome { name, plan })
}

/// How one command was answered.
#[derive(Debug, Default)]
struct Outcome {
    name: &'static str,
    /// It goes on to the planner (a refresh, an applied raise).
    plan: bool,
}
