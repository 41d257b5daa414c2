//! The fake GitHub's git endpoint: smart HTTP (`/owner/repo.git/info/refs`,
//! `/owner/repo.git/git-upload-pack`) served by the real `git http-backend` (CGI), behind the
//! authentication github.com asks of a private repository: HTTP Basic with an installation access
//! token (user `x-access-token`) of an installation that covers the repository, or a personal
//! access token. Anything else gets GitHub's 401 with `WWW-Authenticate`, so a clone without the
//! right token fails the way it does for real.

use std::path::PathBuf;
use std::process::Stdio;

use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use chrono::Utc;
use tokio::io::AsyncWriteExt as _;

use super::github::State;
use super::lock;

/// A repository served over git: the bare repository on disk.
#[derive(Debug)]
pub(crate) struct Served {
    pub bare: PathBuf,
}

/// Serves a git request, or `None` when the path is not one (the REST routes take it).
pub(crate) async fn serve(
    state: &std::sync::Arc<std::sync::Mutex<State>>,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Bytes,
) -> Option<Response> {
    let path = uri.path();
    let (repo, rest) = path.trim_start_matches('/').split_once(".git/")?;
    let bare = {
        let s = lock(state);
        let served = s.git_repos.get(repo)?;
        if !authorized(&s, repo, headers) {
            return Some(unauthorized());
        }
        served.bare.clone()
    };
    Some(run_backend(bare, method, rest, uri.query(), headers, body).await)
}

/// GitHub's answer to a git request without valid credentials.
fn unauthorized() -> Response {
    Response::builder()
        .status(StatusCode::UNAUTHORIZED)
        .header("www-authenticate", "Basic realm=\"GitHub\"")
        .body(Body::from("Invalid username or token."))
        .unwrap_or_default()
}

/// Whether the request carries Basic credentials git may clone `repo` with.
fn authorized(s: &State, repo: &str, headers: &HeaderMap) -> bool {
    let Some(basic) = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(decode_base64)
    else {
        return false;
    };
    let Some((_user, token)) = basic.split_once(':') else {
        return false;
    };
    if s.tokens.contains_key(token) {
        return true;
    }
    s.installation_tokens.get(token).is_some_and(|t| {
        t.expires_at > Utc::now()
            && s.repo_installations.get(repo) == Some(&t.installation)
            && t.reaches(repo.rsplit('/').next().unwrap_or_default())
    })
}

async fn run_backend(
    bare: PathBuf,
    method: &Method,
    rest: &str,
    query: Option<&str>,
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    let Some(root) = bare.parent().map(PathBuf::from) else {
        return failed("the served repository has no parent directory");
    };
    let name = bare
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let header = |key: &str| {
        headers
            .get(key)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let mut command = tokio::process::Command::new("git");
    command
        .arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", &root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("PATH_INFO", format!("/{name}/{rest}"))
        .env("QUERY_STRING", query.unwrap_or(""))
        .env("REQUEST_METHOD", method.as_str())
        .env("CONTENT_TYPE", header("content-type"))
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("HTTP_CONTENT_ENCODING", header("content-encoding"))
        .env("GIT_PROTOCOL", header("git-protocol"))
        .env("REMOTE_USER", "x-access-token")
        .env("REMOTE_ADDR", "127.0.0.1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let Ok(mut child) = command.spawn() else {
        return failed("cannot run git http-backend");
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(&body).await;
    }
    let Ok(output) = child.wait_with_output().await else {
        return failed("git http-backend did not finish");
    };
    cgi_response(&output.stdout)
}

fn failed(message: &str) -> Response {
    Response::builder()
        .status(StatusCode::INTERNAL_SERVER_ERROR)
        .body(Body::from(message.to_owned()))
        .unwrap_or_default()
}

/// A CGI answer (headers, a blank line, the body) as an HTTP response.
fn cgi_response(raw: &[u8]) -> Response {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| raw.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)));
    let Some((end, gap)) = split else {
        return failed("git http-backend answered without headers");
    };
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut response = Response::builder().status(StatusCode::OK);
    for line in head.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if key.eq_ignore_ascii_case("status") {
            let code = value
                .split_whitespace()
                .next()
                .and_then(|c| c.parse::<u16>().ok())
                .and_then(|c| StatusCode::from_u16(c).ok())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            response = response.status(code);
        } else {
            response = response.header(key.trim(), value);
        }
    }
    response
        .body(Body::from(raw[end + gap..].to_vec()))
        .unwrap_or_default()
}

/// Standard base64 (padding optional), as HTTP Basic uses it.
fn decode_base64(text: &str) -> Option<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits: u32 = 0;
    let mut count = 0;
    let mut out = Vec::new();
    for byte in text.trim().bytes().filter(|b| *b != b'=') {
        let value = ALPHABET.iter().position(|c| *c == byte)? as u32;
        bits = (bits << 6) | value;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn basic_credentials_decode() {
        assert_eq!(
            super::decode_base64("eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYw==").as_deref(),
            Some("x-access-token:ghs_abc")
        );
    }
}
