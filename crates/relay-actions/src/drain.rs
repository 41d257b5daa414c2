//! The Executor, part two: draining the outbox to the tracker.
//!
//! Writes go out in the order they were recorded. Before each attempt, `start_attempt` commits
//! "this may reach the tracker"; a write in that state is first looked up by its marker
//! (`find_marked_comment`), so a crash between the tracker's acceptance and `mark_sent` never
//! posts twice. Edits and reactions are idempotent on the tracker and are simply repeated.

use relay_core::IssueId;
use std::time::Duration;

use relay_store::outbox::{OutboxRow, WriteKind};
use relay_tracker::{
    CommentTarget, IssueRef, NoteRef, PostedComment, Reaction, ReactionTarget, TrackerError,
};

use relay_telemetry::metrics::TRACKER_WRITES_TOTAL;

use crate::Result;
use crate::execute::Executor;
use crate::keys;
use crate::report::{Failure, Retry};
use crate::retry::Wait;

/// A write the tracker has (now or from an earlier, interrupted attempt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentWrite {
    pub idempotency_key: String,
    pub note_id: Option<String>,
    /// Whether it was found already posted (by its marker) instead of being posted now.
    pub recovered: bool,
}

/// What one drain did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DrainReport {
    pub sent: Vec<SentWrite>,
    /// `FAILED: post_comment | transient: 503 | retryable`, one per write that failed.
    pub failures: Vec<Failure>,
    /// Pending writes remain that must wait this long: the worker fails the job retryably with
    /// this delay (never sleeps it with the lease held).
    pub reschedule_after: Option<Duration>,
}

/// Reaction names as stored in an outbox row's body.
pub const REACTION_EYES: &str = "eyes";
pub const REACTION_THUMBS_UP: &str = "thumbs_up";

/// How a write came to be on the tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delivery {
    /// Written by this attempt.
    Posted,
    /// Found by its marker: an earlier, interrupted attempt had landed.
    FoundByMarker,
}

enum Outcome {
    /// The tracker has it (`comment`: what it answered for a comment).
    Sent {
        comment: Option<PostedComment>,
        delivery: Delivery,
    },
    Failed(TrackerError),
}

impl Executor {
    /// Sends the issue's pending outbox writes, in order. Stops at the first write that has to
    /// wait (its delay is [`DrainReport::reschedule_after`]) so later writes never overtake it;
    /// writes refused permanently are marked failed and reported, and the drain goes on.
    pub async fn drain_outbox(&self, issue_id: IssueId, issue: &IssueRef) -> Result<DrainReport> {
        let mut report = DrainReport::default();
        let pending = {
            let mut conn = self
                .pool
                .acquire()
                .await
                .map_err(relay_store::Error::from)?;
            relay_store::outbox::pending(&mut conn, issue_id).await?
        };
        let now = chrono::Utc::now();
        for row in pending {
            if row.next_attempt_at > now {
                let wait = (row.next_attempt_at - now)
                    .to_std()
                    .unwrap_or(Duration::ZERO);
                report.reschedule_after = Some(wait);
                break;
            }
            if !self.send_one(&row, issue, &mut report).await? {
                break;
            }
        }
        Ok(report)
    }

    /// Sends one write with inline retries. Returns `false` when the drain must stop here.
    async fn send_one(
        &self,
        row: &OutboxRow,
        issue: &IssueRef,
        report: &mut DrainReport,
    ) -> Result<bool> {
        let Some(kind) = row.write_kind() else {
            self.fail(row, "unknown write kind", report).await?;
            return Ok(true);
        };
        let mut maybe_sent = row.maybe_sent;
        let mut failures = 0;
        loop {
            let outcome = self.attempt(row, kind, issue, maybe_sent).await?;
            maybe_sent = true;
            let error = match outcome {
                Outcome::Sent {
                    comment: posted,
                    delivery,
                } => {
                    let mut conn = self
                        .pool
                        .acquire()
                        .await
                        .map_err(relay_store::Error::from)?;
                    let (note, discussion) = posted.as_ref().map_or((None, None), |p| {
                        (Some(p.note_id.as_str()), p.discussion_id.as_deref())
                    });
                    relay_store::outbox::mark_sent(&mut conn, row.id, note, discussion).await?;
                    // A spec is posted once its last part is, in whichever drain that happens.
                    crate::execute::record_spec_part_sent(&mut conn, &row.idempotency_key).await?;
                    count_write(kind, "sent");
                    report.sent.push(SentWrite {
                        idempotency_key: row.idempotency_key.clone(),
                        note_id: note.map(str::to_owned),
                        recovered: delivery == Delivery::FoundByMarker,
                    });
                    return Ok(true);
                }
                Outcome::Failed(error) => error,
            };
            failures += 1;
            match self.retry.after_failure(failures, &error) {
                Wait::Inline(wait) => {
                    tracing::debug!(outbox.key = %row.idempotency_key, error.message = %error, "retrying tracker write");
                    tokio::time::sleep(wait).await;
                }
                Wait::Reschedule(wait) => {
                    let mut conn = self
                        .pool
                        .acquire()
                        .await
                        .map_err(relay_store::Error::from)?;
                    relay_store::outbox::mark_retry(&mut conn, row.id, &error.to_string(), wait)
                        .await?;
                    report.failures.push(Failure {
                        location: kind.action_name().to_owned(),
                        problem: error.to_string(),
                        retry: Retry::Retryable,
                    });
                    report.reschedule_after = Some(wait);
                    count_write(kind, "rescheduled");
                    return Ok(false);
                }
                Wait::GiveUp => {
                    self.fail(row, &error.to_string(), report).await?;
                    return Ok(true);
                }
            }
        }
    }

