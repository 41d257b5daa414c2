//! [`FakeGitHub`]: the state and the test-facing API. The routes are in `github_routes.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::{Failure, RecordedRequest, Recorder, Server, lock};

/// An issue the fake serves.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeIssue {
    pub repo: String,
    pub number: i64,
    pub title: String,
    pub body: String,
    pub state: String,
    pub labels: Vec<String>,
    pub author: String,
    /// A pull request (GitHub lists them with the issues, marked `pull_request`).
    pub pull_request: bool,
    pub created_at: DateTime<Utc>,
    /// The issue's own last change; GitHub reports the later of this and its comments' changes.
    pub updated_at: DateTime<Utc>,
}

/// A comment on an issue.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeComment {
    pub id: i64,
    pub repo: String,
    pub issue: i64,
    pub author: String,
    /// `User` or `Bot`.
    pub author_type: String,
    /// `OWNER`, `MEMBER`, `CONTRIBUTOR`, `NONE`…
    pub author_association: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A reaction on an issue (`comment: None`) or a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeReaction {
    pub repo: String,
    pub issue: i64,
    pub comment: Option<i64>,
    pub content: String,
    pub user: String,
}

#[derive(Debug)]
pub(crate) struct App {
    pub id: u64,
    pub slug: String,
    pub key: jsonwebtoken::DecodingKey,
    pub token_ttl: Duration,
}

#[derive(Debug, Clone)]
pub(crate) struct InstallationToken {
    pub installation: i64,
    pub expires_at: DateTime<Utc>,
    /// The repository names the token was minted for (`repositories` in the request); `None`:
    /// every repository of the installation.
    pub repositories: Option<Vec<String>>,
}

impl InstallationToken {
    /// Whether the token reaches repository `name` (of its installation).
    pub(crate) fn reaches(&self, name: &str) -> bool {
        self.repositories
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n.eq_ignore_ascii_case(name)))
    }
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub recorder: Recorder,
    /// Personal access token → login.
    pub tokens: HashMap<String, String>,
    pub app: Option<App>,
    pub installation_tokens: HashMap<String, InstallationToken>,
    pub token_exchanges: Vec<i64>,
    pub repo_installations: HashMap<String, i64>,
    pub issues: Vec<FakeIssue>,
    pub comments: Vec<FakeComment>,
    pub reactions: Vec<FakeReaction>,
    /// (repo, login) → `admin`, `maintain`, `write`, `triage`, `read`.
    pub permissions: HashMap<(String, String), String>,
    /// `owner/repo` → repository id (`GET /repos/:owner/:repo`); unset ones get a stable id.
    pub repo_ids: HashMap<String, i64>,
    /// `owner/repo` → `public`, `private` or `internal` (`GET /repos/:owner/:repo`); unset: public.
    pub repo_visibility: HashMap<String, String>,
    /// `owner/repo` → the bare repository its git endpoint serves.
    pub git_repos: HashMap<String, super::github_git::Served>,
    pub next_id: i64,
}

impl State {
    pub(crate) fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        1_000_000 + self.next_id
    }
}

/// A local GitHub REST server. See the [module docs](super) for an example.
pub struct FakeGitHub {
    pub(crate) state: Arc<Mutex<State>>,
    server: Server,
}

impl FakeGitHub {
    pub async fn start() -> FakeGitHub {
        let state = Arc::new(Mutex::new(State::default()));
        let server = Server::start(super::github_routes::router(state.clone())).await;
        FakeGitHub { state, server }
    }

