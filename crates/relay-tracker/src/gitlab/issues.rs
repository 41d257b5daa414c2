//! Reading the issue, and a user's access level on the project.

use relay_core::IssueSnapshot;
use reqwest::Method;

use super::model::{self, Issue, Member};
use super::{GitLabClient, project};
use crate::http::json;
use crate::{AuthorRole, IssueRef, Result, TrackerError};

impl GitLabClient {
    pub(crate) async fn fetch_issue(&self, issue: &IssueRef) -> Result<IssueSnapshot> {
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

    /// `GET /projects/:id/members/all?query=USERNAME` (inherited members too), exact username
    /// match: `query` is a fuzzy search.
    pub(crate) async fn member_role(&self, issue: &IssueRef, username: &str) -> Result<AuthorRole> {
        let valid = !username.is_empty()
            && username
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !valid {
            return Err(TrackerError::Validation(format!(
                "{username:?} is not a GitLab username"
            )));
        }
        let path = format!("/projects/{}/members/all?query={username}", project(issue)?);
        let members: Vec<Member> =
            json(self.call(Method::GET, &path, None).await?, "GET members").await?;
        Ok(members
            .iter()
            .filter(|m| m.username.eq_ignore_ascii_case(username))
            .map(|m| model::access_role(m.access_level))
            .min()
            .unwrap_or(AuthorRole::None))
    }
}
