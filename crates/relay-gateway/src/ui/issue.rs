//! `GET /ui/issues/{id}`: one issue: gaps by severity, findings with their citations, every spec
//! version, spend per role, and the jobs with their outcomes.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use maud::{Markup, html};
use relay_core::prices::Cost;
use relay_core::tracker::web::FileAt;
use relay_store::findings::{FindingRow, SourceRow, SourceStatus};
use relay_store::gaps::{GapEvidence, GapRow, GapSources};
use relay_store::issues::IssueRow;
use relay_store::status::RoleModelSpend;

use super::chart::{self, Bar};
use super::format;
use super::issues::css_word;
use super::layout::{Nav, page};
use crate::AppState;
use crate::error::ApiError;

/// Severities in the order people act on them.
const SEVERITIES: [&str; 4] = ["blocking", "high", "medium", "low"];

pub async fn show(
    State(state): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<relay_core::IssueId>,
) -> Result<Response, ApiError> {
    if super::session::signed_in(&state, &headers).await?.is_none() {
        return Ok(super::to_sign_in());
    }
    let loaded = crate::routes::api::with_timeout(&state, async {
        let mut conn = state
            .pool
            .acquire()
            .await
            .map_err(relay_store::Error::from)?;
        let Some(relay_store::issue_state::IssueState {
            issue,
            gaps,
            gap_evidence: evidence,
            findings,
            ..
        }) = relay_store::issue_state::load(&mut conn, id).await?
        else {
            return Ok(None);
        };
        drop(conn);
        let specs = relay_store::status::spec_versions(&state.pool, id).await?;
        let spend = relay_store::status::spend_by_role_and_model(&state.pool, id).await?;
        let jobs = relay_store::browse::jobs_of_issue(&state.pool, id).await?;
        let budget = crate::projects::issue_budget(
            &state.pool,
            state.policy(&issue.tracker),
            id,
            &issue.tracker,
            &issue.project_id,
        )
        .await?;
        Ok(Some((
            issue,
            (gaps, evidence),
            findings,
            specs,
            (spend, budget),
            jobs,
        )))
    })
    .await?;
    let Some((issue, (gaps, evidence), findings, specs, (spend, budget), jobs)) = loaded else {
        return Ok(super::not_found("No such issue."));
    };
    let title = format!("#{} {}", issue.number, format::clip(&issue.title, 60));
    let body = html! {
        (header(&issue))
        (budget_line(&budget))
        section #gaps {
            h2 { "Gaps" }
            (gaps_by_severity(&state, &issue, &gaps, &evidence))
        }
        section #findings {
            h2 { "Findings" }
            (findings_list(&state, &issue, &findings))
        }
        section #spec {
            h2 { "Spec" }
            @if specs.is_empty() {
                p.empty { "No spec yet." }
            }
            @for (i, spec) in specs.iter().enumerate() {
                details.spec open[i == 0] {
                    summary {
                        "Version " (spec.version) " · " span class=(format!("state {}", css_word(&spec.status))) { (spec.status) }
                        " · " (format::time(spec.created_at))
                    }
                    article.markdown { (super::markdown::render(&spec.body)) }
                }
            }
        }
        section #spend {
            h2 { "Spend per role" }
            (spend_chart(&state, &spend))
        }
        section #jobs {
            h2 { "Jobs" }
            @if jobs.is_empty() {
                p.empty { "No jobs yet." }
            } @else {
                table {
                    thead { tr { th { "Job" } th { "Status" } th.num { "Attempts" } th { "Created" } th { "Finished" } th { "Also explored" } th { "Last error" } } }
                    tbody { @for job in &jobs {
                        tr {
                            td { a href=(format!("/ui/jobs/{}", job.id)) { "Job " (job.id) } }
                            td { span class=(format!("state {}", css_word(&job.status))) { (job.status) } }
                            td.num { (job.attempts) "/" (job.max_attempts) }
                            td { (format::time(job.created_at)) }
                            td { (job.finished_at.map(format::time).unwrap_or_default()) }
                            td { @for label in job.explored_related.iter().flatten() { code { (label) } " " } }
                            td.error { (job.last_error.as_deref().map(|e| format::clip(e, 200)).unwrap_or_default()) }
                        }
                    } }
                }
            }
        }
    };
    Ok(super::html(StatusCode::OK, page(&title, Nav::Detail, body)))
}

