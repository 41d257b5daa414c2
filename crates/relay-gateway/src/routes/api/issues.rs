//! `GET /api/issues?tracker=&project=&number=&limit=&after=`: issues Relay knows, by id, in pages.

use axum::Json;
use axum::extract::{Query, State};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::AppState;
use crate::error::ApiError;

/// Issues per page unless `limit` says otherwise (at most `relay_store::browse::MAX_PAGE`).
const DEFAULT_LIMIT: i64 = 50;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    pub tracker: Option<String>,
    /// Project id or path.
    pub project: Option<String>,
    pub number: Option<i64>,
    pub limit: Option<i64>,
    /// The last id of the previous page.
    pub after: Option<i64>,
}

pub async fn list(
    State(state): State<AppState>,
    Query(query): Query<ListQuery>,
) -> Result<Json<Value>, ApiError> {
    let filter = relay_store::browse::IssueFilter {
        tracker: query.tracker,
        project: query.project,
        number: query.number,
        after: query.after,
        limit: query.limit.unwrap_or(DEFAULT_LIMIT),
    };
    let issues = super::with_timeout(&state, async {
        Ok(relay_store::browse::issues(&state.pool, &filter).await?)
    })
    .await?;
    let next_after = (issues.len() as i64 == filter.limit.clamp(1, relay_store::browse::MAX_PAGE))
        .then(|| issues.last().map(|i| i.id))
        .flatten();
    Ok(Json(json!({ "issues": issues, "next_after": next_after })))
}
