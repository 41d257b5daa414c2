//! The Executor, part one: applying a validated batch in one transaction.
//!
//! Every state change and every outbox row of a batch is written through the caller's connection
//! (a transaction), so together with the job's watermark raise they commit or vanish as one.
//! Nothing here calls a tracker: that is [`Executor::drain_outbox`], after the commit.

use relay_core::{IssueId, JobId, SpecId};
use std::sync::Arc;

use relay_core::action::{MAX_FINDINGS_PER_ISSUE, ReadyForSpecGeneration, SpecVerdict};
use relay_store::outbox::{NewWrite, WriteKind};
use relay_store::{PgConnection, PgPool};
use relay_tracker::{CommentTarget, IssueTracker};

use crate::keys;
use crate::retry::RetryPolicy;
use crate::validate::{ValidatedAction, ValidatedBatch};
use crate::validated::GapToOpen;
use crate::{Error, Result};

/// Which planner decision a batch is: the job and the planner cycle within it. Together with the
/// issue and action index it determines every idempotency key of the batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchId {
    /// `jobs.id`.
    pub job_id: JobId,
    /// The planner turn within the job (0 for the first).
    pub cycle: i32,
}

/// The job's pending-event watermark, raised in the batch's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatermarkRaise {
    pub issue_id: IssueId,
    /// The last delivery the job handled (`issues.handled_delivery_id`).
    pub through_delivery: i64,
}

/// What a batch changed, for the orchestrator and the planner's next turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    pub opened_gaps: Vec<i32>,
    pub closed_gaps: Vec<i32>,
    pub added_findings: Vec<i32>,
    pub removed_findings: Vec<i32>,
    /// The oldest findings dropped because the issue went past the cap.
    pub dropped_findings: Vec<i32>,
    pub new_learnings: usize,
    pub duplicate_learnings: usize,
    /// The outbox rows written (or already there from a replay), in order.
    pub outbox_keys: Vec<String>,
    /// `ready_for_spec_generation` was accepted: the orchestrator starts the spec step.
    pub spec_requested: Option<ReadyForSpecGeneration>,
    /// The go-ahead as recorded in the batch's transaction (`spec_requests.id`): it stays
    /// pending until the spec is stored, so a failed spec writer is retried, never lost.
    pub spec_request_id: Option<i64>,
    pub spec_verdict: Option<SpecVerdict>,
    /// Lines for the planner about what was done implicitly (e.g. dropped findings).
    pub notes: Vec<String>,
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