    /// One attempt: the marker lookup when an earlier attempt may have landed, then the write.
    async fn attempt(
        &self,
        row: &OutboxRow,
        kind: WriteKind,
        issue: &IssueRef,
        maybe_sent: bool,
    ) -> Result<Outcome> {
        let is_comment = matches!(kind, WriteKind::Comment | WriteKind::Reply);
        if is_comment && maybe_sent {
            let marker = keys::marker(&row.idempotency_key);
            match self.tracker.find_marked_comment(issue, &marker).await {
                Ok(Some(found)) => {
                    tracing::info!(outbox.key = %row.idempotency_key, "write found already posted; not posting again");
                    return Ok(Outcome::Sent {
                        comment: Some(found),
                        delivery: Delivery::FoundByMarker,
                    });
                }
                Ok(None) => {}
                Err(error) => return Ok(Outcome::Failed(error)),
            }
        }
        {
            // Committed before the call: from here on the write may be on the tracker.
            let mut conn = self
                .pool
                .acquire()
                .await
                .map_err(relay_store::Error::from)?;
            relay_store::outbox::start_attempt(&mut conn, row.id).await?;
        }
        let target_note = row.target_note_id.as_ref().map(|note_id| NoteRef {
            note_id: note_id.clone(),
            discussion_id: row.target_discussion_id.clone(),
        });
        let result = match (kind, target_note) {
            (WriteKind::Comment, _) => self
                .tracker
                .post_comment(issue, &row.body, &CommentTarget::NewThread)
                .await
                .map(Some),
            (WriteKind::Reply, Some(note)) => self
                .tracker
                .post_comment(issue, &row.body, &CommentTarget::Reply(note))
                .await
                .map(Some),
            (WriteKind::Edit, Some(note)) => self
                .tracker
                .edit_comment(issue, &note, &row.body)
                .await
                .map(|()| None),
            (WriteKind::Reaction, note) => {
                let reaction = match row.body.as_str() {
                    REACTION_THUMBS_UP => Reaction::ThumbsUp,
                    _ => Reaction::Eyes,
                };
                let target = note.map_or(ReactionTarget::Issue, ReactionTarget::Note);
                self.tracker
                    .add_reaction(issue, &target, reaction)
                    .await
                    .map(|()| None)
            }
            (WriteKind::Reply | WriteKind::Edit, None) => Err(TrackerError::Validation(
                "the write has no target note".into(),
            )),
        };
        Ok(match result {
            Ok(comment) => Outcome::Sent {
                comment,
                delivery: Delivery::Posted,
            },
            Err(error) => Outcome::Failed(error),
        })
    }

    async fn fail(&self, row: &OutboxRow, error: &str, report: &mut DrainReport) -> Result<()> {
        let mut conn = self
            .pool
            .acquire()
            .await
            .map_err(relay_store::Error::from)?;
        relay_store::outbox::mark_failed(&mut conn, row.id, error).await?;
        let kind = row.write_kind().map_or("write", WriteKind::action_name);
        metrics::counter!(TRACKER_WRITES_TOTAL, "kind" => kind, "outcome" => "failed").increment(1);
        tracing::warn!(
            outbox.key = %row.idempotency_key,
            issue.id = row.issue_id.get(),
            error.message = %error,
            "tracker refused a write for good; the planner is told in the next cycle"
        );
        report.failures.push(Failure {
            location: row
                .write_kind()
                .map_or("write", WriteKind::action_name)
                .to_owned(),
            problem: error.to_owned(),
            retry: Retry::Permanent,
        });
        Ok(())
    }
}

/// Counts one drain outcome of a write in `/metrics`.
fn count_write(kind: WriteKind, outcome: &'static str) {
    metrics::counter!(TRACKER_WRITES_TOTAL, "kind" => kind.action_name(), "outcome" => outcome)
        .increment(1);
}
