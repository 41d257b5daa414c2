//! `GET /ui/projects` and `GET /ui/projects/{tracker}/{project_id}`: per project, the
//! repository's `.relay.toml` in effect — each key with its value and whether it came from the
//! repository (at which commit) or the server, the widenings it was refused, the errors that
//! made it fall back — and the learnings: provenance, use, review mark, forgotten (by whom).

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use maud::{Markup, html};
use relay_core::repo_config::Origin;

use super::format;
use super::layout::{Nav, page};
use crate::AppState;
use crate::error::ApiError;
use crate::projects::{ConfigView, LearningView, ProjectView};

/// Most projects listed.
const MAX_PROJECTS: i64 = 500;

pub async fn index(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if super::session::signed_in(&state, &headers).await?.is_none() {
        return Ok(super::to_sign_in());
    }
    let projects = crate::routes::api::with_timeout(&state, async {
        let mut conn = state
            .pool
            .acquire()
            .await
            .map_err(relay_store::Error::from)?;
        Ok(relay_store::repo_configs::projects(&mut conn, MAX_PROJECTS).await?)
    })
    .await?;
    let body = html! {
        h1 { "Projects" }
        @if projects.is_empty() {
            p.empty { "No project yet." }
        } @else {
            table #projects {
                thead { tr { th { "Project" } th.num { "Issues" } th { "Configuration" } th.num { "Learnings" } } }
                tbody { @for p in &projects {
                    tr {
                        td { a href=(project_url(&p.tracker, &p.project_id)) { (p.tracker) " · " (p.project_path) } }
                        td.num { (p.issues) }
                        td {
                            @match (&p.config_commit, p.config_errors) {
                                (None, _) => span.empty { "not read yet" },
                                (Some(commit), false) => { "read at " code { (short(commit)) } },
                                (Some(commit), true) => { span.state.failed { "error" } " at " code { (short(commit)) } },
                            }
                        }
                        td.num { (p.learnings) }
                    }
                } }
            }
        }
    };
    Ok(super::html(
        StatusCode::OK,
        page("Projects", Nav::Projects, body),
    ))
}

pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path((tracker, project_id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    if super::session::signed_in(&state, &headers).await?.is_none() {
        return Ok(super::to_sign_in());
    }
    let project = crate::routes::api::with_timeout(&state, async {
        // An id, or the project's URL-encoded path, as the read API takes it.
        let Some(project_id) =
            crate::projects::project_id(&state.pool, &tracker, &project_id).await?
        else {
            return Ok(None);
        };
        Ok(
            crate::projects::load(&state.pool, state.policy(&tracker), &tracker, &project_id)
                .await?,
        )
    })
    .await?;
    let Some(project) = project else {
        return Ok(super::not_found("No such project."));
    };
    let title = format!("{} · {}", project.tracker, project.project_path);
    let body = html! {
        p.crumbs { a href="/ui/projects" { "Projects" } " / " (project.tracker) }
        h1 { (project.project_path) }
        section #config {
            h2 { "Configuration in effect" }
            (config_section(&project))
        }
        section #related {
            h2 { "Related repositories" }
            (related_section(&project.related))
        }
        section #learnings {
            h2 { "Learnings" }
            (learnings_section(&project.learnings))
        }
    };
    Ok(super::html(
        StatusCode::OK,
        page(&title, Nav::Projects, body),
    ))
}

/// The related repositories as the last job judged them: each admitted one with the commit
/// explored and its graph snapshot, each refused one with the reason.
fn related_section(related: &[relay_store::related::RelatedRow]) -> Markup {
    if related.is_empty() {
        return html! { p.empty { "None named: issues here explore this repository only. Name others in .relay.toml (related = [\"owner/name\"])." } };
    }
    html! {
        table.related {
            thead { tr { th { "Repository" } th { "Named by" } th { "Status" } th { "Commit" } th { "Code graph" } } }
            tbody {
                @for row in related {
                    tr {
                        td { code { (row.related_path) } }
                        td { (match row.source.as_str() {
                            "file" => "the repository's file",
                            "server" => "the server",
                            _ => "not named (a dependency)",
                        }) }
                        td {
                            @match &row.reason {
                                None => { "admitted" @if let Some(visibility) = &row.visibility { " (" (visibility) ")" } },
                                Some(reason) if row.source == "suggested" => { span.suggested { "could be related: " (reason) } },
                                Some(reason) => { span.refused { "refused: " (reason) } },
                            }
                        }
                        td { @if let Some(commit) = &row.head_commit { code { (short(commit)) } } @else { "—" } }
                        td { @if let Some(commit) = &row.graph_commit { code { (short(commit)) } } @else { "—" } }
                    }
                }
            }
        }
        p.meta { "As judged by the last job on " (format::time(related[0].checked_at)) "." }
    }
}

