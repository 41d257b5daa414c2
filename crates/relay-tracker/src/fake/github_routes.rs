//! The fake GitHub's routes: one fallback handler that records, applies scripted failures,
//! authenticates, then dispatches on the path segments, answering with fixture-shaped JSON.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State as AxumState;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use chrono::Utc;
use serde_json::{Value, json};

use super::github::{FakeComment, FakeReaction, InstallationToken, State};
use super::github_json::{
    comment_json, error, failure_response, invalid_body, issue_json, list_comments,
    list_repo_comments, list_repo_issues,
};
use super::{Failure, json_response, lock};

const REACTIONS: [&str; 8] = [
    "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes",
];
type Shared = Arc<Mutex<State>>;

pub(crate) fn router(state: Shared) -> axum::Router {
    axum::Router::new()
        .fallback(handle)
        .layer(axum::middleware::map_response_with_state(
            state.clone(),
            |AxumState(state): AxumState<Shared>, response: Response| async move {
                super::record_response(|answer| lock(&state).recorder.answer(answer), response)
                    .await
            },
        ))
        .with_state(state)
}

/// Who a request authenticates as.
enum Caller {
    User(String),
    /// The installation, the bot login, the repository names the token is restricted to.
    Installation(i64, String, Option<Vec<String>>),
    App,
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
    if let Some(answer) =
        super::github_git::serve(&state, &method, &uri, &headers, body.clone()).await
    {
        return answer;
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
        return Ok(Caller::Installation(
            t.installation,
            format!("{slug}[bot]"),
            t.repositories.clone(),
        ));
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
        Caller::User(l) | Caller::Installation(_, l, _) => Some(l),
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
    // An installation token reaches only the repositories of its installation, and of those
    // only the ones it was minted for.
    if let (Caller::Installation(id, _, repositories), ["repos", o, r, ..]) = (caller, seg)
        && (s
            .repo_installations
            .get(&format!("{o}/{r}"))
            .is_some_and(|i| i != id)
            || repositories
                .as_ref()
                .is_some_and(|names| !names.iter().any(|n| n.eq_ignore_ascii_case(r))))
    {
        return error(404, "Not Found");
    }
    match (method.as_str(), seg) {
        ("GET", ["user"]) => match caller {
            Caller::User(l) => json_response(
                StatusCode::OK,
                super::github_json::authenticated_user_json(l, user_id(l), base),
            ),
            _ => error(403, "Resource not accessible by integration"),
        },
        ("GET", ["app"]) if is_app => {
            let app = s.app.as_ref().expect("app enabled");
            json_response(
                StatusCode::OK,
                super::github_json::app_json(app.id, &app.slug, base),
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
            // Like GitHub: a token for the named repositories only, with the permissions asked
            // for (the installation's own when none are named).
            let repositories = body["repositories"].as_array().map(|names| {
                names
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect::<Vec<_>>()
            });
            let permissions = match &body["permissions"] {
                Value::Object(asked) => Value::Object(asked.clone()),
                _ => json!({"issues": "write", "contents": "read", "metadata": "read"}),
            };
            let token = format!("ghs_fake{}", s.next_id());
            s.installation_tokens.insert(
                token.clone(),
                InstallationToken {
                    installation: id,
                    expires_at,
                    repositories,
                },
            );
            s.token_exchanges.push(id);
            json_response(
                StatusCode::CREATED,
                json!({"token": token, "expires_at": expires_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true), "permissions": permissions}),
            )
        }
        ("GET", ["repos", o, r, "installation"]) if is_app => {
            match s.repo_installations.get(&format!("{o}/{r}")) {
                Some(id) => json_response(
                    StatusCode::OK,
                    super::github_json::installation_json(
                        *id,
                        s.app.as_ref().map(|a| a.id),
                        s.app.as_ref().map_or("", |a| a.slug.as_str()),
                        o,
                        base,
                    ),
                ),
                None => error(404, "Not Found"),
            }
        }
        _ if is_app => error(401, "A JSON web token cannot be used for this endpoint"),
        ("GET", ["repos", o, r]) => {
            let repo = format!("{o}/{r}");
            if !s.issues.iter().any(|i| i.repo == repo) && !s.repo_ids.contains_key(&repo) {
                return error(404, "Not Found");
            }
            let id = s.repo_ids.get(&repo).copied().unwrap_or_else(|| {
                // A stable id per name (FNV-1a), far from the ids the fixtures use.
                let hash = repo.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                });
                500_000_000 + i64::try_from(hash % 100_000_000).unwrap_or(0)
            });
            let visibility = s
                .repo_visibility
                .get(&repo)
                .map_or("public", String::as_str);
            json_response(
                StatusCode::OK,
                json!({"id": id, "full_name": repo, "private": visibility != "public",
                       "visibility": visibility}),
            )
        }
        ("GET", ["repos", o, r, "issues"]) => list_repo_issues(s, base, &format!("{o}/{r}"), query),
        ("GET", ["repos", o, r, "issues", "comments"]) => {
            list_repo_comments(s, base, &format!("{o}/{r}"), query)
        }
        ("GET", ["repos", o, r, "issues", n]) => {
            let repo = format!("{o}/{r}");
            match s
                .issues
                .iter()
                .find(|i| i.repo == repo && n.parse() == Ok(i.number))
            {
                Some(issue) => json_response(StatusCode::OK, issue_json(s, issue)),
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
                Caller::Installation(_, l, _) => (l.clone(), "Bot"),
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
            react(s, caller, repo, number, None, body, base)
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
            react(s, caller, repo, issue, Some(cid), body, base)
        }
        ("GET", ["repos", o, r, "collaborators", user, "permission"]) => {
            match s.permissions.get(&(format!("{o}/{r}"), (*user).to_owned())) {
                Some(p) => json_response(
                    StatusCode::OK,
                    json!({"permission": p, "role_name": p, "user": collaborator_json(user, p, base)}),
                ),
                None => error(404, &format!("{user} is not a user")),
            }
        }
        _ => error(404, "Not Found"),
    }
}

/// A stable id per login, so the same user has the same id in every answer.
fn user_id(login: &str) -> i64 {
    let hash = login
        .bytes()
        .fold(0_i64, |h, b| h.wrapping_mul(31).wrapping_add(i64::from(b)));
    1_000 + hash.rem_euclid(9_000_000)
}

/// The `nullable-collaborator` user of a permission answer.
fn collaborator_json(login: &str, role: &str, api: &str) -> Value {
    let mut user = super::github_json::user_json(login, user_id(login), "User", api);
    user["role_name"] = json!(role);
    user
}

fn react(
    s: &mut State,
    caller: &Caller,
    repo: String,
    issue: i64,
    comment: Option<i64>,
    body: &Value,
    base: &str,
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
    let id = s.next_id();
    let kind = if matches!(caller, Caller::Installation(..)) {
        "Bot"
    } else {
        "User"
    };
    let answer = json!({
        "id": id, "node_id": format!("REA_lADO{id:08}"), "content": content,
        "user": super::github_json::user_json(&user, user_id(&user), kind, base),
        "created_at": Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    });
    if s.reactions.contains(&reaction) {
        return json_response(StatusCode::OK, answer);
    }
    s.reactions.push(reaction);
    json_response(StatusCode::CREATED, answer)
}
