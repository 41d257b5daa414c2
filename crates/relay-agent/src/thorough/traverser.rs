//! The Traverser (no LLM): runs a stage's planned tool steps through the job's [`Toolbox`] —
//! which applies the code tools' deterministic retries (the grep ladder, closest paths, partial
//! symbol matches) — under the query's bounds (the per-step caps of [`super::step_caps`], the
//! query's files, code tokens, depth and hops of [`QueryBudget`]) and its own retry contract
//! ([`super::recovery`]: a timed-out step narrowed then skipped, a missing file checked in the
//! index, a missing symbol looked for in scope and imports), records each step's attempt history,
//! and feeds the traversal state.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::bounds::{BoundHit, QueryBudget};
use super::recovery;
use super::state::{CallEdge, Snippet, TraversalState};
use super::step_caps::cap_output;
use std::time::Duration;

use crate::llm::{ToolCall, ToolResult};
use crate::toolbox::{CallStatus, CallTrace, ToolCallRecord, ToolOutcome, Toolbox};
use crate::trace::{TraceKind, Tracer, capped as capped_text};
use relay_tools::ToolName;
use relay_tools::output::estimate_tokens;

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
    /// The step timed out, and so did its narrower retry (or it could not be narrower): the
    /// stage goes on without it.
    Skipped {
        reason: String,
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
    /// What the step's own bound cut from the output, if anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut: Option<String>,
    /// The output kept for the Synthesizer (empty unless `Ok`).
    #[serde(skip)]
    pub output: String,
    /// The toolbox's record of the call (`None` when a bound refused the step before it ran).
    #[serde(skip)]
    pub call: Option<ToolCallRecord>,
    /// The calls of the retry contract before `call` (the timed-out try, the index check, the
    /// symbol's resolve), in order.
    #[serde(skip)]
    pub recovery_calls: Vec<ToolCallRecord>,
}

/// Snippet text kept in the traversal state at most (characters).
const SNIPPET_CHARS: usize = 2_000;

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
            arguments: capped_text(&arguments),
            status: StepStatus::Refused {
                bound: bound.to_string(),
            },
            attempts: Vec::new(),
            result_tokens: 0,
            cut: None,
            output: String::new(),
            call: None,
            recovery_calls: Vec::new(),
        };
        if let Some(bound) = stopped {
            records.push(refused(bound));
            continue;
        }
        let admitted = budget.step_time().and_then(|time| {
            budget
                .hop()
                .and_then(|()| admit(step, budget))
                .map(|()| time)
        });
        let step_time = match admitted {
            Ok(time) => time,
            Err(bound) => {
                stopped = Some(bound);
                tracer.event(
                    TraceKind::Decision,
                    json!({ "decision": "step_refused", "reason": bound.to_string() }),
                );
                records.push(refused(bound));
                continue;
            }
        };
        let id = format!("thorough-{i}");
        let (outcome, timed_out) = run_call(toolbox, tracer, &id, step, step_time).await;
        let recovered = recover(
            toolbox, tracer, &id, step, outcome, timed_out, budget, state,
        )
        .await;
        let (step, outcome) = (&recovered.step, recovered.outcome);
        let record = &outcome.record;
        // A stage's plan is a long step: say how far it is after each tool step.
        crate::trace::progress(tracer, "thorough:traverse", i + 1, steps.len());
        // The tools print their retry ladder as `Attempts: tried …: 0 matches; tried …: 3 matches`.
        let mut attempts: Vec<String> = outcome
            .result
            .content
            .lines()
            .find_map(|line| line.strip_prefix("Attempts: "))
            .map(|tried| tried.split("; ").map(str::to_owned).collect())
            .unwrap_or_default();
        attempts.splice(0..0, recovered.attempts);
        let capped = (!outcome.result.is_error && recovered.skipped.is_none())
            .then(|| cap_output(&step.tool, outcome.result.content.clone()));
        let status = match &capped {
            None if recovered.skipped.is_some() => StepStatus::Skipped {
                reason: recovered.skipped.clone().unwrap_or_default(),
            },
            None => StepStatus::Failed {
                message: capped_text(outcome.result.content.lines().next().unwrap_or_default()),
            },
            Some(kept) => match budget.spend_code_tokens(estimate_tokens(&kept.text) as u64) {
                Err(bound) => {
                    stopped = Some(bound);
                    StepStatus::Refused {
                        bound: bound.to_string(),
                    }
                }
                Ok(()) => StepStatus::Ok,
            },
        };
        let (output, cut) = match capped {
            Some(kept) if status == StepStatus::Ok => (kept.text, kept.cut),
            _ => (String::new(), None),
        };
        if status == StepStatus::Ok {
            remember(step, &output, state);
        }
        records.push(StepRecord {
            tool: step.tool.clone(),
            arguments: capped_text(&step.arguments.to_string()),
            status,
            attempts,
            result_tokens: record.result_tokens,
            cut,
            output,
            call: Some(outcome.record.clone()),
            recovery_calls: recovered.calls,
        });
    }
    records
}

