//! The thread as discussions: listing every page (`x-next-page`, `Link` as fallback; system notes
//! skipped), creating a discussion, replying in one, editing a note, and finding the bot's own
//! marked note.

use relay_core::NoteSnapshot;
use reqwest::Method;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::model::{Discussion, Note};
use super::{GitLabClient, MAX_NOTE_CHARS, project};
use crate::http::{json, json_sized};
use crate::pagination::{self, MAX_LIST_BYTES, MAX_PAGES, PER_PAGE};
use crate::{CommentTarget, IssueRef, NoteRef, PostedComment, Result, ThreadNote, TrackerError};

/// A note id from a [`NoteRef`]: digits only (it goes into a URL path).
pub(crate) fn note_id(raw: &str) -> Result<i64> {
    raw.parse()
        .map_err(|_| TrackerError::Validation(format!("{raw:?} is not a GitLab note id")))
}

/// A discussion id: hex only (it goes into a URL path).
fn discussion_id(raw: &str) -> Result<&str> {
    if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(raw)
    } else {
        Err(TrackerError::Validation(format!(
            "{raw:?} is not a GitLab discussion id"
        )))
    }
}

fn posted(note: &Note, discussion: &str) -> PostedComment {
    PostedComment {
        note_id: note.id.to_string(),
        discussion_id: Some(discussion.to_owned()),
        url: None,
        created_at: Some(note.created_at),
    }
}

impl GitLabClient {
    fn issue_base(&self, issue: &IssueRef) -> Result<String> {
        Ok(format!(
            "/projects/{}/issues/{}",
            project(issue)?,
            issue.number
        ))
    }

    pub(crate) async fn discussions(&self, issue: &IssueRef) -> Result<Vec<Discussion>> {
        let first = format!(
            "{}/discussions?per_page={PER_PAGE}",
            self.issue_base(issue)?
        );
        self.pages(first, "discussions").await
    }

    /// Every page of a list (`x-next-page`, `Link` on the API's own host as the fallback);
    /// `what` names the list in errors.
    pub(crate) async fn pages<T: DeserializeOwned>(
        &self,
        first: String,
        what: &str,
    ) -> Result<Vec<T>> {
        let mut url = first.clone();
        let mut all = Vec::new();
        let mut bytes = 0usize;
        for _ in 0..MAX_PAGES {
            let response = self.call(Method::GET, &url, None).await?;
            let headers = response.headers().clone();
            let (page, size): (Vec<T>, usize) =
                json_sized(response, &format!("GET {what}")).await?;
            bytes = bytes.saturating_add(size);
            if bytes > MAX_LIST_BYTES {
                return Err(TrackerError::Protocol(format!(
                    "the {what} are longer than {} MiB",
                    MAX_LIST_BYTES / (1024 * 1024)
                )));
            }
            all.extend(page);
            if let Some(next) = pagination::gitlab_next_page(&headers) {
                url = format!("{first}&page={next}");
            } else if let Some(next) = pagination::link_next(&headers) {
                // Never send the credential to another origin than the configured API's.
                if !pagination::within_api(&next, &self.api) {
                    return Err(TrackerError::Protocol(format!(
                        "pagination link leaves the API base: {next}"
                    )));
                }
                url = next;
            } else {
                return Ok(all);
            }
        }
        Err(TrackerError::Protocol(format!(
            "more than {MAX_PAGES} pages of {what}"
        )))
    }

    pub async fn list_thread(&self, issue: &IssueRef) -> Result<Vec<ThreadNote>> {
        let mut notes: Vec<ThreadNote> = self
            .discussions(issue)
            .await?
            .into_iter()
            .flat_map(|d| {
                let id = d.id;
                d.notes
                    .into_iter()
                    .filter(|n| !n.system)
                    .map(move |n| (id.clone(), n))
            })
            .map(|(discussion, n)| ThreadNote {
                by_bot: self.bot.is(&n.author.username),
                author_role: None,
                note: NoteSnapshot {
                    note_id: n.id.to_string(),
                    discussion_id: Some(discussion),
                    author: n.author.username,
                    body: n.body,
                    internal: n.internal,
                    url: None,
                    created_at: n.created_at,
                    updated_at: n.updated_at,
                },
            })
            .collect();
        // Discussions come in thread order; the trait promises oldest first.
        notes.sort_by(|a, b| {
            (a.note.created_at, note_order(&a.note.note_id))
                .cmp(&(b.note.created_at, note_order(&b.note.note_id)))
        });
        Ok(notes)
    }

