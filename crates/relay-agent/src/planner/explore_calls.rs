//! Answering a turn's `explore` calls: parsed, capped at the parallel limit, run concurrently.
//! Shared by the planner and the spec writer.

use super::seams::{ExploreRequest, Explorer};
use super::tools::{EXPLORE, ExploreArgs, explore_tool};
use crate::llm::{ToolCall, ToolResult};

/// What a turn's explorations produced.
#[derive(Debug, Default)]
pub struct ExploreAnswers {
    /// One result per call given, in the same order.
    pub results: Vec<ToolResult>,
    /// Explorations actually run.
    pub runs: u32,
    /// Tokens they spent.
    pub tokens: u64,
}

/// Answers `calls` (all named `explore`, or unknown tools, which get an error naming the tools
/// in `known`).
pub async fn answer_explores(
    explorer: &dyn Explorer,
    calls: &[&ToolCall],
    max_parallel: usize,
    known: &[&str],
) -> ExploreAnswers {
    let explore = explore_tool();
    let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
    let mut requests = Vec::new();
    for (index, call) in calls.iter().enumerate() {
        if call.name != EXPLORE {
            let names = known
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ");
            results[index] = Some(ToolResult::error(
                &call.id,
                format!("unknown tool `{}`; the tools are {names}", call.name),
            ));
            continue;
        }
        match explore.parse_call::<ExploreArgs>(call) {
            Err(error) => results[index] = Some(error),
            Ok(_) if requests.len() >= max_parallel => {
                results[index] = Some(ToolResult::error(
                    &call.id,
                    format!(
                        "not run: at most {max_parallel} explorations per turn; ask again next turn"
                    ),
                ));
            }
            Ok(args) => {
                // A call that names no thoroughness gets the repository's default.
                let named = serde_json::from_str::<serde_json::Value>(&call.arguments)
                    .ok()
                    .is_some_and(|value| value.get("thoroughness").is_some());
                let thoroughness = if named {
                    args.thoroughness
                } else {
                    explorer.default_thoroughness()
                };
                requests.push((index, ExploreRequest::new(args.query, thoroughness)));
            }
        }
    }
    let outcomes = futures::future::join_all(
        requests
            .iter()
            .map(|(_, request)| explorer.explore(request.clone())),
    )
    .await;
    let mut answers = ExploreAnswers::default();
    for ((index, _), outcome) in requests.iter().zip(outcomes) {
        answers.runs += 1;
        let call_id = &calls[*index].id;
        results[*index] = Some(match outcome {
            Ok(outcome) => {
                answers.tokens += outcome.tokens;
                ToolResult::ok(call_id, outcome.render())
            }
            Err(failure) => {
                answers.tokens += failure.tokens;
                ToolResult::error(call_id, failure.to_string())
            }
        });
    }
    answers.results = results.into_iter().flatten().collect();
    answers
}
