//! The fake GitHub's routes: one fallback handler that records, applies scripted failures,
//! authenticates, then dispatches on the path segments, answering with fixture-shaped JSON.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State as AxumState;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use serde_json::{Value, json};

use super::github::{FakeComment, FakeReaction, InstallationToken, State};
use super::{Failure, json_response, lock, page_params};

const DOCS: &str = "https://docs.github.com/rest";
const MAX_BODY_CHARS: usize = 65_536;
const REACTIONS: [&str; 8] = [
    "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes",
];
const COMMENT_FIXTURE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/api/github/issue_comment.get.response.json"
));
const ISSUE_FIXTURE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/webhooks/github/issues.opened.json"
));

type Shared = Arc<Mutex<State>>;

pub(crate) fn router(state: Shared) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(state)
}

/// Who a request authenticates as.
enum Caller {
    User(String),
    Installation(i64, String),
    App,
}

fn error(status: u16, message: &str) -> Response {
    json_response(
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        json!({ "message": message, "documentation_url": DOCS }),
    )
}

fn failure_response(failure: &Failure) -> Response {
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

fn status_text(status: u16) -> &'static str {
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

async fn handle(
    AxumState(state): AxumState<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let failure = {
        let mut s = lock(&state);
        s.recorder.record(&method, &uri, &headers, &body);
        s.recorder.take_failure(&method, uri.path())
    };
    match failure {
        Some(Failure::Delay(d)) => tokio::time::sleep(d).await,
        Some(f) => return failure_response(&f),
        None => {}
    }
    if headers.get("user-agent").is_none() {
        return error(
            403,
            "Request forbidden by administrative rules. Please make sure your request has a User-Agent header",
        );
    }
    if let Some(v) = headers.get("x-github-api-version")
        && v != "2022-11-28"
    {
        return error(400, "Invalid API version");
    }
    let mut s = lock(&state);
    let caller = match authenticate(&s, &headers) {
        Ok(c) => c,
        Err(r) => return *r,
    };
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let segments: Vec<&str> = uri.path().trim_start_matches('/').split('/').collect();
    // Absolute URLs, as GitHub sends them, point back at the address the client used.
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let base = format!("http://{host}");
    route(
        &mut s,
        &Request {
            caller: &caller,
            method: &method,
            seg: &segments,
            query: uri.query(),
            body: &body,
            base: &base,
        },
    )
}

fn authenticate(s: &State, headers: &HeaderMap) -> Result<Caller, Box<Response>> {
    let raw = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let token = raw
        .strip_prefix("Bearer ")
        .or_else(|| raw.strip_prefix("token "))
        .unwrap_or("");
    if let Some(login) = s.tokens.get(token) {
        return Ok(Caller::User(login.clone()));
    }
    if let Some(t) = s.installation_tokens.get(token) {
        if t.expires_at <= Utc::now() {
            return Err(Box::new(error(401, "Bad credentials")));
        }
        let slug = s.app.as_ref().map_or("app", |a| a.slug.as_str());
        return Ok(Caller::Installation(t.installation, format!("{slug}[bot]")));
    }
    if let Some(app) = &s.app
        && token.matches('.').count() == 2
    {
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
        validation.set_issuer(&[app.id.to_string()]);
        validation.set_required_spec_claims(&["exp", "iat", "iss"]);
        return match jsonwebtoken::decode::<Value>(token, &app.key, &validation) {
            Ok(data) => {
                let iat = data.claims["iat"].as_i64().unwrap_or(0);
                let exp = data.claims["exp"].as_i64().unwrap_or(0);
                // GitHub: "the JWT's expiration time is too far in the future" past 10 minutes.
                if exp - iat > 660 {
                    Err(Box::new(error(
                        401,
                        "'Expiration time' claim ('exp') is too far in the future",
                    )))
                } else {
                    Ok(Caller::App)
                }
            }
            Err(_) => Err(Box::new(error(
                401,
                "A JSON web token could not be decoded",
            ))),
        };
    }
    Err(Box::new(error(401, "Bad credentials")))
}

fn login(caller: &Caller) -> Option<&str> {
    match caller {
        Caller::User(l) | Caller::Installation(_, l) => Some(l),
        Caller::App => None,
    }
}

struct Request<'a> {
    caller: &'a Caller,
    method: &'a Method,
    seg: &'a [&'a str],
    query: Option<&'a str>,
    body: &'a Value,
    base: &'a str,
}

