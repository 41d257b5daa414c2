//! Peak memory of one `grep` call against the size of the tree, and the time a running grep takes
//! to stop once cancelled. Measures its own peak RSS (`VmHWM` in /proc/self/status), so run one
//! tree size per process:
//!
//! ```text
//! cargo run --release -p relay-tools --example grep_memory -- 1      # a 1 MB tree
//! cargo run --release -p relay-tools --example grep_memory -- 100    # a 100 MB tree
//! cargo run --release -p relay-tools --example grep_memory -- 100 --cancel
//! ```
//!
//! The tree is generated in a temporary directory: files of ~100 KB where every tenth line
//! matches, so the match count grows with the tree (10,000 matching lines per MB), plus one
//! single-line file of a tenth of the tree that matches. Default tool limits, as an agent gets them.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use relay_tools::control::CallControl;
use relay_tools::{ToolContext, ToolLimits, ToolRegistry};

const FILE_BYTES: usize = 100 * 1024;

fn generate(root: &Path, megabytes: usize) -> std::io::Result<()> {
    let line = "let value = compute(input, options); // ordinary code line\n";
    let hit = "let needle = find(haystack); // the line grep looks for\n";
    let mut body = String::new();
    let mut index = 0usize;
    while body.len() < FILE_BYTES {
        body.push_str(if index.is_multiple_of(10) { hit } else { line });
        index += 1;
    }
    let files = (megabytes * 1024 * 1024 * 9 / 10) / body.len();
    for index in 0..files.max(1) {
        let dir = root.join(format!("d{:03}", index / 100));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(format!("f{index:05}.rs")), &body)?;
    }
    let mut long = std::fs::File::create(root.join("minified.js"))?;
    let chunk = "x".repeat(1024 * 1024);
    for _ in 0..(megabytes / 10).max(1) {
        long.write_all(chunk.as_bytes())?;
    }
    long.write_all(b" needle\n")?;
    Ok(())
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let megabytes: usize = args
        .next()
        .ok_or("usage: grep_memory <MB> [--cancel]")?
        .parse()?;
    let cancel = args.next().as_deref() == Some("--cancel");
    let dir = tempfile::tempdir()?;
    generate(dir.path(), megabytes)?;
    let before = peak_rss_kib();
    let registry = Arc::new(ToolRegistry::standard());
    let context = ToolContext::new(dir.path(), ToolLimits::default())?;
    let arguments = r#"{"pattern": "needle"}"#.to_owned();
    if cancel {
        let control = CallControl::with_timeout(Duration::from_secs(3600));
        let call = tokio::spawn(registry.call_async_with(
            context,
            control.clone(),
            "grep".into(),
            arguments,
        ));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let cancelled = Instant::now();
        control.cancel();
        let result = call.await?;
        println!(
            "tree={megabytes}MB cancel_to_return_ms={:.1} result={:?}",
            cancelled.elapsed().as_secs_f64() * 1000.0,
            result.map(|text| text.lines().last().unwrap_or_default().to_owned())
        );
        return Ok(());
    }
    let started = Instant::now();
    let text = registry
        .call_async(context, "grep".into(), arguments)
        .await?;
    let elapsed = started.elapsed();
    let summary = text.lines().rev().nth(1).unwrap_or_default();
    println!(
        "tree={megabytes}MB peak_rss_kib={} (before grep: {before}) grep_ms={} summary={summary:?}",
        peak_rss_kib(),
        elapsed.as_millis()
    );
    Ok(())
}
