//! `GET /ui`: the issues Relay knows, newest activity first, filtered by project, in pages (the
//! sign-in form without a session).

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use maud::html;
use relay_store::status::{IssueLine, IssuePage};
use serde::Deserialize;

use super::format;
use super::layout::{Nav, page};
use crate::AppState;
use crate::error::ApiError;

/// Issues per page.
pub const PAGE_SIZE: i64 = 50;
/// Highest page number accepted (offsets past it would scan for nothing useful).
const MAX_PAGE_NUMBER: i64 = 10_000;

#[derive(Debug, Default, Deserialize)]
pub struct ListQuery {
    /// `tracker/project path`; empty = all.
    pub project: Option<String>,
    /// 1-based.
    pub page: Option<i64>,
}

pub async fn index(
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(query): Query<ListQuery>,
) -> Result<Response, ApiError> {
    if super::session::signed_in(&state, &headers).await?.is_none() {
        return Ok(super::signin::form_page(StatusCode::OK, None));
    }
    let number = query.page.unwrap_or(1).clamp(1, MAX_PAGE_NUMBER);
    let project = query
        .project
        .as_deref()
        .filter(|p| !p.is_empty())
        .and_then(|p| p.split_once('/'))
        .map(|(tracker, path)| (tracker.to_owned(), path.to_owned()));
    let filter = IssuePage {
        project,
        offset: (number - 1) * PAGE_SIZE,
        // One more than shown: whether a next page exists.
        limit: PAGE_SIZE + 1,
    };
    let (mut rows, projects) = crate::routes::api::with_timeout(&state, async {
        let rows = relay_store::status::issues(&state.pool, &filter).await?;
        let projects = relay_store::status::projects(&state.pool).await?;
        Ok((rows, projects))
    })
    .await?;
    let has_next = rows.len() as i64 > PAGE_SIZE;
    rows.truncate(PAGE_SIZE as usize);
    let selected = query.project.clone().unwrap_or_default();
    let link = |page: i64| {
        let mut url = format!("/ui?page={page}");
        if !selected.is_empty() {
            url.push_str("&project=");
            url.push_str(&encode_query(&selected));
        }
        url
    };
    let body = html! {
        h1 { "Issues" }
        form.filter method="get" action="/ui" {
            label for="project" { "Project" }
            select #project name="project" {
                option value="" { "All projects" }
                @for p in &projects {
                    @let value = format!("{}/{}", p.tracker, p.project_path);
                    option value=(value) selected[value == selected] { (p.tracker) " · " (p.project_path) }
                }
            }
            button type="submit" { "Filter" }
        }
        @if rows.is_empty() {
            p.empty { "No issues yet." }
        } @else {
            table.issues {
                thead { tr {
                    th { "Tracker" } th { "Project" } th { "Issue" } th { "State" }
                    th.num { "Open gaps" } th.num { "Findings" } th { "Spec" }
                    th { "Last activity" } th.num { "Tokens" } th {}
                } }
                tbody { @for row in &rows { (issue_row(row)) } }
            }
        }
        nav.pages {
            @if number > 1 { a rel="prev" href=(link(number - 1)) { "← Newer" } }
            span { "Page " (number) }
            @if has_next { a rel="next" href=(link(number + 1)) { "Older →" } }
        }
    };
    Ok(super::html(
        StatusCode::OK,
        page("Issues", Nav::Issues, body),
    ))
}

fn issue_row(row: &IssueLine) -> maud::Markup {
    html! {
        tr {
            td { (row.tracker) }
            td { (row.project_path) }
            td.title {
                @match format::web_url(&row.url) {
                    Some(url) => a href=(url) rel="noreferrer noopener" { "#" (row.number) " " (row.title) },
                    None => { "#" (row.number) " " (row.title) },
                }
            }
            td { span class=(format!("state {}", css_word(&row.state))) { (row.state) } }
            td.num { (row.open_gaps) }
            td.num {
                (row.findings)
                @if row.stale_findings > 0 { " " span.stale { "(" (row.stale_findings) " stale)" } }
            }
            td { (row.spec_status.as_deref().unwrap_or("—")) }
            td { (format::time(row.last_activity)) }
            td.num { (format::count(row.tokens)) }
            td { a.details href=(format!("/ui/issues/{}", row.id)) { "Details" } }
        }
    }
}

/// A value usable as a CSS class word (anything else becomes `other`).
pub(crate) fn css_word(value: &str) -> &str {
    if !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        value
    } else {
        "other"
    }
}

/// Percent-encodes a query value.
fn encode_query(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