/// Runs one tool call under `time`, traced; `true` when it timed out.
async fn run_call(
    toolbox: &Toolbox,
    tracer: &Tracer,
    id: &str,
    step: &Step,
    time: Duration,
) -> (ToolOutcome, bool) {
    let call = ToolCall {
        id: id.to_owned(),
        name: step.tool.clone(),
        arguments: step.arguments.to_string(),
    };
    let started = CallTrace::start(tracer, &call);
    let began = std::time::Instant::now();
    // No time at all is a timeout before the call, not a race with its first poll.
    let (outcome, timed_out) = if time.is_zero() {
        (timed_out(&call, time, Duration::ZERO), true)
    } else {
        match tokio::time::timeout(time, toolbox.call(&call)).await {
            Ok(outcome) => (outcome, false),
            Err(_) => (timed_out(&call, time, began.elapsed()), true),
        }
    };
    started.end(tracer, &outcome.record);
    (outcome, timed_out)
}

/// A step after the retry contract: the step that produced `outcome` (narrowed, redirected to
/// the indexed file, or with the symbol found in scope), what was tried before, the calls made.
struct Recovered {
    step: Step,
    outcome: ToolOutcome,
    attempts: Vec<String>,
    calls: Vec<ToolCallRecord>,
    /// Why the step was given up (it timed out twice, or could not be narrower).
    skipped: Option<String>,
}

