//! Writes: [`GitHubClient::write`] sends each kind of [`TrackerWrite`] to its method (comments
//! and edits are in `comments`), and reactions on the issue or one of its comments, here. GitHub
//! answers 200 when the reaction already exists and 201 when it creates it: both are success.

use reqwest::Method;
use serde_json::json;

use super::{GitHubClient, repo_path};
use crate::{IssueRef, Reaction, ReactionTarget, Result, TrackerWrite, WriteAck};

impl GitHubClient {
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
        let repo = repo_path(&issue.project_path)?;
        let path = match target {
            ReactionTarget::Issue => format!("/repos/{repo}/issues/{}/reactions", issue.number),
            ReactionTarget::Note(note) => {
                // Scope check: the comment must be one of this issue's.
                let comment = self.issue_comment(issue, &note.note_id).await?;
                format!("/repos/{repo}/issues/comments/{}/reactions", comment.id)
            }
        };
        let body = json!({ "content": reaction.github() });
        self.call(Method::POST, &path, issue, Some(&body)).await?;
        Ok(())
    }
}
