//! Explore benchmark: a recorded 20-iteration transcript replayed by the scripted LLM server on a
//! large real tree (the Go standard library when `GOROOT` is set, else Python's standard library).
//!
//! Prints:
//! - prompt size per iteration (estimated tokens of each request body, ~4 chars a token) with
//!   observation masking (`keep_turns = 6`) and without (`keep_turns = 0`), and the ratio;
//! - Relay's own time per tool call (from the `ToolCallRecord`s: no LLM time), p50/p99, overall and
//!   per tool;
//! - `grep` (output caps off) against `rg` — or GNU `grep -rn` when ripgrep is not installed — on
//!   the same patterns and the same file filter, median of 5 runs, as a ratio, with both match
//!   counts;
//! - `codegraph callers` on a warm in-memory graph, p50/p99 of 200 calls.
//!
//! Run: `cargo run --release -p relay-agent --features test-support --example explore_bench [TREE]`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use relay_agent::explore::{
    ExploreAgent, ExploreBudget, ExploreConfig, ExploreRequest, Thoroughness,
};
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::{LlmClient, Role, ToolCall};
use relay_agent::toolbox::{GraphAccess, ToolCallRecord, Toolbox, index_in_memory};
use relay_tools::ToolLimits;
use serde_json::{Value, json};

const PYTHON_STDLIB: &str = "/root/.pyenv/versions/3.11.7/lib/python3.11";
const TIMING_RUNS: usize = 5;
const CALLERS_CALLS: usize = 200;
/// Replays of the transcript whose tool records feed the per-call timings.
const REPLAYS: usize = 5;

fn tree() -> PathBuf {
    if let Some(arg) = std::env::args().nth(1) {
        return PathBuf::from(arg);
    }
    if let Ok(output) = Command::new("go").args(["env", "GOROOT"]).output()
        && output.status.success()
    {
        let root = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()).join("src");
        if root.is_dir() {
            return root;
        }
    }
    PathBuf::from(PYTHON_STDLIB)
}

/// The first qname a `codegraph search` prints that ends with `suffix`.
async fn qname(toolbox: &Toolbox, name: &str, suffix: &str) -> String {
    let outcome = toolbox
        .call(&call(
            "codegraph",
            json!({"operation": "search", "name": name}),
        ))
        .await;
    outcome
        .result
        .content
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .find(|word| word.ends_with(suffix))
        .unwrap_or(name)
        .to_owned()
}

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: "bench".to_owned(),
        name: name.to_owned(),
        arguments: arguments.to_string(),
    }
}

