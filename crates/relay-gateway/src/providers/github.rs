//! GitHub webhooks: `X-Hub-Signature-256` verification and `issues` / `issue_comment` parsing.

use hmac::{KeyInit, Mac};
use http::HeaderMap;
use relay_core::{IssueSnapshot, NoteSnapshot, ProjectVisibility};
use serde_json::Value;
use sha2::Sha256;

use super::{
    DeliveryHeaders, Rejection, WebhookFormat, body_digest, i64_at, id_at, names_at, parse_time,
    str_at,
};
use crate::event::{BodyChange, IssueEvent, NoteEvent, ParsedEvent, Stamp};

const SIGNATURE: &str = "x-hub-signature-256";

/// GitHub's [`WebhookFormat`].
pub struct GitHub;

impl WebhookFormat for GitHub {
    fn verify(&self, headers: &HeaderMap, body: &[u8], secret: &[u8]) -> Result<(), Rejection> {
        verify(headers, body, secret)
    }

    fn delivery(&self, headers: &HeaderMap, body: &[u8]) -> Result<DeliveryHeaders, Rejection> {
        delivery(headers, body)
    }

    fn parse(&self, event: &str, payload: &Value) -> ParsedEvent {
        parse(event, payload)
    }

    fn action<'a>(&self, payload: &'a Value) -> Option<&'a str> {
        str_at(payload, "/action")
    }

    fn failed_secret(&self) -> super::FailedSecret {
        super::FailedSecret::Signature
    }
}

/// Verifies the HMAC-SHA256 of the raw body in constant time.
pub fn verify(headers: &HeaderMap, body: &[u8], secret: &[u8]) -> Result<(), Rejection> {
    let header = headers
        .get(SIGNATURE)
        .ok_or(Rejection::MissingSignature("X-Hub-Signature-256"))?;
    let hex_digest = header
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("sha256="))
        .ok_or(Rejection::BadSignature)?;
    let expected = hex::decode(hex_digest).map_err(|_| Rejection::BadSignature)?;
    let mut mac = Hmac::new_from_slice(secret).map_err(|_| Rejection::BadSignature)?;
    mac.update(body);
    // `verify_slice` compares in constant time.
    mac.verify_slice(&expected)
        .map_err(|_| Rejection::BadSignature)
}

type Hmac = hmac::Hmac<Sha256>;