fn route(s: &mut State, req: &Request<'_>) -> Response {
    let Request {
        caller,
        method,
        seg,
        query,
        body,
        base,
    } = *req;
    let is_app = matches!(caller, Caller::App);
    // An installation token reaches only the repositories of its installation.
    if let (Caller::Installation(id, _), ["repos", o, r, ..]) = (caller, seg)
        && s.repo_installations
            .get(&format!("{o}/{r}"))
            .is_some_and(|i| i != id)
    {
        return error(404, "Not Found");
    }
    match (method.as_str(), seg) {
        ("GET", ["user"]) => match caller {
            Caller::User(l) => {
                json_response(StatusCode::OK, json!({"login": l, "id": 1, "type": "User"}))
            }
            _ => error(403, "Resource not accessible by integration"),
        },
        ("GET", ["app"]) if is_app => {
            let app = s.app.as_ref().expect("app enabled");
            json_response(
                StatusCode::OK,
                json!({"id": app.id, "slug": app.slug, "name": app.slug}),
            )
        }
        ("POST", ["app", "installations", id, "access_tokens"]) if is_app => {
            let Ok(id) = id.parse::<i64>() else {
                return error(404, "Not Found");
            };
            let ttl = s
                .app
                .as_ref()
                .map_or(std::time::Duration::from_secs(3600), |a| a.token_ttl);
            let expires_at = Utc::now() + chrono::Duration::from_std(ttl).unwrap_or_default();
            let token = format!("ghs_fake{}", s.next_id());
            s.installation_tokens.insert(
                token.clone(),
                InstallationToken {
                    installation: id,
                    expires_at,
                },
            );
            s.token_exchanges.push(id);
            json_response(
                StatusCode::CREATED,
                json!({"token": token, "expires_at": expires_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true), "permissions": {"issues": "write"}}),
            )
        }
        ("GET", ["repos", o, r, "installation"]) if is_app => {
            match s.repo_installations.get(&format!("{o}/{r}")) {
                Some(id) => json_response(
                    StatusCode::OK,
                    json!({"id": id, "app_id": s.app.as_ref().map(|a| a.id)}),
                ),
                None => error(404, "Not Found"),
            }
        }
        _ if is_app => error(401, "A JSON web token cannot be used for this endpoint"),
        ("GET", ["repos", o, r, "issues", n]) => {
            let repo = format!("{o}/{r}");
            match s
                .issues
                .iter()
                .find(|i| i.repo == repo && n.parse() == Ok(i.number))
            {
                Some(issue) => json_response(StatusCode::OK, issue_json(issue)),
                None => error(404, "Not Found"),
            }
        }
        ("GET", ["repos", o, r, "issues", n, "comments"]) => {
            list_comments(s, base, &format!("{o}/{r}"), n, query)
        }
        ("POST", ["repos", o, r, "issues", n, "comments"]) => {
            let repo = format!("{o}/{r}");
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
            let text = body["body"].as_str().unwrap_or("");
            if let Some(r) = invalid_body(text) {
                return r;
            }
            let id = s.next_id();
            let now = Utc::now();
            let (author, kind) = match caller {
                Caller::Installation(_, l) => (l.clone(), "Bot"),
                _ => (login(caller).unwrap_or("ghost").to_owned(), "User"),
            };
            let comment = FakeComment {
                id,
                repo,
                issue: number,
                author,
                author_type: kind.into(),
                author_association: "NONE".into(),
                body: text.into(),
                created_at: now,
                updated_at: now,
            };
            let out = comment_json(&comment, base);
            s.comments.push(comment);
            json_response(StatusCode::CREATED, out)
        }
        ("GET", ["repos", o, r, "issues", "comments", id]) => {
            let repo = format!("{o}/{r}");
            match s
                .comments
                .iter()
                .find(|c| c.repo == repo && id.parse() == Ok(c.id))
            {
                Some(c) => json_response(StatusCode::OK, comment_json(c, base)),
                None => error(404, "Not Found"),
            }
        }
        ("PATCH", ["repos", o, r, "issues", "comments", id]) => {
            let repo = format!("{o}/{r}");
            let text = body["body"].as_str().unwrap_or("").to_owned();
            if let Some(r) = invalid_body(&text) {
                return r;
            }
            match s
                .comments
                .iter_mut()
                .find(|c| c.repo == repo && id.parse() == Ok(c.id))
            {
                Some(c) => {
                    c.body = text;
                    c.updated_at = Utc::now();
                    json_response(StatusCode::OK, comment_json(c, base))
                }
                None => error(404, "Not Found"),
            }
        }
        ("POST", ["repos", o, r, "issues", n, "reactions"]) => {
            let repo = format!("{o}/{r}");
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
            react(s, caller, repo, number, None, body)
        }
        ("POST", ["repos", o, r, "issues", "comments", id, "reactions"]) => {
            let repo = format!("{o}/{r}");
            let Some(c) = s
                .comments
                .iter()
                .find(|c| c.repo == repo && id.parse() == Ok(c.id))
            else {
                return error(404, "Not Found");
            };
            let (issue, cid) = (c.issue, c.id);
            react(s, caller, repo, issue, Some(cid), body)
        }
        ("GET", ["repos", o, r, "collaborators", user, "permission"]) => {
            match s.permissions.get(&(format!("{o}/{r}"), (*user).to_owned())) {
                Some(p) => json_response(
                    StatusCode::OK,
                    json!({"permission": p, "role_name": p, "user": {"login": user}}),
                ),
                None => error(404, &format!("{user} is not a user")),
            }
        }
        _ => error(404, "Not Found"),
    }
}

