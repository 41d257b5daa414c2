//! One module per subcommand.

pub mod analyze;
pub mod bench_intake;
pub mod codegraph;
pub mod config;
pub mod eval;
pub mod explore;
pub mod index;
pub mod learnings;
pub mod llm;
pub mod migrate;
pub mod operate;
pub mod plan;
pub mod prune;
pub mod reconcile;
pub mod repo_config_check;
pub mod serve;
pub mod tool;
pub mod tool_graph;
pub mod trace;
pub mod trace_render;
pub mod tracker;

use std::path::Path;

use anyhow::Context as _;

use crate::settings::{self, Loaded};

/// Loads the configuration and installs logging.
pub fn load(config: Option<&Path>) -> anyhow::Result<Loaded> {
    let loaded = settings::load(config)?;
    relay_telemetry::init(&loaded.settings.log).map_err(anyhow::Error::msg)?;
    let removed = loaded.settings.server.removed_keys();
    if !removed.is_empty() {
        // Group commit was removed (it measured slower than direct intake); its keys still parse
        // so that an older configuration starts.
        tracing::warn!(
            config.keys = %removed.join(", "),
            "[server] keys ignored: intake group commit was removed; delete them from the configuration"
        );
    }
    Ok(loaded)
}

/// Opens the pool; creates the database and applies migrations when configured to.
pub async fn connect(
    database: &relay_store::DatabaseSettings,
) -> anyhow::Result<relay_store::PgPool> {
    let pool = database.pool().map_err(anyhow::Error::msg)?;
    if database.migrate_on_start {
        database
            .ensure_database()
            .await
            .context("failed to reach the database")?;
        relay_store::migrate(&pool)
            .await
            .context("failed to apply migrations")?;
        tracing::info!("migrations applied");
    }
    Ok(pool)
}