/// The transcript: 20 tool turns of an agent finding out how `json.dumps` picks its encoder
/// (Python) or who calls `http.NewRequest` (Go), then the report.
async fn transcript(toolbox: &Toolbox, go: bool) -> Vec<ScriptedReply> {
    let turns: Vec<(&str, Value)> = if go {
        let new_request = qname(toolbox, "NewRequest", ".NewRequest").await;
        let client = qname(toolbox, "Client", "http.Client").await;
        let do_ = qname(toolbox, "Do", "Client.Do").await;
        vec![
            ("tree", json!({"path": "net/http"})),
            ("glob", json!({"pattern": "net/http/*.go"})),
            (
                "grep",
                json!({"pattern": "func NewRequest", "path": "net/http"}),
            ),
            (
                "codegraph",
                json!({"operation": "search", "name": "NewRequest"}),
            ),
            (
                "codegraph",
                json!({"operation": "callers", "qname": new_request}),
            ),
            (
                "read",
                json!({"path": "net/http/request.go", "offset": 820, "limit": 80}),
            ),
            (
                "codegraph",
                json!({"operation": "callees", "qname": new_request}),
            ),
            (
                "grep",
                json!({"pattern": "NewRequestWithContext\\(", "glob": "*.go"}),
            ),
            (
                "read",
                json!({"path": "net/http/client.go", "offset": 1, "limit": 120}),
            ),
            ("codegraph", json!({"operation": "usages", "qname": client})),
            (
                "codegraph",
                json!({"operation": "callers", "qname": do_, "depth": 2}),
            ),
            (
                "read",
                json!({"path": "net/http/client.go", "offset": 580, "limit": 100}),
            ),
            (
                "grep",
                json!({"pattern": "func \\(c \\*Client\\) do", "path": "net/http"}),
            ),
            ("grep", json!({"pattern": "ErrUseLastResponse"})),
            (
                "read",
                json!({"path": "net/http/request.go", "offset": 900, "limit": 60}),
            ),
            (
                "codegraph",
                json!({"operation": "implementations", "qname": qname(toolbox, "RoundTripper", "RoundTripper").await}),
            ),
            ("glob", json!({"pattern": "net/http/**/*_test.go"})),
            (
                "grep",
                json!({"pattern": "validMethod", "path": "net/http"}),
            ),
            ("read", json!({"path": "net/http/method.go"})),
            (
                "codegraph",
                json!({"operation": "resolve", "name": "NewRequest"}),
            ),
        ]
    } else {
        let dumps = qname(toolbox, "dumps", "json.dumps").await;
        let encoder = qname(toolbox, "JSONEncoder", "JSONEncoder").await;
        let encode = qname(toolbox, "encode", "JSONEncoder.encode").await;
        vec![
            ("tree", json!({"path": "json"})),
            ("glob", json!({"pattern": "json/*.py"})),
            ("grep", json!({"pattern": "def dumps", "path": "json"})),
            ("codegraph", json!({"operation": "search", "name": "dumps"})),
            ("codegraph", json!({"operation": "callers", "qname": dumps})),
            (
                "read",
                json!({"path": "json/__init__.py", "offset": 180, "limit": 60}),
            ),
            ("codegraph", json!({"operation": "callees", "qname": dumps})),
            (
                "grep",
                json!({"pattern": "json\\.dumps\\(", "glob": "*.py"}),
            ),
            (
                "read",
                json!({"path": "json/encoder.py", "offset": 1, "limit": 120}),
            ),
            (
                "codegraph",
                json!({"operation": "usages", "qname": encoder}),
            ),
            (
                "codegraph",
                json!({"operation": "callers", "qname": encode, "depth": 2}),
            ),
            (
                "read",
                json!({"path": "json/encoder.py", "offset": 180, "limit": 80}),
            ),
            ("grep", json!({"pattern": "c_make_encoder"})),
            ("grep", json!({"pattern": "iterencode"})),
            (
                "read",
                json!({"path": "json/encoder.py", "offset": 250, "limit": 100}),
            ),
            (
                "codegraph",
                json!({"operation": "implementations", "qname": encoder}),
            ),
            ("glob", json!({"pattern": "**/test_json/*.py"})),
            ("grep", json!({"pattern": "default=", "path": "json"})),
            ("read", json!({"path": "json/tool.py"})),
            (
                "codegraph",
                json!({"operation": "resolve", "name": "loads"}),
            ),
        ]
    };
    let mut script: Vec<ScriptedReply> = turns
        .into_iter()
        .map(|(name, arguments)| ScriptedReply::tool_calls(vec![(name, arguments)]))
        .collect();
    let path = if go {
        "net/http/request.go"
    } else {
        "json/__init__.py"
    };
    script.push(ScriptedReply::tool_calls(vec![(
        "submit_report",
        json!({"answer": "see evidence", "evidence": [{"path": path, "start_line": 1, "end_line": 1}], "confidence": "low"}),
    )]));
    script
}

fn client(server: &ScriptedLlm) -> LlmClient {
    server.client(Role::Explore)
}

struct Replay {
    prompt_tokens: Vec<usize>,
    records: Vec<ToolCallRecord>,
}