fn invalid_body(text: &str) -> Option<Response> {
    let message = if text.is_empty() {
        "Body cannot be blank".to_owned()
    } else if text.chars().count() > MAX_BODY_CHARS {
        format!("Body is too long (maximum is {MAX_BODY_CHARS} characters)")
    } else {
        return None;
    };
    Some(failure_response(&Failure::Validation(message)))
}

fn react(
    s: &mut State,
    caller: &Caller,
    repo: String,
    issue: i64,
    comment: Option<i64>,
    body: &Value,
) -> Response {
    let content = body["content"].as_str().unwrap_or("");
    if !REACTIONS.contains(&content) {
        return failure_response(&Failure::Validation(format!(
            "content {content:?} is not a valid reaction"
        )));
    }
    let user = login(caller).unwrap_or("ghost").to_owned();
    let reaction = FakeReaction {
        repo,
        issue,
        comment,
        content: content.into(),
        user: user.clone(),
    };
    let answer = json!({"id": s.next_id(), "content": content, "user": {"login": user}, "created_at": Utc::now().to_rfc3339()});
    if s.reactions.contains(&reaction) {
        return json_response(StatusCode::OK, answer);
    }
    s.reactions.push(reaction);
    json_response(StatusCode::CREATED, answer)
}

fn list_comments(s: &State, base_url: &str, repo: &str, n: &str, query: Option<&str>) -> Response {
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

pub(crate) fn comment_json(c: &FakeComment, api: &str) -> Value {
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

fn issue_json(i: &super::github::FakeIssue) -> Value {
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
    v["updated_at"] = json!(Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    v
}
