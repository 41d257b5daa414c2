//! Writes: [`GitLabClient::write`] sends each kind of [`TrackerWrite`] to its method (notes and
//! edits are in `discussions`), and award emoji on the issue or one of its notes, here. Awarding
//! one that is already there succeeds: GitLab answers it with 404, 409 or 400 depending on the
//! version, always saying "already".

use reqwest::Method;
use serde_json::json;

use super::{GitLabClient, project};
use crate::{IssueRef, Reaction, ReactionTarget, Result, TrackerError, TrackerWrite, WriteAck};

impl GitLabClient {
    /// [`IssueTracker::write`](crate::IssueTracker::write): each kind of write to its method.
    pub async fn write(&self, issue: &IssueRef, write: &TrackerWrite) -> Result<WriteAck> {
        Ok(match write {
            TrackerWrite::Comment { target, body } => {
                WriteAck::Posted(self.post_comment(issue, body, target).await?)
            }
            TrackerWrite::Edit { note, body } => {
                self.edit_comment(issue, note, body).await?;
                WriteAck::Done
            }
            TrackerWrite::React { target, reaction } => {
                self.add_reaction(issue, target, *reaction).await?;
                WriteAck::Done
            }
        })
    }

    pub async fn add_reaction(
        &self,
        issue: &IssueRef,
        target: &ReactionTarget,
        reaction: Reaction,
    ) -> Result<()> {
        let base = format!("/projects/{}/issues/{}", project(issue)?, issue.number);
        let path = match target {
            ReactionTarget::Issue => format!("{base}/award_emoji"),
            ReactionTarget::Note(note) => {
                let id = super::discussions::note_id(&note.note_id)?;
                // The note path is under this issue: GitLab answers 404 for another issue's note.
                format!("{base}/notes/{id}/award_emoji")
            }
        };
        let body = json!({ "name": reaction.gitlab() });
        match self.call(Method::POST, &path, Some(&body)).await {
            Ok(_) => Ok(()),
            Err(
                TrackerError::NotFound(m) | TrackerError::Validation(m) | TrackerError::Protocol(m),
            ) if is_already_awarded(&m) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

fn is_already_awarded(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("already been taken") || m.contains("already awarded")
}
