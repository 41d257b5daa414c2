//! Shared test support: an in-process `IssueTracker` test double (the real GitHub/GitLab fake
//! servers are being built on branch `tracker`; switch to them once merged), fixture rows and a
//! checkout to cite.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use relay_core::{IssueSnapshot, Provider};
use relay_store::PgPool;
use relay_tracker::{
    AuthorRole, CommentTarget, IssueRef, NoteRef, PostedComment, Reaction, ReactionTarget, Result,
    ThreadNote, TrackerError, TrackerWrite, WriteAck,
};

/// A comment as the double's "tracker" stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredComment {
    pub issue_number: i64,
    pub note_id: String,
    pub discussion_id: Option<String>,
    pub body: String,
    pub by_bot: bool,
    pub reply_to: Option<String>,
}

/// Keeps comments in memory and can fail on command.
#[derive(Default)]
pub struct MemoryTracker {
    pub comments: Mutex<Vec<StoredComment>>,
    pub reactions: Mutex<Vec<(i64, Option<String>, Reaction)>>,
    pub edits: Mutex<Vec<(String, String)>>,
    /// Errors the next write calls return, in order (the write is then not stored).
    pub fail_next: Mutex<VecDeque<TrackerError>>,
    /// Store the next comment, then panic before answering: the process "dies" after the tracker
    /// accepted the write and before the outbox recorded it.
    pub crash_after_accept: AtomicBool,
    pub post_calls: AtomicUsize,
    pub lookups: AtomicUsize,
    next_id: AtomicUsize,
}

impl MemoryTracker {
    pub fn fail_with(&self, errors: impl IntoIterator<Item = TrackerError>) {
        self.fail_next.lock().unwrap().extend(errors);
    }

    pub fn bodies(&self) -> Vec<String> {
        self.comments
            .lock()
            .unwrap()
            .iter()
            .map(|c| c.body.clone())
            .collect()
    }

    /// Adds a comment by someone else (not the bot).
    pub fn add_human_comment(&self, issue_number: i64, body: &str) -> String {
        let note_id = self.new_id();
        self.comments.lock().unwrap().push(StoredComment {
            issue_number,
            note_id: note_id.clone(),
            discussion_id: None,
            body: body.into(),
            by_bot: false,
            reply_to: None,
        });
        note_id
    }

    fn new_id(&self) -> String {
        (1000 + self.next_id.fetch_add(1, Ordering::SeqCst)).to_string()
    }