fn header(issue: &IssueRow) -> Markup {
    html! {
        p.crumbs {
            a href="/ui" { "Issues" } " / "
            a href=(super::projects::project_url(&issue.tracker, &issue.project_id)) { (issue.tracker) " · " (issue.project_path) }
        }
        h1 { "#" (issue.number) " " (issue.title) }
        p.meta {
            span class=(format!("state {}", css_word(&issue.state))) { (issue.state) }
            " · by " (issue.author) " · updated " (format::time(issue.updated_at))
            @if let Some(url) = format::web_url(&issue.url) {
                " · " a href=(url) rel="noreferrer noopener" { "Open on the tracker ↗" }
            }
        }
    }
}

/// The cap in effect (configuration plus raises), the spend, and whether Relay is stopped here.
fn budget_line(budget: &crate::projects::IssueBudget) -> Markup {
    let cap = match (budget.cap_tokens, budget.cap_usd) {
        (None, None) => "no cap".to_owned(),
        (tokens, usd) => tokens
            .map(|t| {
                format!(
                    "{} tokens",
                    format::count(i64::try_from(t).unwrap_or(i64::MAX))
                )
            })
            .into_iter()
            .chain(usd.map(format::usd))
            .collect::<Vec<_>>()
            .join(" and "),
    };
    html! {
        p.meta #budget {
            @if let Some(stopped) = &budget.stopped {
                span.state.rejected { "stopped" } " by " (stopped.stopped_by) " · "
            }
            "Budget: " (format::count(i64::try_from(budget.spent_tokens).unwrap_or(i64::MAX))) " tokens spent of " (cap)
            @if budget.raises > 0 { " (raised " (budget.raises) "×)" }
        }
    }
}

