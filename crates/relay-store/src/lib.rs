#![doc = include_str!("../README.md")]
//!
//! Layout:
//! - [`settings`]: `DatabaseSettings` and pool construction.
//! - [`deliveries`]: the webhook delivery log (dedupe by delivery identity).
//! - [`issues`]: the issue mirror, its thread cache and pending issue events.
//! - [`issue_state`]: an issue's Relay state (gaps, findings, spec) loaded in one place.
//! - [`event_intake`]: the one decide-and-record path of an issue event (webhook or reconciler).
//! - [`intake`]: the gateway's writes in as few round trips as possible (delivery, issue, thread,
//!   job in one statement).
//! - [`reconcile`]: the reconciler's per-project watermarks and its one-at-a-time lock.
//! - [`queue`]: the job queue: enqueue, claim with leases, heartbeat, complete, retry, dead-letter.
//! - [`llm_usage`]: the table owned by the LLM layer. (The code graph's tables are read and written by
//!   `relay_codegraph::store::postgres::sql`; their migration is here with the others.)
//! - [`gaps`], [`findings`], [`learnings`], [`specs`], [`outbox`]: write-back state (migration 0006).
//! - [`browse`]: read-only listings for the read API; [`status`]: those of the status page.
//! - [`operator`]: what `relay jobs` and `relay writes` do (retry, discard), recorded and traced.
//! - [`tool_graph`]: tool-sequence learning (transitions per repository, migration 0008).
//! - [`explore_runs`]: one row per observed explore (query class, tool sequence, timing, outcome;
//!   migration 0060), from which hints are chosen by the kind of question.
//! - [`trace`]: the run trace (runs and their events, migration 0007) and its notifications.
//! - [`retention`]: `[retention]`'s pruning passes (migration 0016).
//! - [`traversal`]: thorough mode's traversal state per issue (migration 0010).
//! - [`reverify`], [`summaries`]: findings re-checked on every push and the living summary comment
//!   per issue (migrations 0021, 0022).
//! - [`ui_sessions`]: status-page sign-ins, shared by every gateway (migration 0030).
//! - [`repo_configs`]: the repository's `.relay.toml` in effect, per repository (migration 0040).
//! - [`related`]: each repository's related repositories, admitted or refused with the reason
//!   (migration 0099).
//! - [`issue_controls`]: `stop`/`resume` and budget raises per issue (migration 0042).
//! - [`mod@bench`]: the baseline of `relay bench-intake` (a single-row insert and commit).
//! - `error`: [`Error`], every failure of a query, and [`Result`].

pub mod bench;
pub mod browse;
pub mod deliveries;
mod error;
pub mod event_intake;
pub mod explore_runs;
pub mod findings;
pub mod gaps;
pub mod intake;
pub mod issue_controls;
pub mod issue_state;
pub mod issues;
pub mod learnings;
pub mod llm_usage;
pub mod operator;
pub mod outbox;
pub mod queue;
pub mod reconcile;
pub mod related;
pub mod repo_configs;
pub mod retention;
pub mod reverify;
pub mod settings;
pub mod specs;
pub mod status;
pub mod summaries;
pub mod tool_graph;
pub mod trace;
pub mod traversal;
pub mod ui_sessions;

pub use error::{Error, Result};
pub use settings::DatabaseSettings;
pub use sqlx::{PgConnection, PgPool, Postgres, Transaction};

/// All migrations under the workspace's `migrations/` directory, embedded at compile time.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// Applies every pending migration.
pub async fn migrate(pool: &PgPool) -> Result<()> {
    MIGRATOR.run(pool).await.map_err(Error::Migrate)
}

/// Whether the database answers and every embedded migration has been applied (for `/readyz`).
pub async fn readiness(pool: &PgPool) -> Result<bool> {
    let applied: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
            .fetch_all(pool)
            .await
            .map_err(|e| match e {
                // The table does not exist yet: reachable, but nothing applied.
                sqlx::Error::Database(ref db) if db.code().as_deref() == Some("42P01") => {
                    Error::NotMigrated
                }
                other => Error::from(other),
            })
            .or_else(|e| match e {
                Error::NotMigrated => Ok(Vec::new()),
                other => Err(other),
            })?;
    Ok(MIGRATOR
        .iter()
        .filter(|m| m.migration_type.is_up_migration())
        .all(|m| applied.contains(&m.version)))
}
