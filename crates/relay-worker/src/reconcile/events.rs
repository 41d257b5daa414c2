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
//!   such a change, and the issue's author is not who made it: the event is recorded without an
//!   actor, so it is context only (no author to admit: it never makes Relay act or decide). Only a
//!   webhook, which names who made the change, can.

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
    // Who edited, labelled or assigned is unknown: nobody is credited.
    let mut event = IssueEvent::new(issue.clone(), String::new());
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

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use relay_core::{IssueSnapshot, NoteSnapshot};
    use relay_tracker::ChangedNote;

    use super::*;

    fn at(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(secs, 0).unwrap()
    }

    fn issue(number: i64, body: &str, labels: &[&str], updated: i64) -> ChangedIssue {
        ChangedIssue {
            issue: IssueSnapshot {
                project_id: "1".into(),
                project_path: "o/r".into(),
                number,
                title: "t".into(),
                body: body.into(),
                state: "open".into(),
                labels: labels.iter().map(|l| (*l).to_owned()).collect(),
                author: Some("alice".into()),
                assignees: Some(Vec::new()),
                url: "u".into(),
                confidential: false,
                updated_at: at(updated),
                visibility: None,
            },
            created_at: at(100),
        }
    }

    fn note(issue_number: i64, id: &str, body: &str, updated: i64) -> ChangedNote {
        ChangedNote {
            issue_number,
            note: NoteSnapshot {
                note_id: id.into(),
                discussion_id: None,
                author: "bob".into(),
                body: body.into(),
                internal: false,
                url: None,
                created_at: at(150),
                updated_at: at(updated),
            },
        }
    }

    fn known(body: &str, labels: &[&str], updated: i64, notes: &[(&str, i64)]) -> KnownIssue {
        KnownIssue {
            body: body.into(),
            labels: labels.iter().map(|l| (*l).to_owned()).collect(),
            assignees: Vec::new(),
            updated_at: at(updated),
            notes: notes
                .iter()
                .map(|(id, t)| ((*id).to_owned(), at(*t)))
                .collect(),
        }
    }

    #[test]
    fn notes_are_new_edited_or_already_seen() {
        let changes = ProjectChanges {
            project_id: Some("1".into()),
            issues: vec![issue(1, "b", &[], 300)],
            notes: vec![
                note(1, "10", "seen", 200),
                note(1, "11", "edited since", 250),
                note(1, "12", "never seen", 260),
            ],
        };
        let stored = HashMap::from([(1, known("b", &[], 300, &[("10", 200), ("11", 200)]))]);
        let found = found_events(&changes, &stored, at(0));
        let got: Vec<(&str, bool, &str)> = found
            .iter()
            .map(|f| {
                let n = f.event.note.as_ref().unwrap();
                (n.note.note_id.as_str(), n.edited, f.action)
            })
            .collect();
        assert_eq!(got, [("11", true, "edited"), ("12", false, "created")]);
        assert!(found.iter().all(|f| f.event.actor == "bob"));
    }

    #[test]
    fn a_stamp_differing_below_a_second_is_the_same_note() {
        let mut changed = note(1, "10", "x", 200);
        changed.note.updated_at = at(200) + chrono::Duration::milliseconds(400);
        let changes = ProjectChanges {
            project_id: Some("1".into()),
            issues: vec![issue(1, "b", &[], 300)],
            notes: vec![changed],
        };
        let stored = HashMap::from([(1, known("b", &[], 300, &[("10", 200)]))]);
        assert!(found_events(&changes, &stored, at(0)).is_empty());
    }

    #[test]
    fn issues_opened_in_the_window_or_changed_since_stored() {
        let mut old = issue(4, "old", &[], 300);
        old.created_at = at(10);
        let changes = ProjectChanges {
            project_id: Some("1".into()),
            issues: vec![
                issue(1, "new @bot", &["relay"], 300),
                issue(2, "now @bot", &["Bug", "relay"], 300),
                issue(3, "same", &[], 300),
                old,
            ],
            notes: Vec::new(),
        };
        let stored = HashMap::from([
            (2, known("before", &["bug"], 200, &[])),
            (3, known("same", &[], 300, &[])),
        ]);
        // Issue 4 was opened before the window and never stored: nothing to say about it.
        let found = found_events(&changes, &stored, at(50));
        assert_eq!(found.len(), 2);
        assert!(found[0].event.opened);
        assert_eq!(found[0].event.labels_added, ["relay"]);
        assert_eq!(found[1].action, "updated");
        assert_eq!(
            found[1]
                .event
                .body_change
                .as_ref()
                .unwrap()
                .previous
                .as_deref(),
            Some("before")
        );
        assert_eq!(
            found[1].event.labels_added,
            ["relay"],
            "bug was there (any case)"
        );
        assert_eq!(found[0].event.actor, "alice", "who opened it is the author");
        assert_eq!(
            found[1].event.actor, "",
            "who changed it is unknown: the author is not credited"
        );
        // Opened before the window began: not an opening we can vouch for.
        assert!(found_events(&changes, &HashMap::new(), at(200)).is_empty());
    }
}
