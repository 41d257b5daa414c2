//! GitLab webhooks: `X-Gitlab-Token` verification and Issue / Note hook parsing.

use http::HeaderMap;
use relay_core::{IssueSnapshot, NoteSnapshot, ProjectVisibility};
use serde_json::Value;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{
    DeliveryHeaders, Rejection, WebhookFormat, added, body_digest, i64_at, id_at, names_at,
    parse_time, str_at,
};
use crate::event::{BodyChange, IssueEvent, NoteEvent, ParsedEvent, Stamp};

/// GitLab's [`WebhookFormat`].
pub struct GitLab;

impl WebhookFormat for GitLab {
    fn verify(&self, headers: &HeaderMap, _body: &[u8], secret: &[u8]) -> Result<(), Rejection> {
        verify(headers, secret)
    }

    fn delivery(&self, headers: &HeaderMap, body: &[u8]) -> Result<DeliveryHeaders, Rejection> {
        delivery(headers, body)
    }

    fn parse(&self, event: &str, payload: &Value) -> ParsedEvent {
        parse(event, payload)
    }

    /// An issue's or a note's action is in `object_attributes`.
    fn action<'a>(&self, payload: &'a Value) -> Option<&'a str> {
        str_at(payload, "/action").or_else(|| str_at(payload, "/object_attributes/action"))
    }

    fn failed_secret(&self) -> super::FailedSecret {
        super::FailedSecret::Guess
    }
}

/// Compares `X-Gitlab-Token` with the secret in constant time. Both sides are hashed first so the
/// comparison does not leak the secret's length either.
pub fn verify(headers: &HeaderMap, secret: &[u8]) -> Result<(), Rejection> {
    let token = headers
        .get("x-gitlab-token")
        .ok_or(Rejection::MissingSignature("X-Gitlab-Token"))?;
    let given = Sha256::digest(token.as_bytes());
    let expected = Sha256::digest(secret);
    if bool::from(given.as_slice().ct_eq(expected.as_slice())) {
        Ok(())
    } else {
        Err(Rejection::BadSignature)
    }
}

/// Event name and delivery identity: `Idempotency-Key` (stable across GitLab's retries and
/// "Resend request"), else `X-Gitlab-Event-UUID`, else a digest of the body.
pub fn delivery(headers: &HeaderMap, body: &[u8]) -> Result<DeliveryHeaders, Rejection> {
    let header = |name: &str| super::header(headers, name);
    let event = header("x-gitlab-event").ok_or(Rejection::MissingEvent("X-Gitlab-Event"))?;
    let (delivery_id, delivery_key) = if let Some(key) = header("idempotency-key") {
        (key.to_owned(), format!("idempotency:{key}"))
    } else if let Some(uuid) = header("x-gitlab-event-uuid") {
        (uuid.to_owned(), format!("event:{uuid}"))
    } else {
        let digest = body_digest(body);
        (format!("sha256:{digest}"), format!("sha256:{digest}"))
    };
    Ok(DeliveryHeaders {
        delivery_key,
        delivery_id,
        event: event.to_owned(),
    })
}

/// Turns a GitLab payload into a [`ParsedEvent`].
pub fn parse(event: &str, payload: &Value) -> ParsedEvent {
    match event {
        "Issue Hook" | "Confidential Issue Hook" => issue_hook(payload),
        "Note Hook" | "Confidential Note Hook" => note_hook(event, payload),
        "Push Hook" => push_hook(payload),
        _ => ParsedEvent::Ignored {
            reason: "unsupported_event",
        },
    }
}

fn malformed() -> ParsedEvent {
    ParsedEvent::Ignored {
        reason: "malformed_payload",
    }
}

