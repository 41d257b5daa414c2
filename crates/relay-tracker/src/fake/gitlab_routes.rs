//! The fake GitLab's routes: one fallback handler that records, applies scripted failures,
//! authenticates (`PRIVATE-TOKEN` or `Bearer`), then dispatches on the path segments under
//! `<prefix>/api/v4`, answering with fixture-shaped JSON.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State as AxumState;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use serde_json::{Value, json};

use super::gitlab::{FakeAward, FakeDiscussion, FakeNote, State};
use super::gitlab_issues::{issue_json, list_issues};
use super::{Failure, json_response, lock, page_params, query_param};

const MAX_BODY_CHARS: usize = 1_000_000;
const NOTE_FIXTURE: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/api/gitlab/note.single.response.json"
));

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

fn error(status: u16, message: &str) -> Response {
    json_response(
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        json!({ "message": message }),
    )
}

fn too_many(retry_after: Option<u64>) -> Response {
    let mut r = (StatusCode::TOO_MANY_REQUESTS, "Retry later\n").into_response();
    let h = r.headers_mut();
    h.insert(
        "ratelimit-name",
        HeaderValue::from_static("throttle_authenticated_api"),
    );
    h.insert("ratelimit-limit", HeaderValue::from(2000));
    h.insert("ratelimit-remaining", HeaderValue::from(0));
    if let Some(s) = retry_after {
        h.insert("retry-after", HeaderValue::from(s));
    }
    r
}

fn failure_response(failure: &Failure) -> Response {
    match failure {
        Failure::Validation(text) => json_response(
            StatusCode::BAD_REQUEST,
            json!({"message": {"base": [text]}}),
        ),
        Failure::SecondaryRateLimit { retry_after } | Failure::TooManyRequests { retry_after } => {
            too_many(*retry_after)
        }
        Failure::PrimaryRateLimit { reset_in_secs } => too_many(Some(*reset_in_secs)),
        Failure::Status(401) => error(401, "401 Unauthorized"),
        Failure::Status(403) => error(403, "403 Forbidden"),
        Failure::Status(404) => error(404, "404 Not found"),
        Failure::Status(status) => error(*status, &format!("{status} Internal Server Error")),
        Failure::Delay(_) => error(500, "unreachable"),
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
    let mut s = lock(&state);
    let api = format!("{}/api/v4/", s.prefix);
    let Some(rest) = uri.path().strip_prefix(&api) else {
        return error(404, "404 Not Found");
    };
    let private = headers.get("private-token").and_then(|v| v.to_str().ok());
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let Some(user) = private.or(bearer).and_then(|t| s.tokens.get(t)).cloned() else {
        return error(401, "401 Unauthorized");
    };
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let seg: Vec<String> = rest
        .split('/')
        .map(|p| p.replace("%2F", "/").replace("%2f", "/"))
        .collect();
    let seg: Vec<&str> = seg.iter().map(String::as_str).collect();
    let host = headers
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    let base = format!(
        "http://{host}{}",
        uri.path().split('?').next().unwrap_or("")
    );
    if seg.first() == Some(&"user") && seg.len() == 1 && method == Method::GET {
        return json_response(
            StatusCode::OK,
            json!({"id": 1, "username": user, "name": user, "state": "active"}),
        );
    }
    let ["projects", project, "issues", iid, tail @ ..] = seg.as_slice() else {
        if let ["projects", project, "members", "all"] = seg.as_slice() {
            return members(&s, project, uri.query());
        }
        if let (&Method::GET, ["projects", project, "issues"]) = (&method, seg.as_slice()) {
            return match resolve_project(&s, project) {
                Some(project) => list_issues(&s, project, uri.query(), &base, host),
                None => error(404, "404 Project Not Found"),
            };
        }
        if let ["projects", project, "members", "all", id] = seg.as_slice() {
            return member_by_id(&s, project, id);
        }
        if let (&Method::GET, ["projects", project]) = (&method, seg.as_slice()) {
            return match resolve_project(&s, project) {
                Some(id) => json_response(
                    StatusCode::OK,
                    json!({"id": id, "path_with_namespace": s.projects[&id],
                           "visibility": s.project_visibility.get(&id).map_or("public", String::as_str)}),
                ),
                None => error(404, "404 Project Not Found"),
            };
        }
        return error(404, "404 Not Found");
    };
    let Some(project) = resolve_project(&s, project) else {
        return error(404, "404 Project Not Found");
    };
    let Ok(iid) = iid.parse::<i64>() else {
        return error(404, "404 Not found");
    };
    let Some(issue) = s
        .issues
        .iter()
        .find(|i| i.project == project && i.iid == iid)
        .cloned()
    else {
        return error(404, "404 Issue Not Found");
    };
    let text = body["body"].as_str().unwrap_or("").to_owned();
    match (method.as_str(), tail) {
        ("GET", []) => json_response(StatusCode::OK, issue_json(&s, &issue, host)),
        ("GET", ["discussions"]) => list_discussions(&s, project, iid, uri.query(), &base),
        ("POST", ["discussions"]) => {
            if let Some(r) = invalid_body(&text) {
                return r;
            }
            super::gitlab_quick::execute(&mut s, project, iid, &user, &text);
            let id = s.new_discussion_id();
            let note = new_note(&mut s, &user, text);
            let d = FakeDiscussion {
                id,
                project,
                issue: iid,
                individual_note: false,
                notes: vec![note],
            };
            let out = discussion_json(&d, iid);
            s.discussions.push(d);
            json_response(StatusCode::CREATED, out)
        }
        ("POST", ["discussions", did, "notes"]) => {
            if let Some(r) = invalid_body(&text) {
                return r;
            }
            super::gitlab_quick::execute(&mut s, project, iid, &user, &text);
            let note = new_note(&mut s, &user, text);
            let out = note_json(&note, iid);
            match s
                .discussions
                .iter_mut()
                .find(|d| d.project == project && d.issue == iid && d.id == *did)
            {
                Some(d) => {
                    // Replying to a plain comment turns it into a thread.
                    d.individual_note = false;
                    d.notes.push(note);
                    json_response(StatusCode::CREATED, out)
                }
                None => error(404, "404 Discussion Not Found"),
            }
        }
        ("PUT", ["discussions", did, "notes", nid]) => {
            edit(&mut s, (project, iid), &user, Some(did), nid, text)
        }
        ("PUT", ["notes", nid]) => edit(&mut s, (project, iid), &user, None, nid, text),
        ("POST", ["award_emoji"]) => award(&mut s, project, iid, None, &user, &body),
        ("POST", ["notes", nid, "award_emoji"]) => {
            let Ok(nid) = nid.parse::<i64>() else {
                return error(404, "404 Note Not Found");
            };
            let exists = s.discussions.iter().any(|d| {
                d.project == project && d.issue == iid && d.notes.iter().any(|n| n.id == nid)
            });
            if !exists {
                return error(404, "404 Note Not Found");
            }
            award(&mut s, project, iid, Some(nid), &user, &body)
        }
        _ => error(404, "404 Not Found"),
    }
}

fn resolve_project(s: &State, raw: &str) -> Option<i64> {
    if let Ok(id) = raw.parse::<i64>() {
        return s.projects.contains_key(&id).then_some(id);
    }
    s.projects
        .iter()
        .find(|(_, p)| p.as_str() == raw)
        .map(|(id, _)| *id)
}

fn invalid_body(text: &str) -> Option<Response> {
    if text.is_empty() {
        return Some(json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": "body is missing"}),
        ));
    }
    if text.chars().count() > MAX_BODY_CHARS {
        return Some(json_response(
            StatusCode::BAD_REQUEST,
            json!({"message": {"note": ["is too long (maximum is 1000000 characters)"]}}),
        ));
    }
    None
}

