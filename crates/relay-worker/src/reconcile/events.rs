//! From what a tracker says changed to the issue events a webhook would have brought: pure,
//! given what Relay already stored of those issues and notes.
//!
//! - a note Relay has never stored is new (a lost creation webhook); one stored with an older
//!   `updated_at` was edited (decided against the stored body, as an edit webhook without the old
//!   text is); one stored as it is was seen and gives nothing;
//! - an issue Relay has never stored and created inside the window was opened (with its labels and
//!   assignees, which the lost `opened`/`labeled`/`assigned` webhooks would have carried);
//! - a stored issue changed since its stored copy gives one event with what differs: a body change
//!   (against the stored body), labels added, assignees added. The REST lists do not say who made
//!   such a change; the issue's author stands in as the actor.

use std::collections::HashMap;

use chrono::{DateTime, SubsecRound, Utc};
use relay_core::engage::{BodyChange, IssueEvent, NoteEvent};
use relay_store::reconcile::KnownIssue;
use relay_tracker::{ChangedIssue, ProjectChanges};

/// One event to decide on, with the provider-neutral action word stored with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundEvent {
    pub event: IssueEvent,
    pub action: &'static str,
}

fn secs(at: DateTime<Utc>) -> DateTime<Utc> {
    at.trunc_subsecs(0)
}

/// The events in `changes` that Relay has not recorded, issue changes before notes, each in the
/// tracker's order. `since` is the start of the window asked for.
pub fn found_events(
    changes: &ProjectChanges,
    known: &HashMap<i64, KnownIssue>,
    since: DateTime<Utc>,
) -> Vec<FoundEvent> {
    let mut found = Vec::new();
    let issues: HashMap<i64, &ChangedIssue> =
        changes.issues.iter().map(|c| (c.issue.number, c)).collect();
    for changed in &changes.issues {
        if let Some(event) = issue_event(changed, known.get(&changed.issue.number), since) {
            found.push(event);
        }
    }
    for note in &changes.notes {
        let Some(changed) = issues.get(&note.issue_number) else {
            continue;
        };
        let stored = known
            .get(&note.issue_number)
            .and_then(|k| k.notes.get(&note.note.note_id));
        let edited = match stored {
            None => false,
            Some(at) if secs(note.note.updated_at) > secs(*at) => true,
            Some(_) => continue,
        };
        let mut event = IssueEvent::new(changed.issue.clone(), note.note.author.clone());
        event.note = Some(NoteEvent {
            note: note.note.clone(),
            edited,
            previous_body: None,
            system: false,
        });
        found.push(FoundEvent {
            event,
            action: if edited { "edited" } else { "created" },
        });
    }
    found
}

fn issue_event(
    changed: &ChangedIssue,
    known: Option<&KnownIssue>,
    since: DateTime<Utc>,
) -> Option<FoundEvent> {
    let issue = &changed.issue;
    let actor = issue.author.clone().unwrap_or_default();
    let assignees = issue.assignees.clone().unwrap_or_default();
    let Some(known) = known else {
        if changed.created_at < since {
            // Opened before the window: what changed since is unknown (its notes still count).
            return None;
        }
        let mut event = IssueEvent::new(issue.clone(), actor);
        event.opened = true;
        event.labels_added = issue.labels.clone();
        event.assignees_added = assignees;
        return Some(FoundEvent {
            event,
            action: "opened",
        });
    };
    if secs(issue.updated_at) <= secs(known.updated_at) {
        return None;
    }
    let mut event = IssueEvent::new(issue.clone(), actor);
    if issue.body != known.body {
        event.body_change = Some(BodyChange {
            previous: Some(known.body.clone()),
        });
    }
    event.labels_added = issue
        .labels
        .iter()
        .filter(|l| !known.labels.iter().any(|k| k.eq_ignore_ascii_case(l)))
        .cloned()
        .collect();
    event.assignees_added = assignees
        .into_iter()
        .filter(|a| !known.assignees.iter().any(|k| k.eq_ignore_ascii_case(a)))
        .collect();
    let changed_anything = event.body_change.is_some()
        || !event.labels_added.is_empty()
        || !event.assignees_added.is_empty();
    changed_anything.then_some(FoundEvent {
        event,
        action: "updated",
    })
}
