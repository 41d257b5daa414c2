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
    let report = relay_store::retention::prune(&pool, &settings.retention.policy(), mode)
        .await
        .context("retention pass failed")?;
    pool.close().await;
    match report {
        Some(report) => print!("{}", render(&report, mode)),
        None => anyhow::bail!("another process is pruning this database; try again later"),
    }
    Ok(())
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
