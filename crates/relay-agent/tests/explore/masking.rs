use relay_agent::explore::{ExploreBudget, ExploreConfig, StopReason};
use relay_agent::llm::scripted::ScriptedLlm;
use serde_json::json;

use crate::support::*;

/// Lines of the big file; each read shows 100 of them.
const BIG_FILE_LINES: usize = 4_000;
const ITERATIONS: usize = 40;

async fn run(keep_turns: usize) -> Vec<usize> {
    let repo = checkout();
    let big: String = (1..=BIG_FILE_LINES)
        .map(|n| {
            format!(
                "// line {n}: some fairly long comment text to make the output weigh something\n"
            )
        })
        .collect();
    std::fs::write(repo.path().join("big.go"), big).unwrap();
    let mut script: Vec<_> = (0..ITERATIONS)
        .map(|i| {
            call(
                "read",
                json!({"path": "big.go", "offset": i * 100 + 1, "limit": 100}),
            )
        })
        .collect();
    script.push(submit(
        "Plan is in plan.go.",
        json!([good_citation()]),
        "medium",
    ));
    let server = ScriptedLlm::start(script).await;
    let config = ExploreConfig {
        keep_turns,
        quick: ExploreBudget {
            max_iterations: 100,
            soft_tokens: u64::MAX,
            hard_tokens: u64::MAX,
        },
        ..ExploreConfig::default()
    };
    let agent = agent(&server, repo.path(), config).await;
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::Submitted);
    assert_eq!(report.iterations as usize, ITERATIONS + 1);
    server
        .requests()
        .iter()
        .map(|request| request.body.to_string().len())
        .collect()
}

#[tokio::test]
async fn masking_keeps_every_request_of_a_40_iteration_run_bounded() {
    // One read result is ~9 KB; six verbatim turns plus 40 one-line summaries and the fixed
    // prompt stay far below this, while the unmasked run passes it by far.
    const BOUND: usize = 100_000;
    let masked = run(6).await;
    assert_eq!(masked.len(), ITERATIONS + 1);
    let largest = *masked.iter().max().unwrap();
    assert!(largest < BOUND, "largest masked request {largest} bytes");

    let unmasked = run(0).await;
    let largest_unmasked = *unmasked.iter().max().unwrap();
    assert!(
        largest_unmasked > 3 * BOUND,
        "unmasked grows: {largest_unmasked} bytes"
    );
}
