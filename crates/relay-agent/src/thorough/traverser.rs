//! The Traverser (no LLM): runs a stage's planned tool steps through the job's [`Toolbox`] —
//! which applies the code tools' deterministic retries (the grep ladder, closest paths, partial
//! symbol matches) — under the query's bounds, records each step's attempt history, and feeds the
//! traversal state.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::bounds::{BoundHit, QueryBudget};
use super::state::TraversalState;
use crate::llm::ToolCall;
use crate::toolbox::Toolbox;
use crate::trace::{TraceKind, Tracer, capped};

/// One planned step: a tool by name with its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Step {
    pub tool: String,
    pub arguments: Value,
}

/// How a step ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StepStatus {
    Ok,
    /// The tool failed (its message, as the model would have seen it).
    Failed {
        message: String,
    },
    /// A bound refused the step; it did not run (or its output was not kept).
    Refused {
        bound: String,
    },
}

/// What one step did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepRecord {
    pub tool: String,
    pub arguments: String,
    #[serde(flatten)]
    pub status: StepStatus,
    /// The tools' retry history (`tried …: 0 matches`), in order; empty when the first try did.
    pub attempts: Vec<String>,
    pub result_tokens: usize,
    /// The output kept for the Synthesizer (empty unless `Ok`).
    #[serde(skip)]
    pub output: String,
}

/// Runs `steps` in order. Stops at the first query-wide bound (the rest are recorded as refused,
/// so the Critic sees what was not done).
pub async fn traverse(
    toolbox: &Toolbox,
    steps: &[Step],
    budget: &mut QueryBudget,
    state: &mut TraversalState,
    tracer: &Tracer,
) -> Vec<StepRecord> {
    let mut records = Vec::with_capacity(steps.len());
    let mut stopped: Option<BoundHit> = None;
    for (i, step) in steps.iter().enumerate() {
        let arguments = step.arguments.to_string();
        let refused = |bound: BoundHit| StepRecord {
            tool: step.tool.clone(),
            arguments: capped(&arguments),
            status: StepStatus::Refused {
                bound: bound.to_string(),
            },
            attempts: Vec::new(),
            result_tokens: 0,
            output: String::new(),
        };
        if let Some(bound) = stopped {
            records.push(refused(bound));
            continue;
        }
        let path = step.arguments["path"].as_str();
        let admitted = budget
            .hop()
            .and_then(|()| match (step.tool.as_str(), path) {
                ("read", Some(path)) => budget.read_file(path),
                _ => Ok(()),
            });
        if let Err(bound) = admitted {
            stopped = Some(bound);
            tracer.event(
                TraceKind::Decision,
                json!({ "decision": "step_refused", "reason": bound.to_string() }),
            );
            records.push(refused(bound));
            continue;
        }
        let call = ToolCall {
            id: format!("thorough-{i}"),
            name: step.tool.clone(),
            arguments: arguments.clone(),
        };
        let outcome = toolbox.call(&call).await;
        let record = &outcome.record;
        tracer.event(
            TraceKind::ToolCall,
            json!({
                "tool": record.tool, "args": record.arguments, "result_tokens": record.result_tokens,
                "duration_ms": u64::try_from(record.duration.as_millis()).unwrap_or(u64::MAX),
                "ok": record.is_ok(),
            }),
        );
        // The tools print their retry ladder as `Attempts: tried …: 0 matches; tried …: 3 matches`.
        let attempts: Vec<String> = outcome
            .result
            .content
            .lines()
            .find_map(|line| line.strip_prefix("Attempts: "))
            .map(|tried| tried.split("; ").map(str::to_owned).collect())
            .unwrap_or_default();
        let status = if outcome.result.is_error {
            StepStatus::Failed {
                message: capped(outcome.result.content.lines().next().unwrap_or_default()),
            }
        } else if let Err(bound) = budget.spend_code_tokens(record.result_tokens as u64) {
            stopped = Some(bound);
            StepStatus::Refused {
                bound: bound.to_string(),
            }
        } else {
            StepStatus::Ok
        };
        if status == StepStatus::Ok {
            if let Some(path) = path {
                state.files.push(path.to_owned());
            }
            if let Some(name) = step.arguments["name"]
                .as_str()
                .or(step.arguments["qname"].as_str())
            {
                state.symbols.push(name.to_owned());
            }
        }
        let output = if status == StepStatus::Ok {
            outcome.result.content.clone()
        } else {
            String::new()
        };
        records.push(StepRecord {
            tool: step.tool.clone(),
            arguments: capped(&arguments),
            status,
            attempts,
            result_tokens: record.result_tokens,
            output,
        });
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thorough::bounds::QUERY_FILES;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
        std::fs::write(
            dir.path().join("pkg/retry.go"),
            "package pkg\n\nfunc GetUserName() string { return \"\" }\n",
        )
        .unwrap();
        for i in 0..QUERY_FILES + 2 {
            std::fs::write(dir.path().join(format!("pkg/f{i}.go")), "package pkg\n").unwrap();
        }
        dir
    }

    fn step(tool: &str, arguments: Value) -> Step {
        Step {
            tool: tool.into(),
            arguments,
        }
    }

    #[tokio::test]
    async fn steps_run_with_retries_history_and_state() {
        let dir = repo();
        let toolbox = Toolbox::new(dir.path(), None, Default::default()).unwrap();
        let mut budget = QueryBudget::new(None);
        let mut state = TraversalState::default();
        let steps = vec![
            // Empty as written: the ladder finds it case-insensitively / broadened.
            step("grep", json!({"pattern": "get_user_name"})),
            step("read", json!({"path": "pkg/retry.go"})),
            step("read", json!({"path": "pkg/missing.go"})),
        ];
        let records = traverse(&toolbox, &steps, &mut budget, &mut state, &Tracer::noop()).await;
        assert_eq!(records[0].status, StepStatus::Ok, "{records:?}");
        assert!(
            records[0].attempts.len() >= 2
                && records[0].attempts.iter().all(|a| a.starts_with("tried ")),
            "the retry history is kept: {:?}",
            records[0].attempts
        );
        assert!(records[0].output.contains("GetUserName"));
        assert_eq!(records[1].status, StepStatus::Ok);
        assert!(matches!(records[2].status, StepStatus::Failed { .. }));
        assert_eq!(state.files.iter().collect::<Vec<_>>(), ["pkg/retry.go"]);
    }

    #[tokio::test]
    async fn the_file_bound_stops_the_stage_and_names_itself() {
        let dir = repo();
        let toolbox = Toolbox::new(dir.path(), None, Default::default()).unwrap();
        let mut budget = QueryBudget::new(None);
        let mut state = TraversalState::default();
        let steps: Vec<Step> = (0..QUERY_FILES + 2)
            .map(|i| step("read", json!({"path": format!("pkg/f{i}.go")})))
            .collect();
        let records = traverse(&toolbox, &steps, &mut budget, &mut state, &Tracer::noop()).await;
        let ok = records
            .iter()
            .filter(|r| r.status == StepStatus::Ok)
            .count();
        assert_eq!(ok, QUERY_FILES);
        for record in &records[QUERY_FILES..] {
            assert_eq!(
                record.status,
                StepStatus::Refused {
                    bound: BoundHit::Files.to_string()
                }
            );
        }
    }
}