/// The retry contract ([`super::recovery`]): at most one extra try per step, each traced as a
/// `step_recovery` decision.
#[allow(clippy::too_many_arguments)]
async fn recover(
    toolbox: &Toolbox,
    tracer: &Tracer,
    id: &str,
    step: &Step,
    outcome: ToolOutcome,
    timed_out: bool,
    budget: &mut QueryBudget,
    state: &TraversalState,
) -> Recovered {
    let mut done = Recovered {
        step: step.clone(),
        outcome,
        attempts: Vec::new(),
        calls: Vec::new(),
        skipped: None,
    };
    // The detail names paths, patterns and qnames: recorded as the tool arguments are.
    let decide = |kind: &str, detail: Value| {
        let detail = tracer.argument_detail(detail);
        tracer.event(
            TraceKind::Decision,
            json!({"decision": "step_recovery", "kind": kind, "tool": step.tool, "detail": detail}),
        );
    };
    if timed_out {
        let first = done.outcome.result.content.clone();
        let narrow = recovery::narrowed(step, state);
        let time = budget.retry_time();
        let (Some((narrow, what)), Ok(time)) = (narrow, time) else {
            let reason = format!("{first}; no narrower scope: skipped");
            decide("skip", json!({"reason": reason}));
            done.attempts.push(reason.clone());
            done.skipped = Some(reason);
            return done;
        };
        decide(
            "narrow",
            json!({"narrowed": what, "arguments": narrow.arguments}),
        );
        done.attempts
            .push(format!("timed out; retried with a narrower {what}"));
        let (again, twice) =
            run_call(toolbox, tracer, &format!("{id}-narrow"), &narrow, time).await;
        done.calls
            .push(std::mem::replace(&mut done.outcome, again).record);
        done.step = narrow;
        if twice {
            let reason = format!("timed out again with {what}: skipped");
            decide("skip", json!({"reason": reason}));
            done.attempts.push(reason.clone());
            done.skipped = Some(reason);
        }
        return done;
    }
    // A missing symbol is an answer of the codegraph tool, not an error; a missing file is one.
    if !toolbox.names().contains(&ToolName::Codegraph.as_str()) {
        return done;
    }
    let message = done.outcome.result.content.clone();
    let Ok(time) = budget.step_time() else {
        return done;
    };
    if let Some(path) =
        recovery::missing_file(step, &message).filter(|_| done.outcome.result.is_error)
    {
        let check = recovery::index_check(&path);
        let (found, _) = run_call(toolbox, tracer, &format!("{id}-index"), &check, time).await;
        let files = recovery::indexed_files(&found.result.content, &path);
        decide("index_check", json!({"path": path, "indexed": files}));
        done.calls.push(found.record);
        let [file] = files.as_slice() else {
            done.attempts.push(format!(
                "index check: {} indexed files named like {path}{}",
                files.len(),
                if files.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", files.join(", "))
                }
            ));
            return done;
        };
        if budget.read_file(file).is_err() {
            done.attempts
                .push(format!("index check: found {file}, past the file bound"));
            return done;
        }
        done.attempts
            .push(format!("index check: tried indexed path {file}"));
        let redirected = recovery::with_path(step, file);
        let (read, _) =
            run_call(toolbox, tracer, &format!("{id}-indexed"), &redirected, time).await;
        done.calls
            .push(std::mem::replace(&mut done.outcome, read).record);
        done.step = redirected;
    } else if let Some(qname) = recovery::missing_symbol(step, &message) {
        let resolve = recovery::resolve_short_name(&qname);
        let (found, _) = run_call(toolbox, tracer, &format!("{id}-resolve"), &resolve, time).await;
        let chosen = recovery::in_scope(&found.result.content, state);
        done.calls.push(found.record);
        match chosen {
            Ok((better, why)) => {
                decide(
                    "scope",
                    json!({"qname": qname, "retried": better, "why": why}),
                );
                done.attempts
                    .push(format!("symbol {qname} not found; tried {better} ({why})"));
                let scoped = recovery::with_qname(step, &better);
                let (retried, _) =
                    run_call(toolbox, tracer, &format!("{id}-scoped"), &scoped, time).await;
                done.calls
                    .push(std::mem::replace(&mut done.outcome, retried).record);
                done.step = scoped;
            }
            Err(found) => {
                decide(
                    "scope",
                    json!({"qname": qname, "retried": null, "found": found}),
                );
                done.attempts.push(format!(
                    "symbol {qname} not found; no single match in scope or imports ({found})"
                ));
            }
        }
    }
    done
}

/// The outcome of a step abandoned after `limit`: a failed call, as the model would read it.
fn timed_out(call: &ToolCall, limit: Duration, took: Duration) -> ToolOutcome {
    let message = format!(
        "the step timed out after {} ms; try a narrower step",
        limit.as_millis()
    );
    let status = CallStatus::Error {
        message: message.clone(),
    };
    ToolOutcome {
        record: ToolCallRecord::new(call, took, status, &message),
        result: ToolResult::error(&call.id, message),
    }
}

/// The query bounds a step needs before it runs: a read is a file of the query's
/// [`super::bounds::QUERY_FILES`]; following callers or callees goes `depth` levels deeper.
fn admit(step: &Step, budget: &mut QueryBudget) -> Result<(), BoundHit> {
    match step.tool.parse() {
        Ok(ToolName::Read) => match step.arguments["path"].as_str() {
            Some(path) => budget.read_file(path),
            None => Ok(()),
        },
        Ok(ToolName::Codegraph)
            if matches!(
                step.arguments["operation"].as_str(),
                Some("callers" | "callees")
            ) =>
        {
            let levels = step.arguments["depth"].as_u64().unwrap_or(1).clamp(1, 3);
            (0..levels).try_for_each(|_| budget.descend())
        }
        _ => Ok(()),
    }
}

/// The first and last line numbers a `read` output shows (its lines are `  NN\ttext`), after any
/// cut of the step's bound.
fn shown_lines(output: &str) -> Option<(u32, u32)> {
    let mut numbers = output.lines().filter_map(|line| {
        let (number, _) = line.split_once('\t')?;
        number.trim_start().parse::<u32>().ok()
    });
    let first = numbers.next()?;
    Some((first, numbers.next_back().unwrap_or(first)))
}

