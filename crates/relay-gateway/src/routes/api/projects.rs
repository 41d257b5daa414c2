//! `GET /api/projects` and `GET /api/projects/{tracker}/{project_id}`: per project, the
//! repository's `.relay.toml` in effect (each key with its origin and the commit it was read
//! at, the refused widenings, the errors) and its learnings (provenance, use, forgotten, review).

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

pub async fn show(
    State(state): State<AppState>,
    Path((tracker, project_id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    super::with_timeout(&state, async {
        match crate::projects::load(&state.pool, &tracker, &project_id).await? {
            Some(project) => Ok(Json(json!(project)).into_response()),
            None => Ok(super::not_found("project")),
        }
    })
    .await
}