fn new_note(s: &mut State, user: &str, body: String) -> FakeNote {
    let now = Utc::now();
    FakeNote {
        id: s.next_id(),
        author: user.into(),
        body,
        system: false,
        internal: false,
        created_at: now,
        updated_at: now,
    }
}

/// Edits a note. Like GitLab's `Notes::UpdateService`, an edit runs the quick actions of the new
/// text too.
fn edit(
    s: &mut State,
    (project, iid): (i64, i64),
    user: &str,
    did: Option<&str>,
    nid: &str,
    text: String,
) -> Response {
    if let Some(r) = invalid_body(&text) {
        return r;
    }
    let Ok(nid) = nid.parse::<i64>() else {
        return error(404, "404 Note Not Found");
    };
    let note = s
        .discussions
        .iter_mut()
        .filter(|d| d.project == project && d.issue == iid && did.is_none_or(|id| d.id == id))
        .flat_map(|d| d.notes.iter_mut())
        .find(|n| n.id == nid);
    let Some(n) = note else {
        return error(404, "404 Note Not Found");
    };
    n.body = text.clone();
    n.updated_at = Utc::now();
    let out = note_json(n, iid);
    super::gitlab_quick::execute(s, project, iid, user, &text);
    json_response(StatusCode::OK, out)
}