/// Feeds the traversal state with what a successful step saw.
fn remember(step: &Step, output: &str, state: &mut TraversalState) {
    let arguments = &step.arguments;
    // A read is a file explored; a grep's or tree's `path` may be a directory, and is not.
    if let Some(path) = arguments["path"].as_str()
        && step.tool == ToolName::Read
    {
        state.files.push(path.to_owned());
        let offset = arguments["offset"].as_u64().unwrap_or(1).max(1);
        let offset = u32::try_from(offset).unwrap_or(u32::MAX);
        let (start_line, end_line) = shown_lines(output).unwrap_or((offset, offset));
        state.snippets.push(Snippet {
            path: path.to_owned(),
            start_line,
            end_line,
            text: output.chars().take(SNIPPET_CHARS).collect(),
        });
    }
    if let Some(name) = arguments["qname"].as_str().or(arguments["name"].as_str()) {
        state.symbols.push(name.to_owned());
        let operation = arguments["operation"].as_str();
        if step.tool == ToolName::Codegraph && matches!(operation, Some("callers" | "callees")) {
            state.call_chain.push(name.to_owned());
            for other in direct_calls(output) {
                let (from, to) = if operation == Some("callers") {
                    (other, name.to_owned())
                } else {
                    (name.to_owned(), other)
                };
                state.edges.push(CallEdge { from, to });
            }
        }
    }
    if step.tool == ToolName::Tree {
        state
            .dirs
            .push(arguments["path"].as_str().unwrap_or(".").to_owned());
    }
}

