//! The fake GitLab's issues: one issue's JSON, and the project's issue list filtered by
//! `updated_after`, oldest change first, paginated (`x-next-page` and `Link`).

use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

use super::gitlab::{Issue, State};
use super::{json_response, page_params, query_param};

pub(super) fn issue_json(s: &State, issue: &Issue, host: &str) -> Value {
    let (project, iid) = (issue.project, issue.iid);
    json!({
        "id": project * 1000 + iid, "iid": iid, "project_id": project, "title": issue.title,
        "description": issue.description, "state": issue.state, "labels": issue.labels,
        "author": {"id": 1, "username": "root", "name": "Administrator"},
        "assignees": issue.assignees.iter().map(|u| json!({"username": u})).collect::<Vec<_>>(),
        "web_url": format!("http://{host}/{}/-/issues/{iid}", s.projects.get(&project).cloned().unwrap_or_default()),
        "confidential": issue.confidential, "created_at": issue.created_at.to_rfc3339_opts(SecondsFormat::Millis, true),
        "updated_at": s.issue_updated_at(issue).to_rfc3339_opts(SecondsFormat::Millis, true), "type": "ISSUE"
    })
}

/// `GET /projects/:id/issues?updated_after=…&scope=all&order_by=updated_at&sort=asc`.
pub(super) fn list_issues(
    s: &State,
    project: i64,
    query: Option<&str>,
    base: &str,
    host: &str,
) -> Response {
    let after = query_param(query, "updated_after")
        .map(|raw| raw.replace("%3A", ":").replace("%3a", ":"))
        .and_then(|raw| DateTime::parse_from_rfc3339(&raw).ok())
        .map(|t| t.with_timezone(&Utc));
    let mut all: Vec<(DateTime<Utc>, &Issue)> = s
        .issues
        .iter()
        .filter(|i| i.project == project)
        .map(|i| (s.issue_updated_at(i), i))
        .filter(|(at, _)| after.is_none_or(|after| *at >= after))
        .collect();
    all.sort_by_key(|(at, i)| (*at, i.iid));
    let (page, per_page) = page_params(query, 20);
    let pages = all.len().div_ceil(per_page).max(1);
    let items: Vec<Value> = all
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|(_, i)| issue_json(s, i, host))
        .collect();
    let mut r = json_response(StatusCode::OK, Value::Array(items));
    let h = r.headers_mut();
    h.insert("x-page", HeaderValue::from(page));
    h.insert("x-per-page", HeaderValue::from(per_page));
    h.insert("x-total", HeaderValue::from(all.len()));
    h.insert("x-total-pages", HeaderValue::from(pages));
    if s.next_page_header {
        let next = if page < pages {
            (page + 1).to_string()
        } else {
            String::new()
        };
        if let Ok(v) = HeaderValue::from_str(&next) {
            h.insert("x-next-page", v);
        }
    }
    if page < pages {
        let kept: Vec<&str> = query
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty() && !p.starts_with("page=") && !p.starts_with("per_page="))
            .collect();
        let rest = kept.join("&");
        let link = format!(
            "<{base}?page={}&per_page={per_page}&{rest}>; rel=\"next\"",
            page + 1
        );
        if let Ok(v) = HeaderValue::from_str(&link) {
            h.insert("link", v);
        }
    }
    r
}
