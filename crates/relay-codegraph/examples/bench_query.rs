//! Query benchmark for the graph stores: loads one graph into Postgres (and the in-memory store) and
//! measures `search` and `callers` at depth 3 through the `codegraph` operations (what an agent pays:
//! every store round trip of the operation, and the rendering) plus the bare store calls.
//!
//! ```text
//! cargo run --release -p relay-codegraph --example bench_query -- [SOURCE] [--queries N]
//!   SOURCE: --index DIR      index DIR with the tree-sitter indexer (default: /usr/share/go-1.19/src)
//!           --graph FILE     a `relay index --format json` export
//!           --synthetic      a generated graph of Go-standard-library size (150k symbols, 600k edges)
//! ```
//!
//! Uses `DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/postgres`) to create a scratch
//! database `relay_codegraph_bench`, migrated with `relay_store::MIGRATOR`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use relay_codegraph::index::{IndexOptions, index_repository};
use relay_codegraph::model::{Confidence, Edge, EdgeKind, Graph, Language, Symbol, SymbolKind};
use relay_codegraph::ops::{CodegraphArgs, GraphScope, run};
use relay_codegraph::store::memory::MemoryStore;
use relay_codegraph::store::postgres::PostgresStore;
use relay_codegraph::store::{Direction, GraphStore, Snapshot, SymbolQuery};
use sqlx::Connection;
use sqlx::postgres::{PgConnection, PgPoolOptions};

const REPO: &str = "bench/repo";
const COMMIT: &str = "c1";

/// A small deterministic PRNG (xorshift64*), so runs pick the same queries.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let mut source = Source::Index(PathBuf::from("/usr/share/go-1.19/src"));
    let mut queries = 300usize;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--index" => source = Source::Index(args.next().context("--index DIR")?.into()),
            "--graph" => source = Source::File(args.next().context("--graph FILE")?.into()),
            "--synthetic" => source = Source::Synthetic,
            "--queries" => queries = args.next().context("--queries N")?.parse()?,
            other => bail!("unknown argument {other}"),
        }
    }

    let started = Instant::now();
    let (graph, origin) = source.load()?;
    println!(
        "graph: {origin}: {} symbols, {} edges ({} calls), loaded in {:.1}s",
        graph.symbols.len(),
        graph.edges.len(),
        graph
            .edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Calls)
            .count(),
        started.elapsed().as_secs_f64()
    );

    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let mut admin = PgConnection::connect(&url)
        .await
        .context("connect to DATABASE_URL")?;
    sqlx::query("DROP DATABASE IF EXISTS relay_codegraph_bench WITH (FORCE)")
        .execute(&mut admin)
        .await?;
    sqlx::query("CREATE DATABASE relay_codegraph_bench")
        .execute(&mut admin)
        .await?;
    let bench_url = match url.rsplit_once('/') {
        Some((base, _)) => format!("{base}/relay_codegraph_bench"),
        None => bail!("DATABASE_URL has no database path"),
    };
    let pool = PgPoolOptions::new()
        .max_connections(4)
        .connect(&bench_url)
        .await?;
    relay_store::MIGRATOR.run(&pool).await?;

    let postgres = PostgresStore::new(pool.clone());
    let t = Instant::now();
    postgres.replace_graph(REPO, COMMIT, &graph).await?;
    println!("postgres: replace_graph {:.1}s", t.elapsed().as_secs_f64());
    sqlx::query("ANALYZE").execute(&pool).await?;

    let memory = MemoryStore::new();
    let t = Instant::now();
    memory.replace_graph(REPO, COMMIT, &graph).await?;
    println!("memory: replace_graph {:.2}s", t.elapsed().as_secs_f64());

    let workload = Workload::pick(&graph, queries);
    println!(
        "workload: {} search names ({} with a wildcard), {} + {} callers targets (depth 3)",
        workload.names.len(),
        workload.names.iter().filter(|n| n.contains('*')).count(),
        workload.callees.len(),
        workload.hot_callees.len()
    );
    for (label, store) in [
        ("postgres", &postgres as &dyn GraphStore),
        ("memory", &memory),
    ] {
        bench_store(label, store, &workload).await?;
        bench_delta(label, store, &graph).await?;
    }
    pool.close().await;
    sqlx::query("DROP DATABASE IF EXISTS relay_codegraph_bench WITH (FORCE)")
        .execute(&mut admin)
        .await?;
    Ok(())
}

