//! Group commit for intake: deliveries that arrive within a short window share one transaction.
//!
//! One task, the committer, owns the writing. The first delivery of a group begins a transaction
//! and runs its intake statement at once; every delivery arriving within the window (or until
//! the group is full) runs its statement in the same transaction as it arrives. Then the group
//! commits in the background while the next group starts, and each delivery is answered only
//! after the commit that holds it: a 2xx always means durable.
//!
//! - **Duplicates.** Each delivery's statement runs inside a savepoint: a redelivery's fails on
//!   the delivery's unique key and is rolled back to its savepoint alone (answered as a duplicate,
//!   as before); a statement failing otherwise is rolled back the same way and written alone
//!   after the group, before the next one starts. Savepoints write subtransactions: keep
//!   `max_members` at most 64 (Postgres caches 64 per transaction).
//! - **Crashes.** Nothing is answered before the commit, so a process that dies mid-group loses
//!   only unanswered deliveries, which the tracker sends again (and which, if the commit did land,
//!   are refused as duplicates then).
//! - **No deadlocks among themselves.** Statements run one at a time, one group after another
//!   (a group's deliveries written alone before the next group starts); a group that is
//!   committing waits on nothing, so a statement of the next group that needs a row the
//!   committing group wrote (the same issue or job) waits only for that commit.
//! - **Bounded.** At most `max_members` deliveries per group, at most `MAX_COMMITTING` groups
//!   committing at once, and a queue of `QUEUE` deliveries waiting to join (then a delivery
//!   waits to be queued, and its request's database deadline answers 503).

use std::sync::Arc;
use std::time::Duration;

use relay_core::{IssueSnapshot, NoteSnapshot};
use serde_json::Value;
use sqlx::{PgPool, Postgres, Transaction};
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::intake::{self, Engagement, IssueDelivery, Recorded};
use crate::queue::NewJob;
use crate::{Error, Result};

/// Groups committing at once (each holds a connection until its commit returns).
pub const MAX_COMMITTING: usize = 4;
/// Deliveries waiting to join a group.
const QUEUE: usize = 1024;

/// How intake groups deliveries (`[server] intake_batch_window_us`, `intake_batch_max`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupSettings {
    /// How long a group stays open after its first delivery.
    pub window: Duration,
    /// Deliveries per group at most.
    pub max_members: usize,
}

/// The gateway's committer (see the module docs). Cheap to share; the task ends when every
/// handle is dropped.
#[derive(Debug, Clone)]
pub struct GroupCommit {
    queue: mpsc::Sender<Member>,
    pool: PgPool,
}

/// One delivery's write, owned so that it can wait in the queue.
#[derive(Debug, Clone)]
enum Write {
    Issue(Box<OwnedIssueDelivery>),
    Job(Box<OwnedJobDelivery>),
    Plain(Box<OwnedPlainDelivery>),
}

/// What the write returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Written {
    Issue(Option<Recorded>),
    Job(Option<(i64, i64)>),
    Plain(Option<i64>),
}

#[derive(Debug)]
struct Member {
    write: Write,
    answer: oneshot::Sender<Result<Written>>,
}

impl GroupCommit {
    /// Starts the committer task on the current runtime.
    pub fn start(pool: PgPool, settings: GroupSettings) -> GroupCommit {
        let (queue, receiver) = mpsc::channel(QUEUE);
        tokio::spawn(run(pool.clone(), receiver, settings));
        GroupCommit { queue, pool }
    }

    /// [`intake::record_issue_delivery`], in a group.
    pub async fn record_issue_delivery(
        &self,
        delivery: &IssueDelivery<'_>,
    ) -> Result<Option<Recorded>> {
        let write = Write::Issue(Box::new(OwnedIssueDelivery::from(delivery)));
        match self.submit(write).await? {
            Written::Issue(recorded) => Ok(recorded),
            other => Err(mismatch(other)),
        }
    }