/// `sha256=<hex>` for a body, as GitHub would send it (used by tests and the benchmark).
pub fn sign(body: &[u8], secret: &[u8]) -> String {
    let mut mac = Hmac::new_from_slice(secret).expect("HMAC accepts keys of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Event name and delivery identity. GitHub reuses `X-GitHub-Delivery` for the same event across
/// hooks, so the identity is scoped by the hook's installation target (or hook id).
pub fn delivery(headers: &HeaderMap, body: &[u8]) -> Result<DeliveryHeaders, Rejection> {
    let header = |name: &str| super::header(headers, name);
    let event = header("x-github-event").ok_or(Rejection::MissingEvent("X-GitHub-Event"))?;
    let scope = match (
        header("x-github-hook-installation-target-type"),
        header("x-github-hook-installation-target-id"),
    ) {
        (Some(kind), Some(id)) => format!("{kind}:{id}"),
        _ => header("x-github-hook-id")
            .map(|id| format!("hook:{id}"))
            .unwrap_or_else(|| "unscoped".to_owned()),
    };
    let (delivery_id, key) = match header("x-github-delivery") {
        Some(id) => (id.to_owned(), format!("{scope}:{id}")),
        None => {
            let digest = body_digest(body);
            (
                format!("sha256:{digest}"),
                format!("{scope}:sha256:{digest}"),
            )
        }
    };
    Ok(DeliveryHeaders {
        delivery_key: key,
        delivery_id,
        event: event.to_owned(),
    })
}

/// Turns a GitHub payload into a [`ParsedEvent`].
pub fn parse(event: &str, payload: &Value) -> ParsedEvent {
    let action = str_at(payload, "/action").unwrap_or_default();
    match event {
        "ping" => ParsedEvent::Ping,
        "issues" => match action {
            "opened" | "edited" | "labeled" | "assigned" | "reopened" | "closed" => {
                match issue_event(payload) {
                    Some(mut event) => {
                        match action {
                            "opened" => event.opened = true,
                            "closed" => event.closed = true,
                            "edited" => {
                                // GitHub lists only the fields that changed; no `changes.body` means
                                // the body did not change.
                                if let Some(from) = payload.pointer("/changes/body/from") {
                                    event.body_change = Some(BodyChange {
                                        previous: from.as_str().map(str::to_owned),
                                    });
                                }
                            }
                            "labeled" => {
                                event.labels_added = str_at(payload, "/label/name")
                                    .map(str::to_owned)
                                    .into_iter()
                                    .collect();
                            }
                            "assigned" => {
                                event.assignees_added = str_at(payload, "/assignee/login")
                                    .map(str::to_owned)
                                    .into_iter()
                                    .collect();
                            }
                            _ => {}
                        }
                        ParsedEvent::Issue(Box::new(event))
                    }
                    None => ParsedEvent::Ignored {
                        reason: "malformed_payload",
                    },
                }
            }
            _ => ParsedEvent::Ignored {
                reason: "unsupported_action",
            },
        },
        "issue_comment" => {
            if payload
                .pointer("/issue/pull_request")
                .is_some_and(|v| !v.is_null())
            {
                return ParsedEvent::Ignored {
                    reason: "pull_request_comment",
                };
            }
            if !matches!(action, "created" | "edited") {
                return ParsedEvent::Ignored {
                    reason: "unsupported_action",
                };
            }
            let Some(mut event) = issue_event(payload) else {
                return ParsedEvent::Ignored {
                    reason: "malformed_payload",
                };
            };
            let Some((note, note_stamp)) = comment(payload) else {
                return ParsedEvent::Ignored {
                    reason: "malformed_payload",
                };
            };
            // A comment's identity rests on the comment's time, not the issue's.
            event.stamp = note_stamp;
            event.note = Some(NoteEvent {
                note,
                edited: action == "edited",
                previous_body: str_at(payload, "/changes/body/from").map(str::to_owned),
                system: false,
            });
            ParsedEvent::Issue(Box::new(event))
        }
        "push" => push(payload),
        _ => ParsedEvent::Ignored {
            reason: "unsupported_event",
        },
    }
}

/// `push`: only the default branch matters; deleted branches and tags are ignored.
fn push(payload: &Value) -> ParsedEvent {
    let (Some(git_ref), Some(default_branch), Some(project_id), Some(project_path), Some(after)) = (
        str_at(payload, "/ref"),
        str_at(payload, "/repository/default_branch"),
        id_at(payload, "/repository/id"),
        str_at(payload, "/repository/full_name"),
        str_at(payload, "/after"),
    ) else {
        return ParsedEvent::Ignored {
            reason: "malformed_payload",
        };
    };
    if git_ref != format!("refs/heads/{default_branch}") {
        return ParsedEvent::Ignored {
            reason: "not_default_branch",
        };
    }
    if payload.get("deleted").and_then(Value::as_bool) == Some(true) || super::is_zero_sha(after) {
        return ParsedEvent::Ignored {
            reason: "branch_deleted",
        };
    }
    ParsedEvent::Push(crate::event::PushEvent {
        project_id,
        project_path: project_path.to_owned(),
        commit: after.to_owned(),
    })
}

/// `repository.visibility` (`public`, `private`, `internal`), else `repository.private`.
fn visibility(payload: &Value) -> Option<ProjectVisibility> {
    str_at(payload, "/repository/visibility")
        .and_then(ProjectVisibility::parse)
        .or_else(|| {
            payload
                .pointer("/repository/private")
                .and_then(Value::as_bool)
                .map(|private| {
                    if private {
                        ProjectVisibility::Private
                    } else {
                        ProjectVisibility::Public
                    }
                })
        })
}

fn issue_event(payload: &Value) -> Option<IssueEvent> {
    let issue = payload.get("issue")?;
    let (updated_at, stamp) = Stamp::or_clock(parse_time(str_at(issue, "/updated_at")));
    let snapshot = IssueSnapshot {
        project_id: id_at(payload, "/repository/id")?,
        project_path: str_at(payload, "/repository/full_name")?.to_owned(),
        number: i64_at(issue, "/number")?,
        title: str_at(issue, "/title").unwrap_or_default().to_owned(),
        body: str_at(issue, "/body").unwrap_or_default().to_owned(),
        state: str_at(issue, "/state").unwrap_or("open").to_owned(),
        labels: names_at(issue, "/labels", "name").unwrap_or_default(),
        author: str_at(issue, "/user/login").map(str::to_owned),
        assignees: names_at(issue, "/assignees", "login"),
        url: str_at(issue, "/html_url").unwrap_or_default().to_owned(),
        confidential: false,
        updated_at,
        visibility: visibility(payload),
    };
    let actor = str_at(payload, "/sender/login")?.to_owned();
    let mut event = IssueEvent::new(snapshot, actor);
    event.actor_is_bot_account = str_at(payload, "/sender/type") == Some("Bot");
    event.installation_id = i64_at(payload, "/installation/id");
    event.stamp = stamp;
    Some(event)
}

/// The comment, and where its time came from (an edit is identified by it: its own, else its
/// creation's).
fn comment(payload: &Value) -> Option<(NoteSnapshot, Stamp)> {
    let comment = payload.get("comment")?;
    let created = parse_time(str_at(comment, "/created_at"));
    let (updated_at, stamp) =
        Stamp::or_clock(parse_time(str_at(comment, "/updated_at")).or(created));
    let created_at = created.unwrap_or(updated_at);
    let note = NoteSnapshot {
        note_id: id_at(comment, "/id")?,
        discussion_id: None,
        author: str_at(comment, "/user/login")?.to_owned(),
        body: str_at(comment, "/body").unwrap_or_default().to_owned(),
        internal: false,
        url: str_at(comment, "/html_url").map(str::to_owned),
        created_at,
        updated_at,
    };
    Some((note, stamp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_documented_test_vector() {
        // From GitHub's "Validating webhook deliveries" documentation.
        let signature = sign(b"Hello, World!", b"It's a Secret to Everybody");
        assert_eq!(
            signature,
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
        let mut headers = HeaderMap::new();
        headers.insert(SIGNATURE, signature.parse().unwrap());
        assert_eq!(
            verify(&headers, b"Hello, World!", b"It's a Secret to Everybody"),
            Ok(())
        );
        assert_eq!(
            verify(&headers, b"Hello, World?", b"It's a Secret to Everybody"),
            Err(Rejection::BadSignature)
        );
        assert_eq!(
            verify(&headers, b"Hello, World!", b"other"),
            Err(Rejection::BadSignature)
        );
    }

    #[test]
    fn malformed_signatures() {
        for value in [
            "",
            "sha256=",
            "sha256=zz",
            "sha1=abcd",
            "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
        ] {
            let mut headers = HeaderMap::new();
            headers.insert(SIGNATURE, value.parse().unwrap());
            assert_eq!(
                verify(&headers, b"x", b"k"),
                Err(Rejection::BadSignature),
                "{value}"
            );
        }
        assert_eq!(
            verify(&HeaderMap::new(), b"x", b"k"),
            Err(Rejection::MissingSignature("X-Hub-Signature-256"))
        );
    }

    #[test]
    fn delivery_identity_is_scoped() {
        let mut headers = HeaderMap::new();
        headers.insert("x-github-event", "issues".parse().unwrap());
        headers.insert("x-github-delivery", "abc".parse().unwrap());
        headers.insert(
            "x-github-hook-installation-target-type",
            "repository".parse().unwrap(),
        );
        headers.insert(
            "x-github-hook-installation-target-id",
            "42".parse().unwrap(),
        );
        let d = delivery(&headers, b"{}").unwrap();
        assert_eq!(d.delivery_key, "repository:42:abc");
        headers.remove("x-github-hook-installation-target-type");
        headers.insert("x-github-hook-id", "7".parse().unwrap());
        assert_eq!(
            delivery(&headers, b"{}").unwrap().delivery_key,
            "hook:7:abc"
        );
    }

    #[test]
    fn app_deliveries_carry_their_installation() {
        let fixture = |name: &str| -> Value {
            let path = format!(
                "{}/../../tests/fixtures/webhooks/github/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
        };
        let installation = |event: &str, name: &str| match parse(event, &fixture(name)) {
            ParsedEvent::Issue(e) => e.installation_id,
            other => panic!("{name}: {other:?}"),
        };
        assert_eq!(
            installation(
                "issue_comment",
                "issue_comment.created.app-installation.json"
            ),
            Some(35217443)
        );
        assert_eq!(
            installation("issues", "issues.assigned.with-installation.json"),
            Some(1)
        );
        assert_eq!(installation("issues", "issues.opened.json"), None);
    }
}
