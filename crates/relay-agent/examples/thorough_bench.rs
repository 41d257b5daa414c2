//! Thorough mode against a medium explore of the same question, on scripted transcripts over the
//! Python standard library (the `json` package's encoder): LLM calls, the tokens Relay sends
//! (estimated from each request body, ~4 characters a token: the scripted server's own usage
//! figures are constants, so they say nothing), and wall time per query (the scripted server
//! answers at once, so this is Relay's own time: prompts, tools, verification, HTTP round trips).
//!
//! Both transcripts answer the same question with the same citations: thorough mode in 7 calls
//! (intent, then two stages of navigator → synthesizer → critic), the medium explore in 7 turns
//! (6 tool turns, then `submit_report`). The queries alternate, `RUNS` times each, after the code
//! graph is built once (outside the timing).
//!
//! Run: `cargo run --release -p relay-agent --features test-support --example thorough_bench [STDLIB] [RUNS]`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use relay_agent::explore::{ExploreAgent, ExploreConfig, ExploreRequest, Thoroughness};
use relay_agent::llm::scripted::{RecordedRequest, ScriptedLlm, ScriptedReply};
use relay_agent::llm::{LlmClient, Role};
use relay_agent::thorough::analyze;
use relay_agent::thorough::state::TraversalState;
use relay_agent::toolbox::{Toolbox, index_in_memory};
use relay_agent::trace::Tracer;
use relay_tools::ToolLimits;
use serde_json::{Value, json};

const QUESTION: &str = "How does json.dumps choose and run its encoder, and where can a value \
fail to encode?";
const DEFAULT_RUNS: usize = 20;

fn stdlib() -> PathBuf {
    if let Some(arg) = std::env::args().nth(1) {
        return PathBuf::from(arg);
    }
    let output = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .expect("python3 runs");
    PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
}

/// The 1-based line of `path` that contains `needle`.
fn line_of(root: &Path, path: &str, needle: &str) -> u32 {
    let text = std::fs::read_to_string(root.join(path)).expect("the stdlib file exists");
    let index = text
        .lines()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in {path}"));
    u32::try_from(index + 1).unwrap()
}

fn cite(root: &Path, path: &str, needle: &str) -> Value {
    let line = line_of(root, path, needle);
    json!({"path": path, "start_line": line, "end_line": line, "quote": needle})
}

/// The evidence both transcripts cite.
struct Evidence {
    dumps: Value,
    default_cls: Value,
    iterencode: Value,
    type_error: Value,
}

fn evidence(root: &Path) -> Evidence {
    Evidence {
        dumps: cite(root, "json/__init__.py", "def dumps(obj, *, skipkeys=False"),
        default_cls: cite(root, "json/__init__.py", "cls = JSONEncoder"),
        iterencode: cite(
            root,
            "json/encoder.py",
            "def iterencode(self, o, _one_shot=False):",
        ),
        type_error: cite(root, "json/encoder.py", "raise TypeError(f'Object of type"),
    }
}

fn thorough_transcript(root: &Path, e: &Evidence) -> Vec<ScriptedReply> {
    let dumps_line = line_of(root, "json/__init__.py", "def dumps(obj");
    let iter_line = line_of(root, "json/encoder.py", "def iterencode(self");
    vec![
        ScriptedReply::json(json!({
            "primary_intent": "trace json.dumps to its encoder and its failure points",
            "confidence": 0.8,
            "goals": [
                {"id": "g1", "description": "how dumps picks its encoder class", "priority": 1},
                {"id": "g2", "description": "how the encoder runs", "priority": 2, "depends_on": ["g1"]},
                {"id": "g3", "description": "where a value fails to encode", "priority": 3}
            ]
        })),
        ScriptedReply::json(json!({
            "target_goals": ["g1"], "rationale": "read dumps", "feasibility": 0.9,
            "steps": [
                {"tool": "grep", "arguments": {"pattern": "def dumps", "path": "json"}},
                {"tool": "read", "arguments": {"path": "json/__init__.py", "offset": dumps_line, "limit": 60}},
                {"tool": "codegraph", "arguments": {"operation": "search", "name": "JSONEncoder"}}
            ]
        })),
        ScriptedReply::json(json!({"evidence": [
            {"claim": "json.dumps takes an optional cls.", "goals": ["g1"], "citations": [e.dumps]},
            {"claim": "Without cls, dumps uses JSONEncoder.", "goals": ["g1"], "citations": [e.default_cls]}
        ]})),
        ScriptedReply::json(json!({
            "verdict": "APPROVED",
            "goal_status": [{"id": "g1", "status": "satisfied"}, {"id": "g2", "status": "unmet"},
                            {"id": "g3", "status": "unmet"}]
        })),
        ScriptedReply::json(json!({
            "target_goals": ["g2", "g3"], "rationale": "read the encoder", "feasibility": 0.8,
            "steps": [
                {"tool": "read", "arguments": {"path": "json/encoder.py", "offset": iter_line, "limit": 60}},
                {"tool": "grep", "arguments": {"pattern": "raise TypeError", "path": "json/encoder.py"}},
                {"tool": "codegraph", "arguments": {"operation": "search", "name": "iterencode"}}
            ]
        })),
        ScriptedReply::json(json!({"evidence": [
            {"claim": "JSONEncoder.iterencode produces the output chunks.", "goals": ["g2"], "citations": [e.iterencode]},
            {"claim": "JSONEncoder.default raises TypeError for unsupported objects.", "goals": ["g3"], "citations": [e.type_error]}
        ]})),
        ScriptedReply::json(json!({
            "verdict": "APPROVED",
            "goal_status": [{"id": "g2", "status": "satisfied"}, {"id": "g3", "status": "satisfied"}]
        })),
    ]
}

