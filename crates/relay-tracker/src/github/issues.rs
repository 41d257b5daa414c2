//! Reading the issue and a user's standing on the repository.

use relay_core::IssueSnapshot;
use reqwest::Method;

use super::model::{self, Issue, Permission};
use super::{GitHubClient, repo_path};
use crate::http::json;
use crate::{AuthorRole, IssueRef, Result, TrackerError};

impl GitHubClient {
    /// `GET /repos/{path}` with the read credential for `path`: its id and visibility; `None`
    /// for a 404 (unknown, or not readable) or an App installation that does not cover it.
    pub async fn repository(
        &self,
        issue: &IssueRef,
        path: &str,
    ) -> Result<Option<crate::RepositoryInfo>> {
        let path = repo_path(path)?;
        let bearer = match self.read_credential_for(issue, path).await {
            Ok((bearer, _)) => bearer,
            // The exchange is refused for a repository the installation does not cover.
            Err(TrackerError::NotFound(_) | TrackerError::Validation(_)) => return Ok(None),
            Err(error) => return Err(error),
        };
        let what = format!("GET /repos/{path}");
        let request = self.request(Method::GET, &format!("/repos/{path}"), &bearer);
        let response = match self.http.send_unpaced(request, &what).await {
            Ok(response) => response,
            Err(TrackerError::NotFound(_)) => return Ok(None),
            Err(error) => return Err(error),
        };
        let got: model::Repository = json(response, &what).await?;
        Ok(Some(crate::RepositoryInfo {
            project_id: got.id.to_string(),
            visibility: got.visibility(),
            project_path: got.full_name,
        }))
    }

    pub async fn get_issue(&self, issue: &IssueRef) -> Result<IssueSnapshot> {
        let path = format!(
            "/repos/{}/issues/{}",
            repo_path(&issue.project_path)?,
            issue.number
        );
        let response = self.call(Method::GET, &path, issue, None).await?;
        let got: Issue = json(response, &format!("GET {path}")).await?;
        Ok(IssueSnapshot {
            project_id: issue.project_id.clone(),
            project_path: issue.project_path.clone(),
            number: got.number,
            title: got.title,
            body: got.body.unwrap_or_default(),
            state: got.state,
            labels: got.labels.into_iter().map(|l| l.name).collect(),
            author: got.user.map(|u| u.login),
            assignees: Some(got.assignees.into_iter().map(|u| u.login).collect()),
            url: got.html_url,
            confidential: false,
            updated_at: got.updated_at,
            // The REST issue does not say; the webhooks keep it current.
            visibility: None,
        })
    }

    /// The collaborator permission of `username`; not a collaborator (404) is
    /// [`AuthorRole::None`].
    pub async fn author_role(&self, issue: &IssueRef, username: &str) -> Result<AuthorRole> {
        let valid = !username.is_empty()
            && username
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_[]".contains(&b));
        if !valid {
            return Err(TrackerError::Validation(format!(
                "{username:?} is not a GitHub login"
            )));
        }
        let path = format!(
            "/repos/{}/collaborators/{username}/permission",
            repo_path(&issue.project_path)?
        );
        match self.call(Method::GET, &path, issue, None).await {
            Ok(response) => {
                let got: Permission = json(response, &format!("GET {path}")).await?;
                Ok(model::permission_role(&got.permission))
            }
            Err(TrackerError::NotFound(_)) => Ok(AuthorRole::None),
            Err(e) => Err(e),
        }
    }
}
