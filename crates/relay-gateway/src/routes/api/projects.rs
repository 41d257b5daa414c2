//! `GET /api/projects` and `GET /api/projects/{tracker}/{project}`: per project (by id, or by its
//! URL-encoded path), the repository's `.relay.toml` in effect now (each key with its origin and
//! the commit it was read at, the refused widenings, the errors: the file as read, narrowed by
//! the server's settings as this process runs them) and its learnings (provenance, use,
//! forgotten, review).

use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::AppState;
use crate::error::ApiError;

/// Most projects listed.
const MAX_PROJECTS: i64 = 500;

pub async fn list(State(state): State<AppState>) -> Result<Response, ApiError> {
    super::with_timeout(&state, async {
        let mut conn = state
            .pool
            .acquire()
            .await
            .map_err(relay_store::Error::from)?;
        let projects = relay_store::repo_configs::projects(&mut conn, MAX_PROJECTS).await?;
        Ok(Json(json!({ "projects": projects })).into_response())
    })
    .await
}

/// `project` is the project's id (`123456`) or its path, URL-encoded as one segment
/// (`acme%2Fapp`, as the CLI's `github:acme/app` names it).
pub async fn show(
    State(state): State<AppState>,
    Path((tracker, project)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    super::with_timeout(&state, async {
        let Some(project_id) = crate::projects::project_id(&state.pool, &tracker, &project).await?
        else {
            return Ok(super::not_found("project"));
        };
        let policy = state.policy(&tracker);
        match crate::projects::load(&state.pool, policy, &tracker, &project_id).await? {
            Some(project) => Ok(Json(json!(project)).into_response()),
            None => Ok(super::not_found("project")),
        }
    })
    .await
}