enum Source {
    Index(PathBuf),
    File(PathBuf),
    Synthetic,
}

impl Source {
    fn load(&self) -> anyhow::Result<(Graph, String)> {
        match self {
            Source::Index(dir) if dir.is_dir() => {
                let out = index_repository(dir, &IndexOptions::default())?;
                Ok((out.graph, format!("indexed {}", dir.display())))
            }
            Source::Index(dir) => {
                println!("{} does not exist: using a synthetic graph", dir.display());
                Ok((
                    synthetic(),
                    "synthetic (Go standard library size)".to_owned(),
                ))
            }
            Source::File(path) => {
                let bytes =
                    std::fs::read(path).with_context(|| format!("read {}", path.display()))?;
                Ok((
                    serde_json::from_slice(&bytes)?,
                    format!("export {}", path.display()),
                ))
            }
            Source::Synthetic => Ok((
                synthetic(),
                "synthetic (Go standard library size)".to_owned(),
            )),
        }
    }
}

struct Workload {
    /// Search names: exact names of real symbols and prefix wildcards.
    names: Vec<String>,
    /// Called qnames picked uniformly among the distinct symbols that have a caller (what an agent
    /// typically asks about).
    callees: Vec<String>,
    /// Called qnames picked uniformly among call edges, i.e. weighted by in-degree (hot helpers such as
    /// `testing.common.Errorf` dominate: the worst case).
    hot_callees: Vec<String>,
}

impl Workload {
    fn pick(graph: &Graph, n: usize) -> Workload {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut names = Vec::with_capacity(n);
        for i in 0..n {
            let s = &graph.symbols[rng.below(graph.symbols.len())];
            if i % 4 == 3 {
                let prefix: String = s.name.chars().take(4).collect();
                names.push(format!("{prefix}*"));
            } else {
                names.push(s.name.clone());
            }
        }
        let symbols: std::collections::HashSet<&str> =
            graph.symbols.iter().map(|s| s.qname.as_str()).collect();
        let called: Vec<&str> = graph
            .edges
            .iter()
            .filter(|e| e.kind == EdgeKind::Calls)
            .filter_map(|e| e.to.as_deref())
            .filter(|q| symbols.contains(q))
            .collect();
        let mut distinct: Vec<&str> = called.clone();
        distinct.sort_unstable();
        distinct.dedup();
        let callees = (0..n)
            .map(|_| distinct[rng.below(distinct.len())].to_owned())
            .collect();
        let hot_callees = (0..n)
            .map(|_| called[rng.below(called.len())].to_owned())
            .collect();
        Workload {
            names,
            callees,
            hot_callees,
        }
    }
}

fn report(label: &str, mut times: Vec<Duration>, extra: &str) {
    times.sort();
    let pct = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "  {label:<36} n={:<4} median {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms{extra}",
        times.len(),
        ms(pct(0.5)),
        ms(pct(0.99)),
        ms(*times.last().unwrap())
    );
}

async fn bench_store(label: &str, store: &dyn GraphStore, w: &Workload) -> anyhow::Result<()> {
    println!("{label}:");
    let scope = GraphScope::at(REPO, COMMIT);
    let snap = Snapshot::new(REPO, COMMIT);
    // Warm up caches and prepared statements.
    for name in w.names.iter().take(20) {
        store
            .search(&snap, &SymbolQuery::name(name.clone(), 10))
            .await?;
    }

    let mut times = Vec::new();
    for name in &w.names {
        let args = CodegraphArgs {
            operation: "search".into(),
            name: Some(name.clone()),
            ..Default::default()
        };
        let t = Instant::now();
        let out = run(Some(store), &scope, &args).await;
        times.push(t.elapsed());
        anyhow::ensure!(!out.is_error(), "search {name}: {}", out.to_text());
    }
    report("op search", times, "");

    for (label, targets) in [
        ("op callers depth 3 (uniform)", &w.callees),
        ("op callers depth 3 (by in-degree)", &w.hot_callees),
    ] {
        let mut times = Vec::new();
        let mut results = Vec::new();
        for qname in targets {
            let args = CodegraphArgs {
                operation: "callers".into(),
                qname: Some(qname.clone()),
                depth: Some(3),
                ..Default::default()
            };
            let t = Instant::now();
            let out = run(Some(store), &scope, &args).await;
            times.push(t.elapsed());
            anyhow::ensure!(!out.is_error(), "callers {qname}: {}", out.to_text());
            if let relay_codegraph::ops::Outcome::Calls(c) = out {
                results.push(c.total);
            }
        }
        results.sort();
        let extra = format!(
            "  (results: median {}, max {})",
            results[results.len() / 2],
            results.last().copied().unwrap_or(0)
        );
        report(label, times, &extra);
    }

    let mut times = Vec::new();
    for name in &w.names {
        let t = Instant::now();
        store
            .search(&snap, &SymbolQuery::name(name.clone(), 10))
            .await?;
        times.push(t.elapsed());
    }
    report("store.search", times, "");
    let mut times = Vec::new();
    let mut steps = Vec::new();
    for qname in &w.callees {
        let t = Instant::now();
        let s = store
            .traverse_calls(&snap, qname, Direction::Incoming, 3)
            .await?;
        times.push(t.elapsed());
        steps.push(s.len());
    }
    steps.sort();
    let extra = format!(
        "  (edges: median {}, max {})",
        steps[steps.len() / 2],
        steps.last().copied().unwrap_or(0)
    );
    report("store.traverse_calls d3 (uniform)", times, &extra);
    Ok(())
}

