//! Retention: what `[retention]` lets go, in small batches (migration 0016).
//!
//! One pruning pass runs per database at a time: it holds a session advisory lock on its own
//! connection, and a pass that cannot take it does nothing. Every batch is its own short statement
//! (autocommit) over rows intake never touches again (old, handled, finished), ordered by an index,
//! so intake is never blocked behind a pass and a pass can stop anywhere.
//!
//! What is never pruned here: issues and their notes, `llm_usage` (the issue budget sums it), the
//! newest snapshots per repository, anything a live finding or a running job refers to, and every
//! outbox row live state points to (see `OUTBOX_CANDIDATES`): the budget notes (the budget
//! epochs), the living summary's post (every later edit targets its note), the first-contact
//! reaction (once per issue), a refused write the planner has not been told of yet, and the parts
//! of a spec not recorded as posted yet.
//!
//! Trace runs left unfinished (their worker died) go once they started longer ago than the trace
//! window and no running attempt of their job is theirs.

use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, PgConnection};

use crate::{PgPool, Result};

/// The advisory lock key of a pruning pass (any constant unique to this use).
pub const PRUNE_LOCK_KEY: i64 = 0x7265_6c61_7970_7275; // "relaypru"

/// Trace runs deleted per statement: a run carries up to thousands of events (deleted with it).
const TRACE_RUNS_PER_BATCH: i64 = 20;

/// Snapshots deleted per statement: one snapshot carries a repository's symbols and edges.
const SNAPSHOTS_PER_BATCH: i64 = 1;

/// What to keep; `None` keeps everything of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// Payloads of handled deliveries older than this many days are dropped (the row stays).
    pub delivery_payload_days: Option<u32>,
    /// Trace runs (and their events) finished more than this many days ago.
    pub trace_days: Option<u32>,
    /// Jobs finished (succeeded, failed, dead) more than this many days ago, with their runs.
    pub finished_job_days: Option<u32>,
    /// Outbox rows sent or failed more than this many days ago.
    pub outbox_days: Option<u32>,
    /// Code-graph snapshots kept per repository (newest first).
    pub snapshots_per_repository: Option<u32>,
    /// Rows per delete or update statement.
    pub batch_size: u32,
}

/// Whether a pass changes anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PruneMode {
    /// Count what would go.
    DryRun,
    /// Delete it, batch by batch.
    Delete,
}

/// One kind of row a pass removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    DeliveryPayloads,
    TraceRuns,
    FinishedJobs,
    Outbox,
    Snapshots,
}

impl Target {
    pub const ALL: [Target; 5] = [
        Target::DeliveryPayloads,
        Target::TraceRuns,
        Target::FinishedJobs,
        Target::Outbox,
        Target::Snapshots,
    ];

    /// The table (and what happens to its rows) as `relay prune` prints it.
    pub fn label(self) -> &'static str {
        match self {
            Target::DeliveryPayloads => "deliveries (payload emptied)",
            Target::TraceRuns => "trace_runs (with their trace_events)",
            Target::FinishedJobs => "jobs (with their job_runs)",
            Target::Outbox => "outbox",
            Target::Snapshots => "codegraph_snapshots (with symbols and edges)",
        }
    }

    fn setting(self, policy: &RetentionPolicy) -> Option<u32> {
        match self {
            Target::DeliveryPayloads => policy.delivery_payload_days,
            Target::TraceRuns => policy.trace_days,
            Target::FinishedJobs => policy.finished_job_days,
            Target::Outbox => policy.outbox_days,
            Target::Snapshots => policy.snapshots_per_repository,
        }
    }

    fn batch_size(self, policy: &RetentionPolicy) -> i64 {
        match self {
            Target::TraceRuns => TRACE_RUNS_PER_BATCH,
            Target::Snapshots => SNAPSHOTS_PER_BATCH,
            _ => i64::from(policy.batch_size.max(1)),
        }
    }
}

/// Rows a pass removed (or, dry, would remove) of one kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetCount {
    pub target: Target,
    pub rows: u64,
    /// Dependent rows that go with them (trace events, job runs, symbols + edges).
    pub dependent_rows: u64,
}

/// Per-kind counts of one pass, in [`Target::ALL`] order (kinds whose retention is off omitted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneReport {
    pub targets: Vec<TargetCount>,
}

impl PruneReport {
    pub fn total_rows(&self) -> u64 {
        self.targets.iter().map(|t| t.rows).sum()
    }
}

