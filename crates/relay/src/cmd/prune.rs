//! `relay prune [--dry-run]`: one retention pass now, with what it removed (or would) per table.

use std::path::Path;

use anyhow::Context as _;
use relay_store::retention::{PruneMode, PruneReport};

#[derive(Debug, clap::Args)]
pub struct PruneArgs {
    /// Count what would be deleted; change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

pub async fn run(config: Option<&Path>, args: &PruneArgs) -> anyhow::Result<()> {
    let loaded = super::load(config)?;
    let settings = loaded.settings;
    let pool = super::connect(&settings.database).await?;
    let mode = if args.dry_run {
        PruneMode::DryRun
    } else {
        PruneMode::Delete
    };
    let policy = settings.retention.policy();
    let report = relay_store::retention::prune(&pool, &policy, mode)
        .await
        .context("retention pass failed")?;
    let Some(report) = report else {
        pool.close().await;
        anyhow::bail!("another process is pruning this database; try again later");
    };
    print!("{}", render(&report, mode));
    let graph = prune_graph_store(&settings, &pool, policy.snapshots_per_repository, mode).await;
    pool.close().await;
    if let Some(line) = graph? {
        println!("{line}");
    }
    Ok(())
}

/// The same snapshot rule in ArangoDB when it holds the code graph (Postgres snapshots are in the
/// database pass above); `None` when there is nothing to do there.
async fn prune_graph_store(
    settings: &crate::settings::Settings,
    pool: &relay_store::PgPool,
    keep: Option<u32>,
    mode: PruneMode,
) -> anyhow::Result<Option<String>> {
    use relay_codegraph::store::StoreBackend;
    let backend = settings
        .codegraph
        .backend
        .resolve(&settings.codegraph.arangodb)
        .await;
    if backend != StoreBackend::Arangodb {
        return Ok(None);
    }
    let label = "codegraph snapshots in arangodb (with symbols and edges)";
    let Some(keep) = keep else {
        return Ok(Some(format!("kept (retention 0)   {label}")));
    };
    let store =
        relay_codegraph::store::arangodb::ArangoStore::connect(&settings.codegraph.arangodb)
            .await
            .context("failed to connect to the code-graph store ([codegraph.arangodb])")?;
    let report = relay_worker::graph_retention::prune_graph_store(pool, &store, keep, mode)
        .await
        .context("graph store retention pass failed")?;
    let verb = match mode {
        PruneMode::DryRun => "would prune",
        PruneMode::Delete => "pruned",
    };
    Ok(Some(format!(
        "{verb} {:>9} rows {label} ({} past the newest kept: a live finding or a running job uses them)",
        report.pruned, report.kept_in_use
    )))
}

/// One line per table; kinds whose retention is 0 (keep forever) are named as kept.
pub fn render(report: &PruneReport, mode: PruneMode) -> String {
    let verb = match mode {
        PruneMode::DryRun => "would prune",
        PruneMode::Delete => "pruned",
    };
    let mut out = String::new();
    for kind in relay_store::retention::Target::ALL {
        match report.targets.iter().find(|t| t.target == kind) {
            Some(count) if count.dependent_rows > 0 => out.push_str(&format!(
                "{verb} {:>9} rows (+{} dependent) {}\n",
                count.rows,
                count.dependent_rows,
                kind.label()
            )),
            Some(count) => {
                out.push_str(&format!("{verb} {:>9} rows {}\n", count.rows, kind.label()))
            }
            None => out.push_str(&format!("kept (retention 0)   {}\n", kind.label())),
        }
    }
    out
}