    /// `http://127.0.0.1:PORT`, the `base_url` to configure.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.server.addr)
    }

    /// Settings for a token-authenticated client of this server (pacing off); the token is
    /// registered for `bot_username`.
    pub fn settings(&self, token: &str, bot_username: &str) -> relay_core::TrackerSettings {
        self.add_token(token, bot_username);
        super::tracker_settings(
            relay_core::Provider::GitHub,
            self.base_url(),
            token,
            bot_username,
        )
    }

    /// Settings for a GitHub App client of this server with the test key pair (pacing off);
    /// enables the App flow here with `slug` and a one-hour token lifetime.
    pub fn app_settings(&self, app_id: u64, slug: &str) -> relay_core::TrackerSettings {
        self.enable_app(
            app_id,
            slug,
            super::TEST_APP_PUBLIC_KEY_PEM,
            Duration::from_secs(3600),
        );
        let mut settings =
            super::tracker_settings(relay_core::Provider::GitHub, self.base_url(), "", slug);
        settings.app_id = Some(app_id);
        settings.private_key = Some(secrecy::SecretString::from(super::TEST_APP_PRIVATE_KEY_PEM));
        settings
    }

    /// Accepts `token` as a personal access token of `login`.
    pub fn add_token(&self, token: &str, login: &str) {
        lock(&self.state).tokens.insert(token.into(), login.into());
    }

    /// Enables the GitHub App flow: JWTs are verified with `public_key_pem` and must name
    /// `app_id`; installation tokens live `token_ttl` and act as `slug[bot]`.
    pub fn enable_app(&self, app_id: u64, slug: &str, public_key_pem: &str, token_ttl: Duration) {
        let key = jsonwebtoken::DecodingKey::from_rsa_pem(public_key_pem.as_bytes())
            .expect("a valid RSA public key (PEM)");
        lock(&self.state).app = Some(App {
            id: app_id,
            slug: slug.into(),
            key,
            token_ttl,
        });
    }

    /// Says `repo` is covered by App installation `installation`
    /// (`GET /repos/:owner/:repo/installation`).
    pub fn install(&self, repo: &str, installation: i64) {
        lock(&self.state)
            .repo_installations
            .insert(repo.into(), installation);
    }

    /// Serves `repo` over git smart HTTP (`{base_url}/{repo}.git`) from the bare repository
    /// `bare` (its directory name must end in `.git`), behind GitHub's git authentication: Basic
    /// with a personal access token or an installation token of an installation covering `repo`.
    pub fn serve_git(&self, repo: &str, bare: std::path::PathBuf) {
        lock(&self.state)
            .git_repos
            .insert(repo.into(), super::github_git::Served { bare });
    }

    /// The installation ids of every token exchange so far, in order.
    pub fn token_exchanges(&self) -> Vec<i64> {
        lock(&self.state).token_exchanges.clone()
    }

    /// Adds an open issue authored by `octocat`.
    pub fn seed_issue(&self, repo: &str, number: i64, title: &str, body: &str) {
        let now = Utc::now();
        lock(&self.state).issues.push(FakeIssue {
            repo: repo.into(),
            number,
            title: title.into(),
            body: body.into(),
            state: "open".into(),
            labels: Vec::new(),
            author: "octocat".into(),
            pull_request: false,
            created_at: now,
            updated_at: now,
        });
    }

    /// Adds an open pull request (listed among the issues, as GitHub does).
    pub fn seed_pull_request(&self, repo: &str, number: i64, title: &str, body: &str) {
        self.seed_issue(repo, number, title, body);
        if let Some(i) = lock(&self.state)
            .issues
            .iter_mut()
            .find(|i| i.repo == repo && i.number == number)
        {
            i.pull_request = true;
        }
    }

    /// Sets the visibility `GET /repos/:owner/:repo` answers for `repo` (`public`, `private`,
    /// `internal`), making the repository known.
    pub fn set_repo_visibility(&self, repo: &str, visibility: &str) {
        let mut state = lock(&self.state);
        state.repo_visibility.insert(repo.into(), visibility.into());
        let id = 600_000_000 + i64::try_from(state.repo_ids.len()).unwrap_or(0);
        state.repo_ids.entry(repo.into()).or_insert(id);
    }

    /// Sets the id `GET /repos/:owner/:repo` answers for `repo`.
    pub fn set_repo_id(&self, repo: &str, id: i64) {
        lock(&self.state).repo_ids.insert(repo.into(), id);
    }

    /// Edits an issue's body as someone would in the web UI (no request recorded; the REST
    /// lists do not say who).
    pub fn edit_issue(&self, repo: &str, number: i64, body: &str) -> bool {
        let mut s = lock(&self.state);
        match s
            .issues
            .iter_mut()
            .find(|i| i.repo == repo && i.number == number)
        {
            Some(i) => {
                i.body = body.into();
                i.updated_at = Utc::now();
                true
            }
            None => false,
        }
    }

    /// Edits a comment's body as its author would in the web UI (no request recorded).
    pub fn edit_comment(&self, comment: i64, body: &str) -> bool {
        let mut s = lock(&self.state);
        match s.comments.iter_mut().find(|c| c.id == comment) {
            Some(c) => {
                c.body = body.into();
                c.updated_at = Utc::now();
                true
            }
            None => false,
        }
    }

    /// Adds a comment by `author` (a `User`, or a `Bot` when the login ends in `[bot]`); returns
    /// its id.
    pub fn seed_comment(&self, repo: &str, issue: i64, author: &str, body: &str) -> i64 {
        let mut state = lock(&self.state);
        let id = state.next_id();
        let now = Utc::now();
        state.comments.push(FakeComment {
            id,
            repo: repo.into(),
            issue,
            author: author.into(),
            author_type: if author.ends_with("[bot]") {
                "Bot"
            } else {
                "User"
            }
            .into(),
            author_association: "NONE".into(),
            body: body.into(),
            created_at: now,
            updated_at: now,
        });
        id
    }

    /// Sets the association GitHub reports for a seeded comment.
    pub fn set_association(&self, comment: i64, association: &str) {
        if let Some(c) = lock(&self.state)
            .comments
            .iter_mut()
            .find(|c| c.id == comment)
        {
            c.author_association = association.into();
        }
    }

    /// Gives `login` a collaborator permission on `repo`.
    pub fn set_permission(&self, repo: &str, login: &str, permission: &str) {
        lock(&self.state)
            .permissions
            .insert((repo.into(), login.into()), permission.into());
    }

    /// The comments of an issue, oldest first.
    pub fn comments(&self, repo: &str, issue: i64) -> Vec<FakeComment> {
        lock(&self.state)
            .comments
            .iter()
            .filter(|c| c.repo == repo && c.issue == issue)
            .cloned()
            .collect()
    }

    pub fn reactions(&self) -> Vec<FakeReaction> {
        lock(&self.state).reactions.clone()
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).recorder.requests.clone()
    }

    /// Fails the next `times` requests `METHOD path` (path without query, e.g.
    /// `/repos/o/r/issues/1/comments`) with `failure`.
    pub fn fail_next(&self, method: &str, path: &str, times: usize, failure: Failure) {
        lock(&self.state)
            .recorder
            .script(method, path, times, failure);
    }
}
