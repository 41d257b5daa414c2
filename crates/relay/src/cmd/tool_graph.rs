//! `relay tool-graph --repo NAME [--format text|json] [--import FILE]`: what Relay learned about
//! exploring one repository (transitions between tools, the hinted sequences), and importing
//! sequences from other sources at a lower weight.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use relay_store::tool_graph::{self, Call, Edge, RunTotals, Sequence, Source};
use relay_worker::tool_graph::{HINT_SEQUENCES, MIN_HINT_RUNS, hint_line};
use serde::Deserialize;

#[derive(Debug, clap::Args)]
pub struct ToolGraphArgs {
    /// The repository as the graph keys it: `<tracker>:<project path>`, e.g. `github:acme/app`.
    #[arg(long)]
    pub repo: String,
    /// `text` or `json`.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// First import sequences from this JSON file (a list of `{"tools": [...], "grounded":
    /// true}`), counted at the imported weight.
    #[arg(long)]
    pub import: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// One imported sequence.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Imported {
    tools: Vec<String>,
    #[serde(default)]
    grounded: bool,
}

pub async fn run(config: Option<&Path>, args: &ToolGraphArgs) -> anyhow::Result<()> {
    let loaded = super::load(config)?;
    let pool = loaded
        .settings
        .database
        .pool()
        .map_err(anyhow::Error::msg)?;
    if let Some(file) = &args.import {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("failed to read {}", file.display()))?;
        let sequences: Vec<Imported> = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a list of {{\"tools\": [...]}}", file.display()))?;
        let mut created = 0;
        for sequence in &sequences {
            let calls: Vec<Call> = sequence
                .tools
                .iter()
                .filter(|t| !t.trim().is_empty())
                .map(|t| Call {
                    tool: t.trim().to_owned(),
                    result_tokens: 0,
                })
                .collect();
            created += tool_graph::record_run(
                &pool,
                &args.repo,
                Source::Imported,
                &calls,
                sequence.grounded,
            )
            .await?
            .edges_created;
        }
        eprintln!(
            "imported {} sequences ({created} new transitions) at weight {}",
            sequences.len(),
            Source::Imported.weight()
        );
    }
    let edges = tool_graph::edges(&pool, &args.repo).await?;
    let totals = tool_graph::run_totals(&pool, &args.repo).await?;
    let sequences = tool_graph::sequences(&edges, HINT_SEQUENCES, MIN_HINT_RUNS);
    match args.format {
        Format::Json => println!(
            "{}",
            serde_json::json!({
                "repo": args.repo,
                "runs": totals,
                "sequences": sequences,
                "edges": edges,
            })
        ),
        Format::Text => print!("{}", render(&args.repo, &totals, &sequences, &edges)),
    }
    Ok(())
}

fn render(repo: &str, totals: &[RunTotals], sequences: &[Sequence], edges: &[Edge]) -> String {
    let mut out = String::new();
    if totals.is_empty() {
        let _ = writeln!(out, "tool graph of {repo}: nothing learned yet");
        return out;
    }
    let runs: Vec<String> = totals
        .iter()
        .map(|t| format!("{} {} runs ({} grounded)", t.runs, t.source, t.successes))
        .collect();
    let _ = writeln!(out, "tool graph of {repo}: {}", runs.join(", "));
    let _ = writeln!(
        out,
        "hint (transitions seen in at least {MIN_HINT_RUNS} runs):"
    );
    if sequences.is_empty() {
        let _ = writeln!(out, "  (none yet)");
    }
    for sequence in sequences {
        let _ = writeln!(out, "  {}", hint_line(sequence));
    }
    let _ = writeln!(out, "transitions:");
    let _ = writeln!(
        out,
        "  {:<20} {:<20} {:<9} {:>6} {:>9} {:>12}  last seen",
        "from", "to", "source", "runs", "grounded", "mean tokens"
    );
    for e in edges {
        let _ = writeln!(
            out,
            "  {:<20} {:<20} {:<9} {:>6} {:>9} {:>12.1}  {}",
            e.from_tool,
            e.to_tool,
            e.source,
            e.count,
            e.successes,
            e.mean_result_tokens,
            e.last_seen.format("%Y-%m-%d %H:%M")
        );
    }
    out
}
