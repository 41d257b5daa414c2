//! Award emoji on the issue or one of its notes. Awarding one that is already there succeeds:
//! GitLab answers it with 404, 409 or 400 depending on the version, always saying "already".

use reqwest::Method;
use serde_json::json;

use super::{GitLabClient, project};
use crate::{IssueRef, Reaction, ReactionTarget, Result, TrackerError};

impl GitLabClient {
    pub(crate) async fn award(
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
