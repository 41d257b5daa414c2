//! Engagement rules: which issue events create work for the bot.
//!
//! Work is created when, and only when:
//! - a new comment mentions the bot (an edited comment only if the mention is new);
//! - a newly opened issue mentions the bot in its body, or an edit adds such a mention;
//! - someone replies in a thread where the bot has posted (GitLab: the same discussion;
//!   GitHub: the issue's single thread);
//! - a configured trigger label is added;
//! - the issue is assigned to the bot.
//!
//! Events authored by the bot itself never create work, whatever they contain.

use crate::TrackerSettings;

use super::event::IssueEvent;
use super::mention::mentions;

/// The event kind of an engagement by a trigger label being added.
pub const TRIGGER_LABEL: &str = "trigger_label";

/// The verdict for one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Create (or join) work; the string is the event kind recorded for the job.
    Engage(&'static str),
    /// Record only; the string is the reason.
    Ignore(&'static str),
}

/// What the store knows that the payload may not say.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// The bot has posted in this note's thread.
    pub bot_in_thread: bool,
    /// The issue body we had before this event.
    pub stored_body: Option<String>,
    /// The note body we had before this event (for edits).
    pub stored_note_body: Option<String>,
}

/// The labels `event` added that are trigger labels of `tracker` (compared without case), as
/// the event named them: what a `trigger_label` engagement is recorded with, so that a job can
/// narrow by the label that engaged, not by every label of the issue.
pub fn trigger_labels_added(event: &IssueEvent, tracker: &TrackerSettings) -> Vec<String> {
    event
        .labels_added
        .iter()
        .filter(|label| {
            tracker
                .trigger_labels
                .iter()
                .any(|t| t.eq_ignore_ascii_case(label))
        })
        .cloned()
        .collect()
}

/// Whether [`decide`] can use what the store knows ([`Context`]) for this event. When it cannot,
/// the gateway skips reading it (one round trip less on the hot path: a new comment that mentions
/// the bot).
pub fn needs_context(event: &IssueEvent, tracker: &TrackerSettings) -> bool {
    let bot = tracker.bot();
    if tracker.is_bot(&event.actor) {
        return false;
    }
    match &event.note {
        Some(note) if note.system || tracker.is_bot(&note.note.author) => false,
        // An edit without the old text needs the cached note body.
        Some(note) if note.edited => note.previous_body.is_none(),
        // A new note without a mention may still be a reply in the bot's thread.
        Some(note) => !mentions(&note.note.body, bot),
        None => event
            .body_change
            .as_ref()
            .is_some_and(|change| change.previous.is_none()),
    }
}

pub fn decide(event: &IssueEvent, tracker: &TrackerSettings, context: &Context) -> Decision {
    let bot = tracker.bot();
    if tracker.is_bot(&event.actor) {
        return Decision::Ignore("authored_by_bot");
    }
    if let Some(note) = &event.note {
        if note.system {
            return Decision::Ignore("system_note");
        }
        if tracker.is_bot(&note.note.author) {
            return Decision::Ignore("authored_by_bot");
        }
        let mentioned = mentions(&note.note.body, bot);
        if note.edited {
            let before = note
                .previous_body
                .as_deref()
                .or(context.stored_note_body.as_deref());
            return match before {
                Some(before) if mentioned && !mentions(before, bot) => Decision::Engage("mention"),
                // Without the old text we cannot know the mention is new; re-engaging on every
                // edit would answer the same request twice.
                _ => Decision::Ignore("edit_without_new_mention"),
            };
        }
        if mentioned {
            return Decision::Engage("mention");
        }
        if context.bot_in_thread {
            return Decision::Engage("thread_reply");
        }
        return Decision::Ignore("no_mention");
    }
    if event.opened && mentions(&event.issue.body, bot) {
        return Decision::Engage("mention");
    }
    if event.body_change.is_some() && mentions(&event.issue.body, bot) {
        let before = event
            .body_change
            .as_ref()
            .and_then(|c| c.previous.as_deref())
            .or(context.stored_body.as_deref());
        if before.is_some_and(|before| !mentions(before, bot)) {
            return Decision::Engage("mention");
        }
    }
    if !trigger_labels_added(event, tracker).is_empty() {
        return Decision::Engage(TRIGGER_LABEL);
    }
    if event.assignees_added.iter().any(|a| tracker.is_bot(a)) {
        return Decision::Engage("assigned");
    }
    if event.closed {
        return Decision::Ignore("issue_closed");
    }
    Decision::Ignore("not_engaged")
}