    /// [`intake::record_job_delivery`], in a group.
    #[allow(clippy::too_many_arguments)]
    pub async fn record_job_delivery(
        &self,
        tracker: &str,
        event_type: &str,
        action: Option<&str>,
        delivery_key: &str,
        reason: &str,
        payload: &Value,
        job: &NewJob<'_>,
    ) -> Result<Option<(i64, i64)>> {
        let write = Write::Job(Box::new(OwnedJobDelivery {
            plain: OwnedPlainDelivery::new(
                tracker,
                event_type,
                action,
                delivery_key,
                reason,
                payload,
            ),
            kind: job.kind.to_owned(),
            job_payload: job.payload.clone(),
            concurrency_key: job.concurrency_key.map(str::to_owned),
            max_attempts: job.max_attempts,
        }));
        match self.submit(write).await? {
            Written::Job(recorded) => Ok(recorded),
            other => Err(mismatch(other)),
        }
    }

    /// [`intake::record_plain_delivery`], in a group.
    pub async fn record_plain_delivery(
        &self,
        tracker: &str,
        event_type: &str,
        action: Option<&str>,
        delivery_key: &str,
        reason: &str,
        payload: &Value,
    ) -> Result<Option<i64>> {
        let write = Write::Plain(Box::new(OwnedPlainDelivery::new(
            tracker,
            event_type,
            action,
            delivery_key,
            reason,
            payload,
        )));
        match self.submit(write).await? {
            Written::Plain(recorded) => Ok(recorded),
            other => Err(mismatch(other)),
        }
    }

    async fn submit(&self, write: Write) -> Result<Written> {
        let (answer, answered) = oneshot::channel();
        match self.queue.send(Member { write, answer }).await {
            Ok(()) => answered.await.unwrap_or_else(|_| {
                // The committer is gone (the runtime is shutting down): nothing was answered.
                Err(Error::Unavailable(sqlx::Error::PoolClosed))
            }),
            // The committer is gone: write alone.
            Err(mpsc::error::SendError(member)) => alone_write(&self.pool, &member.write).await,
        }
    }
}

fn mismatch(written: Written) -> Error {
    Error::Decode(format!(
        "group commit answered another kind of write: {written:?}"
    ))
}

async fn run(pool: PgPool, mut queue: mpsc::Receiver<Member>, settings: GroupSettings) {
    let committing = Arc::new(Semaphore::new(MAX_COMMITTING));
    while let Some(first) = queue.recv().await {
        let Ok(permit) = committing.clone().acquire_owned().await else {
            return;
        };
        let deadline = tokio::time::Instant::now() + settings.window;
        let mut group = Group::begin(&pool).await;
        group.add(first).await;
        while group.len() < settings.max_members.max(1) && !group.failed() {
            match tokio::time::timeout_at(deadline, queue.recv()).await {
                Ok(Some(member)) => group.add(member).await,
                Ok(None) | Err(_) => break,
            }
        }
        if group.failed() || !group.alone.is_empty() {
            // Finished here, before the next group starts: a write alone running beside the next
            // group could wait on its rows while it waits on ours.
            group.finish(&pool).await;
            drop(permit);
        } else {
            let pool = pool.clone();
            tokio::spawn(async move {
                group.finish(&pool).await;
                drop(permit);
            });
        }
    }
}

/// One group: its transaction and the deliveries whose statements ran in it.
struct Group {
    /// `None`: the transaction could not begin (each delivery is then written alone).
    tx: Option<Transaction<'static, Postgres>>,
    /// A savepoint command failed: the transaction's state is unknown, it is rolled back.
    broken: bool,
    done: Vec<(Member, Written)>,
    /// Deliveries whose statement failed (rolled back to their savepoint): written alone.
    alone: Vec<Member>,
}

/// What one delivery's statement did in the group's transaction.
enum InGroup {
    Written(Written),
    /// A redelivery: its statement failed on the delivery's unique key (rolled back to its
    /// savepoint); answered as a duplicate.
    Duplicate(Written),
    Failed,
}

impl Group {
    async fn begin(pool: &PgPool) -> Group {
        let tx = pool.begin().await.map_err(|error| {
            tracing::debug!(error.message = %error, "intake group could not begin; writing alone");
        });
        Group {
            tx: tx.ok(),
            broken: false,
            done: Vec::new(),
            alone: Vec::new(),
        }
    }

    fn len(&self) -> usize {
        self.done.len() + self.alone.len()
    }

    /// No more deliveries can join: the transaction is gone.
    fn failed(&self) -> bool {
        self.tx.is_none() || self.broken
    }

