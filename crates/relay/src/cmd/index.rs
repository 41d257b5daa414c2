//! `relay index PATH`: index a checkout, with a progress bar on a terminal.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;
use relay_codegraph::index::{
    INDEX_STACK_BYTES, IndexOptions, IndexStats, Phase, Progress, index_repository,
};

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// The checkout to index.
    path: PathBuf,
    /// `text` (a summary) or `json` (the whole graph: `{"symbols": [...], "edges": [...]}`).
    #[arg(long, default_value = "text")]
    format: String,
    /// Parser threads (0 = every core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Largest file parsed, in bytes (larger ones are counted as skipped `too_large`).
    #[arg(long, default_value_t = relay_codegraph::index::DEFAULT_MAX_FILE_BYTES)]
    max_file_bytes: u64,
    /// Memory budget of the parses in flight, in MiB, whatever the number of threads (0: none).
    #[arg(long, default_value_t = relay_codegraph::index::DEFAULT_PARSE_MEMORY_BYTES / (1024 * 1024))]
    parse_memory_mb: u64,
}

pub fn run(args: &IndexArgs) -> anyhow::Result<()> {
    if !matches!(args.format.as_str(), "text" | "json") {
        anyhow::bail!("unknown --format {:?} (expected text or json)", args.format);
    }
    let bar = (std::io::stderr().is_terminal() && args.format == "text").then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg:>10} [{bar:40}] {pos}/{len} files ({elapsed})",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        bar
    });
    let progress = bar.clone().map(|bar| {
        Arc::new(move |p: Progress| {
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
            bar.set_message(match p.phase {
                Phase::Parsing => "parsing",
                Phase::Resolving => "resolving",
            });
        }) as relay_codegraph::index::ProgressFn
    });
    let options = IndexOptions {
        threads: args.threads,
        max_file_bytes: args.max_file_bytes,
        parse_memory_bytes: args.parse_memory_mb.saturating_mul(1024 * 1024),
        progress,
        ..IndexOptions::default()
    };
    let path = args.path.clone();
    let output = std::thread::Builder::new()
        .name("relay-index".into())
        .stack_size(INDEX_STACK_BYTES)
        .spawn(move || index_repository(&path, &options))
        .context("failed to start the indexer thread")?
        .join()
        .map_err(|_| anyhow::anyhow!("the indexer panicked"))?
        .with_context(|| format!("failed to index {}", args.path.display()))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }

    if args.format == "json" {
        let stdout = std::io::stdout().lock();
        serde_json::to_writer(std::io::BufWriter::new(stdout), &output.graph)
            .context("failed to write the graph")?;
        println!();
        return Ok(());
    }
    let stats = &output.stats;
    let seconds = stats.duration.as_secs_f64();
    let by_language: Vec<String> = relay_codegraph::index::files_by_language(stats)
        .into_iter()
        .map(|(language, files)| format!("{files} {language}"))
        .collect();
    println!(
        "Indexed {} files ({}), {} lines in {:.2}s ({:.0} lines/s)",
        stats.files,
        by_language.join(", "),
        stats.lines,
        seconds,
        stats.lines as f64 / seconds.max(1e-9)
    );
    println!("Symbols: {}", stats.symbols);
    println!("Edges: {}", stats.edges);
    for (kind, count) in &stats.edges_by_kind {
        println!("  {kind}: {count}");
    }
    println!("By confidence:");
    for (confidence, count) in &stats.edges_by_confidence {
        println!("  {confidence}: {count}");
    }
    println!("Unresolved: {} calls", stats.unresolved_calls);
    for (kind, count) in &stats.unresolved_by_kind {
        println!("  {kind}: {count}");
    }
    if stats.parse_errors > 0 {
        println!(
            "Files with syntax errors (indexed as far as they parse): {}",
            stats.parse_errors
        );
    }
    print!("{}", skipped_summary(stats));
    Ok(())
}

/// The lines about files not (fully) indexed: skipped files by reason, and files cut at the
/// nesting limit. Empty when every file was indexed whole.
fn skipped_summary(stats: &IndexStats) -> String {
    let mut out = String::new();
    let skipped: usize = stats.skipped.values().sum();
    if skipped > 0 {
        out.push_str(&format!("Skipped files: {skipped}\n"));
        for (reason, count) in &stats.skipped {
            out.push_str(&format!("  {reason}: {count}\n"));
        }
    }
    if stats.depth_limited > 0 {
        out.push_str(&format!(
            "Files nested past the depth limit (deeper code unresolved): {}\n",
            stats.depth_limited
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_lists_skipped_files_by_reason() {
        let mut stats = IndexStats::default();
        assert_eq!(skipped_summary(&stats), "");
        stats.skipped.insert("binary".into(), 1);
        stats.skipped.insert("not_utf8".into(), 2);
        stats.depth_limited = 3;
        assert_eq!(
            skipped_summary(&stats),
            "Skipped files: 3\n  binary: 1\n  not_utf8: 2\n\
             Files nested past the depth limit (deeper code unresolved): 3\n"
        );
    }
}
