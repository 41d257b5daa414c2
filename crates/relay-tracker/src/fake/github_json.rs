//! The fake GitHub's answers: fixture-shaped JSON for issues and comments, paginated lists with
//! `Link` headers, and GitHub's error bodies (including rate limits).

use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::github::{FakeComment, FakeIssue, State};
use super::{Failure, json_response, page_params, query_param};

pub(super) const DOCS: &str = "https://docs.github.com/rest";
const MAX_BODY_CHARS: usize = 65_536;

const COMMENT_FIXTURE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/api/github/issue_comment.get.response.json"
));
const ISSUE_FIXTURE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/webhooks/github/issues.opened.json"
));

pub(super) fn error(status: u16, message: &str) -> Response {
    json_response(
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        json!({ "message": message, "documentation_url": DOCS }),
    )
}

pub(super) fn failure_response(failure: &Failure) -> Response {
    match failure {
        Failure::Validation(text) => json_response(
            StatusCode::UNPROCESSABLE_ENTITY,
            json!({"message": "Validation Failed", "errors": [{"resource": "IssueComment", "code": "custom", "field": "body", "message": text}], "documentation_url": DOCS}),
        ),
        Failure::SecondaryRateLimit { retry_after } => {
            let mut r = error(
                403,
                "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.",
            );
            if let Some(s) = retry_after {
                r.headers_mut().insert("retry-after", HeaderValue::from(*s));
            }
            r
        }
        Failure::PrimaryRateLimit { reset_in_secs } => {
            let mut r = error(403, "API rate limit exceeded for installation ID 1.");
            let reset =
                Utc::now().timestamp() + i64::try_from(*reset_in_secs).unwrap_or(i64::MAX / 2);
            let h = r.headers_mut();
            h.insert("x-ratelimit-limit", HeaderValue::from(5000));
            h.insert("x-ratelimit-remaining", HeaderValue::from(0));
            h.insert("x-ratelimit-reset", HeaderValue::from(reset));
            r
        }
        Failure::TooManyRequests { retry_after } => {
            let mut r = error(429, "Too Many Requests");
            if let Some(s) = retry_after {
                r.headers_mut().insert("retry-after", HeaderValue::from(*s));
            }
            r
        }
        Failure::Status(status) => error(*status, status_text(*status)),
        Failure::Delay(_) => error(500, "unreachable"),
    }
}

pub(super) fn status_text(status: u16) -> &'static str {
    match status {
        401 => "Bad credentials",
        403 => "Resource not accessible by integration",
        404 => "Not Found",
        410 => "Gone",
        502 => "Server Error",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

pub(super) fn invalid_body(text: &str) -> Option<Response> {
    let message = if text.is_empty() {
        "Body cannot be blank".to_owned()
    } else if text.chars().count() > MAX_BODY_CHARS {
        format!("Body is too long (maximum is {MAX_BODY_CHARS} characters)")
    } else {
        return None;
    };
    Some(failure_response(&Failure::Validation(message)))
}

pub(super) fn list_comments(
    s: &State,
    base_url: &str,
    repo: &str,
    n: &str,
    query: Option<&str>,
) -> Response {
    let Ok(number) = n.parse::<i64>() else {
        return error(404, "Not Found");
    };
    if !s
        .issues
        .iter()
        .any(|i| i.repo == repo && i.number == number)
    {
        return error(404, "Not Found");
    }
    let all: Vec<&FakeComment> = s
        .comments
        .iter()
        .filter(|c| c.repo == repo && c.issue == number)
        .collect();
    let (page, per_page) = page_params(query, 30);
    let pages = all.len().div_ceil(per_page).max(1);
    let items: Vec<Value> = all
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|c| comment_json(c, base_url))
        .collect();
    let mut response = json_response(StatusCode::OK, Value::Array(items));
    let base = format!("{base_url}/repos/{repo}/issues/{number}/comments?per_page={per_page}");
    let mut links = Vec::new();
    if page < pages {
        links.push(format!("<{base}&page={}>; rel=\"next\"", page + 1));
        links.push(format!("<{base}&page={pages}>; rel=\"last\""));
    }
    if page > 1 {
        links.push(format!("<{base}&page={}>; rel=\"prev\"", page - 1));
        links.push(format!("<{base}&page=1>; rel=\"first\""));
    }
    if !links.is_empty() {
        let header = links.join(", ");
        if let Ok(v) = HeaderValue::from_str(&header) {
            response.headers_mut().insert("link", v);
        }
    }
    response.into_response()
}

