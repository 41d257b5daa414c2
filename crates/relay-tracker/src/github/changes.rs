//! What changed on a repository since a time (the reconciler's poll): the repository's issue
//! comments and issues updated since, oldest first, every page. Pull requests (which GitHub lists
//! among the issues) and their comments are skipped, as their webhooks are.

use std::collections::HashSet;

use chrono::{DateTime, SecondsFormat, Utc};
use relay_core::{IssueSnapshot, NoteSnapshot};
use reqwest::Method;

use super::model::{Comment, Issue, Repository};
use super::{GitHubClient, repo_path};
use crate::http::json;
use crate::pagination::PER_PAGE;
use crate::{ChangedIssue, ChangedNote, IssueRef, ProjectChanges, ProjectRef, Result};

impl GitHubClient {
    pub async fn changes_since(
        &self,
        project: &ProjectRef,
        since: DateTime<Utc>,
    ) -> Result<ProjectChanges> {
        let repo = repo_path(&project.project_path)?;
        // Requests are made on behalf of the repository (App auth picks its installation).
        let scope = IssueRef {
            project_id: project.project_id.clone().unwrap_or_default(),
            project_path: repo.to_owned(),
            number: 0,
            installation_id: None,
        };
        let since = since.to_rfc3339_opts(SecondsFormat::Secs, true);
        // Comments first: a comment changes its issue's `updated_at`, so every issue a listed
        // comment belongs to is in the issue list asked for after it.
        let comments: Vec<Comment> = self
            .list(
                &scope,
                format!(
                    "/repos/{repo}/issues/comments?since={since}&sort=updated&direction=asc&per_page={PER_PAGE}"
                ),
                "changed comments",
            )
            .await?;
        let issues: Vec<Issue> = self
            .list(
                &scope,
                format!(
                    "/repos/{repo}/issues?state=all&since={since}&sort=updated&direction=asc&per_page={PER_PAGE}"
                ),
                "changed issues",
            )
            .await?;
        let mut project_id = project.project_id.clone();
        if project_id.is_none() && !(comments.is_empty() && issues.is_empty()) {
            let path = format!("/repos/{repo}");
            let found: Repository = json(
                self.call(Method::GET, &path, &scope, None).await?,
                &format!("GET {path}"),
            )
            .await?;
            project_id = Some(found.id.to_string());
        }
        let id = project_id.clone().unwrap_or_default();
        let pulls: HashSet<i64> = issues
            .iter()
            .filter(|i| i.pull_request.is_some())
            .map(|i| i.number)
            .collect();
        let mut changed: Vec<ChangedIssue> = issues
            .into_iter()
            .filter(|i| i.pull_request.is_none())
            .map(|i| {
                let created_at = i.created_at.unwrap_or(i.updated_at);
                ChangedIssue {
                    issue: snapshot(i, &id, repo),
                    created_at,
                }
            })
            .collect();
        let mut numbers: HashSet<i64> = changed.iter().map(|c| c.issue.number).collect();
        let mut notes = Vec::new();
        for c in comments {
            let Some(number) = issue_number(&c.issue_url) else {
                continue;
            };
            if pulls.contains(&number) {
                continue;
            }
            if !numbers.contains(&number) {
                // Changed between the two lists: read the issue itself (rare).
                let path = format!("/repos/{repo}/issues/{number}");
                let issue: Issue = json(
                    self.call(Method::GET, &path, &scope, None).await?,
                    &format!("GET {path}"),
                )
                .await?;
                if issue.pull_request.is_some() {
                    continue;
                }
                let created_at = issue.created_at.unwrap_or(issue.updated_at);
                changed.push(ChangedIssue {
                    issue: snapshot(issue, &id, repo),
                    created_at,
                });
                numbers.insert(number);
            }
            notes.push(ChangedNote {
                issue_number: number,
                note: NoteSnapshot {
                    note_id: c.id.to_string(),
                    discussion_id: None,
                    author: c.user.map(|u| u.login).unwrap_or_default(),
                    body: c.body.unwrap_or_default(),
                    internal: false,
                    url: Some(c.html_url),
                    created_at: c.created_at,
                    updated_at: c.updated_at,
                },
            });
        }
        Ok(ProjectChanges {
            project_id,
            issues: changed,
            notes,
        })
    }
}

/// `…/repos/o/r/issues/N` → N.
fn issue_number(issue_url: &str) -> Option<i64> {
    let (rest, number) = issue_url.rsplit_once('/')?;
    rest.ends_with("/issues").then_some(())?;
    number.parse().ok()
}

fn snapshot(i: Issue, project_id: &str, repo: &str) -> IssueSnapshot {
    IssueSnapshot {
        project_id: project_id.to_owned(),
        project_path: repo.to_owned(),
        number: i.number,
        title: i.title,
        body: i.body.unwrap_or_default(),
        state: i.state,
        labels: i.labels.into_iter().map(|l| l.name).collect(),
        author: i.user.map(|u| u.login),
        assignees: Some(i.assignees.into_iter().map(|u| u.login).collect()),
        url: i.html_url,
        confidential: false,
        updated_at: i.updated_at,
        visibility: None,
    }
}

#[cfg(test)]
mod tests {
    use super::issue_number;

    #[test]
    fn issue_numbers_from_urls() {
        assert_eq!(
            issue_number("https://api.github.com/repos/o/r/issues/12"),
            Some(12)
        );
        assert_eq!(
            issue_number("https://api.github.com/repos/o/r/pulls/12"),
            None
        );
        assert_eq!(issue_number("garbage"), None);
    }
}
