//! What changed on a project since a time (the reconciler's poll): the issues updated since,
//! oldest first, every page; then the discussions of each changed issue, keeping the notes
//! created or edited since (system notes skipped).

use chrono::{DateTime, SecondsFormat, Utc};
use relay_core::{IssueSnapshot, NoteSnapshot};
use reqwest::Method;

use super::model::Issue;
use super::{GitLabClient, project};
use crate::http::json;
use crate::pagination::{self, MAX_PAGES, PER_PAGE};
use crate::{
    ChangedIssue, ChangedNote, IssueRef, ProjectChanges, ProjectRef, Result, TrackerError,
};

impl GitLabClient {
    pub(crate) async fn changes(
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
        let issues = self.issue_pages(first).await?;
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

    /// Every page of an issue list (`x-next-page`, `Link` as the fallback).
    async fn issue_pages(&self, first: String) -> Result<Vec<Issue>> {
        let mut url = first.clone();
        let mut all = Vec::new();
        for _ in 0..MAX_PAGES {
            let response = self.call(Method::GET, &url, None).await?;
            let headers = response.headers().clone();
            let page: Vec<Issue> = json(response, "GET issues").await?;
            all.extend(page);
            if let Some(next) = pagination::gitlab_next_page(&headers) {
                url = format!("{first}&page={next}");
            } else if let Some(next) = pagination::link_next(&headers) {
                if !next.starts_with(&self.api) {
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
            "more than {MAX_PAGES} pages of issues"
        )))
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