pub(super) fn comment_json(c: &FakeComment, api: &str) -> Value {
    let mut v: Value = serde_json::from_str(COMMENT_FIXTURE).expect("comment fixture is JSON");
    v["id"] = json!(c.id);
    v["node_id"] = json!(format!("IC_fake{}", c.id));
    v["url"] = json!(format!("{api}/repos/{}/issues/comments/{}", c.repo, c.id));
    v["html_url"] = json!(format!(
        "https://github.com/{}/issues/{}#issuecomment-{}",
        c.repo, c.issue, c.id
    ));
    v["issue_url"] = json!(format!("{api}/repos/{}/issues/{}", c.repo, c.issue));
    v["user"]["login"] = json!(c.author);
    v["user"]["type"] = json!(c.author_type);
    v["body"] = json!(c.body);
    v["author_association"] = json!(c.author_association);
    v["created_at"] = json!(
        c.created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    v["updated_at"] = json!(
        c.updated_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    v
}

/// When GitHub says an issue changed last: its own change or a comment's, whichever is later.
pub(super) fn issue_updated_at(s: &State, i: &FakeIssue) -> DateTime<Utc> {
    s.comments
        .iter()
        .filter(|c| c.repo == i.repo && c.issue == i.number)
        .map(|c| c.updated_at)
        .fold(i.updated_at, DateTime::max)
}

fn since_param(query: Option<&str>) -> Option<DateTime<Utc>> {
    let raw = query_param(query, "since")?
        .replace("%3A", ":")
        .replace("%3a", ":");
    DateTime::parse_from_rfc3339(&raw)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// `GET /repos/:o/:r/issues?state=all&since=…&sort=updated&direction=asc` (pull requests
/// included and marked, as GitHub does).
pub(super) fn list_repo_issues(
    s: &State,
    base_url: &str,
    repo: &str,
    query: Option<&str>,
) -> Response {
    let since = since_param(query);
    let mut all: Vec<(DateTime<Utc>, &FakeIssue)> = s
        .issues
        .iter()
        .filter(|i| i.repo == repo)
        .map(|i| (issue_updated_at(s, i), i))
        .filter(|(at, _)| since.is_none_or(|since| *at >= since))
        .collect();
    all.sort_by_key(|(at, i)| (*at, i.number));
    let items: Vec<Value> = all.iter().map(|(at, i)| issue_json_at(i, *at)).collect();
    paginated(items, query, &format!("{base_url}/repos/{repo}/issues"), 30)
}

/// `GET /repos/:o/:r/issues/comments?since=…&sort=updated&direction=asc`.
pub(super) fn list_repo_comments(
    s: &State,
    base_url: &str,
    repo: &str,
    query: Option<&str>,
) -> Response {
    let since = since_param(query);
    let mut all: Vec<&FakeComment> = s
        .comments
        .iter()
        .filter(|c| c.repo == repo && since.is_none_or(|since| c.updated_at >= since))
        .collect();
    all.sort_by_key(|c| (c.updated_at, c.id));
    let items: Vec<Value> = all.iter().map(|c| comment_json(c, base_url)).collect();
    paginated(
        items,
        query,
        &format!("{base_url}/repos/{repo}/issues/comments"),
        30,
    )
}

/// One page of `items` with GitHub's `Link` header; `link_base` is the list's URL without query
/// (the other query parameters are carried over, as GitHub does).
fn paginated(
    items: Vec<Value>,
    query: Option<&str>,
    link_base: &str,
    default_per_page: usize,
) -> Response {
    let (page, per_page) = page_params(query, default_per_page);
    let pages = items.len().div_ceil(per_page).max(1);
    let shown: Vec<Value> = items
        .into_iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .collect();
    let mut response = json_response(StatusCode::OK, Value::Array(shown));
    let kept: Vec<&str> = query
        .unwrap_or("")
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("page=") && !p.starts_with("per_page="))
        .collect();
    let mut base = format!("{link_base}?per_page={per_page}");
    for p in kept {
        base.push('&');
        base.push_str(p);
    }
    if page < pages {
        let header = format!(
            "<{base}&page={}>; rel=\"next\", <{base}&page={pages}>; rel=\"last\"",
            page + 1
        );
        if let Ok(v) = HeaderValue::from_str(&header) {
            response.headers_mut().insert("link", v);
        }
    }
    response.into_response()
}

pub(super) fn issue_json(s: &State, i: &FakeIssue) -> Value {
    issue_json_at(i, issue_updated_at(s, i))
}

fn issue_json_at(i: &FakeIssue, updated_at: DateTime<Utc>) -> Value {
    let payload: Value = serde_json::from_str(ISSUE_FIXTURE).expect("issue fixture is JSON");
    let mut v = payload["issue"].clone();
    v["number"] = json!(i.number);
    v["title"] = json!(i.title);
    v["body"] = json!(i.body);
    v["state"] = json!(i.state);
    v["labels"] = json!(
        i.labels
            .iter()
            .map(|l| json!({"name": l, "color": "ededed"}))
            .collect::<Vec<_>>()
    );
    v["user"]["login"] = json!(i.author);
    v["assignees"] = json!([]);
    v["assignee"] = Value::Null;
    v["html_url"] = json!(format!("https://github.com/{}/issues/{}", i.repo, i.number));
    v["created_at"] = json!(
        i.created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    );
    v["updated_at"] = json!(updated_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    if i.pull_request {
        v["pull_request"] =
            json!({"url": format!("https://api.github.com/repos/{}/pulls/{}", i.repo, i.number)});
    }
    v
}

/// A user as GitHub's `simple-user` schema requires it (every required field), with URLs under
/// the fake's `api` address.
pub(super) fn user_json(login: &str, id: i64, kind: &str, api: &str) -> Value {
    let url = format!("{api}/users/{login}");
    json!({
        "login": login, "id": id, "node_id": format!("U_kgDO{id:08}"), "type": kind,
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{id}?v=4"),
        "gravatar_id": "", "url": url, "html_url": format!("https://github.com/{login}"),
        "followers_url": format!("{url}/followers"),
        "following_url": format!("{url}/following{{/other_user}}"),
        "gists_url": format!("{url}/gists{{/gist_id}}"),
        "starred_url": format!("{url}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{url}/subscriptions"),
        "organizations_url": format!("{url}/orgs"), "repos_url": format!("{url}/repos"),
        "events_url": format!("{url}/events{{/privacy}}"),
        "received_events_url": format!("{url}/received_events"), "site_admin": false,
        "user_view_type": "public"
    })
}

/// `GET /user` for a token: the `public-user` shape (a token without `user` scope sees no
/// private fields).
pub(super) fn authenticated_user_json(login: &str, id: i64, api: &str) -> Value {
    let mut user = user_json(login, id, "User", api);
    let fields = json!({
        "name": null, "company": null, "blog": "", "location": null, "email": null,
        "hireable": null, "bio": null, "twitter_username": null, "public_repos": 0,
        "public_gists": 0, "followers": 0, "following": 0,
        "created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z"
    });
    if let (Value::Object(user), Value::Object(fields)) = (&mut user, fields) {
        user.extend(fields);
        user.remove("user_view_type");
    }
    user
}

/// The permissions the fake App asks for (what Relay documents: issues write, contents read).
fn app_permissions() -> Value {
    json!({"issues": "write", "contents": "read", "metadata": "read", "members": "read"})
}

/// `GET /app`: the `integration` schema.
pub(super) fn app_json(id: u64, slug: &str, api: &str) -> Value {
    json!({
        "id": id, "slug": slug, "node_id": format!("A_kwDO{id:08}"), "client_id": format!("Iv1.{id:016x}"),
        "owner": user_json("octo-org", 9_919, "Organization", api), "name": slug,
        "description": "Relay (test App)", "external_url": "https://relay.example.com",
        "html_url": format!("https://github.com/apps/{slug}"),
        "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
        "permissions": app_permissions(), "events": ["issues", "issue_comment"]
    })
}

/// `GET /repos/{owner}/{repo}/installation`: the `installation` schema.
pub(super) fn installation_json(
    id: i64,
    app_id: Option<u64>,
    app_slug: &str,
    owner: &str,
    api: &str,
) -> Value {
    json!({
        "id": id, "app_id": app_id.unwrap_or(0), "app_slug": app_slug,
        "account": user_json(owner, 9_919, "Organization", api),
        "target_id": 9_919, "target_type": "Organization", "single_file_name": null,
        "repository_selection": "selected",
        "access_tokens_url": format!("{api}/app/installations/{id}/access_tokens"),
        "repositories_url": format!("{api}/installation/repositories"),
        "html_url": format!("https://github.com/organizations/{owner}/settings/installations/{id}"),
        "events": ["issues", "issue_comment"], "permissions": app_permissions(),
        "created_at": "2024-01-01T00:00:00Z", "updated_at": "2024-01-01T00:00:00Z",
        "suspended_by": null, "suspended_at": null
    })
}
