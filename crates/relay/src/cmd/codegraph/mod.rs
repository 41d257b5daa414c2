//! `relay codegraph <operation> --repo PATH`: the agents' code-graph tool from the command line.

use std::path::{Path, PathBuf};

mod checkout;
#[cfg(test)]
mod tests;

use checkout::{CliRequest, OutputFormat, run_cli};
use clap::Args;
use relay_codegraph::store::StoreBackend;

#[derive(Debug, Args)]
pub struct CodegraphArgs {
    /// search | callers | callees | implementations | usages | resolve
    operation: String,
    /// The checkout (indexed on first use; a clean git checkout's index is cached by commit).
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    /// `text` (what an agent receives) or `json`.
    #[arg(long, default_value = "text")]
    format: OutputFormat,
    /// Symbol name for search/resolve (case-insensitive, `*` wildcard).
    #[arg(long)]
    name: Option<String>,
    /// Qualified name for callers/callees/implementations/usages.
    #[arg(long)]
    qname: Option<String>,
    /// Filter by kind: function, method, struct, interface, class, type, const, var, field, module.
    #[arg(long)]
    kind: Option<String>,
    /// Filter by file (repository-relative path or suffix).
    #[arg(long)]
    file: Option<String>,
    /// Traversal depth for callers/callees (1-3; out-of-range values are clamped).
    #[arg(long, allow_negative_numbers = true)]
    depth: Option<i64>,
    /// Graph store: `memory` (default for the command line, with an on-disk cache) or
    /// `configured` (the `[codegraph]` backend, e.g. the service's Postgres).
    #[arg(long, default_value = "memory")]
    store: String,
}

pub async fn run(config: Option<&Path>, args: CodegraphArgs) -> anyhow::Result<()> {
    let mut settings = crate::settings::load(config)?.settings;
    let pool = match args.store.as_str() {
        "memory" => {
            settings.codegraph.backend = StoreBackend::Memory;
            None
        }
        "configured"
            if matches!(
                settings.codegraph.backend,
                StoreBackend::Postgres | StoreBackend::Auto
            ) =>
        {
            Some(super::connect(&settings.database).await?)
        }
        "configured" => None,
        other => anyhow::bail!("unknown --store {other:?} (expected memory or configured)"),
    };
    let request = CliRequest {
        repo: args.repo,
        format: args.format,
        args: relay_codegraph::ops::CodegraphArgs {
            operation: args.operation,
            name: args.name,
            kind: args.kind,
            file: args.file,
            qname: args.qname,
            depth: args.depth,
            repo: None,
        },
        cache_dir: None,
    };
    let output = run_cli(&request, &settings.codegraph, pool).await?;
    println!("{}", output.text);
    if output.is_error {
        std::process::exit(1);
    }
    Ok(())
}