/// The symbols a callers/callees answer lists at depth 1 (deeper ones are reached through
/// another symbol, not by a direct call): each entry's qname, or its name when it has none.
/// Bounded by the answer, which the tool already caps.
fn direct_calls(output: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut entry: Option<(String, bool)> = None;
    let flush = |entry: &mut Option<(String, bool)>, found: &mut Vec<String>| {
        if let Some((name, true)) = entry.take() {
            found.push(name);
        }
    };
    for line in output.lines() {
        if let Some(rest) = line.strip_prefix("  ")
            && !rest.starts_with(' ')
            && !rest.is_empty()
        {
            flush(&mut entry, &mut found);
            let name = rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_owned();
            entry = Some((name, !rest.contains("[depth ")));
        } else if let Some(qname) = line.strip_prefix("    qname: ")
            && let Some((name, _)) = entry.as_mut()
        {
            *name = qname.trim().to_owned();
        }
    }
    flush(&mut entry, &mut found);
    found
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
            "package pkg\n\nfunc GetUserName() string { return \"\" }\n\nfunc Greet() string { return GetUserName() }\n",
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
        let mut budget = QueryBudget::new();
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

    /// A step that takes longer than its time is a skipped step the Critic reads; once the query's
    /// wall-clock time is up, the remaining steps are refused by that bound, not run.
    #[tokio::test]
    async fn a_step_times_out_and_the_query_clock_is_checked_between_steps() {
        let dir = repo();
        let toolbox = Toolbox::new(dir.path(), None, Default::default()).unwrap();
        let mut state = TraversalState::default();
        let steps = vec![step("grep", json!({"pattern": "GetUserName"}))];
        let mut budget = QueryBudget::new().with_step_timeout(Duration::ZERO);
        let records = traverse(&toolbox, &steps, &mut budget, &mut state, &Tracer::noop()).await;
        // Nothing read yet: no narrower scope, so the step is skipped at once.
        match &records[0].status {
            StepStatus::Skipped { reason } => {
                assert!(reason.contains("timed out"), "{reason}")
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
        assert!(records[0].call.is_some(), "the call is still recorded");

        let mut budget = QueryBudget::new().with_deadline(tokio::time::Instant::now());
        let records = traverse(&toolbox, &steps, &mut budget, &mut state, &Tracer::noop()).await;
        assert_eq!(
            records[0].status,
            StepStatus::Refused {
                bound: BoundHit::WallTime.to_string()
            }
        );
        assert_eq!(budget.agent_hops(), 0, "a refused step is no hop");
    }

    #[tokio::test]
    async fn the_file_bound_stops_the_stage_and_names_itself() {
        let dir = repo();
        let toolbox = Toolbox::new(dir.path(), None, Default::default()).unwrap();
        let mut budget = QueryBudget::new();
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

    #[tokio::test]
    async fn code_tokens_are_counted_after_each_steps_own_cap() {
        let dir = tempfile::tempdir().unwrap();
        let line = format!("// {}\n", "x".repeat(36));
        for i in 0..8 {
            std::fs::write(dir.path().join(format!("big{i}.go")), line.repeat(600)).unwrap();
        }
        let toolbox = Toolbox::new(dir.path(), None, Default::default()).unwrap();
        let mut budget = QueryBudget::new();
        let mut state = TraversalState::default();
        let steps: Vec<Step> = (0..8)
            .map(|i| step("read", json!({"path": format!("big{i}.go"), "limit": 500})))
            .collect();
        let records = traverse(&toolbox, &steps, &mut budget, &mut state, &Tracer::noop()).await;
        // Each slice is cut to the step bound, so six fit the query's code tokens; the seventh
        // does not, and the rest are refused by name.
        for record in &records[..6] {
            assert_eq!(record.status, StepStatus::Ok);
            assert!(
                record.cut.as_deref().unwrap().contains("file slice"),
                "{record:?}"
            );
            assert!(
                estimate_tokens(&record.output) as u64
                    <= crate::thorough::bounds::STEP_FILE_SLICE_TOKENS + 30
            );
        }
        for record in &records[6..] {
            assert_eq!(
                record.status,
                StepStatus::Refused {
                    bound: BoundHit::CodeTokens.to_string()
                }
            );
        }
        assert!(budget.code_tokens() <= crate::thorough::bounds::QUERY_CODE_TOKENS);
        assert_eq!(state.snippets.len(), 6);
        // A snippet spans the lines the cut output still shows.
        let first = state.snippets.iter().next().unwrap();
        let last_shown = records[0].output.lines().rev().find_map(|l| {
            l.split_once('\t')
                .and_then(|(n, _)| n.trim_start().parse::<u32>().ok())
        });
        assert_eq!(first.start_line, 1);
        assert_eq!(Some(first.end_line), last_shown);
        assert!(first.end_line < 500, "the step cap cut the slice");
    }

    #[tokio::test]
    async fn following_call_chains_is_bounded_in_depth() {
        let dir = repo();
        let graph = crate::toolbox::index_in_memory(dir.path(), None)
            .await
            .unwrap();
        let toolbox = Toolbox::new(dir.path(), Some(graph), Default::default()).unwrap();
        let mut budget = QueryBudget::new();
        let mut state = TraversalState::default();
        let callers = json!({"operation": "callers", "qname": "pkg.GetUserName", "depth": 3});
        let steps: Vec<Step> = (0..4).map(|_| step("codegraph", callers.clone())).collect();
        let records = traverse(&toolbox, &steps, &mut budget, &mut state, &Tracer::noop()).await;
        let statuses: Vec<&StepStatus> = records.iter().map(|r| &r.status).collect();
        let depth = StepStatus::Refused {
            bound: BoundHit::Depth.to_string(),
        };
        assert_eq!(statuses[..3], [&StepStatus::Ok; 3], "{records:?}");
        assert_eq!(statuses[3], &depth);
        assert_eq!(
            state.call_chain.iter().collect::<Vec<_>>(),
            ["pkg.GetUserName"]
        );
        // The answer's direct callers became edges into the symbol.
        assert!(
            !state.edges.is_empty()
                && state
                    .edges
                    .iter()
                    .all(|e| e.to == "pkg.GetUserName" && e.from != e.to),
            "{:?}",
            state.edges
        );
    }

    #[test]
    fn a_calls_answer_gives_its_depth_one_entries_by_qname() {
        let output = "Callers of pkg.Plan (depth 2) - 3 results:\n\n  main (function)\n    qname: app.main\n    file: main.go:3\n    call site: main.go:5\n\n  Helper (function) [depth 2]\n    qname: app.Helper\n    call site: h.go:2 (calls main)\n\n  run (function)\n    call site: r.go:9\n";
        assert_eq!(direct_calls(output), ["app.main", "run"]);
    }
}
