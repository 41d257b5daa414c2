//! Reading the issue, and a user's access level on the project.

use relay_core::IssueSnapshot;
use reqwest::Method;

use super::model::{self, Issue, Member};
use super::{GitLabClient, project};
use crate::http::json;
use crate::{AuthorRole, IssueRef, Result, TrackerError};

impl GitLabClient {
    pub async fn get_issue(&self, issue: &IssueRef) -> Result<IssueSnapshot> {
        let path = format!("/projects/{}/issues/{}", project(issue)?, issue.number);
        let got: Issue = json(
            self.call(Method::GET, &path, None).await?,
            &format!("GET {path}"),
        )
        .await?;
        Ok(IssueSnapshot {
            project_id: got.project_id.to_string(),
            project_path: issue.project_path.clone(),
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
            // The REST issue does not say; the webhooks keep it current.
            visibility: None,
        })
    }

    /// [`GitLabClient::author_role_by_id`] without the user's id (by username only).
    pub async fn author_role(&self, issue: &IssueRef, username: &str) -> Result<AuthorRole> {
        self.author_role_by_id(issue, username, None).await
    }

    /// The user's access level on the project, inherited memberships included. By id when the
    /// webhook gave one (`GET /projects/:id/members/all/:user_id`, exact); otherwise, or when the
    /// id names nobody (or someone else) there, `GET /projects/:id/members/all?query=USERNAME`
    /// over every page, matching the username exactly (`query` is a fuzzy search).
    pub async fn author_role_by_id(
        &self,
        issue: &IssueRef,
        username: &str,
        user_id: Option<i64>,
    ) -> Result<AuthorRole> {
        let valid = !username.is_empty()
            && username
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !valid {
            return Err(TrackerError::Validation(format!(
                "{username:?} is not a GitLab username"
            )));
        }
        let project = project(issue)?;
        if let Some(id) = user_id {
            let path = format!("/projects/{project}/members/all/{id}");
            match self.call(Method::GET, &path, None).await {
                Ok(response) => {
                    let member: Member = json(response, "GET member").await?;
                    if member.username.eq_ignore_ascii_case(username) {
                        return Ok(model::access_role(member.access_level));
                    }
                }
                // Not a member by that id: the name decides (the id may be stale).
                Err(TrackerError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        let first =
            format!("/projects/{project}/members/all?query={username}&per_page={MEMBERS_PER_PAGE}");
        let mut url = first.clone();
        let mut role: Option<AuthorRole> = None;
        for _ in 0..MAX_MEMBER_PAGES {
            let response = self.call(Method::GET, &url, None).await?;
            let headers = response.headers().clone();
            let members: Vec<Member> = json(response, "GET members").await?;
            let found = members
                .iter()
                .filter(|m| m.username.eq_ignore_ascii_case(username))
                .map(|m| model::access_role(m.access_level))
                .min();
            role = match (role, found) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            match crate::pagination::gitlab_next_page(&headers) {
                Some(next) => url = format!("{first}&page={next}"),
                None => return Ok(role.unwrap_or(AuthorRole::None)),
            }
        }
        Err(TrackerError::Protocol(format!(
            "more than {MAX_MEMBER_PAGES} pages of members match {username:?}"
        )))
    }
}

/// Page size of the member search (GitLab's maximum).
const MEMBERS_PER_PAGE: usize = 100;
/// Pages of the member search read at most (10,000 fuzzy matches).
const MAX_MEMBER_PAGES: usize = 100;
