//! The content identity of an issue event.
//!
//! A webhook carries a delivery id, but the same content can reach Relay more than once under
//! different ids: GitHub's "Redeliver" (and anyone replaying a signed body) makes a new
//! `X-GitHub-Delivery`, and the reconciler finds events whose webhook never arrived — or arrives
//! later. The identity of an event is therefore what happened, not how it was delivered:
//! tracker, project, issue, comment or note id, action, and the tracker's `updated_at` for
//! changes that can happen more than once (edits, labels, assignments). The store keeps it unique
//! per tracker, so a second arrival of the same content is a duplicate whatever its path.

use std::fmt::Write as _;

use chrono::{DateTime, SubsecRound, Utc};

use super::event::{IssueEvent, Stamp};

/// The content identity `event` is kept unique under, or `None` when its identity would rest on
/// a time the payload did not carry ([`Stamp::Clock`]): then only the delivery key identifies
/// it. A clock time is no identity: two different stamp-less events in one second would be one,
/// and a redelivery of the first of them a second later would be new (the content duplicate
/// recorded nothing, so not even its delivery key was kept).
pub fn content_identity(tracker: &str, event: &IssueEvent, action: Option<&str>) -> Option<String> {
    let stamped = match &event.note {
        Some(note) => note.edited,
        None => !event.opened,
    };
    (!stamped || event.stamp == Stamp::Payload).then(|| event_key(tracker, event, action))
}

/// How an event reached Relay. Stored with the event; nothing downstream depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A webhook delivery.
    Webhook,
    /// Found by the reconciler polling the tracker.
    Reconcile,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Webhook => "webhook",
            Origin::Reconcile => "reconcile",
        }
    }
}

/// Seconds since the epoch: GitHub stamps whole seconds, GitLab's webhooks whole seconds and its
/// REST API milliseconds, so finer digits would make one edit two identities.
fn stamp(at: DateTime<Utc>) -> i64 {
    at.trunc_subsecs(0).timestamp()
}