async fn replay(
    root: &Path,
    graph: &GraphAccess,
    script: Vec<ScriptedReply>,
    keep_turns: usize,
) -> Replay {
    let server = ScriptedLlm::start(script).await;
    let toolbox = Toolbox::new(root, Some(graph.clone()), ToolLimits::default()).expect("toolbox");
    let config = ExploreConfig {
        keep_turns,
        quick: ExploreBudget {
            max_iterations: 100,
            soft_tokens: u64::MAX,
            hard_tokens: u64::MAX,
        },
        ..ExploreConfig::default()
    };
    let agent = ExploreAgent::new(client(&server), Arc::new(toolbox), config);
    let report = agent
        .explore(ExploreRequest::new("bench", Thoroughness::Quick))
        .await
        .expect("the replay runs");
    assert_eq!(
        report.iterations, 21,
        "20 tool turns and the report: {report:?}"
    );
    let prompt_tokens = server
        .requests()
        .iter()
        .map(|request| request.body["messages"].to_string().len().div_ceil(4))
        .collect();
    Replay {
        prompt_tokens,
        records: report.tool_calls,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn ms(duration: Duration) -> String {
    format!("{:.2} ms", duration.as_secs_f64() * 1000.0)
}

fn median_of(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

/// The baseline searcher and its flags, with Relay's walker filter: no ignore files above the
/// root, and `.git/`, `vendor/` and `node_modules/` skipped at any depth (the Go tree has
/// `vendor/` and `cmd/vendor/`).
fn grep_baseline() -> (&'static str, Vec<&'static str>) {
    if Command::new("rg")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok()
    {
        (
            "rg",
            vec![
                "--no-config",
                "--hidden",
                "--no-require-git",
                "--no-ignore-global",
                "--no-ignore-parent",
                "--glob",
                "!.git/",
                "--glob",
                "!vendor/",
                "--glob",
                "!node_modules/",
                "--line-number",
                "--no-heading",
                "--color",
                "never",
                "-e",
            ],
        )
    } else {
        (
            "grep",
            vec![
                "-rnE",
                "--binary-files=without-match",
                "--exclude-dir=.git",
                "--exclude-dir=vendor",
                "--exclude-dir=node_modules",
                "-e",
            ],
        )
    }
}

/// The match count of an uncapped `grep` result, from its summary line (`63,234 matches in ...`,
/// followed by the `[~N tokens, M lines]` footer).
fn relay_matches(output: &str) -> usize {
    output
        .lines()
        .rev()
        .find_map(|line| {
            let mut words = line.split_whitespace();
            let count = words.next()?.replace(',', "").parse().ok()?;
            words.next()?.starts_with("match").then_some(count)
        })
        .unwrap_or(0)
}

#[tokio::main]
async fn main() {
    let root = tree();
    let go = root.join("net/http").is_dir();
    println!(
        "tree: {} ({})",
        root.display(),
        if go { "Go" } else { "Python" }
    );

    let started = Instant::now();
    let graph = index_in_memory(&root, None).await.expect("index");
    println!(
        "in-memory code graph built in {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let probe = Toolbox::new(&root, Some(graph.clone()), ToolLimits::default()).expect("toolbox");
    let script = transcript(&probe, go).await;

    // Prompt size per iteration, masked vs unmasked.
    let masked = replay(&root, &graph, script.clone(), 6).await;
    let unmasked = replay(&root, &graph, script.clone(), 0).await;
    println!("\nprompt tokens per iteration (estimated from the request bodies)");
    println!("iteration  masked  unmasked");
    for (index, (m, u)) in masked
        .prompt_tokens
        .iter()
        .zip(&unmasked.prompt_tokens)
        .enumerate()
    {
        println!("{:>9}  {m:>6}  {u:>8}", index + 1);
    }
    let total_m: usize = masked.prompt_tokens.iter().sum();
    let total_u: usize = unmasked.prompt_tokens.iter().sum();
    let last_m = *masked.prompt_tokens.last().unwrap();
    let last_u = *unmasked.prompt_tokens.last().unwrap();
    println!(
        "total prompt tokens over the run: masked {total_m}, unmasked {total_u} (unmasked/masked = {:.2}x); last request {last_m} vs {last_u} ({:.2}x)",
        total_u as f64 / total_m as f64,
        last_u as f64 / last_m as f64
    );

    // Relay's own time per tool call.
    let mut records = masked.records;
    records.extend(unmasked.records);
    for _ in 2..REPLAYS {
        records.extend(replay(&root, &graph, script.clone(), 6).await.records);
    }
    let mut all: Vec<Duration> = records.iter().map(|r| r.duration).collect();
    all.sort();
    println!(
        "\nRelay time per tool call, no LLM ({} calls): p50 {}, p99 {}",
        all.len(),
        ms(percentile(&all, 0.5)),
        ms(percentile(&all, 0.99))
    );
    for tool in ["grep", "read", "glob", "tree", "codegraph"] {
        let mut times: Vec<Duration> = records
            .iter()
            .filter(|r| r.tool == tool)
            .map(|r| r.duration)
            .collect();
        if times.is_empty() {
            continue;
        }
        times.sort();
        println!(
            "  {tool:<9} {:>3} calls  p50 {:>10}  p99 {:>10}",
            times.len(),
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.99))
        );
    }

    // grep against the baseline searcher, output caps off on both sides.
    let (baseline, flags) = grep_baseline();
    println!("\ngrep (caps off) vs {baseline}, median of {TIMING_RUNS} runs");
    for pattern in ["def |func ", "import", "Error\\(", "[A-Z][a-z]+Handler"] {
        let arguments = json!({"pattern": pattern}).to_string();
        let mut relay_runs = Vec::new();
        let mut relay_output = String::new();
        for _ in 0..=TIMING_RUNS {
            let start = Instant::now();
            relay_output = relay_tools::run_tool_with_limits(
                "grep",
                &root,
                &arguments,
                ToolLimits::unbounded(),
            )
            .expect("grep runs");
            relay_runs.push(start.elapsed());
        }
        relay_runs.remove(0);
        let mut base_runs = Vec::new();
        for _ in 0..=TIMING_RUNS {
            let start = Instant::now();
            Command::new(baseline)
                .args(&flags)
                .arg(pattern)
                .arg(&root)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("baseline runs");
            base_runs.push(start.elapsed());
        }
        base_runs.remove(0);
        // One more baseline run, untimed, to count its matching lines.
        let base_output = Command::new(baseline)
            .args(&flags)
            .arg(pattern)
            .arg(&root)
            .stderr(Stdio::null())
            .output()
            .expect("baseline runs");
        let base_matches = base_output.stdout.iter().filter(|&&b| b == b'\n').count();
        let matches = relay_matches(&relay_output);
        let relay = median_of(relay_runs);
        let base = median_of(base_runs);
        println!(
            "  {pattern:<22} relay {:>10}  {baseline} {:>10}  relay/{baseline} = {:.2}  (matches: relay {matches}, {baseline} {base_matches}{})",
            ms(relay),
            ms(base),
            relay.as_secs_f64() / base.as_secs_f64(),
            if matches == base_matches {
                ""
            } else {
                " — COUNTS DIFFER"
            }
        );
    }

    // codegraph callers on the warm graph, of the candidate with the most callers. A toolbox
    // without job totals: 200 calls would otherwise exhaust the job's tool budget and time the
    // refusal instead of the query.
    let warm = Toolbox::new(&root, Some(graph.clone()), ToolLimits::unbounded()).expect("toolbox");
    let candidates: &[(&str, &str)] = if go {
        &[
            ("Errorf", "fmt.Errorf"),
            ("New", "errors.New"),
            ("NewRequest", ".NewRequest"),
        ]
    } else {
        &[
            ("join", "posixpath.join"),
            ("encode", "JSONEncoder.encode"),
            ("dumps", "json.dumps"),
            ("fspath", "os.fspath"),
        ]
    };
    let mut best: Option<(usize, ToolCall, String)> = None;
    for (name, suffix) in candidates {
        let target = qname(&warm, name, suffix).await;
        let callers = call(
            "codegraph",
            json!({"operation": "callers", "qname": target}),
        );
        let lines = warm.call(&callers).await.result.content.lines().count();
        if best.as_ref().is_none_or(|(most, _, _)| lines > *most) {
            best = Some((lines, callers, target));
        }
    }
    let (_, callers, target) = best.expect("candidates");
    let first = warm.call(&callers).await;
    assert!(first.record.is_ok(), "{}", first.result.content);
    println!(
        "\ncodegraph callers result: {} ({} lines, ~{} tokens)",
        first.result.content.lines().next().unwrap_or_default(),
        first.result.content.lines().count(),
        first.record.result_tokens
    );
    let mut times = Vec::with_capacity(CALLERS_CALLS);
    for _ in 0..CALLERS_CALLS {
        let start = Instant::now();
        let _ = warm.call(&callers).await;
        times.push(start.elapsed());
    }
    times.sort();
    println!(
        "\ncodegraph callers {target} on the warm graph ({CALLERS_CALLS} calls): p50 {}, p99 {}",
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99))
    );
}