fn issue_hook(payload: &Value) -> ParsedEvent {
    let Some(attrs) = payload.get("object_attributes") else {
        return malformed();
    };
    let action = str_at(attrs, "/action").unwrap_or_default();
    if !matches!(action, "open" | "update" | "close" | "reopen") {
        return ParsedEvent::Ignored {
            reason: "unsupported_action",
        };
    }
    let labels = names_at(payload, "/labels", "title")
        .or_else(|| names_at(attrs, "/labels", "title"))
        .unwrap_or_default();
    let assignees = names_at(payload, "/assignees", "username").or_else(|| {
        str_at(payload, "/assignee/username").map(|username| vec![username.to_owned()])
    });
    let Some(project_id) = id_at(payload, "/project/id").or_else(|| id_at(attrs, "/project_id"))
    else {
        return malformed();
    };
    let (Some(number), Some(project_path), Some(actor)) = (
        i64_at(attrs, "/iid"),
        str_at(payload, "/project/path_with_namespace"),
        str_at(payload, "/user/username"),
    ) else {
        return malformed();
    };
    let (updated_at, stamp) = Stamp::or_clock(parse_time(str_at(attrs, "/updated_at")));
    let issue = IssueSnapshot {
        project_id,
        project_path: project_path.to_owned(),
        number,
        title: str_at(attrs, "/title").unwrap_or_default().to_owned(),
        body: str_at(attrs, "/description").unwrap_or_default().to_owned(),
        state: normalize_state(str_at(attrs, "/state")),
        labels,
        // Only the author opens an issue; other hooks carry just `author_id`.
        author: (action == "open").then(|| actor.to_owned()),
        assignees: assignees.clone(),
        url: str_at(attrs, "/url").unwrap_or_default().to_owned(),
        confidential: attrs
            .get("confidential")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        updated_at,
        visibility: visibility(payload),
    };
    let mut event = IssueEvent::new(issue, actor.to_owned());
    event.stamp = stamp;
    event.opened = action == "open";
    event.closed = action == "close";
    let changes = payload.get("changes");
    if let Some(description) = changes.and_then(|c| c.get("description"))
        && action == "update"
    {
        event.body_change = Some(BodyChange {
            previous: str_at(description, "/previous").map(str::to_owned),
        });
    }
    if let Some(labels) = changes.and_then(|c| c.get("labels")) {
        let previous = names_at(labels, "/previous", "title").unwrap_or_default();
        let current = names_at(labels, "/current", "title").unwrap_or_default();
        event.labels_added = added(&previous, &current);
    } else if action == "open" {
        event.labels_added = event.issue.labels.clone();
    }
    if let Some(change) = changes.and_then(|c| c.get("assignees")) {
        let previous = names_at(change, "/previous", "username").unwrap_or_default();
        let current = names_at(change, "/current", "username").unwrap_or_default();
        event.assignees_added = added(&previous, &current);
    } else if action == "open" {
        event.assignees_added = assignees.unwrap_or_default();
    }
    ParsedEvent::Issue(Box::new(event))
}

fn note_hook(event_name: &str, payload: &Value) -> ParsedEvent {
    let Some(attrs) = payload.get("object_attributes") else {
        return malformed();
    };
    match str_at(attrs, "/noteable_type") {
        Some("Issue") => {}
        Some("MergeRequest") => {
            return ParsedEvent::Ignored {
                reason: "merge_request_note",
            };
        }
        Some("Commit") => {
            return ParsedEvent::Ignored {
                reason: "commit_note",
            };
        }
        Some("Snippet") => {
            return ParsedEvent::Ignored {
                reason: "snippet_note",
            };
        }
        _ => {
            return ParsedEvent::Ignored {
                reason: "unsupported_noteable",
            };
        }
    }
    let Some(issue) = payload.get("issue") else {
        return malformed();
    };
    let Some(project_id) = id_at(payload, "/project/id")
        .or_else(|| id_at(payload, "/project_id"))
        .or_else(|| id_at(issue, "/project_id"))
    else {
        return malformed();
    };
    let (Some(number), Some(project_path), Some(actor), Some(note_id)) = (
        // The issue number is `iid`; `noteable_id` is the global id.
        i64_at(issue, "/iid"),
        str_at(payload, "/project/path_with_namespace"),
        str_at(payload, "/user/username"),
        id_at(attrs, "/id"),
    ) else {
        return malformed();
    };
    let note_url = str_at(attrs, "/url").map(str::to_owned);
    let issue_url = str_at(issue, "/url")
        .map(str::to_owned)
        .or_else(|| {
            note_url
                .as_deref()
                .map(|u| u.split('#').next().unwrap_or(u).to_owned())
        })
        .unwrap_or_default();
    let snapshot = IssueSnapshot {
        project_id,
        project_path: project_path.to_owned(),
        number,
        title: str_at(issue, "/title").unwrap_or_default().to_owned(),
        body: str_at(issue, "/description").unwrap_or_default().to_owned(),
        state: normalize_state(str_at(issue, "/state")),
        labels: names_at(issue, "/labels", "title").unwrap_or_default(),
        author: None,
        assignees: None,
        url: issue_url,
        confidential: issue
            .get("confidential")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        updated_at: parse_time(str_at(issue, "/updated_at")).unwrap_or_else(chrono::Utc::now),
        visibility: visibility(payload),
    };
    let note_created_at = parse_time(str_at(attrs, "/created_at"));
    // A note edit is identified by the note's time: its own, else its creation's.
    let (note_updated_at, note_stamp) =
        Stamp::or_clock(parse_time(str_at(attrs, "/updated_at")).or(note_created_at));
    let created_at = note_created_at.unwrap_or(note_updated_at);
    let note = NoteSnapshot {
        note_id,
        discussion_id: str_at(attrs, "/discussion_id").map(str::to_owned),
        author: actor.to_owned(),
        body: str_at(attrs, "/note").unwrap_or_default().to_owned(),
        internal: attrs
            .get("internal")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            || (event_name == "Confidential Note Hook" && !snapshot.confidential),
        url: note_url,
        created_at,
        updated_at: note_updated_at,
    };
    let mut event = IssueEvent::new(snapshot, actor.to_owned());
    event.stamp = note_stamp;
    event.note = Some(NoteEvent {
        note,
        edited: str_at(attrs, "/action") == Some("update"),
        previous_body: None,
        system: attrs
            .get("system")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    });
    ParsedEvent::Issue(Box::new(event))
}

