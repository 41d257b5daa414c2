//! The evaluation harness: the shipped suite's expected lines against the current tree (so the
//! suite cannot rot), and the scores of a perfect and a poor scripted transcript.

use relay_agent::eval::{Suite, run_suite};
use relay_agent::explore::ExploreConfig;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use serde_json::json;

use crate::support::*;

const REPO_ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// Every `cite` of `eval/relay.toml` names its line's text: the test fails when the code moves
/// and the suite does not follow.
#[test]
fn the_shipped_suite_cites_lines_of_the_current_tree() {
    let text = std::fs::read_to_string(format!("{REPO_ROOT}/eval/relay.toml")).unwrap();
    let suite: Suite = toml::from_str(&text).unwrap();
    let ids: Vec<&str> = suite.questions.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "search-lookup",
            "callers",
            "kind-filter",
            "callees-chain",
            "usages",
            "implementations"
        ],
        "the seed's six test questions"
    );
    for question in &suite.questions {
        assert!(!question.cite.is_empty(), "{} cites nothing", question.id);
        for expected in &question.cite {
            let file = std::fs::read_to_string(format!("{REPO_ROOT}/{}", expected.path))
                .unwrap_or_else(|e| panic!("{}: {}: {e}", question.id, expected.path));
            let line = file
                .lines()
                .nth(expected.line as usize - 1)
                .unwrap_or_default();
            assert!(
                line.contains(&expected.contains),
                "{}: {}:{} is now {line:?}, not {:?}",
                question.id,
                expected.path,
                expected.line,
                expected.contains
            );
        }
    }
}

const SUITE: &str = r#"
[[question]]
id = "callers"
question = "Who calls Planner.Plan, and what does it call?"
facts = ["main", "helper"]
[[question.cite]]
path = "pkg/planner/plan.go"
line = 7
contains = "func (p *Planner) Plan() error {"

[[question]]
id = "callers-again"
question = "Who calls Planner.Plan?"
facts = ["main"]
[[question.cite]]
path = "pkg/planner/plan.go"
line = 7
contains = "func (p *Planner) Plan() error {"
"#;

fn codegraph(arguments: serde_json::Value) -> ScriptedReply {
    call("codegraph", arguments)
}

#[tokio::test]
async fn a_perfect_and_a_poor_transcript_score_as_they_should() {
    let repo = checkout();
    let qname = "example.com/relay/pkg/planner.Planner.Plan";
    let server = ScriptedLlm::start(vec![
        // Perfect: search, callers, callees; the right citation; every fact.
        codegraph(json!({"operation": "search", "name": "Plan", "kind": "method"})),
        codegraph(json!({"operation": "callers", "qname": qname})),
        codegraph(json!({"operation": "callees", "qname": qname})),
        submit(
            "Planner.Plan is called by main and calls helper.",
            json!([good_citation()]),
            "high",
        ),
        // Poor: the graph finds nothing, grep, then a citation of the wrong file and no fact.
        codegraph(json!({"operation": "search", "name": "Nothing"})),
        call("grep", json!({"pattern": "Plan"})),
        submit(
            "Not sure.",
            json!([{"path": "go.mod", "start_line": 1, "end_line": 1, "quote": "module example.com/relay"}]),
            "low",
        ),
    ])
    .await;
    let agent = agent(&server, repo.path(), ExploreConfig::default()).await;
    let suite: Suite = toml::from_str(SUITE).unwrap();
    let report = run_suite(&agent, &suite).await.unwrap();

    let perfect = &report.questions[0];
    assert_eq!(perfect.score, 1.0, "{perfect:?}");
    assert_eq!(
        (perfect.files_hit, perfect.lines_hit, perfect.facts_hit),
        (1, 1, 2)
    );
    assert!(perfect.tools.used_codegraph);
    assert!(perfect.tools.chained_search_callers_callees);
    assert!(!perfect.tools.fell_back_to_grep);
    assert_eq!(perfect.iterations, 4);

    let poor = &report.questions[1];
    assert_eq!(poor.score, 0.0, "{poor:?}");
    assert_eq!(poor.facts_missed, ["main"]);
    assert_eq!(poor.tools.sequence, ["codegraph search", "grep"]);
    assert!(poor.tools.fell_back_to_grep);
    assert!(!poor.tools.chained_search_callers_callees);

    assert_eq!(report.score, 0.5);
    assert_eq!(report.tokens_in, perfect.tokens_in + poor.tokens_in);
    let text = report.to_text();
    assert!(text.contains("callers-again"), "{text}");
    assert!(
        text.contains("chained search → callers → callees"),
        "{text}"
    );
    assert!(text.contains("fell back to grep"), "{text}");
}
