//! The Executor, part two: draining the outbox to the tracker.
//!
//! Writes go out in the order they were recorded. Before each attempt, `start_attempt` commits
//! "this may reach the tracker"; a write in that state is first looked up by its marker
//! (`find_marked_comment`), so a crash between the tracker's acceptance and `mark_sent` never
//! posts twice. Writes that repeat safely ([`TrackerWrite::repeats_safely`]: edits, reactions)
//! are simply repeated. Each row is read back as its [`TrackerWrite`] ([`crate::outbox`]) and
//! sent with [`relay_tracker::IssueTracker::write`].

use relay_core::IssueId;
use std::time::Duration;

use relay_store::outbox::{OutboxRow, WriteKind};
use relay_tracker::{IssueRef, PostedComment, TrackerError, TrackerWrite, WriteAck};

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
        let write = match crate::outbox::write_of(row, kind) {
            Ok(write) => write,
            Err(refused) => {
                // Refused as the tracker would refuse it: one attempt, failed for good.
                let mut conn = self
                    .pool
                    .acquire()
                    .await
                    .map_err(relay_store::Error::from)?;
                relay_store::outbox::start_attempt(&mut conn, row.id).await?;
                drop(conn);
                self.fail(row, &refused.to_string(), report).await?;
                return Ok(true);
            }
        };
        let mut maybe_sent = row.maybe_sent;
        let mut failures = 0;
        loop {
            let outcome = self.attempt(row, &write, issue, maybe_sent).await?;
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
                    count_write(kind, SENT);
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
                    count_write(kind, RESCHEDULED);
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
        write: &TrackerWrite,
        issue: &IssueRef,
        maybe_sent: bool,
    ) -> Result<Outcome> {
        if !write.repeats_safely() && maybe_sent {
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
        Ok(match self.tracker.write(issue, write).await {
            Ok(ack) => Outcome::Sent {
                comment: match ack {
                    WriteAck::Posted(comment) => Some(comment),
                    WriteAck::Done => None,
                },
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
        metrics::counter!(TRACKER_WRITES_TOTAL, "kind" => kind, "outcome" => FAILED).increment(1);
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

/// How a write's drain attempt ended, as `relay_tracker_writes_total{outcome}` names it.
const WRITE_OUTCOMES: [&str; 3] = [SENT, RESCHEDULED, FAILED];
const SENT: &str = "sent";
/// Left pending for a later drain (a long `Retry-After`, the inline retries spent).
const RESCHEDULED: &str = "rescheduled";
/// Refused for good (a 4xx other than a rate limit).
const FAILED: &str = "failed";

/// Creates `relay_tracker_writes_total` at 0 for every kind of write and outcome, so the first
/// write refused for good after a start is an increase the alert sees (see
/// [`relay_telemetry::metrics::zero_counter`]).
pub fn zero_write_counters() {
    for kind in WriteKind::ALL {
        for outcome in WRITE_OUTCOMES {
            relay_telemetry::metrics::zero_counter(
                TRACKER_WRITES_TOTAL,
                &[("kind", kind.action_name()), ("outcome", outcome)],
            );
        }
    }
}

/// Counts one drain outcome of a write in `/metrics`.
fn count_write(kind: WriteKind, outcome: &'static str) {
    metrics::counter!(TRACKER_WRITES_TOTAL, "kind" => kind.action_name(), "outcome" => outcome)
        .increment(1);
}