fn medium_transcript(root: &Path, e: &Evidence) -> Vec<ScriptedReply> {
    let dumps_line = line_of(root, "json/__init__.py", "def dumps(obj");
    let iter_line = line_of(root, "json/encoder.py", "def iterencode(self");
    let turns = [
        ("grep", json!({"pattern": "def dumps", "path": "json"})),
        (
            "read",
            json!({"path": "json/__init__.py", "offset": dumps_line, "limit": 60}),
        ),
        (
            "codegraph",
            json!({"operation": "search", "name": "JSONEncoder"}),
        ),
        (
            "read",
            json!({"path": "json/encoder.py", "offset": iter_line, "limit": 60}),
        ),
        (
            "grep",
            json!({"pattern": "raise TypeError", "path": "json/encoder.py"}),
        ),
        (
            "codegraph",
            json!({"operation": "search", "name": "iterencode"}),
        ),
    ];
    let mut script: Vec<ScriptedReply> = turns
        .into_iter()
        .map(|(tool, args)| ScriptedReply::tool_calls(vec![(tool, args)]))
        .collect();
    script.push(ScriptedReply::tool_calls(vec![(
        "submit_report",
        json!({
            "answer": "dumps uses cls or JSONEncoder; iterencode produces the chunks; default raises TypeError.",
            "evidence": [e.dumps, e.default_cls, e.iterencode, e.type_error],
            "confidence": "high", "unanswered": []
        }),
    )]));
    script
}

fn client(server: &ScriptedLlm) -> LlmClient {
    server.client(Role::Explore)
}

/// Estimated tokens of everything sent (request bodies, ~4 characters a token).
fn sent_tokens(requests: &[RecordedRequest]) -> usize {
    requests
        .iter()
        .map(|r| r.body.to_string().chars().count().div_ceil(4))
        .sum()
}

struct Figures {
    calls: usize,
    sent_tokens: usize,
    largest_request: usize,
    citations: usize,
    wall_ms: Vec<f64>,
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main]
async fn main() {
    let root = stdlib();
    let runs: usize = std::env::args()
        .nth(2)
        .and_then(|n| n.parse().ok())
        .unwrap_or(DEFAULT_RUNS);
    println!("tree: {}", root.display());
    let started = Instant::now();
    let graph = index_in_memory(&root, None)
        .await
        .expect("the tree indexes");
    println!(
        "code graph built in {:.1} s (outside the timing)",
        started.elapsed().as_secs_f64()
    );
    let toolbox = Arc::new(Toolbox::new(&root, Some(graph), ToolLimits::default()).unwrap());
    let e = evidence(&root);

    let mut thorough = Figures {
        calls: 0,
        sent_tokens: 0,
        largest_request: 0,
        citations: 0,
        wall_ms: Vec::new(),
    };
    let mut medium = Figures {
        calls: 0,
        sent_tokens: 0,
        largest_request: 0,
        citations: 0,
        wall_ms: Vec::new(),
    };
    for _ in 0..runs {
        let server = ScriptedLlm::start(thorough_transcript(&root, &e)).await;
        let llm = client(&server);
        let start = Instant::now();
        let report = analyze(
            &llm,
            &toolbox,
            QUESTION,
            &mut TraversalState::default(),
            &Tracer::noop(),
            ExploreConfig::default().thorough_time_limit(),
        )
        .await
        .expect("the thorough query ends in a report");
        thorough.wall_ms.push(start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(report.answer.claims.len(), 4, "{}", report.answer.text);
        let requests = server.requests();
        thorough.calls = requests.len();
        thorough.sent_tokens = sent_tokens(&requests);
        thorough.largest_request = requests
            .iter()
            .map(|r| sent_tokens(std::slice::from_ref(r)))
            .max()
            .unwrap_or(0);
        thorough.citations = report.answer.claims.iter().map(|c| c.citations.len()).sum();

        let server = ScriptedLlm::start(medium_transcript(&root, &e)).await;
        let agent = ExploreAgent::new(client(&server), toolbox.clone(), ExploreConfig::default());
        let start = Instant::now();
        let report = agent
            .explore(ExploreRequest::new(QUESTION, Thoroughness::Medium))
            .await
            .expect("the medium explore ends in a report");
        medium.wall_ms.push(start.elapsed().as_secs_f64() * 1e3);
        let requests = server.requests();
        medium.calls = requests.len();
        medium.sent_tokens = sent_tokens(&requests);
        medium.largest_request = requests
            .iter()
            .map(|r| sent_tokens(std::slice::from_ref(r)))
            .max()
            .unwrap_or(0);
        medium.citations = report.evidence.len();
    }
    let t_wall = median(&mut thorough.wall_ms);
    let m_wall = median(&mut medium.wall_ms);
    println!("\n{runs} runs each, alternating; same question, same citations");
    println!(
        "{:<10} {:>9} {:>16} {:>16} {:>10} {:>14}",
        "mode", "llm calls", "tokens sent", "largest request", "citations", "wall (median)"
    );
    for (name, f, wall) in [("thorough", &thorough, t_wall), ("medium", &medium, m_wall)] {
        println!(
            "{:<10} {:>9} {:>16} {:>16} {:>10} {:>11.1} ms",
            name, f.calls, f.sent_tokens, f.largest_request, f.citations, wall
        );
    }
    println!(
        "ratio thorough/medium: llm calls {:.2}×, tokens sent {:.2}×, wall {:.2}×",
        thorough.calls as f64 / medium.calls as f64,
        thorough.sent_tokens as f64 / medium.sent_tokens as f64,
        t_wall / m_wall
    );
}