/// Runs one pass. `None`: another pass holds this database's pruning lock.
pub async fn prune(
    pool: &PgPool,
    policy: &RetentionPolicy,
    mode: PruneMode,
) -> Result<Option<PruneReport>> {
    let mut conn = pool.acquire().await?;
    // Whatever happens, this connection (and any session lock on it) is not reused.
    conn.close_on_drop();
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(PRUNE_LOCK_KEY)
        .fetch_one(&mut *conn)
        .await?;
    if !locked {
        return Ok(None);
    }
    let mut report = PruneReport::default();
    for target in Target::ALL {
        let Some(setting) = target.setting(policy) else {
            continue;
        };
        let count = match mode {
            PruneMode::DryRun => count(&mut conn, target, setting).await?,
            PruneMode::Delete => {
                delete(&mut conn, target, setting, target.batch_size(policy)).await?
            }
        };
        report.targets.push(count);
    }
    sqlx::query("SELECT pg_advisory_unlock($1)")
        .bind(PRUNE_LOCK_KEY)
        .execute(&mut *conn)
        .await?;
    Ok(Some(report))
}

/// Handled deliveries: ignored ones, ones without an issue, and accepted ones at or below their
/// issue's watermark (a job saw them).
const DELIVERY_CANDIDATES: &str = "
    FROM deliveries c
    WHERE c.payload_pruned_at IS NULL
      AND c.received_at < now() - make_interval(days => $1)
      AND c.received_at >= $2
      AND (c.outcome = 'ignored' OR c.issue_id IS NULL
           OR c.id <= (SELECT i.handled_delivery_id FROM issues i WHERE i.id = c.issue_id))";

const TRACE_CANDIDATES: &str =
    "FROM trace_runs c WHERE c.finished_at < now() - make_interval(days => $1)";

/// Runs a dead worker left unfinished (migration 0085's index): started before the window, and no
/// running job is on that attempt (a job re-leased after a crash runs a later attempt).
const UNFINISHED_TRACE_CANDIDATES: &str = "FROM trace_runs c
    WHERE c.finished_at IS NULL AND c.started_at < now() - make_interval(days => $1)
      AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = c.job_id AND j.status = 'running'
                                             AND j.attempts = c.attempt)";

const JOB_CANDIDATES: &str =
    "FROM jobs c WHERE c.status IN ('succeeded', 'failed', 'dead', 'discarded')
      AND c.finished_at < now() - make_interval(days => $1)";

/// Sent or failed writes past the window, except what live state points to (keys:
/// `relay_actions::keys`):
/// - budget notes (`budget:…`): the budget epochs (see the worker's `budget` module);
/// - the living summary's post (`summary-i<issue>`): every later edit targets its note, and a
///   refused post is queued again from it;
/// - the first-contact reaction (`ack:<issue>`): once per issue, whichever job queues it;
/// - a refused write the planner has not been shown yet (`failure_shown_at` unset);
/// - the parts of a spec still `draft` (`i<issue>-j…-spec<version>-p<part>`): the post is
///   recorded from them once every part is sent.
const OUTBOX_CANDIDATES: &str = "FROM outbox c WHERE c.status IN ('sent', 'failed')
      AND c.updated_at < now() - make_interval(days => $1)
      AND c.idempotency_key NOT LIKE 'budget:%'
      AND c.idempotency_key !~ '^summary-i[0-9]+$'
      AND c.idempotency_key NOT LIKE 'ack:%'
      AND NOT (c.status = 'failed' AND c.failure_shown_at IS NULL)
      AND NOT EXISTS (SELECT 1 FROM specs s
                      WHERE s.issue_id = c.issue_id AND s.status = 'draft'
                        AND c.idempotency_key LIKE 'i' || s.issue_id || '-j%-spec' || s.version || '-p%')";

/// Snapshots past the newest `$1` of their repository, that no live finding quotes and that no
/// running job may be reading: one naming the commit in its payload, or one that started when the
/// snapshot was its repository's newest.
const SNAPSHOT_CANDIDATES: &str = "
    FROM (SELECT s.id, s.repository, s.commit_sha, s.updated_at,
                 row_number() OVER (PARTITION BY s.repository ORDER BY s.updated_at DESC, s.id DESC) AS rank
          FROM codegraph_snapshots s) c
    WHERE c.rank > $1
      AND NOT EXISTS (SELECT 1 FROM finding_sources fs JOIN findings f ON f.id = fs.finding_id
                      WHERE NOT f.removed AND NOT fs.through_watermark
                        AND fs.commit_sha = c.commit_sha)
      AND NOT EXISTS (SELECT 1 FROM reverify_watermarks w WHERE w.verified_through = c.commit_sha)
      AND NOT EXISTS (
          SELECT 1 FROM jobs j
          WHERE j.status = 'running'
            AND (position(c.commit_sha IN j.payload::text) > 0
                 OR (c.updated_at <= j.started_at
                     AND NOT EXISTS (SELECT 1 FROM codegraph_snapshots n
                                     WHERE n.repository = c.repository
                                       AND n.updated_at > c.updated_at
                                       AND n.updated_at <= j.started_at))))";