    fn take_failure(&self) -> Result<()> {
        match self.fail_next.lock().unwrap().pop_front() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

fn unsupported(what: &str) -> TrackerError {
    TrackerError::Protocol(format!("{what} is not supported by the test double"))
}

/// The writes, as a tracker's client has them.
impl MemoryTracker {
    fn post_comment(
        &self,
        issue: &IssueRef,
        body: &str,
        target: &CommentTarget,
    ) -> Result<PostedComment> {
        self.post_calls.fetch_add(1, Ordering::SeqCst);
        self.take_failure()?;
        let note_id = self.new_id();
        let (discussion_id, reply_to) = match target {
            CommentTarget::NewThread => (Some(format!("d{note_id}")), None),
            CommentTarget::Reply(note) => (note.discussion_id.clone(), Some(note.note_id.clone())),
        };
        self.comments.lock().unwrap().push(StoredComment {
            issue_number: issue.number,
            note_id: note_id.clone(),
            discussion_id: discussion_id.clone(),
            body: body.into(),
            by_bot: true,
            reply_to,
        });
        if self.crash_after_accept.swap(false, Ordering::SeqCst) {
            panic!("simulated crash after the tracker accepted the comment");
        }
        Ok(PostedComment {
            note_id,
            discussion_id,
            url: None,
            created_at: None,
        })
    }

    fn edit_comment(&self, _issue: &IssueRef, note: &NoteRef, body: &str) -> Result<()> {
        self.take_failure()?;
        self.edits
            .lock()
            .unwrap()
            .push((note.note_id.clone(), body.into()));
        Ok(())
    }

    fn add_reaction(
        &self,
        issue: &IssueRef,
        target: &ReactionTarget,
        reaction: Reaction,
    ) -> Result<()> {
        self.take_failure()?;
        let note = match target {
            ReactionTarget::Issue => None,
            ReactionTarget::Note(n) => Some(n.note_id.clone()),
        };
        self.reactions
            .lock()
            .unwrap()
            .push((issue.number, note, reaction));
        Ok(())
    }
}

#[async_trait::async_trait]
impl relay_tracker::IssueTracker for MemoryTracker {
    fn provider(&self) -> Provider {
        Provider::GitLab
    }

    fn bot_username(&self) -> &str {
        "relay-bot"
    }

    async fn get_issue(&self, _issue: &IssueRef) -> Result<IssueSnapshot> {
        Err(unsupported("get_issue"))
    }

    async fn list_thread(&self, _issue: &IssueRef) -> Result<Vec<ThreadNote>> {
        Err(unsupported("list_thread"))
    }

    async fn write(&self, issue: &IssueRef, write: &TrackerWrite) -> Result<WriteAck> {
        Ok(match write {
            TrackerWrite::Comment { target, body } => {
                WriteAck::Posted(self.post_comment(issue, body, target)?)
            }
            TrackerWrite::Edit { note, body } => {
                self.edit_comment(issue, note, body)?;
                WriteAck::Done
            }
            TrackerWrite::React { target, reaction } => {
                self.add_reaction(issue, target, *reaction)?;
                WriteAck::Done
            }
        })
    }

    async fn find_marked_comment(
        &self,
        issue: &IssueRef,
        marker: &str,
    ) -> Result<Option<PostedComment>> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        Ok(self
            .comments
            .lock()
            .unwrap()
            .iter()
            .find(|c| c.by_bot && c.issue_number == issue.number && c.body.contains(marker))
            .map(|c| PostedComment {
                note_id: c.note_id.clone(),
                discussion_id: c.discussion_id.clone(),
                url: None,
                created_at: None,
            }))
    }

    async fn author_role(&self, _issue: &IssueRef, _username: &str) -> Result<AuthorRole> {
        Err(unsupported("author_role"))
    }
}

/// Inserts an issue row (and optionally its cached thread notes); returns its id.
pub async fn insert_issue(pool: &PgPool, number: i64, notes: &[(&str, Option<&str>)]) -> i64 {
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
         VALUES ('gl', '42', 'group/app', $1, 'Export fails', 'opened', 'alice', 'http://x', now())
         RETURNING id",
    )
    .bind(number)
    .fetch_one(pool)
    .await
    .unwrap();
    for (note_id, discussion_id) in notes {
        sqlx::query(
            "INSERT INTO issue_notes (issue_id, note_id, discussion_id, author, body, created_at, updated_at)
             VALUES ($1, $2, $3, 'alice', 'a comment', now(), now())",
        )
        .bind(id)
        .bind(note_id)
        .bind(discussion_id)
        .execute(pool)
        .await
        .unwrap();
    }
    id
}

pub fn issue_ref(number: i64) -> IssueRef {
    IssueRef {
        project_id: "42".into(),
        project_path: "group/app".into(),
        number,
        installation_id: None,
    }
}

/// A checkout with one Go file to cite (`pkg/export.go`, 6 lines).
pub fn checkout() -> (tempfile::TempDir, relay_actions::Snapshot) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    std::fs::write(
        dir.path().join("pkg/export.go"),
        "package pkg\n\n// Export writes the report.\nfunc Export(w io.Writer) error {\n\treturn errNotImplemented\n}\n",
    )
    .unwrap();
    let sandbox = relay_tools::sandbox::Sandbox::new(dir.path()).unwrap();
    (
        dir,
        relay_actions::Snapshot {
            sandbox,
            commit_sha: "c0ffee".into(),
            related: Vec::new(),
        },
    )
}

pub fn batch(json: serde_json::Value) -> relay_core::ActionBatch {
    serde_json::from_value(json).expect("a batch the schema accepts")
}
