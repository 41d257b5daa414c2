//! The provider-neutral facts of one issue event, the input of [`super::decide()`].

use chrono::{DateTime, Utc};

use crate::{IssueSnapshot, NoteSnapshot};

/// A change to an issue or its thread, with just the facts engagement rules need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueEvent {
    pub issue: IssueSnapshot,
    /// Who caused the event.
    pub actor: String,
    /// The provider marks the actor as a bot account (GitHub `sender.type == "Bot"`).
    pub actor_is_bot_account: bool,
    /// The issue was just opened.
    pub opened: bool,
    /// The issue was closed by this event.
    pub closed: bool,
    /// The issue body changed; `previous` is the old body when the provider says it, else `None`
    /// (then a mention in the body is not known to be new).
    pub body_change: Option<BodyChange>,
    /// Labels added by this event.
    pub labels_added: Vec<String>,
    /// Usernames assigned by this event.
    pub assignees_added: Vec<String>,
    /// A comment or note created or edited by this event.
    pub note: Option<NoteEvent>,
    /// GitHub App deliveries: `installation.id`, stored with the issue for write-back auth.
    pub installation_id: Option<i64>,
    /// Where the time in the event's content identity came from (the issue's `updated_at` for an
    /// issue change, the note's for a note edit).
    pub stamp: Stamp,
}

/// Where an event's time came from. A payload that does not say when the issue (or the edited
/// note) changed gets the clock's time at intake; that time is no identity, since a redelivery of
/// the same payload a second later would get another one (see [`super::content_identity`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Stamp {
    /// The payload said.
    #[default]
    Payload,
    /// The payload did not say (or said something that is not a time): the clock's.
    Clock,
}

impl Stamp {
    /// `parsed` when the payload carried a time, else the clock's now, with where it came from.
    pub fn or_clock(parsed: Option<DateTime<Utc>>) -> (DateTime<Utc>, Stamp) {
        match parsed {
            Some(at) => (at, Stamp::Payload),
            None => (Utc::now(), Stamp::Clock),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyChange {
    pub previous: Option<String>,
}

/// A comment (GitHub) or note (GitLab) on the issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteEvent {
    pub note: NoteSnapshot,
    /// `true` for an edit of an existing note.
    pub edited: bool,
    /// The body before the edit, when the provider says it.
    pub previous_body: Option<String>,
    /// GitLab system notes (label changes and the like) are never engaging.
    pub system: bool,
}

impl IssueEvent {
    /// A bare event for tests and providers to fill in.
    pub fn new(issue: IssueSnapshot, actor: String) -> IssueEvent {
        IssueEvent {
            issue,
            actor,
            actor_is_bot_account: false,
            opened: false,
            closed: false,
            body_change: None,
            labels_added: Vec::new(),
            assignees_added: Vec::new(),
            note: None,
            installation_id: None,
            stamp: Stamp::Payload,
        }
    }
}
