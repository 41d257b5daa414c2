//! What is pending on the issue: its events above the watermark, which of them are commands, and
//! a go-ahead whose spec an earlier job failed to write.
//!
//! Read once when the job starts ([`Pending::load`]) and again after each cycle
//! ([`Pending::reload`]); every stage in between works on these values, never on the store's
//! events. An event that arrives meanwhile waits for the next read: the next cycle's, or the next
//! job's (the intake queues one for it).

use anyhow::Context as _;
use relay_core::command::{self, Parsed};
use relay_store::issues::{IssueEventRow, NoteRow};
use relay_store::specs::SpecRequestRow;
use relay_store::{PgConnection, PgPool};

use super::counts;
use relay_core::IssueId;

/// What is pending on an issue.
#[derive(Debug, Clone, Default)]
pub struct Pending {
    /// Events no job has handled yet, oldest first.
    pub events: Vec<IssueEventRow>,
    /// The events that are commands, parsed from their notes as the intake cached them.
    pub commands: Vec<PendingCommand>,
    /// A go-ahead whose spec an earlier job failed to write.
    pub spec_request: Option<SpecRequestRow>,
}

/// A pending event that is a command (`@bot help`, `status`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct PendingCommand {
    pub event_id: i64,
    pub actor: String,
    /// The command's note: the answer replies to it (in its discussion on GitLab).
    pub note_id: String,
    pub discussion_id: Option<String>,
    pub parsed: Parsed,
}

/// A pending event that was a command Relay answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnsweredCommand {
    pub event_id: i64,
    pub name: &'static str,
}

impl Pending {
    /// Reads what is pending on `issue_id`; commands are those addressed to `bot`.
    pub async fn load(
        conn: &mut PgConnection,
        issue_id: IssueId,
        bot: &str,
    ) -> anyhow::Result<Pending> {
        counts::pending_read();
        let events = relay_store::issues::pending_events(conn, issue_id)
            .await
            .context("failed to load pending events")?;
        let commands = if events.is_empty() {
            Vec::new()
        } else {
            let notes = relay_store::issues::notes(conn, issue_id)
                .await
                .context("failed to load the thread")?;
            commands_of(&events, &notes, bot)
        };
        let spec_request = relay_store::specs::pending_request(conn, issue_id)
            .await
            .context("failed to load the pending go-ahead")?;
        Ok(Pending {
            events,
            commands,
            spec_request,
        })
    }

    /// Reads again what is pending (after a cycle: what arrived meanwhile).
    pub async fn reload(
        &mut self,
        pool: &PgPool,
        issue_id: IssueId,
        bot: &str,
    ) -> anyhow::Result<()> {
        let mut conn = pool.acquire().await.context("no database connection")?;
        *self = Pending::load(&mut conn, issue_id, bot).await?;
        Ok(())
    }

    /// Nothing to do: no event and no go-ahead.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty() && self.spec_request.is_none()
    }

    /// The newest pending event's delivery id.
    pub fn last_event(&self) -> Option<i64> {
        self.events.last().map(|e| e.id)
    }

    /// Whether event `event_id` is a command.
    pub fn is_command(&self, event_id: i64) -> bool {
        self.commands.iter().any(|c| c.event_id == event_id)
    }

    /// The newest triggering note (a status comment answers in its discussion when it has one).
    pub fn trigger_note(&self) -> Option<&str> {
        self.events.iter().rev().find_map(|e| e.note_id.as_deref())
    }
}

/// The events whose cached note is a command to `bot`.
fn commands_of(events: &[IssueEventRow], notes: &[NoteRow], bot: &str) -> Vec<PendingCommand> {
    events
        .iter()
        .filter_map(|event| {
            let note = notes
                .iter()
                .find(|n| Some(n.note_id.as_str()) == event.note_id.as_deref())?;
            match command::parse(&note.body, bot) {
                Parsed::NotACommand => None,
                parsed => Some(PendingCommand {
                    event_id: event.id,
                    actor: event.actor.clone(),
                    note_id: note.note_id.clone(),
                    discussion_id: note.discussion_id.clone(),
                    parsed,
                }),
            }
        })
        .collect()
}