/// The project page's address.
pub fn project_url(tracker: &str, project_id: &str) -> String {
    format!("/ui/projects/{}/{}", encode(tracker), encode(project_id))
}

fn config_section(project: &ProjectView) -> Markup {
    let Some(config) = &project.config else {
        return html! { p.empty { "Not read yet: the first job or push on this repository reads its .relay.toml." } };
    };
    let ConfigView {
        commit,
        read_at,
        effective,
        guidance,
        computed_now,
    } = config;
    html! {
        p.meta {
            @match &effective.file {
                Some(file) => { "From " code { (file) } " at commit " code { (short(commit)) } },
                None => { "No usable repository file at commit " code { (short(commit)) } ": the server's settings apply" },
            }
            " · read " (format::time(*read_at))
            @if !*computed_now { " · as recorded then (the server's settings may have changed since)" }
        }
        @if !effective.errors.is_empty() {
            div.error #config-errors {
                p { "The repository's file could not be used; the server's settings apply:" }
                ul { @for problem in &effective.errors { li { (problem.to_string()) } } }
            }
        }
        @if !effective.refused.is_empty() {
            div #config-refused {
                p { "Refused (a repository can only narrow what the server allows):" }
                ul { @for problem in &effective.refused { li.refused { (problem.to_string()) } } }
            }
        }
        @if !effective.ignored_files.is_empty() {
            p.note { "Also present and ignored (only the first file is read): "
                @for (i, file) in effective.ignored_files.iter().enumerate() {
                    @if i > 0 { ", " } code { (file) }
                }
            }
        }
        table #config-keys {
            thead { tr { th { "Key" } th { "Value" } th { "From" } } }
            tbody { @for key in &effective.keys {
                tr class=(match key.origin { Origin::Repository => "repository", Origin::Server => "server" }) {
                    td { code { (key.key) } }
                    td { (value_text(&key.value)) }
                    td { @match key.origin {
                        Origin::Repository => { "repository @ " code { (short(commit)) } },
                        Origin::Server => "server",
                    } }
                }
            } }
        }
        @if let Some(docs) = guidance.as_array().filter(|d| !d.is_empty()) {
            p.note { "Guidance shown to the planner and explorers: "
                @for (i, doc) in docs.iter().enumerate() {
                    @if i > 0 { ", " }
                    code { (doc["origin"].as_str().unwrap_or("")) }
                    " (" (doc["chars"].as_u64().unwrap_or(0)) " characters"
                    @if doc["truncated"].as_bool().unwrap_or(false) { ", cut" }
                    ")"
                }
            }
        }
    }
}

fn learnings_section(learnings: &[LearningView]) -> Markup {
    if learnings.is_empty() {
        return html! { p.empty { "No learnings yet." } };
    }
    html! {
        table #learnings-table {
            thead { tr {
                th.num { "Id" } th { "Learning" } th { "From" } th { "Made" } th.num { "Prompts" } th { "Last used" } th { "State" }
            } }
            tbody { @for learning in learnings {
                @let row = &learning.row;
                tr class=(if row.forgotten_at.is_some() { "forgotten" } else { "live" }) {
                    td.num { (row.id) }
                    td { (format::clip(&row.content, 300)) " " span.note { "(" (row.kind) ")" } }
                    td {
                        @if let Some(issue) = row.issue_id { a href=(format!("/ui/issues/{issue}")) { "issue " (issue) } }
                        @if let Some(note) = &row.note_id { " · note " (note) }
                        @if let Some(job) = row.created_by_run { " · " a href=(format!("/ui/jobs/{job}")) { "job " (job) } }
                    }
                    td { (format::time(row.created_at)) }
                    td.num { (row.prompt_uses) }
                    td { (row.last_used_at.map(format::time).unwrap_or_else(|| "never".into())) }
                    td {
                        @if let Some(at) = row.forgotten_at {
                            span.state.rejected { "forgotten" } " by " (row.forgotten_by.as_deref().unwrap_or("?")) " · " (format::time(at))
                        } @else if let Some(review) = learning.review_text() {
                            span.state.draft { "review" } " " (review)
                        } @else {
                            span.state.approved { "in use" }
                        }
                    }
                }
            } }
        }
        p.note { "Forget one with `@<bot> forget <id>` on an issue of this repository, or `relay learnings forget <id>`." }
    }
}

fn value_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Null => "none".into(),
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Array(items) if items.is_empty() => "none".into(),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|item| {
                item.as_str()
                    .map_or_else(|| item.to_string(), str::to_owned)
            })
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

fn short(commit: &str) -> String {
    commit.chars().take(12).collect()
}

/// A path segment percent-encoded (tracker names and project ids are plain, but ids come from
/// webhooks).
fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}