/// The content identity of `event` on tracker `tracker`. `action` is the provider's action word,
/// used only for issue changes the event's facts do not name (`reopened`, `unlabeled`, …).
///
/// - a new note: `T/P/N/note/ID/created`; an edited note: `T/P/N/note/ID/edited@SECS`
/// - an opened issue: `T/P/N/opened`
/// - any other issue change: `T/P/N/<facts>@SECS` where the facts are `edited`,
///   `labeled:a,b`, `assigned:x`, `closed` (joined by `+`), else the action word.
pub fn event_key(tracker: &str, event: &IssueEvent, action: Option<&str>) -> String {
    let issue = &event.issue;
    let mut key = format!("{tracker}/{}/{}", issue.project_id, issue.number);
    if let Some(note) = &event.note {
        let _ = write!(key, "/note/{}", note.note.note_id);
        if note.edited {
            let _ = write!(key, "/edited@{}", stamp(note.note.updated_at));
        } else {
            key.push_str("/created");
        }
        return key;
    }
    if event.opened {
        key.push_str("/opened");
        return key;
    }
    let mut facts: Vec<String> = Vec::new();
    if event.body_change.is_some() {
        facts.push("edited".into());
    }
    if !event.labels_added.is_empty() {
        let mut labels: Vec<String> = event
            .labels_added
            .iter()
            .map(|l| l.to_lowercase())
            .collect();
        labels.sort();
        facts.push(format!("labeled:{}", labels.join(",")));
    }
    if !event.assignees_added.is_empty() {
        let mut assignees: Vec<String> = event
            .assignees_added
            .iter()
            .map(|a| a.to_lowercase())
            .collect();
        assignees.sort();
        facts.push(format!("assigned:{}", assignees.join(",")));
    }
    if event.closed {
        facts.push("closed".into());
    }
    if facts.is_empty() {
        facts.push(action.unwrap_or("changed").to_owned());
    }
    let _ = write!(key, "/{}@{}", facts.join("+"), stamp(issue.updated_at));
    key
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::engage::{BodyChange, NoteEvent};
    use crate::{IssueSnapshot, NoteSnapshot};

    fn issue(updated_ms: i64) -> IssueSnapshot {
        IssueSnapshot {
            project_id: "7".into(),
            project_path: "o/r".into(),
            number: 3,
            title: "t".into(),
            body: "b".into(),
            state: "open".into(),
            labels: Vec::new(),
            author: None,
            assignees: None,
            url: "u".into(),
            confidential: false,
            updated_at: Utc.timestamp_millis_opt(updated_ms).unwrap(),
            visibility: None,
        }
    }

    fn note_event(edited: bool, updated_ms: i64) -> IssueEvent {
        let mut event = IssueEvent::new(issue(updated_ms), "alice".into());
        let at = Utc.timestamp_millis_opt(updated_ms).unwrap();
        event.note = Some(NoteEvent {
            note: NoteSnapshot {
                note_id: "99".into(),
                discussion_id: None,
                author: "alice".into(),
                body: "@bot".into(),
                internal: false,
                url: None,
                created_at: at,
                updated_at: at,
            },
            edited,
            previous_body: None,
            system: false,
        });
        event
    }

    #[test]
    fn a_new_note_is_one_event_whenever_it_is_seen() {
        // The webhook (seconds) and the REST list (milliseconds, later issue stamp) agree.
        assert_eq!(
            event_key("gh", &note_event(false, 1_000_000), Some("created")),
            "gh/7/3/note/99/created"
        );
        assert_eq!(
            event_key("gh", &note_event(false, 1_000_999), None),
            "gh/7/3/note/99/created"
        );
    }

    #[test]
    fn each_edit_is_its_own_event_at_second_precision() {
        let a = event_key("gh", &note_event(true, 1_000_000), Some("edited"));
        let b = event_key("gh", &note_event(true, 1_000_400), None);
        let c = event_key("gh", &note_event(true, 2_000_000), Some("edited"));
        assert_eq!(a, "gh/7/3/note/99/edited@1000");
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn issue_changes_name_their_facts() {
        let mut opened = IssueEvent::new(issue(5_000), "alice".into());
        opened.opened = true;
        assert_eq!(event_key("gl", &opened, Some("open")), "gl/7/3/opened");

        let mut labeled = IssueEvent::new(issue(5_000), "alice".into());
        labeled.labels_added = vec!["Bug".into(), "a".into()];
        labeled.body_change = Some(BodyChange { previous: None });
        assert_eq!(
            event_key("gl", &labeled, Some("update")),
            "gl/7/3/edited+labeled:a,bug@5"
        );

        let reopened = IssueEvent::new(issue(5_000), "alice".into());
        assert_eq!(
            event_key("gh", &reopened, Some("reopened")),
            "gh/7/3/reopened@5"
        );
    }

    #[test]
    fn a_time_the_payload_did_not_carry_is_no_identity() {
        let mut edit = note_event(true, 1_000_000);
        edit.stamp = Stamp::Clock;
        assert_eq!(content_identity("gh", &edit, Some("edited")), None);
        let mut created = note_event(false, 1_000_000);
        created.stamp = Stamp::Clock;
        assert_eq!(
            content_identity("gh", &created, Some("created")).as_deref(),
            Some("gh/7/3/note/99/created")
        );
        let mut opened = IssueEvent::new(issue(5_000), "alice".into());
        opened.opened = true;
        opened.stamp = Stamp::Clock;
        assert_eq!(
            content_identity("gl", &opened, Some("open")).as_deref(),
            Some("gl/7/3/opened")
        );
        let mut closed = IssueEvent::new(issue(5_000), "alice".into());
        closed.closed = true;
        assert_eq!(
            content_identity("gl", &closed, Some("close")).as_deref(),
            Some("gl/7/3/closed@5")
        );
        closed.stamp = Stamp::Clock;
        assert_eq!(content_identity("gl", &closed, Some("close")), None);
    }
}