    /// Runs the delivery's statement inside a savepoint of the group's transaction, so that a
    /// redelivery (or any failure) undoes only its own writes.
    async fn add(&mut self, member: Member) {
        let Some(tx) = self.tx.as_mut().filter(|_| !self.broken) else {
            self.alone.push(member);
            return;
        };
        if let Err(error) = sqlx::query("SAVEPOINT delivery").execute(&mut **tx).await {
            tracing::debug!(error.message = %error, "intake group savepoint failed");
            self.broken = true;
            self.alone.push(member);
            return;
        }
        let outcome = in_group(tx, &member.write).await;
        if !matches!(outcome, InGroup::Written(_)) {
            let undone = sqlx::query("ROLLBACK TO SAVEPOINT delivery")
                .execute(&mut **tx)
                .await;
            if let Err(error) = undone {
                tracing::debug!(error.message = %error, "intake group rollback to savepoint failed");
                self.broken = true;
                self.alone.push(member);
                return;
            }
        }
        match outcome {
            InGroup::Written(written) | InGroup::Duplicate(written) => {
                self.done.push((member, written))
            }
            InGroup::Failed => self.alone.push(member),
        }
    }

    /// Commits (or, broken, rolls back) and answers; then writes alone what must be.
    async fn finish(self, pool: &PgPool) {
        let Group {
            tx,
            broken,
            done,
            mut alone,
        } = self;
        match tx {
            Some(tx) if !broken => match tx.commit().await {
                Ok(()) => {
                    for (member, written) in done {
                        let _ = member.answer.send(Ok(written));
                    }
                }
                Err(error) => {
                    // Whether it landed is unknown: answer an error (the sender retries; a
                    // landed delivery is then refused as a duplicate).
                    tracing::warn!(error.message = %error, members = done.len(), "intake group commit failed");
                    let error = Error::from(error);
                    for (member, _) in done {
                        let _ = member.answer.send(Err(clone_error(&error)));
                    }
                }
            },
            tx => {
                if let Some(tx) = tx
                    && let Err(error) = tx.rollback().await
                {
                    tracing::debug!(error.message = %error, "intake group rollback failed");
                }
                alone.extend(done.into_iter().map(|(member, _)| member));
            }
        }
        // Written alone, one after another, exactly as without group commit.
        for member in alone {
            let written = alone_write(pool, &member.write).await;
            let _ = member.answer.send(written);
        }
    }
}

/// The statement in the group's transaction.
async fn in_group(tx: &mut Transaction<'static, Postgres>, write: &Write) -> InGroup {
    match write {
        Write::Issue(d) => {
            let delivery = d.borrowed();
            let mut tries = 0;
            loop {
                tries += 1;
                match intake::record_issue_delivery_once(&mut **tx, &delivery).await {
                    Err(Error::Database(sqlx::Error::RowNotFound)) if tries < 3 => continue,
                    Ok(Some(recorded)) => break InGroup::Written(Written::Issue(Some(recorded))),
                    Ok(None) => break InGroup::Duplicate(Written::Issue(None)),
                    Err(_) => break InGroup::Failed,
                }
            }
        }
        Write::Job(d) => match d.write(&mut **tx).await {
            Ok(Some(ids)) => InGroup::Written(Written::Job(Some(ids))),
            Ok(None) => InGroup::Duplicate(Written::Job(None)),
            Err(_) => InGroup::Failed,
        },
        // `ON CONFLICT DO NOTHING`: a redelivery is not an error here.
        Write::Plain(d) => match d.write(&mut **tx).await {
            Ok(id) => InGroup::Written(Written::Plain(id)),
            Err(_) => InGroup::Failed,
        },
    }
}

async fn alone_write(pool: &PgPool, write: &Write) -> Result<Written> {
    Ok(match write {
        Write::Issue(d) => {
            Written::Issue(intake::record_issue_delivery(pool, &d.borrowed()).await?)
        }
        Write::Job(d) => Written::Job(d.write(pool).await?),
        Write::Plain(d) => Written::Plain(d.write(pool).await?),
    })
}

fn clone_error(error: &Error) -> Error {
    match error {
        Error::Unavailable(_) => Error::Unavailable(sqlx::Error::PoolTimedOut),
        other => Error::Conflict(other.to_string()),
    }
}