/// Applies a one-file delta (the file with the most edges, re-inserted unchanged) 20 times.
async fn bench_delta(label: &str, store: &dyn GraphStore, graph: &Graph) -> anyhow::Result<()> {
    let mut per_file: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for e in &graph.edges {
        *per_file.entry(e.file.as_str()).or_default() += 1;
    }
    let Some((file, _)) = per_file.into_iter().max_by_key(|(f, n)| (*n, *f)) else {
        return Ok(());
    };
    let delta = relay_codegraph::store::GraphDelta {
        files: vec![file.to_owned()],
        symbols: graph
            .symbols
            .iter()
            .filter(|s| s.file == file)
            .cloned()
            .collect(),
        edges: graph
            .edges
            .iter()
            .filter(|e| e.file == file)
            .cloned()
            .collect(),
        ..Default::default()
    };
    let mut times = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        store.apply_delta(REPO, COMMIT, COMMIT, &delta).await?;
        times.push(t.elapsed());
    }
    let extra = format!(
        "  ({file}: {} symbols, {} edges)",
        delta.symbols.len(),
        delta.edges.len()
    );
    report(&format!("{label} apply_delta (1 file)"), times, &extra);
    Ok(())
}

/// A graph shaped like the Go standard library's: ~300 packages, ~150k symbols (functions, methods,
/// types, fields, consts), ~600k edges with a skewed fan-in (a few hot helpers are called from
/// everywhere, most functions from a handful of places).
fn synthetic() -> Graph {
    const PACKAGES: usize = 300;
    const TYPES_PER_PACKAGE: usize = 40;
    const METHODS_PER_TYPE: usize = 6;
    const FIELDS_PER_TYPE: usize = 3;
    const FUNCS_PER_PACKAGE: usize = 130;
    const CONSTS_PER_PACKAGE: usize = 50;
    let words = [
        "Read",
        "Write",
        "Close",
        "Open",
        "Parse",
        "Format",
        "Encode",
        "Decode",
        "New",
        "Get",
        "Set",
        "Add",
        "Len",
        "String",
        "Error",
        "Handle",
        "Serve",
        "Dial",
        "Listen",
        "Marshal",
        "Unmarshal",
        "Flush",
        "Reset",
        "Copy",
        "Scan",
        "Append",
        "Split",
        "Join",
        "Lookup",
        "Init",
    ];
    let mut rng = Rng(42);
    let mut symbols = Vec::new();
    let mut functions: Vec<(String, String)> = Vec::new(); // (qname, file)
    let mut types = Vec::new();
    let sym =
        |qname: String, name: String, kind, file: &str, line, parent: Option<String>| Symbol {
            signature: Some(format!("func {name}()")),
            qname,
            name,
            kind,
            language: Language::Go,
            file: file.to_owned(),
            line,
            end_line: line + 10,
            doc: None,
            parent,
        };
    for p in 0..PACKAGES {
        let pkg = format!("std/pkg{p}/sub{}", p % 7);
        let file = |i: usize| format!("pkg{p}/sub{}/file{}.go", p % 7, i % 12);
        symbols.push(sym(
            pkg.clone(),
            format!("sub{}", p % 7),
            SymbolKind::Package,
            &file(0),
            1,
            None,
        ));
        for t in 0..TYPES_PER_PACKAGE {
            let tname = format!(
                "{}{}",
                words[rng.below(words.len())],
                ["er", "Reader", "Conn", "State"][t % 4]
            );
            let tq = format!("{pkg}.{tname}{t}");
            let kind = if t % 5 == 0 {
                SymbolKind::Interface
            } else {
                SymbolKind::Struct
            };
            symbols.push(sym(
                tq.clone(),
                format!("{tname}{t}"),
                kind,
                &file(t),
                (t * 40) as u32,
                Some(pkg.clone()),
            ));
            types.push((tq.clone(), file(t)));
            for m in 0..METHODS_PER_TYPE {
                let mname = words[(t + m) % words.len()].to_owned();
                let mq = format!("{tq}.{mname}");
                symbols.push(sym(
                    mq.clone(),
                    mname,
                    SymbolKind::Method,
                    &file(t),
                    (t * 40 + m * 5) as u32,
                    Some(tq.clone()),
                ));
                functions.push((mq, file(t)));
            }
            for f in 0..FIELDS_PER_TYPE {
                let fq = format!("{tq}.field{f}");
                symbols.push(sym(
                    fq,
                    format!("field{f}"),
                    SymbolKind::Field,
                    &file(t),
                    (t * 40 + f) as u32,
                    Some(tq.clone()),
                ));
            }
        }
        for f in 0..FUNCS_PER_PACKAGE {
            let name = format!("{}{}", words[rng.below(words.len())], f);
            let q = format!("{pkg}.{name}");
            symbols.push(sym(
                q.clone(),
                name,
                SymbolKind::Function,
                &file(f),
                (f * 20) as u32,
                Some(pkg.clone()),
            ));
            functions.push((q, file(f)));
        }
        for c in 0..CONSTS_PER_PACKAGE {
            let q = format!("{pkg}.Const{c}");
            symbols.push(sym(
                q,
                format!("Const{c}"),
                SymbolKind::Const,
                &file(c),
                c as u32,
                Some(pkg.clone()),
            ));
        }
    }
    let mut edges = Vec::new();
    let edge = |kind, from: &str, to: Option<&str>, file: &str, line, confidence| Edge {
        kind,
        from: from.to_owned(),
        to: to.map(str::to_owned),
        to_name: to
            .map_or("unknown", |t| t.rsplit('.').next().unwrap_or(t))
            .to_owned(),
        file: file.to_owned(),
        line,
        confidence,
        external: false,
    };
    let hot = functions.len() / 200; // 0.5% of functions are hot helpers
    for (i, (from, file)) in functions.iter().enumerate() {
        for c in 0..4 {
            // Skewed: a quarter of calls go to hot helpers, the rest are local-ish or random.
            let target = match c {
                0 => rng.below(hot),
                1 => (i + 1 + rng.below(50)) % functions.len(),
                _ => rng.below(functions.len()),
            };
            let confidence = if c == 3 && rng.below(4) == 0 {
                Confidence::Dynamic
            } else {
                Confidence::Exact
            };
            edges.push(edge(
                EdgeKind::Calls,
                from,
                Some(&functions[target].0),
                file,
                (i % 900) as u32,
                confidence,
            ));
        }
        if i % 10 == 0 {
            edges.push(edge(
                EdgeKind::Calls,
                from,
                None,
                file,
                (i % 900) as u32,
                Confidence::Exact,
            ));
        }
        let (ty, _) = &types[rng.below(types.len())];
        edges.push(edge(
            EdgeKind::Uses,
            from,
            Some(ty),
            file,
            (i % 900) as u32,
            Confidence::Exact,
        ));
    }
    for (i, (ty, file)) in types.iter().enumerate() {
        for k in 0..8 {
            let (other, _) = &types[(i * 31 + k * 7) % types.len()];
            edges.push(edge(
                EdgeKind::Uses,
                ty,
                Some(other),
                file,
                k as u32,
                Confidence::Exact,
            ));
        }
        let iface = &types[(i / 5) * 5].0;
        if i % 5 != 0 {
            edges.push(edge(
                EdgeKind::Implements,
                ty,
                Some(iface),
                file,
                1,
                Confidence::Exact,
            ));
        }
    }
    Graph { symbols, edges }
}
