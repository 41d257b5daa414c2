//! The Executor, part one: applying a validated batch in one transaction.
//!
//! Every state change and every outbox row of a batch is written through the caller's connection
//! (a transaction), so together with the job's watermark raise they commit or vanish as one.
//! Nothing here calls a tracker: that is [`Executor::drain_outbox`], after the commit.

use std::sync::Arc;

use relay_store::{PgConnection, PgPool};
use relay_tracker::{CommentTarget, IssueTracker, TrackerWrite};

pub use crate::action::Applied;
use crate::action::At;
use crate::keys::{self, BatchId};
use crate::outbox::Queued;
use crate::retry::RetryPolicy;
use crate::validated::ValidatedBatch;
use crate::{Error, Result};
use relay_core::{IssueId, JobId, SpecId};

/// The job's pending-event watermark, raised in the batch's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatermarkRaise {
    pub issue_id: IssueId,
    /// The last delivery the job handled (`issues.handled_delivery_id`).
    pub through_delivery: i64,
}

/// The job lease an executor's transactions are fenced by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    /// `jobs.id`.
    pub job_id: JobId,
    /// The claim's `jobs.lease_token`.
    pub token: uuid::Uuid,
}

/// Applies validated batches and drains the outbox to one tracker.
#[derive(Clone)]
pub struct Executor {
    pub(crate) pool: PgPool,
    pub(crate) tracker: Arc<dyn IssueTracker>,
    pub(crate) retry: RetryPolicy,
    /// When set, [`Executor::execute`] applies a batch only while this lease holds.
    pub(crate) lease: Option<Lease>,
}

impl Executor {
    pub fn new(pool: PgPool, tracker: Arc<dyn IssueTracker>) -> Executor {
        Executor {
            pool,
            tracker,
            retry: RetryPolicy::default(),
            lease: None,
        }
    }

    /// Fences [`Executor::execute`] by the job's lease: a worker that lost it (it stalled, the
    /// job was claimed again) cannot apply a batch.
    pub fn with_lease(mut self, lease: Option<Lease>) -> Executor {
        self.lease = lease;
        self
    }

    /// Replaces the retry policy (tests: [`RetryPolicy::immediate`]).
    pub fn with_retry(mut self, retry: RetryPolicy) -> Executor {
        self.retry = retry;
        self
    }

    /// Writes the batch's state changes and outbox rows through `conn` without committing: run it
    /// inside the job's transaction, raise the watermark there too, then commit. On any error the
    /// caller must roll back (dropping the transaction does).
    pub async fn apply(
        &self,
        conn: &mut PgConnection,
        batch: &ValidatedBatch,
        id: BatchId,
    ) -> Result<Applied> {
        apply(conn, batch, id).await
    }

    /// [`Executor::apply`] and the watermark raise in one transaction of its own, committed.
    pub async fn execute(
        &self,
        batch: &ValidatedBatch,
        id: BatchId,
        watermark: Option<WatermarkRaise>,
    ) -> Result<Applied> {
        let mut tx = self.pool.begin().await.map_err(relay_store::Error::from)?;
        fence(&mut tx, self.lease).await?;
        let applied = apply(&mut tx, batch, id).await?;
        if let Some(raise) = watermark {
            relay_store::issues::mark_events_handled(
                &mut tx,
                raise.issue_id,
                raise.through_delivery,
            )
            .await?;
        }
        tx.commit().await.map_err(relay_store::Error::from)?;
        Ok(applied)
    }
}

/// Holds the job's lease for the rest of the transaction (`None`: unfenced); an error when it is
/// lost, so the caller rolls back.
pub async fn fence(conn: &mut PgConnection, lease: Option<Lease>) -> Result<()> {
    let Some(lease) = lease else {
        return Ok(());
    };
    if relay_store::queue::hold_lease(conn, lease.job_id, lease.token).await? {
        Ok(())
    } else {
        Err(Error::LeaseLost)
    }
}

/// See [`Executor::apply`]: each action in order (`ValidatedAction::apply`).
pub async fn apply(
    conn: &mut PgConnection,
    batch: &ValidatedBatch,
    id: BatchId,
) -> Result<Applied> {
    let mut applied = Applied::default();
    for (index, action) in batch.actions.iter().enumerate() {
        let at = At {
            scope: &batch.scope,
            batch: id,
            index,
        };
        action.apply(conn, at, &mut applied).await?;
    }
    Ok(applied)
}

/// Records a spec version for posting: split into numbered parts when longer than one comment,
/// each part an outbox row. Run it in the transaction that stored the spec. Returns the keys.
pub async fn enqueue_spec(
    conn: &mut PgConnection,
    spec: &relay_store::specs::SpecRow,
    id: BatchId,
) -> Result<Vec<String>> {
    let mut keys_out = Vec::new();
    for (part, body) in crate::spec::split_spec(&spec.body, crate::spec::SPEC_PART_CHARS)
        .iter()
        .enumerate()
    {
        let key = keys::spec_key(spec.issue_id, id, spec.version, part);
        let write = TrackerWrite::Comment {
            target: CommentTarget::NewThread,
            body: keys::with_marker(body, &key),
        };
        crate::outbox::enqueue(
            conn,
            Queued {
                key: &key,
                issue_id: spec.issue_id,
                job_id: Some(id.job_id),
                write: &write,
            },
        )
        .await?;
        keys_out.push(key);
    }
    Ok(keys_out)
}

/// After the drain sent every part of a spec: records the note ids and marks it posted. Returns
/// `false` (and changes nothing) while a part is not sent yet.
pub async fn record_spec_posted(
    conn: &mut PgConnection,
    spec_id: SpecId,
    keys: &[String],
) -> Result<bool> {
    let mut note_ids = Vec::with_capacity(keys.len());
    for key in keys {
        match relay_store::outbox::get(conn, key).await? {
            Some(row) if row.status == "sent" => note_ids.extend(row.note_id),
            _ => return Ok(false),
        }
    }
    Ok(relay_store::specs::mark_posted(conn, spec_id, &note_ids).await?)
}

/// After the drain sent a spec part (whichever job or sweep sent it): when every part of that
/// spec is sent and the spec is still `draft`, records its notes and marks it posted. `false`
/// when `key` is not a spec part, or the spec is not complete yet (or not a draft).
pub async fn record_spec_part_sent(conn: &mut PgConnection, key: &str) -> Result<bool> {
    let Some(part) = keys::parse_spec_key(key) else {
        return Ok(false);
    };
    let Some(spec) = relay_store::specs::by_version(conn, part.issue_id, part.version).await?
    else {
        return Ok(false);
    };
    if spec.status != "draft" {
        return Ok(false);
    }
    let parts = crate::spec::split_spec(&spec.body, crate::spec::SPEC_PART_CHARS).len();
    let keys: Vec<String> = (0..parts).map(|p| part.part_key(p)).collect();
    record_spec_posted(conn, spec.id, &keys).await
}