/// See [`Executor::apply`].
pub async fn apply(
    conn: &mut PgConnection,
    batch: &ValidatedBatch,
    id: BatchId,
) -> Result<Applied> {
    let issue_id = batch.issue_id;
    let run = Some(id.job_id);
    let mut applied = Applied::default();
    for (index, action) in batch.actions.iter().enumerate() {
        match action {
            ValidatedAction::PostComment { content, target } => {
                let key = keys::action_key(issue_id, id, index, 0);
                let body = keys::with_marker(content, &key);
                let (kind, note, discussion) = match target {
                    CommentTarget::NewThread => (WriteKind::Comment, None, None),
                    CommentTarget::Reply(n) => (
                        WriteKind::Reply,
                        Some(n.note_id.as_str()),
                        n.discussion_id.as_deref(),
                    ),
                };
                relay_store::outbox::enqueue(
                    conn,
                    &NewWrite {
                        idempotency_key: &key,
                        issue_id,
                        job_id: Some(id.job_id),
                        kind,
                        body: &body,
                        target_note_id: note,
                        target_discussion_id: discussion,
                    },
                )
                .await?;
                applied.outbox_keys.push(key);
            }
            ValidatedAction::UpdateGaps { add, close } => {
                // Closes first: numbers in `close` refer to gaps that existed before the batch.
                for (number, reason, note) in close {
                    let closure = relay_store::gaps::GapClosure {
                        reason: reason.as_str(),
                        note,
                        run,
                    };
                    if !relay_store::gaps::close(conn, issue_id, number.0, &closure).await? {
                        return Err(Error::Conflict(format!("gap {number} is no longer open")));
                    }
                    applied.closed_gaps.push(number.0);
                }
                for GapToOpen {
                    gap,
                    evidence_sources,
                } in add
                {
                    let row = relay_store::gaps::open(
                        conn,
                        issue_id,
                        &relay_store::gaps::NewGapRow {
                            question: &gap.question,
                            severity: gap.severity.as_str(),
                            respondent: gap.respondent.as_str(),
                            evidence: gap.evidence.as_deref(),
                            run,
                        },
                    )
                    .await?;
                    if batch.internal_context {
                        relay_store::gaps::mark_internal(conn, row.id).await?;
                    }
                    if let Some(commit) = batch.commit_sha.as_deref()
                        && !evidence_sources.is_empty()
                    {
                        let places: Vec<_> = evidence_sources
                            .iter()
                            .map(|c| relay_store::findings::Position {
                                path: c.path.clone(),
                                start_line: c.start_line as i32,
                                end_line: c.end_line as i32,
                            })
                            .collect();
                        relay_store::gaps::add_evidence_sources(conn, row.id, &places, commit)
                            .await?;
                    }
                    applied.opened_gaps.push(row.number);
                }
            }
            ValidatedAction::UpdateFindings { add, remove } => {
                for number in remove {
                    let by = relay_store::findings::RemovedBy::Planner;
                    if !relay_store::findings::remove(conn, issue_id, *number, by).await? {
                        return Err(Error::Conflict(format!(
                            "finding {number} no longer exists"
                        )));
                    }
                    applied.removed_findings.push(*number);
                }
                let commit = batch.commit_sha.as_deref().unwrap_or_default();
                for (synthesis, sources) in add {
                    let rows: Vec<_> = sources
                        .iter()
                        .map(|c| relay_store::findings::SourceRow {
                            path: c.path.clone(),
                            start_line: c.start_line as i32,
                            end_line: c.end_line as i32,
                            quote: c.quote.clone(),
                            commit_sha: commit.to_owned(),
                            ..Default::default()
                        })
                        .collect();
                    let number =
                        relay_store::findings::insert(conn, issue_id, synthesis, run, &rows)
                            .await?;
                    if batch.internal_context {
                        relay_store::findings::mark_internal(conn, issue_id, number).await?;
                    }
                    applied.added_findings.push(number);
                }
                if !add.is_empty() {
                    let dropped = relay_store::findings::drop_oldest_past(
                        conn,
                        issue_id,
                        MAX_FINDINGS_PER_ISSUE,
                    )
                    .await?;
                    if !dropped.is_empty() {
                        applied.notes.push(format!(
                            "dropped the oldest findings {} (at most {MAX_FINDINGS_PER_ISSUE} are kept per issue)",
                            join(&dropped)
                        ));
                        applied.dropped_findings.extend(dropped);
                    }
                }
            }
            ValidatedAction::UpdateLearnings { propose } => {
                for learning in propose {
                    let new = relay_store::learnings::propose(
                        conn,
                        &relay_store::learnings::NewLearning {
                            tracker: &batch.tracker,
                            project_id: &batch.project_id,
                            kind: learning.kind.as_str(),
                            content: &learning.content,
                            issue_id: Some(issue_id),
                            run,
                            restricted: batch.private_context,
                            note_id: batch.provenance.note_id.as_deref(),
                            guidance_digest: batch.provenance.guidance_digest.as_deref(),
                        },
                    )
                    .await?;
                    if new {
                        applied.new_learnings += 1;
                    } else {
                        applied.duplicate_learnings += 1;
                    }
                }
            }
            ValidatedAction::ReadyForSpecGeneration(ready) => {
                let handover = serde_json::to_value(ready)
                    .map_err(|e| Error::Conflict(format!("unencodable handover: {e}")))?;
                applied.spec_request_id =
                    Some(relay_store::specs::request(conn, issue_id, &handover, id.job_id).await?);
                applied.spec_requested = Some(ready.clone());
            }
            ValidatedAction::SetSpecStatus {
                spec_id,
                status,
                note,
            } => {
                if !relay_store::specs::set_status(conn, *spec_id, status.as_str(), note.as_deref())
                    .await?
                {
                    return Err(Error::Conflict(format!("spec {spec_id} no longer exists")));
                }
                applied.spec_verdict = Some(*status);
            }
        }
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
        relay_store::outbox::enqueue(
            conn,
            &NewWrite {
                idempotency_key: &key,
                issue_id: spec.issue_id,
                job_id: Some(id.job_id),
                kind: WriteKind::Comment,
                body: &keys::with_marker(body, &key),
                target_note_id: None,
                target_discussion_id: None,
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
    let keys: Vec<String> = (0..parts)
        .map(|p| keys::spec_key(spec.issue_id, part.batch, spec.version, p))
        .collect();
    record_spec_posted(conn, spec.id, &keys).await
}

fn join(numbers: &[i32]) -> String {
    numbers
        .iter()
        .map(i32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