/// The statements are assembled from the constants above only (no input).
fn sql(statement: String) -> AssertSqlSafe<String> {
    AssertSqlSafe(statement)
}

async fn count(conn: &mut PgConnection, target: Target, setting: u32) -> Result<TargetCount> {
    let setting = i32::try_from(setting).unwrap_or(i32::MAX);
    let (rows, dependent_rows): (i64, i64) = match target {
        Target::DeliveryPayloads => (
            sqlx::query_scalar(sql(format!("SELECT count(*) {DELIVERY_CANDIDATES}")))
                .bind(setting)
                .bind(DateTime::<Utc>::UNIX_EPOCH)
                .fetch_one(&mut *conn)
                .await?,
            0,
        ),
        Target::TraceRuns => sqlx::query_as(sql(format!(
            "SELECT count(*), COALESCE(sum((SELECT count(*) FROM trace_events e WHERE e.run_id = c.id)), 0)::int8
             FROM (SELECT c.id {TRACE_CANDIDATES} UNION ALL SELECT c.id {UNFINISHED_TRACE_CANDIDATES}) c"
        )))
        .bind(setting)
        .fetch_one(&mut *conn)
        .await?,
        Target::FinishedJobs => sqlx::query_as(sql(format!(
            "SELECT count(*), COALESCE(sum((SELECT count(*) FROM job_runs r WHERE r.job_id = c.id)), 0)::int8
             {JOB_CANDIDATES}"
        )))
        .bind(setting)
        .fetch_one(&mut *conn)
        .await?,
        Target::Outbox => (
            sqlx::query_scalar(sql(format!("SELECT count(*) {OUTBOX_CANDIDATES}")))
                .bind(setting)
                .fetch_one(&mut *conn)
                .await?,
            0,
        ),
        Target::Snapshots => sqlx::query_as(sql(format!(
            "SELECT count(*), COALESCE(sum(
                 (SELECT count(*) FROM codegraph_symbols y WHERE y.snapshot_id = c.id)
               + (SELECT count(*) FROM codegraph_edges g WHERE g.snapshot_id = c.id)), 0)::int8
             {SNAPSHOT_CANDIDATES}"
        )))
        .bind(setting)
        .fetch_one(&mut *conn)
        .await?,
    };
    Ok(TargetCount {
        target,
        rows: u64::try_from(rows).unwrap_or(0),
        dependent_rows: u64::try_from(dependent_rows).unwrap_or(0),
    })
}

