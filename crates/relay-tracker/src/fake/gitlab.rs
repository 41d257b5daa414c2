//! [`FakeGitLab`]: the state and the test-facing API. The routes are in `gitlab_routes.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::{Failure, RecordedRequest, Recorder, Server, lock};

/// A note (comment) of a discussion.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeNote {
    pub id: i64,
    pub author: String,
    pub body: String,
    /// System notes ("changed the label…") are listed by GitLab; clients must skip them.
    pub system: bool,
    /// An internal note (visible to project members only).
    pub internal: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A discussion (thread) of an issue.
#[derive(Debug, Clone, PartialEq)]
pub struct FakeDiscussion {
    /// 40 hex characters.
    pub id: String,
    pub project: i64,
    pub issue: i64,
    pub individual_note: bool,
    pub notes: Vec<FakeNote>,
}

/// An issue of the fake as the tests see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeIssueState {
    pub state: String,
    pub confidential: bool,
    pub labels: Vec<String>,
    pub assignees: Vec<String>,
    pub title: String,
    pub moved_to: Option<String>,
}

/// An award emoji on an issue (`note: None`) or a note.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeAward {
    pub project: i64,
    pub issue: i64,
    pub note: Option<i64>,
    pub name: String,
    pub user: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Issue {
    pub project: i64,
    pub iid: i64,
    pub title: String,
    pub description: String,
    pub created_at: DateTime<Utc>,
    /// The issue's own last change; GitLab reports the later of this and its notes' changes.
    pub updated_at: DateTime<Utc>,
    /// `opened` or `closed` (quick actions change it).
    pub state: String,
    pub confidential: bool,
    pub labels: Vec<String>,
    pub assignees: Vec<String>,
    /// Where `/move` sent the issue (GitLab moves it to another project and closes this one).
    pub moved_to: Option<String>,
}

/// A quick action the fake executed, as GitLab would have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeQuickAction {
    pub project: i64,
    pub issue: i64,
    /// Without the `/`: `close`, `move`, …
    pub command: String,
    pub argument: String,
    pub user: String,
}

#[derive(Debug, Default)]
pub(crate) struct State {
    pub recorder: Recorder,
    /// The path prefix of the instance (`/gitlab`), empty for a root install.
    pub prefix: String,
    pub tokens: HashMap<String, String>,
    /// Project id → `group/project`.
    pub projects: HashMap<i64, String>,
    /// Project id → `public`, `internal` or `private` (`GET /projects/:id`); unset: public.
    pub project_visibility: HashMap<i64, String>,
    pub issues: Vec<Issue>,
    pub discussions: Vec<FakeDiscussion>,
    pub awards: Vec<FakeAward>,
    /// Quick actions run from notes posted through the API, in order.
    pub quick_actions: Vec<FakeQuickAction>,
    /// (project, username) → access level.
    pub members: HashMap<(i64, String), u32>,
    /// Instance-wide user ids by lowercased username (assigned by `set_member`).
    pub user_ids: HashMap<String, i64>,
    /// Send `x-next-page` (true, GitLab's default) or only `Link`.
    pub next_page_header: bool,
    pub next_id: i64,
}

impl State {
    /// When GitLab says an issue changed last: its own change or a note's, whichever is later.
    pub(crate) fn issue_updated_at(&self, issue: &Issue) -> DateTime<Utc> {
        self.discussions
            .iter()
            .filter(|d| d.project == issue.project && d.issue == issue.iid)
            .flat_map(|d| d.notes.iter().map(|n| n.updated_at))
            .fold(issue.updated_at, DateTime::max)
    }

    pub(crate) fn next_id(&mut self) -> i64 {
        self.next_id += 1;
        2_000_000 + self.next_id
    }

    pub(crate) fn new_discussion_id(&mut self) -> String {
        format!("{:040x}", self.next_id())
    }
}

/// Ids of the users `set_member` creates: far from the fixtures' small ids, so a webhook's
/// recorded `user.id` only names a member when a test puts it there.
const USER_ID_BASE: i64 = 7_000;

/// A local GitLab v4 server, optionally under a path prefix.
pub struct FakeGitLab {
    pub(crate) state: Arc<Mutex<State>>,
    server: Server,
}

impl FakeGitLab {
    /// A root install (`base_url` = `http://127.0.0.1:PORT`).
    pub async fn start() -> FakeGitLab {
        FakeGitLab::start_with_prefix("").await
    }

    /// An install under `prefix` (e.g. `/gitlab`): the API is at `<prefix>/api/v4`.
    pub async fn start_with_prefix(prefix: &str) -> FakeGitLab {
        let state = Arc::new(Mutex::new(State {
            prefix: prefix.trim_end_matches('/').to_owned(),
            next_page_header: true,
            ..State::default()
        }));
        let server = Server::start(super::gitlab_routes::router(state.clone())).await;
        FakeGitLab { state, server }
    }

    /// The instance root to configure as `base_url` (with the prefix).
    pub fn base_url(&self) -> String {
        format!("http://{}{}", self.server.addr, lock(&self.state).prefix)
    }

    /// Settings for a client of this server (pacing off); the token is registered for
    /// `bot_username`.
    pub fn settings(&self, token: &str, bot_username: &str) -> relay_core::TrackerSettings {
        self.add_token(token, bot_username);
        super::tracker_settings(
            relay_core::Provider::GitLab,
            self.base_url(),
            token,
            bot_username,
        )
    }

