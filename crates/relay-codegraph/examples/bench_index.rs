//! Indexing benchmark: `cargo run --release -p relay-codegraph --example bench_index -- PATH [CHANGED_FILE]`.
//!
//! Prints files, lines, symbols, edges (by kind and confidence), wall time and lines/s of a full
//! index of PATH; with CHANGED_FILE (relative to PATH), also the time of an incremental update
//! after touching that file (its content is re-read; nothing is written). With `--json` it prints
//! the graph instead.
//!
//! `--replace=FROM=>TO` edits CHANGED_FILE (FROM must occur; `\n` and `\t` in FROM/TO are a newline and a tab) and
//! times the update; `--repeat=N` times N edit/restore pairs (2N updates) and prints the median,
//! min and max. The file is restored afterwards. **This writes into PATH: use a scratch copy.**
//!
//! `--threads=N` (default: every core), `--max-file-bytes=N` and `--parse-memory-mb=N` (`0`: no
//! budget) set the [`IndexOptions`] of the index.

use std::path::{Path, PathBuf};
use std::time::Instant;

use relay_codegraph::index::{IndexOptions, Indexer};

// As in the `relay` binary: jemalloc, for Rust and (unprefixed `malloc`) for tree-sitter.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // `RUST_LOG=relay_codegraph=debug` shows the phase timings.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let Some(root) = positional.first() else {
        return Err("usage: bench_index PATH [CHANGED_FILE] [--json]".into());
    };
    let root = Path::new(root.as_str());
    let number = |name: &str| -> Result<Option<u64>, std::num::ParseIntError> {
        args.iter()
            .find_map(|a| a.strip_prefix(name))
            .map(str::parse)
            .transpose()
    };
    let defaults = IndexOptions::default();
    let opts = IndexOptions {
        threads: number("--threads=")?.map_or(0, |n| n as usize),
        max_file_bytes: number("--max-file-bytes=")?.unwrap_or(defaults.max_file_bytes),
        parse_memory_bytes: number("--parse-memory-mb=")?
            .map_or(defaults.parse_memory_bytes, |mb| mb * 1024 * 1024),
        ..defaults
    };
    let started = Instant::now();
    let mut indexer = Indexer::full_with(root, opts)?;
    let elapsed = started.elapsed();
    if json {
        println!("{}", serde_json::to_string_pretty(&indexer.graph())?);
        return Ok(());
    }
    let stats = indexer.stats().clone();
    println!("root:        {}", root.display());
    println!(
        "files:       {} (go {}, python {})",
        stats.files, stats.go_files, stats.python_files
    );
    println!("lines:       {}", stats.lines);
    println!("symbols:     {}", stats.symbols);
    println!("edges:       {}", stats.edges);
    println!("  by kind:       {:?}", stats.edges_by_kind);
    println!("  by confidence: {:?}", stats.edges_by_confidence);
    println!("  unresolved:    {:?}", stats.unresolved_by_kind);
    println!("parse errors: {}", stats.parse_errors);
    println!("skipped:     {:?}", stats.skipped);
    println!("wall time:   {:.3} s", elapsed.as_secs_f64());
    println!(
        "lines/s:     {:.0}",
        stats.lines as f64 / elapsed.as_secs_f64()
    );
    let flag = |name: &str| {
        args.iter().find_map(|a| {
            a.strip_prefix(name)
                .map(|v| v.replace("\\n", "\n").replace("\\t", "\t"))
        })
    };
    if let (Some(changed), Some(replace)) = (positional.get(1), flag("--replace=")) {
        let (from, to) = replace.split_once("=>").ok_or("--replace takes FROM=>TO")?;
        let repeat: usize = flag("--repeat=").map_or(Ok(3), |n| n.parse())?;
        let path = root.join(changed.as_str());
        let original = std::fs::read_to_string(&path)?;
        if !original.contains(from) {
            return Err(format!("{changed} does not contain {from:?}").into());
        }
        let edited = original.replacen(from, to, 1);
        let mut times = Vec::new();
        let mut summary = String::new();
        for i in 0..repeat * 2 {
            let content = if i % 2 == 0 { &edited } else { &original };
            std::fs::write(&path, content)?;
            let delta = indexer.update(std::slice::from_ref(&path))?;
            times.push(delta.duration.as_secs_f64() * 1000.0);
            if i == 0 {
                summary = format!(
                    "{} file(s) re-parsed, {} re-resolved, {} file(s) in delta, {} symbols, {} edges",
                    delta.reparsed,
                    delta.resolved,
                    delta.files.len(),
                    delta.symbols.len(),
                    delta.edges.len()
                );
            }
        }
        std::fs::write(&path, &original)?;
        let mut sorted = times.clone();
        sorted.sort_by(f64::total_cmp);
        println!(
            "incremental (edit {changed}): median {:.1} ms, min {:.1} ms, max {:.1} ms over {} updates; first edit: {summary}",
            sorted[sorted.len() / 2],
            sorted[0],
            sorted[sorted.len() - 1],
            sorted.len()
        );
        return Ok(());
    }
    if let Some(changed) = positional.get(1) {
        let path = PathBuf::from(changed.as_str());
        let delta = indexer.update(&[path])?;
        println!(
            "incremental: {:.1} ms ({} file(s) re-parsed, {} re-resolved, {} file(s) in delta, {} symbols, {} edges)",
            delta.duration.as_secs_f64() * 1000.0,
            delta.reparsed,
            delta.resolved,
            delta.files.len(),
            delta.symbols.len(),
            delta.edges.len()
        );
        if delta.files.len() <= 10 {
            println!("  delta files: {:?}", delta.files);
        }
    }
    Ok(())
}