/// `Push Hook`: only the default branch matters; deleted branches are ignored.
fn push_hook(payload: &Value) -> ParsedEvent {
    let (Some(git_ref), Some(default_branch), Some(project_path)) = (
        str_at(payload, "/ref"),
        str_at(payload, "/project/default_branch"),
        str_at(payload, "/project/path_with_namespace"),
    ) else {
        return malformed();
    };
    let Some(project_id) = id_at(payload, "/project/id").or_else(|| id_at(payload, "/project_id"))
    else {
        return malformed();
    };
    if git_ref != format!("refs/heads/{default_branch}") {
        return ParsedEvent::Ignored {
            reason: "not_default_branch",
        };
    }
    let commit = str_at(payload, "/checkout_sha")
        .filter(|sha| !sha.is_empty())
        .or_else(|| str_at(payload, "/after"));
    match commit {
        Some(sha) if !super::is_zero_sha(sha) => ParsedEvent::Push(crate::event::PushEvent {
            project_id,
            project_path: project_path.to_owned(),
            commit: sha.to_owned(),
        }),
        _ => ParsedEvent::Ignored {
            reason: "branch_deleted",
        },
    }
}

fn normalize_state(state: Option<&str>) -> String {
    match state {
        Some("closed") => "closed".to_owned(),
        _ => "open".to_owned(),
    }
}

/// `project.visibility_level`: 0 private, 10 internal, 20 public.
fn visibility(payload: &Value) -> Option<ProjectVisibility> {
    match payload.pointer("/project/visibility_level")?.as_i64()? {
        0 => Some(ProjectVisibility::Private),
        10 => Some(ProjectVisibility::Internal),
        20 => Some(ProjectVisibility::Public),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_must_match_exactly() {
        let mut headers = HeaderMap::new();
        headers.insert("x-gitlab-token", "s3cret".parse().unwrap());
        assert_eq!(verify(&headers, b"s3cret"), Ok(()));
        assert_eq!(verify(&headers, b"s3cret2"), Err(Rejection::BadSignature));
        assert_eq!(verify(&headers, b"s3cre"), Err(Rejection::BadSignature));
        assert_eq!(
            verify(&HeaderMap::new(), b"s3cret"),
            Err(Rejection::MissingSignature("X-Gitlab-Token"))
        );
    }

    #[test]
    fn delivery_identity_prefers_idempotency_key() {
        let mut headers = HeaderMap::new();
        headers.insert("x-gitlab-event", "Note Hook".parse().unwrap());
        headers.insert("x-gitlab-event-uuid", "u-1".parse().unwrap());
        assert_eq!(delivery(&headers, b"{}").unwrap().delivery_key, "event:u-1");
        headers.insert("idempotency-key", "k-1".parse().unwrap());
        assert_eq!(
            delivery(&headers, b"{}").unwrap().delivery_key,
            "idempotency:k-1"
        );
    }
}