fn award(
    s: &mut State,
    project: i64,
    iid: i64,
    note: Option<i64>,
    user: &str,
    body: &Value,
) -> Response {
    let name = body["name"].as_str().unwrap_or("").to_owned();
    if name.is_empty() {
        return json_response(StatusCode::BAD_REQUEST, json!({"error": "name is missing"}));
    }
    let award = FakeAward {
        project,
        issue: iid,
        note,
        name: name.clone(),
        user: user.into(),
    };
    if s.awards.contains(&award) {
        return error(404, "404 Award Emoji Name has already been taken Not Found");
    }
    s.awards.push(award);
    json_response(
        StatusCode::CREATED,
        json!({"id": s.next_id(), "name": name, "user": {"username": user}, "awardable_type": if note.is_some() { "Note" } else { "Issue" }}),
    )
}

fn members(s: &State, project: &str, query: Option<&str>) -> Response {
    let Some(project) = resolve_project(s, project) else {
        return error(404, "404 Project Not Found");
    };
    let q = query_param(query, "query")
        .unwrap_or_default()
        .to_ascii_lowercase();
    // `query` is a fuzzy search, like GitLab's: callers must match the username exactly.
    let mut found: Vec<(&String, u32)> = s
        .members
        .iter()
        .filter(|((p, u), _)| *p == project && u.to_ascii_lowercase().contains(&q))
        .map(|((_, u), level)| (u, *level))
        .collect();
    found.sort();
    // Paginated like GitLab's (20 per page by default, `x-next-page` empty on the last).
    let (page, per_page) = page_params(query, 20);
    let items: Vec<Value> = found
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|(u, level)| member_json(s, u, *level))
        .collect();
    let mut r = json_response(StatusCode::OK, Value::Array(items));
    let next = if page * per_page < found.len() {
        (page + 1).to_string()
    } else {
        String::new()
    };
    if let Ok(v) = HeaderValue::from_str(&next) {
        r.headers_mut().insert("x-next-page", v);
    }
    r
}

fn member_json(s: &State, username: &str, level: u32) -> Value {
    let id = s
        .user_ids
        .get(&username.to_lowercase())
        .copied()
        .unwrap_or(0);
    json!({"id": id, "username": username, "name": username, "state": "active", "access_level": level})
}

/// `GET /projects/:id/members/all/:user_id`: 404 unless the user is a member.
fn member_by_id(s: &State, project: &str, id: &str) -> Response {
    let Some(project) = resolve_project(s, project) else {
        return error(404, "404 Project Not Found");
    };
    let Ok(id) = id.parse::<i64>() else {
        return error(404, "404 Not found");
    };
    let found = s
        .members
        .iter()
        .find(|((p, u), _)| *p == project && s.user_ids.get(&u.to_lowercase()) == Some(&id));
    match found {
        Some(((_, u), level)) => json_response(StatusCode::OK, member_json(s, u, *level)),
        None => error(404, "404 Not found"),
    }
}

fn list_discussions(
    s: &State,
    project: i64,
    iid: i64,
    query: Option<&str>,
    base: &str,
) -> Response {
    let all: Vec<&FakeDiscussion> = s
        .discussions
        .iter()
        .filter(|d| d.project == project && d.issue == iid)
        .collect();
    let (page, per_page) = page_params(query, 20);
    let pages = all.len().div_ceil(per_page).max(1);
    let items: Vec<Value> = all
        .iter()
        .skip((page - 1) * per_page)
        .take(per_page)
        .map(|d| discussion_json(d, iid))
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
        let link = format!(
            "<{base}?page={}&per_page={per_page}>; rel=\"next\", <{base}?page={pages}&per_page={per_page}>; rel=\"last\"",
            page + 1
        );
        if let Ok(v) = HeaderValue::from_str(&link) {
            h.insert("link", v);
        }
    }
    r
}

fn note_json(n: &FakeNote, iid: i64) -> Value {
    let mut v: Value = serde_json::from_str(NOTE_FIXTURE).expect("note fixture is JSON");
    v["id"] = json!(n.id);
    v["body"] = json!(n.body);
    v["author"]["username"] = json!(n.author);
    v["author"]["name"] = json!(n.author);
    v["created_at"] = json!(n.created_at.to_rfc3339());
    v["updated_at"] = json!(n.updated_at.to_rfc3339());
    v["system"] = json!(n.system);
    v["internal"] = json!(n.internal);
    v["noteable_type"] = json!("Issue");
    v["noteable_iid"] = json!(iid);
    v["type"] = json!("DiscussionNote");
    v
}

fn discussion_json(d: &FakeDiscussion, iid: i64) -> Value {
    json!({
        "id": d.id,
        "individual_note": d.individual_note,
        "notes": d.notes.iter().map(|n| note_json(n, iid)).collect::<Vec<_>>(),
    })
}