#[derive(Debug, Clone)]
struct OwnedIssueDelivery {
    tracker: String,
    event_type: String,
    action: Option<String>,
    delivery_key: String,
    payload: Value,
    issue: IssueSnapshot,
    installation_id: Option<i64>,
    note: Option<NoteSnapshot>,
    engage: Option<OwnedEngagement>,
    ignore_reason: Option<String>,
    origin: String,
    event_key: Option<String>,
}

#[derive(Debug, Clone)]
struct OwnedEngagement {
    kind: String,
    actor: String,
    job_kind: String,
    max_attempts: i32,
}

impl From<&IssueDelivery<'_>> for OwnedIssueDelivery {
    fn from(d: &IssueDelivery<'_>) -> Self {
        OwnedIssueDelivery {
            tracker: d.tracker.to_owned(),
            event_type: d.event_type.to_owned(),
            action: d.action.map(str::to_owned),
            delivery_key: d.delivery_key.to_owned(),
            payload: d.payload.clone(),
            issue: d.issue.clone(),
            installation_id: d.installation_id,
            note: d.note.cloned(),
            engage: d.engage.as_ref().map(|e| OwnedEngagement {
                kind: e.kind.to_owned(),
                actor: e.actor.to_owned(),
                job_kind: e.job_kind.to_owned(),
                max_attempts: e.max_attempts,
            }),
            ignore_reason: d.ignore_reason.map(str::to_owned),
            origin: d.origin.to_owned(),
            event_key: d.event_key.map(str::to_owned),
        }
    }
}

impl OwnedIssueDelivery {
    fn borrowed(&self) -> IssueDelivery<'_> {
        IssueDelivery {
            tracker: &self.tracker,
            event_type: &self.event_type,
            action: self.action.as_deref(),
            delivery_key: &self.delivery_key,
            payload: &self.payload,
            issue: &self.issue,
            installation_id: self.installation_id,
            note: self.note.as_ref(),
            engage: self.engage.as_ref().map(|e| Engagement {
                kind: &e.kind,
                actor: &e.actor,
                job_kind: &e.job_kind,
                max_attempts: e.max_attempts,
            }),
            ignore_reason: self.ignore_reason.as_deref(),
            origin: &self.origin,
            event_key: self.event_key.as_deref(),
        }
    }
}

#[derive(Debug, Clone)]
struct OwnedPlainDelivery {
    tracker: String,
    event_type: String,
    action: Option<String>,
    delivery_key: String,
    reason: String,
    payload: Value,
}

impl OwnedPlainDelivery {
    fn new(
        tracker: &str,
        event_type: &str,
        action: Option<&str>,
        delivery_key: &str,
        reason: &str,
        payload: &Value,
    ) -> Self {
        OwnedPlainDelivery {
            tracker: tracker.to_owned(),
            event_type: event_type.to_owned(),
            action: action.map(str::to_owned),
            delivery_key: delivery_key.to_owned(),
            reason: reason.to_owned(),
            payload: payload.clone(),
        }
    }

    async fn write<'e>(&self, executor: impl sqlx::PgExecutor<'e>) -> Result<Option<i64>> {
        intake::record_plain_delivery(
            executor,
            &self.tracker,
            &self.event_type,
            self.action.as_deref(),
            &self.delivery_key,
            &self.reason,
            &self.payload,
        )
        .await
    }
}

#[derive(Debug, Clone)]
struct OwnedJobDelivery {
    plain: OwnedPlainDelivery,
    kind: String,
    job_payload: Value,
    concurrency_key: Option<String>,
    max_attempts: i32,
}

impl OwnedJobDelivery {
    async fn write<'e>(&self, executor: impl sqlx::PgExecutor<'e>) -> Result<Option<(i64, i64)>> {
        let p = &self.plain;
        intake::record_job_delivery(
            executor,
            &p.tracker,
            &p.event_type,
            p.action.as_deref(),
            &p.delivery_key,
            &p.reason,
            &p.payload,
            &NewJob {
                kind: &self.kind,
                payload: &self.job_payload,
                concurrency_key: self.concurrency_key.as_deref(),
                max_attempts: self.max_attempts,
            },
        )
        .await
    }
}
