//! Reactions on the issue or one of its comments. GitHub answers 200 when the reaction already
//! exists and 201 when it creates it: both are success.

use reqwest::Method;
use serde_json::json;

use super::{GitHubClient, repo_path};
use crate::{IssueRef, Reaction, ReactionTarget, Result};

impl GitHubClient {
    pub(crate) async fn react(
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
