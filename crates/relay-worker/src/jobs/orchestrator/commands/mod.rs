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

pub mod replies;

use relay_core::DeliveryId;
use relay_core::IssueId;
use std::collections::HashMap;

use anyhow::Context as _;
use relay_actions::Executor;
use relay_actions::notices::NoticePlace;
use relay_agent::trace::TraceKind;
use relay_core::command::{self, Command, Parsed};
use relay_repo::RepoManager;
use relay_store::PgPool;
use relay_store::issues::{IssueEventRow, NoteRow};
use serde_json::{Value, json};

use super::admission::Admission;
use super::setup::{Checkout, Head, IssueJob};
use super::{JobRun, Orchestrator};
use crate::handler::JobError;
use crate::jobs::RepoSpecs;

/// A pending event that was a command Relay answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnsweredCommand {
    pub event_id: i64,
    pub name: &'static str,
}

/// What the pending commands came to.
pub enum Commands {
    /// Plan, with these commands answered (shown to the planner as answered).
    Plan(Vec<AnsweredCommand>),
    /// Nothing is left to plan: the job's result (the events consumed).
    Done(Value),
}

/// Where the commands run.
pub struct CommandEnv<'a> {
    pub pool: &'a PgPool,
    pub repos: &'a RepoManager,
    pub specs: &'a RepoSpecs,
    pub run: &'a JobRun,
}

/// One command to answer.
struct Pending<'a> {
    event: &'a IssueEventRow,
    note: &'a NoteRow,
    parsed: Parsed,
}

impl Orchestrator {
    /// Answers the pending events' commands, then decides whether anything is left to plan.
    /// `checkout` is replaced by the remote head's when a `refresh` was asked.
    pub(super) async fn run_commands(
        &self,
        env: &CommandEnv<'_>,
        job: &IssueJob<'_>,
        checkout: &mut Checkout,
        admission: &Admission,
    ) -> Result<Commands, JobError> {
        let (pool, run) = (env.pool, env.run);
        let mut conn = pool.acquire().await.context("no database connection")?;
        let events = relay_store::issues::pending_events(&mut conn, run.issue_id)
            .await
            .context("failed to load pending events")?;
        let notes = relay_store::issues::notes(&mut conn, run.issue_id)
            .await
            .context("failed to load the thread")?;
        drop(conn);
        let by_id: HashMap<&str, &NoteRow> =
            notes.iter().map(|n| (n.note_id.as_str(), n)).collect();
        let bot = &job.settings.bot_username;
        let pending: Vec<Pending<'_>> = events
            .iter()
            .filter_map(|event| {
                let note = by_id.get(event.note_id.as_deref()?)?;
                match command::parse(&note.body, bot) {
                    Parsed::NotACommand => None,
                    parsed => Some(Pending {
                        event,
                        note,
                        parsed,
                    }),
                }
            })
            .collect();
        let mut answered = Vec::new();
        // Events that go on to the planner besides ordinary mentions: a refresh, a raise.
        let mut to_plan = 0usize;
        for command in pending.iter().filter(|c| admission.admits(&c.event.actor)) {
            let outcome = self.answer(env, job, checkout, admission, command).await?;
            run.tracer.for_agent("orchestrator").event(
                TraceKind::Decision,
                json!({
                    "decision": "command", "command": outcome.name,
                    "actor": command.event.actor, "plan": outcome.plan,
                }),
            );
            if outcome.plan {
                to_plan += 1;
            }
            answered.push(AnsweredCommand {
                event_id: command.event.id,
                name: outcome.name,
            });
        }
        if !answered.is_empty() {
            let drain = Executor::new(pool.clone(), job.tracker.clone())
                .drain_outbox(run.issue_id, &job.issue_ref)
                .await
                .context("failed to send the command answers")?;
            super::cycle::trace_drain(&run.tracer.for_agent("orchestrator"), &drain);
        }
        let is_command = |event: &IssueEventRow| pending.iter().any(|c| c.event.id == event.id);
        let ordinary = events
            .iter()
            .filter(|e| admission.admits(&e.actor) && !is_command(e))
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
        } else if ordinary + to_plan == 0 && job.spec_request.is_none() {
            Some("only commands".to_owned())
        } else {
            None
        };
        let Some(reason) = reason else {
            return Ok(Commands::Plan(answered));
        };
        if let Some(last) = events.last() {
            relay_store::issues::mark_events_handled(&mut conn, run.issue_id, last.id)
                .await
                .context("failed to consume the events")?;
        }
        tracing::info!(issue.id = run.issue_id.get(), reason = %reason, "nothing to plan after the commands");
        Ok(Commands::Done(json!({
            "cycles": 0,
            "commands": answered.iter().map(|c| c.name).collect::<Vec<_>>(),
            "not_planned": reason,
        })))
    }

    async fn answer(
        &self,
        env: &CommandEnv<'_>,
        job: &IssueJob<'_>,
        checkout: &mut Checkout,
        admission: &Admission,
        command: &Pending<'_>,
    ) -> Result<Outcome, JobError> {
        let (pool, run) = (env.pool, env.run);
        let (event, bot) = (command.event, job.settings.bot_username.as_str());
        let actor = format!("@{}", event.actor);
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
                let body = replies::status(self, pool, job, checkout, run).await?;
                ("status", false, body)
            }
            Parsed::Command(Command::Refresh) => {
                *checkout = self
                    .checkout(pool, env.repos, env.specs, run, job, Head::Fetch)
                    .await?;
                let body = replies::refresh(self, pool, env.repos, job, checkout, run).await;
                ("refresh", true, body)
            }
            Parsed::Command(Command::Stop) => {
                let mut conn = pool.acquire().await.context("no database connection")?;
                relay_store::issue_controls::set_stopped(
                    &mut conn,
                    run.issue_id,
                    DeliveryId(event.id),
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
                    DeliveryId(event.id),
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
                    self,
                    pool,
                    run.issue_id,
                    checkout,
                    admission,
                    event,
                    *amount,
                )
                .await?;
                ("budget", raise.applied, raise.body)
            }
        };
        let place = NoticePlace::Reply {
            note_id: &command.note.note_id,
            discussion_id: command.note.discussion_id.as_deref(),
        };
        let mut conn = pool.acquire().await.context("no database connection")?;
        relay_actions::notices::enqueue_command_reply(
            &mut conn,
            run.issue_id,
            run.job_id,
            DeliveryId(event.id),
            &body,
            place,
        )
        .await
        .context("failed to queue the command's answer")?;
        Ok(Outcome { name, plan })
    }
}

/// How one command was answered.
#[derive(Debug, Default)]
struct Outcome {
    name: &'static str,
    /// It goes on to the planner (a refresh, an applied raise).
    plan: bool,
}

/// Whether any of `events` (arrived during a job) is a command of an admitted author: the job
/// hands them to a follow-up job, which answers commands before planning.
pub async fn commands_pending(
    pool: &PgPool,
    issue_id: IssueId,
    bot: &str,
    admission: &Admission,
) -> anyhow::Result<bool> {
    let mut conn = pool.acquire().await.context("no database connection")?;
    let events = relay_store::issues::pending_events(&mut conn, issue_id).await?;
    let notes = relay_store::issues::notes(&mut conn, issue_id).await?;
    Ok(events.iter().any(|event| {
        admission.admits(&event.actor)
            && event.note_id.as_deref().is_some_and(|id| {
                notes.iter().any(|n| {
                    n.note_id == id && !matches!(command::parse(&n.body, bot), Parsed::NotACommand)
                })
            })
    }))
}