async fn delete(
    conn: &mut PgConnection,
    target: Target,
    setting: u32,
    batch: i64,
) -> Result<TargetCount> {
    let setting = i32::try_from(setting).unwrap_or(i32::MAX);
    let mut total = TargetCount {
        target,
        rows: 0,
        dependent_rows: 0,
    };
    // Deliveries walk forward in time, so old deliveries that are not handled yet (and stay in
    // the candidate index) are passed once per pass, not once per batch.
    let mut after = DateTime::<Utc>::UNIX_EPOCH;
    loop {
        let done: u64 = match target {
            Target::DeliveryPayloads => {
                let stamps: Vec<DateTime<Utc>> = sqlx::query_scalar(sql(format!(
                    "UPDATE deliveries d SET payload = '{{}}'::jsonb, payload_pruned_at = now()
                     FROM (SELECT c.tracker, c.delivery_key {DELIVERY_CANDIDATES}
                           ORDER BY c.received_at LIMIT $3 FOR UPDATE SKIP LOCKED) batch
                     WHERE d.tracker = batch.tracker AND d.delivery_key = batch.delivery_key
                     RETURNING d.received_at"
                )))
                .bind(setting)
                .bind(after)
                .bind(batch)
                .fetch_all(&mut *conn)
                .await?;
                if let Some(last) = stamps.iter().max() {
                    after = *last;
                }
                stamps.len() as u64
            }
            Target::TraceRuns => {
                delete_batch(
                    conn,
                    &mut total,
                    sql(format!(
                        "WITH batch AS ((SELECT c.id {TRACE_CANDIDATES} ORDER BY c.finished_at LIMIT $2)
                                        UNION ALL
                                        (SELECT c.id {UNFINISHED_TRACE_CANDIDATES}
                                         ORDER BY c.started_at LIMIT $2)),
                              dependent AS (SELECT count(*) AS n FROM trace_events e
                                            WHERE e.run_id IN (SELECT id FROM batch)),
                              gone AS (DELETE FROM trace_runs r USING batch WHERE r.id = batch.id
                                       RETURNING r.id)
                         SELECT (SELECT count(*) FROM gone), (SELECT n FROM dependent)"
                    )),
                    setting,
                    batch,
                )
                .await?
            }
            Target::FinishedJobs => {
                delete_batch(
                    conn,
                    &mut total,
                    sql(format!(
                        "WITH batch AS (SELECT c.id {JOB_CANDIDATES} ORDER BY c.finished_at LIMIT $2),
                              dependent AS (SELECT count(*) AS n FROM job_runs r
                                            WHERE r.job_id IN (SELECT id FROM batch)),
                              gone AS (DELETE FROM jobs j USING batch WHERE j.id = batch.id
                                       RETURNING j.id)
                         SELECT (SELECT count(*) FROM gone), (SELECT n FROM dependent)"
                    )),
                    setting,
                    batch,
                )
                .await?
            }
            Target::Outbox => {
                delete_batch(
                    conn,
                    &mut total,
                    sql(format!(
                        "WITH batch AS (SELECT c.id {OUTBOX_CANDIDATES} ORDER BY c.updated_at LIMIT $2),
                              gone AS (DELETE FROM outbox o USING batch WHERE o.id = batch.id
                                       RETURNING o.id)
                         SELECT (SELECT count(*) FROM gone), 0::int8"
                    )),
                    setting,
                    batch,
                )
                .await?
            }
            Target::Snapshots => {
                delete_batch(
                    conn,
                    &mut total,
                    sql(format!(
                        "WITH batch AS (SELECT c.id {SNAPSHOT_CANDIDATES} ORDER BY c.updated_at LIMIT $2),
                              dependent AS (
                                  SELECT (SELECT count(*) FROM codegraph_symbols y
                                          WHERE y.snapshot_id IN (SELECT id FROM batch))
                                       + (SELECT count(*) FROM codegraph_edges g
                                          WHERE g.snapshot_id IN (SELECT id FROM batch)) AS n),
                              gone AS (DELETE FROM codegraph_snapshots s USING batch
                                       WHERE s.id = batch.id RETURNING s.id)
                         SELECT (SELECT count(*) FROM gone), (SELECT n FROM dependent)"
                    )),
                    setting,
                    batch,
                )
                .await?
            }
        };
        total.rows += done;
        if done < u64::try_from(batch).unwrap_or(u64::MAX) {
            return Ok(total);
        }
        // Let other work at the database between batches.
        tokio::task::yield_now().await;
    }
}

/// Runs one delete statement that answers (rows deleted, dependent rows deleted with them), adds
/// the dependents to `total` and returns the rows.
async fn delete_batch(
    conn: &mut PgConnection,
    total: &mut TargetCount,
    statement: AssertSqlSafe<String>,
    setting: i32,
    batch: i64,
) -> Result<u64> {
    let (rows, dependent): (i64, i64) = sqlx::query_as(statement)
        .bind(setting)
        .bind(batch)
        .fetch_one(&mut *conn)
        .await?;
    total.dependent_rows += u64::try_from(dependent).unwrap_or(0);
    Ok(u64::try_from(rows).unwrap_or(0))
}

/// What keeps a code-graph snapshot held outside Postgres (ArangoDB) from being pruned: the same
/// rule as [`Target::Snapshots`], read once per pass so the graph store's own pass can apply it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SnapshotGuards {
    /// Commits a live finding quotes.
    pub live_commits: std::collections::HashSet<String>,
    /// Jobs running now.
    pub running_jobs: Vec<RunningJob>,
}

/// A running job, as the snapshot rule sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunningJob {
    pub started_at: DateTime<Utc>,
    /// The payload as text: a job naming a commit in it may read that commit's snapshot.
    pub payload: String,
}

/// Reads the [`SnapshotGuards`] of this database.
pub async fn snapshot_guards(pool: &PgPool) -> Result<SnapshotGuards> {
    let live_commits: Vec<String> = sqlx::query_scalar(
        "SELECT fs.commit_sha FROM finding_sources fs JOIN findings f ON f.id = fs.finding_id
         WHERE NOT f.removed AND NOT fs.through_watermark AND fs.commit_sha IS NOT NULL
         UNION
         SELECT verified_through FROM reverify_watermarks",
    )
    .fetch_all(pool)
    .await?;
    let running: Vec<(Option<DateTime<Utc>>, String)> = sqlx::query_as(
        "SELECT started_at, payload::text FROM jobs WHERE status = 'running' ORDER BY id",
    )
    .fetch_all(pool)
    .await?;
    Ok(SnapshotGuards {
        live_commits: live_commits.into_iter().collect(),
        running_jobs: running
            .into_iter()
            .map(|(started_at, payload)| RunningJob {
                // A running job without a start time started just now, as far as the rule goes.
                started_at: started_at.unwrap_or_else(Utc::now),
                payload,
            })
            .collect(),
    })
}
