//! What changed on a project since a time (the reconciler's poll): the issues updated since,
//! oldest first, every page; then the discussions of each changed issue, keeping the notes
//! created or edited since (system notes skipped).

use chrono::{DateTime, SecondsFormat, Utc};
use relay_core::{IssueSnapshot, NoteSnapshot};

use super::model::Issue;
use super::{GitLabClient, project};
use crate::pagination::PER_PAGE;
use crate::{ChangedIssue, ChangedNote, IssueRef, ProjectChanges, ProjectRef, Result};

impl GitLabClient {
    pub async fn changes_since(
        &self,
        target: &ProjectRef,
        since: DateTime<Utc>,
    ) -> Result<ProjectChanges> {
        let scope = IssueRef {
            project_id: target.project_id.clone().unwrap_or_default(),
            project_path: target.project_path.clone(),
            number: 0,
            installation_id: None,
        };
        let after = since.to_rfc3339_opts(SecondsFormat::Secs, true);
        let first = format!(
            "/projects/{}/issues?updated_after={after}&scope=all&order_by=updated_at&sort=asc&per_page={PER_PAGE}",
            project(&scope)?
        );
        let issues: Vec<Issue> = self.pages(first, "changed issues").await?;
        let project_id = target
            .project_id
            .clone()
            .or_else(|| issues.first().map(|i| i.project_id.to_string()));
        let mut changes = ProjectChanges {
            project_id: project_id.clone(),
            ..ProjectChanges::default()
        };
        for got in issues {
            let issue = IssueRef {
                project_id: got.project_id.to_string(),
                project_path: target.project_path.clone(),
                number: got.iid,
                installation_id: None,
            };
            for discussion in self.discussions(&issue).await? {
                for note in discussion.notes {
                    if note.system || note.updated_at < since {
                        continue;
                    }
                    changes.notes.push(ChangedNote {
                        issue_number: got.iid,
                        note: NoteSnapshot {
                            note_id: note.id.to_string(),
                            discussion_id: Some(discussion.id.clone()),
                            author: note.author.username,
                            body: note.body,
                            internal: note.internal,
                            url: None,
                            created_at: note.created_at,
                            updated_at: note.updated_at,
                        },
                    });
                }
            }
            let created_at = got.created_at.unwrap_or(got.updated_at);
            changes.issues.push(ChangedIssue {
                issue: snapshot(got, &target.project_path),
                created_at,
            });
        }
        changes
            .notes
            .sort_by_key(|n| (n.note.updated_at, n.note.note_id.clone()));
        Ok(changes)
    }
}

fn snapshot(got: Issue, project_path: &str) -> IssueSnapshot {
    IssueSnapshot {
        project_id: got.project_id.to_string(),
        project_path: project_path.to_owned(),
        number: got.iid,
        title: got.title,
        body: got.description.unwrap_or_default(),
        // IssueSnapshot speaks GitHub's words.
        state: if got.state == "opened" {
            "open".into()
        } else {
            got.state
        },
        labels: got.labels,
        author: got.author.map(|u| u.username),
        assignees: Some(got.assignees.into_iter().map(|u| u.username).collect()),
        url: got.web_url,
        confidential: got.confidential,
        updated_at: got.updated_at,
        visibility: None,
    }
}