fn gaps_by_severity(
    state: &AppState,
    issue: &IssueRow,
    gaps: &[GapRow],
    evidence: &[GapEvidence],
) -> Markup {
    if gaps.is_empty() {
        return html! { p.empty { "No gaps." } };
    }
    let others = gaps
        .iter()
        .filter(|g| !SEVERITIES.contains(&g.severity.as_str()));
    let groups: Vec<(&str, Vec<&GapRow>)> = SEVERITIES
        .iter()
        .map(|s| (*s, gaps.iter().filter(|g| g.severity == *s).collect()))
        .chain(std::iter::once(("other", others.collect())))
        .filter(|(_, g): &(&str, Vec<&GapRow>)| !g.is_empty())
        .collect();
    html! {
        @for (severity, group) in &groups {
            h3 class=(format!("severity {severity}")) { (severity) }
            ul.gaps {
                // Open first, then closed, each by number.
                @for gap in group.iter().filter(|g| g.is_open()).chain(group.iter().filter(|g| !g.is_open())) {
                    li class=(if gap.is_open() { "gap open" } else { "gap closed" }) {
                        span.number { "gap " (gap.number) }
                        " " span.question { (gap.question) }
                        " " span.respondent { "asks the " (gap.respondent) }
                        @if gap.is_open() {
                            " " span.state.open { "open" }
                        } @else {
                            " " span.state.closed { "closed: " (gap.close_reason.as_deref().unwrap_or("closed")) }
                            @if let Some(note) = gap.close_note.as_deref().filter(|n| !n.is_empty()) {
                                p.note { (note) }
                            }
                        }
                        @let cited = GapSources::of(evidence, gap.number);
                        @if gap.is_open() && cited.stale() {
                            " " span.stale { "evidence stale" }
                        }
                        @if let Some(evidence) = gap.evidence.as_deref().filter(|e| !e.is_empty()) {
                            p.evidence { (evidence) }
                        }
                        @if !cited.sources.is_empty() {
                            ul.sources {
                                @for source in &cited.sources { (source_item(state, issue, source)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn findings_list(state: &AppState, issue: &IssueRow, findings: &[FindingRow]) -> Markup {
    if findings.is_empty() {
        return html! { p.empty { "No findings." } };
    }
    html! {
        ol.findings {
            @for finding in findings {
                li.finding {
                    span.number { "finding " (finding.number) }
                    @if finding.stale { " " span.stale { "stale" } }
                    p.synthesis { (finding.synthesis) }
                    ul.sources {
                        @for source in &finding.sources { (source_item(state, issue, source)) }
                    }
                }
            }
        }
    }
}

/// One cited source: its place (a link to the file at its commit when the tracker is known), its
/// status, where a push moved it from, and its quote.
fn source_item(state: &AppState, issue: &IssueRow, source: &SourceRow) -> Markup {
    let cited = FileAt {
        path: &source.path,
        commit: &source.commit_sha,
        start_line: source.start_line,
        end_line: source.end_line,
    };
    let text = format!(
        "{}:{}-{} @ {}",
        source.path,
        source.start_line,
        source.end_line,
        format::clip(&source.commit_sha, 10)
    );
    html! {
        li {
            @match format::file_url(state, &issue.tracker, &issue.url, &cited) {
                Some(url) => a href=(url) rel="noreferrer noopener" { code { (text) } },
                None => code { (text) },
            }
            @if source.status == SourceStatus::Stale {
                " " span.stale { "stale: the cited code changed after this commit" }
            }
            @if let Some(from) = &source.moved_from {
                " " span.moved { "moved from " (from.path) ":" (from.start_line) "-" (from.end_line) }
            }
            @if let Some(quote) = source.quote.as_deref().filter(|q| !q.is_empty()) {
                pre.quote { (format::clip(quote, 2000)) }
            }
        }
    }
}

fn spend_chart(state: &AppState, spend: &[RoleModelSpend]) -> Markup {
    if spend.is_empty() {
        return html! { p.empty { "No LLM calls yet." } };
    }
    let mut roles: Vec<&str> = spend.iter().map(|s| s.role.as_str()).collect();
    roles.dedup();
    let mut total = Cost::default();
    let bars: Vec<Bar<'_>> = roles
        .iter()
        .map(|role| {
            let rows: Vec<&RoleModelSpend> = spend.iter().filter(|s| s.role == *role).collect();
            let mut cost = Cost::default();
            for row in &rows {
                for sum in [&mut cost, &mut total] {
                    sum.add(
                        &state.prices,
                        &row.model,
                        row.prompt_tokens.max(0) as u64,
                        row.cached_tokens.max(0) as u64,
                        row.completion_tokens.max(0) as u64,
                    );
                }
            }
            let cached: i64 = rows.iter().map(|r| r.cached_tokens).sum();
            let prompt: i64 = rows.iter().map(|r| r.prompt_tokens).sum();
            Bar {
                label: role,
                prompt: prompt - cached.min(prompt),
                cached: cached.min(prompt),
                completion: rows.iter().map(|r| r.completion_tokens).sum(),
                note: cost.describe(),
            }
        })
        .collect();
    html! {
        (chart::role_bars(&bars))
        table.spend {
            thead { tr { th { "Role" } th { "Model" } th.num { "Calls" } th.num { "Prompt" } th.num { "Cached" } th.num { "Completion" } th.num { "Cost" } } }
            tbody { @for row in spend {
                @let cost = state.prices.get(&row.model).map(|p| p.cost(row.prompt_tokens.max(0) as u64, row.cached_tokens.max(0) as u64, row.completion_tokens.max(0) as u64));
                tr {
                    td { (row.role) } td { (row.model) } td.num { (row.calls) }
                    td.num { (format::count(row.prompt_tokens)) } td.num { (format::count(row.cached_tokens)) }
                    td.num { (format::count(row.completion_tokens)) }
                    td.num { (cost.map(format::usd).unwrap_or_else(|| "no price".into())) }
                }
            } }
            tfoot { tr { td colspan="6" { "Total" } td.num { (total.describe()) } } }
        }
    }
}