    pub async fn post_comment(
        &self,
        issue: &IssueRef,
        body: &str,
        target: &CommentTarget,
    ) -> Result<PostedComment> {
        let base = self.issue_base(issue)?;
        match target {
            CommentTarget::NewThread => {
                let path = format!("{base}/discussions");
                let created: Discussion = json(
                    self.call(Method::POST, &path, Some(&note_body(body)?))
                        .await?,
                    "POST discussions",
                )
                .await?;
                let note = created.notes.first().ok_or_else(|| {
                    TrackerError::Protocol("created discussion has no note".into())
                })?;
                Ok(posted(note, &created.id))
            }
            CommentTarget::Reply(answered) => {
                let discussion = match &answered.discussion_id {
                    Some(d) => discussion_id(d)?.to_owned(),
                    None => self.discussion_of(issue, &answered.note_id).await?,
                };
                let path = format!("{base}/discussions/{discussion}/notes");
                let note: Note = json(
                    self.call(Method::POST, &path, Some(&note_body(body)?))
                        .await?,
                    "POST discussion note",
                )
                .await?;
                Ok(posted(&note, &discussion))
            }
        }
    }

    /// The discussion a note of this issue belongs to.
    async fn discussion_of(&self, issue: &IssueRef, note: &str) -> Result<String> {
        let id = note_id(note)?;
        self.discussions(issue)
            .await?
            .into_iter()
            .find(|d| d.notes.iter().any(|n| n.id == id))
            .map(|d| d.id)
            .ok_or_else(|| TrackerError::NotFound(format!("note {id} is not a note of this issue")))
    }

    pub async fn edit_comment(&self, issue: &IssueRef, note: &NoteRef, body: &str) -> Result<()> {
        let id = note_id(&note.note_id)?;
        let base = self.issue_base(issue)?;
        let path = match &note.discussion_id {
            Some(d) => format!("{base}/discussions/{}/notes/{id}", discussion_id(d)?),
            None => format!("{base}/notes/{id}"),
        };
        self.call(Method::PUT, &path, Some(&note_body(body)?))
            .await?;
        Ok(())
    }

    pub async fn find_marked_comment(
        &self,
        issue: &IssueRef,
        marker: &str,
    ) -> Result<Option<PostedComment>> {
        if marker.is_empty() {
            return Err(TrackerError::Validation("empty marker".into()));
        }
        for discussion in self.discussions(issue).await? {
            let found = discussion
                .notes
                .iter()
                .find(|n| !n.system && self.bot.is(&n.author.username) && n.body.contains(marker));
            if let Some(note) = found {
                return Ok(Some(posted(note, &discussion.id)));
            }
        }
        Ok(None)
    }
}

fn note_order(id: &str) -> i64 {
    id.parse().unwrap_or(i64::MAX)
}

/// The JSON of every note this client writes (new thread, reply, edit): the one place a GitLab
/// body is made inert. No line outside a fenced code block may start with `/`, or GitLab would
/// run it as a quick action (`/close`, `/move`, `/confidential` …); see
/// [`relay_core::outgoing::neutralize_quick_actions`].
fn note_body(body: &str) -> Result<serde_json::Value> {
    let body = relay_core::outgoing::neutralize_quick_actions(body);
    check_length(&body)?;
    Ok(json!({ "body": body }))
}

fn check_length(body: &str) -> Result<()> {
    let chars = body.chars().count();
    if chars > MAX_NOTE_CHARS {
        return Err(TrackerError::Validation(format!(
            "note body is {chars} characters; GitLab accepts at most {MAX_NOTE_CHARS}"
        )));
    }
    Ok(())
}