    /// Accepts `token` (as `PRIVATE-TOKEN` or `Bearer`) for `username`.
    pub fn add_token(&self, token: &str, username: &str) {
        lock(&self.state)
            .tokens
            .insert(token.into(), username.into());
    }

    /// Only `Link` headers, no `x-next-page` (as GitLab does for some large lists).
    pub fn link_pagination_only(&self) {
        lock(&self.state).next_page_header = false;
    }

    /// Adds a project and an issue on it.
    pub fn seed_issue(&self, project: i64, path: &str, iid: i64, title: &str, description: &str) {
        let mut s = lock(&self.state);
        s.projects.insert(project, path.into());
        let now = Utc::now();
        s.issues.push(Issue {
            project,
            iid,
            title: title.into(),
            description: description.into(),
            created_at: now,
            updated_at: now,
            state: "opened".into(),
            confidential: false,
            labels: vec!["bug".into()],
            assignees: Vec::new(),
            moved_to: None,
        });
    }

    /// Adds a one-note discussion (a plain comment, or a system note); returns (discussion id,
    /// note id).
    pub fn seed_note(
        &self,
        project: i64,
        issue: i64,
        author: &str,
        body: &str,
        system: bool,
    ) -> (String, i64) {
        let mut s = lock(&self.state);
        let id = s.new_discussion_id();
        let note = s.next_id();
        let now = Utc::now();
        s.discussions.push(FakeDiscussion {
            id: id.clone(),
            project,
            issue,
            individual_note: true,
            notes: vec![FakeNote {
                id: note,
                author: author.into(),
                body: body.into(),
                system,
                internal: false,
                created_at: now,
                updated_at: now,
            }],
        });
        (id, note)
    }

    /// Marks a note internal (as if posted with "Make this an internal note").
    pub fn make_internal(&self, note: i64) -> bool {
        let mut s = lock(&self.state);
        let found = s
            .discussions
            .iter_mut()
            .flat_map(|d| d.notes.iter_mut())
            .find(|n| n.id == note);
        found.map(|n| n.internal = true).is_some()
    }

    /// Every quick action run so far (from notes posted through the API).
    pub fn quick_actions(&self) -> Vec<FakeQuickAction> {
        lock(&self.state).quick_actions.clone()
    }

    /// The issue's state as quick actions left it: (`opened`/`closed`, confidential, labels,
    /// assignees, title, moved to).
    pub fn issue_state(&self, project: i64, iid: i64) -> Option<FakeIssueState> {
        lock(&self.state)
            .issues
            .iter()
            .find(|i| i.project == project && i.iid == iid)
            .map(|i| FakeIssueState {
                state: i.state.clone(),
                confidential: i.confidential,
                labels: i.labels.clone(),
                assignees: i.assignees.clone(),
                title: i.title.clone(),
                moved_to: i.moved_to.clone(),
            })
    }

    /// Edits a note's body as its author would in the web UI (no request recorded); returns
    /// whether the note exists.
    pub fn edit_note(&self, note: i64, body: &str) -> bool {
        let mut s = lock(&self.state);
        let found = s
            .discussions
            .iter_mut()
            .flat_map(|d| d.notes.iter_mut())
            .find(|n| n.id == note);
        match found {
            Some(n) => {
                n.body = body.into();
                n.updated_at = Utc::now();
                true
            }
            None => false,
        }
    }

    /// Makes project `id` at `path` known with `visibility` (`public`, `internal`, `private`).
    pub fn seed_project(&self, id: i64, path: &str, visibility: &str) {
        let mut state = lock(&self.state);
        state.projects.insert(id, path.into());
        state.project_visibility.insert(id, visibility.into());
    }

    /// Gives `username` an access level (10 guest … 50 owner) on `project`.
    pub fn set_member(&self, project: i64, username: &str, access_level: u32) {
        let mut s = lock(&self.state);
        s.members.insert((project, username.into()), access_level);
        let next = USER_ID_BASE + s.user_ids.len() as i64;
        s.user_ids.entry(username.to_lowercase()).or_insert(next);
    }

    /// The instance-wide id of a user given a membership (`GET …/members/all/:user_id`).
    pub fn user_id(&self, username: &str) -> Option<i64> {
        lock(&self.state)
            .user_ids
            .get(&username.to_lowercase())
            .copied()
    }

    /// The discussions of an issue, in creation order.
    pub fn discussions(&self, project: i64, issue: i64) -> Vec<FakeDiscussion> {
        lock(&self.state)
            .discussions
            .iter()
            .filter(|d| d.project == project && d.issue == issue)
            .cloned()
            .collect()
    }

    pub fn awards(&self) -> Vec<FakeAward> {
        lock(&self.state).awards.clone()
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).recorder.requests.clone()
    }

    /// Fails the next `times` requests `METHOD path` (the full path as sent, including the
    /// prefix and `/api/v4`, without the query).
    pub fn fail_next(&self, method: &str, path: &str, times: usize, failure: Failure) {
        lock(&self.state)
            .recorder
            .script(method, path, times, failure);
    }

    /// Answers every request matching `method` and `path` with `failure` for `lasting` from now
    /// (a tracker outage), then normally again.
    pub fn fail_for(&self, method: &str, path: &str, lasting: Duration, failure: Failure) {
        lock(&self.state)
            .recorder
            .script_for(method, path, lasting, failure);
    }
}
