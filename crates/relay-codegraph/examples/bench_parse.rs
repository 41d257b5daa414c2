//! The parse-only floor of the indexer: `cargo run --release -p relay-codegraph --example
//! bench_parse -- PATH [THREADS]`.
//!
//! Reads and parses (then drops) every Go and Python file the indexer would index under PATH
//! (the walker's own filter, `index::indexed_files`), with one tree-sitter parser per thread and nothing else, and
//! prints the wall time. Compare with `bench_index` on the same tree: the difference is what
//! extraction and resolution cost on top of tree-sitter.

use std::path::Path;

use relay_codegraph::index::IndexOptions;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

// As in `bench_index` and the `relay` binary.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(root) = args.first() else {
        return Err("usage: bench_parse PATH [THREADS]".into());
    };
    let threads: usize = match args.get(1) {
        Some(n) => n.parse()?,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let started = Instant::now();
    let files = relay_codegraph::index::indexed_files(Path::new(root), &IndexOptions::default())?;
    let next = AtomicUsize::new(0);
    let nodes = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let mut go = tree_sitter::Parser::new();
                let mut py = tree_sitter::Parser::new();
                let ok = go
                    .set_language(&tree_sitter_go::LANGUAGE.into())
                    .and(py.set_language(&tree_sitter_python::LANGUAGE.into()));
                if ok.is_err() {
                    return;
                }
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(i) else { break };
                    let Ok(src) = std::fs::read(path) else {
                        continue;
                    };
                    let parser = if path.extension().is_some_and(|e| e == "go") {
                        &mut go
                    } else {
                        &mut py
                    };
                    if let Some(tree) = parser.parse(&src, None) {
                        nodes.fetch_add(tree.root_node().descendant_count(), Ordering::Relaxed);
                    }
                }
            });
        }
    });
    println!("files:     {}", files.len());
    println!("nodes:     {}", nodes.load(Ordering::Relaxed));
    println!("threads:   {threads}");
    println!("wall time: {:.3} s", started.elapsed().as_secs_f64());
    Ok(())
}
