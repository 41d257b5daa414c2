//! `relay trace`'s timeline: one line per event, then token totals and cost per role. Pure
//! functions over stored rows, so the output is tested exactly.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use relay_store::trace::{Event, Run};
use serde_json::Value;

pub use relay_core::prices::Prices;

/// LLM spend of one role.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RoleTotals {
    pub calls: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub tokens_cached: u64,
    /// USD of the calls whose model has a price.
    pub cost: f64,
    /// Models called without a configured price (their cost is not guessed).
    pub unpriced: Vec<String>,
}

/// Totals per role over `events` (their `llm_call`s).
pub fn totals(events: &[Event], prices: &Prices) -> BTreeMap<String, RoleTotals> {
    let mut totals: BTreeMap<String, RoleTotals> = BTreeMap::new();
    for event in events.iter().filter(|e| e.kind == "llm_call") {
        let p = &event.payload;
        let role = p["role"].as_str().unwrap_or("unknown").to_owned();
        let model = p["model"].as_str().unwrap_or("unknown");
        let (tokens_in, tokens_out, cached) = (
            number(p, "tokens_in"),
            number(p, "tokens_out"),
            number(p, "tokens_cached"),
        );
        let role = totals.entry(role).or_default();
        role.calls += 1;
        role.tokens_in += tokens_in;
        role.tokens_out += tokens_out;
        role.tokens_cached += cached;
        match prices.get(model) {
            Some(price) => role.cost += price.cost(tokens_in, cached, tokens_out),
            None if !role.unpriced.iter().any(|m| m == model) => {
                role.unpriced.push(model.to_owned())
            }
            None => {}
        }
    }
    totals
}

fn number(payload: &Value, key: &str) -> u64 {
    payload[key].as_u64().unwrap_or(0)
}

/// The header line of a run.
pub fn run_header(run: &Run) -> String {
    let state = run
        .outcome
        .as_deref()
        .unwrap_or("running (or its worker died)");
    let mut line = format!(
        "run {} · attempt {} · worker {} · started {} · {state}",
        run.id,
        run.attempt,
        run.worker,
        run.started_at.format("%Y-%m-%d %H:%M:%S%.3f UTC"),
    );
    if run.dropped > 0 {
        let _ = write!(line, " · {} events dropped", run.dropped);
    }
    line
}

/// One event as a timeline line, its time relative to its run's start.
pub fn event_line(event: &Event, run_started: chrono::DateTime<chrono::Utc>) -> String {
    let offset = (event.at - run_started).num_milliseconds() as f64 / 1000.0;
    format!(
        "  +{offset:>8.3}s  {:<14} {:<18} {}",
        event.agent,
        event.kind,
        summary(&event.kind, &event.payload)
    )
}

/// The one-line summary of an event's payload.
pub fn summary(kind: &str, p: &Value) -> String {
    let s = |key: &str| p[key].as_str().unwrap_or_default().to_owned();
    match kind {
        "llm_call" => format!(
            "{} {}  in {} out {} cached {}  {} ms  {}",
            s("role"),
            s("model"),
            number(p, "tokens_in"),
            number(p, "tokens_out"),
            number(p, "tokens_cached"),
            number(p, "latency_ms"),
            s("outcome"),
        ),
        "tool_call" => {
            let status = if p["ok"].as_bool().unwrap_or(false) {
                "ok".to_owned()
            } else {
                format!("error: {}", s("error"))
            };
            format!(
                "{} {}  {} ms  {} tok  {status}",
                s("tool"),
                s("args"),
                number(p, "duration_ms"),
                number(p, "result_tokens"),
            )
        }
        "tool_start" => format!("{} {}  [{}]", s("tool"), s("args"), s("call_id")),
        "progress" => format!("{} {}/{}", s("step"), number(p, "done"), number(p, "total")),
        "log" => format!("{}: {}", s("about"), s("note")),
        "stage" => {
            let rest = others(p, &["stage", "phase"]);
            format!("{} {}{rest}", s("stage"), s("phase"))
        }
        "decision" => {
            let rest = others(p, &["decision"]);
            format!("{}{rest}", s("decision"))
        }
        "validation_failure" => {
            let errors = s("errors");
            let first = errors.lines().next().unwrap_or_default();
            let more = errors.lines().count().saturating_sub(1);
            if more > 0 {
                format!("{first} (+{more} more)")
            } else {
                first.to_owned()
            }
        }
        "action" => {
            let status = if p["ok"].as_bool().unwrap_or(false) {
                "ok".to_owned()
            } else {
                format!("failed: {}", s("error"))
            };
            format!("{} {status}", s("action"))
        }
        "error" => s("message"),
        _ => p.to_string(),
    }
}

/// The payload's other fields as ` key=value`, in key order.
fn others(p: &Value, skip: &[&str]) -> String {
    let Some(object) = p.as_object() else {
        return String::new();
    };
    let mut keys: Vec<&String> = object
        .keys()
        .filter(|k| !skip.contains(&k.as_str()))
        .collect();
    keys.sort();
    keys.iter()
        .map(|k| match &object[k.as_str()] {
            Value::String(v) => format!(" {k}={v}"),
            other => format!(" {k}={other}"),
        })
        .collect()
}

/// The totals table.
pub fn totals_table(totals: &BTreeMap<String, RoleTotals>, tool_calls: usize) -> String {
    let mut out = String::new();
    let calls: u64 = totals.values().map(|t| t.calls).sum();
    let _ = writeln!(out, "total: {calls} LLM calls, {tool_calls} tool calls");
    let _ = writeln!(
        out,
        "  {:<10} {:>6} {:>10} {:>10} {:>10}  cost (USD)",
        "role", "calls", "tokens in", "out", "cached"
    );
    let mut cost = 0.0;
    let mut unpriced = Vec::new();
    for (role, t) in totals {
        cost += t.cost;
        let role_cost = if t.unpriced.is_empty() {
            format!("{:.4}", t.cost)
        } else {
            unpriced.extend(t.unpriced.iter().cloned());
            format!(
                "{:.4} + unknown (no price for {})",
                t.cost,
                t.unpriced.join(", ")
            )
        };
        let _ = writeln!(
            out,
            "  {role:<10} {:>6} {:>10} {:>10} {:>10}  {role_cost}",
            t.calls, t.tokens_in, t.tokens_out, t.tokens_cached
        );
    }
    let total = if unpriced.is_empty() {
        format!("{cost:.4}")
    } else {
        format!("{cost:.4} + unknown")
    };
    let _ = writeln!(
        out,
        "  {:<10} {:>6} {:>10} {:>10} {:>10}  {total}",
        "all", "", "", "", ""
    );
    out
}

/// The whole timeline of a finished (or partial) trace.
pub fn render(runs: &[Run], events: &[Event], prices: &Prices) -> String {
    let mut out = String::new();
    for run in runs {
        let _ = writeln!(out, "{}", run_header(run));
        for event in events.iter().filter(|e| e.run_id == run.id) {
            let _ = writeln!(out, "{}", event_line(event, run.started_at));
        }
    }
    let tool_calls = events.iter().filter(|e| e.kind == "tool_call").count();
    out.push_str(&totals_table(&totals(events, prices), tool_calls));
    out
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone, Utc};
    use relay_core::prices::ModelPrice;
    use serde_json::json;

    use super::*;

    fn event(seq: i32, ms: i64, kind: &str, agent: &str, payload: Value) -> Event {
        Event {
            cursor: i64::from(seq) + 100,
            run_id: 1,
            job_id: relay_core::JobId(7),
            seq,
            at: Utc.with_ymd_and_hms(2026, 11, 25, 3, 0, 0).unwrap() + Duration::milliseconds(ms),
            kind: kind.into(),
            agent: agent.into(),
            payload,
        }
    }

    #[test]
    fn a_tool_start_and_a_progress_event_read_as_one_line() {
        assert_eq!(
            summary(
                "tool_start",
                &json!({"call_id": "t7", "tool": "grep", "args": "{\"pattern\":\"x\"}"})
            ),
            "grep {\"pattern\":\"x\"}  [t7]"
        );
        assert_eq!(
            summary(
                "progress",
                &json!({"step": "explore:tools", "done": 2, "total": 3})
            ),
            "explore:tools 2/3"
        );
        assert_eq!(
            summary(
                "log",
                &json!({"about": "rationale", "note": "follow the queue"})
            ),
            "rationale: follow the queue"
        );
    }

    #[test]
    fn the_timeline_and_its_totals() {
        let run = Run {
            id: 1,
            job_id: relay_core::JobId(7),
            issue_id: Some(relay_core::IssueId(3)),
            attempt: 1,
            worker: "host:1:ab".into(),
            started_at: Utc.with_ymd_and_hms(2026, 11, 25, 3, 0, 0).unwrap(),
            finished_at: None,
            outcome: Some("succeeded".into()),
            dropped: 2,
        };
        let events = vec![
            event(
                0,
                0,
                "stage",
                "orchestrator",
                json!({"stage": "cycle", "phase": "begin", "cycle": 0}),
            ),
            event(
                1,
                1_250,
                "llm_call",
                "planner",
                json!({"role": "planner", "model": "gpt-x", "tokens_in": 2_000_000, "tokens_out": 100_000, "tokens_cached": 1_000_000, "latency_ms": 1200, "outcome": "ok"}),
            ),
            event(
                2,
                1_300,
                "tool_call",
                "explore#1",
                json!({"tool": "grep", "args": "{\"pattern\":\"Retry\"}", "duration_ms": 4, "result_tokens": 120, "ok": true}),
            ),
            event(
                3,
                1_400,
                "tool_call",
                "explore#1",
                json!({"tool": "read", "args": "{\"path\":\"x\"}", "duration_ms": 1, "result_tokens": 9, "ok": false, "error": "no such file"}),
            ),
            event(
                4,
                2_000,
                "llm_call",
                "explore",
                json!({"role": "explore", "model": "local", "tokens_in": 500, "tokens_out": 50, "tokens_cached": 0, "latency_ms": 90, "outcome": "rate_limited"}),
            ),
            event(
                5,
                2_100,
                "validation_failure",
                "planner",
                json!({"errors": "FAILED: a | b | permanent\nFAILED: c | d | permanent"}),
            ),
            event(
                6,
                2_200,
                "decision",
                "planner",
                json!({"decision": "stopped", "reason": "cap"}),
            ),
            event(
                7,
                2_300,
                "action",
                "executor",
                json!({"action": "post_comment", "ok": true}),
            ),
        ];
        let prices = Prices::from([(
            "gpt-x".to_owned(),
            ModelPrice {
                input: 1.0,
                output: 10.0,
                cached_input: Some(0.1),
            },
        )]);
        let expected = "\
run 1 · attempt 1 · worker host:1:ab · started 2026-11-25 03:00:00.000 UTC · succeeded · 2 events dropped
  +   0.000s  orchestrator   stage              cycle begin cycle=0
  +   1.250s  planner        llm_call           planner gpt-x  in 2000000 out 100000 cached 1000000  1200 ms  ok
  +   1.300s  explore#1      tool_call          grep {\"pattern\":\"Retry\"}  4 ms  120 tok  ok
  +   1.400s  explore#1      tool_call          read {\"path\":\"x\"}  1 ms  9 tok  error: no such file
  +   2.000s  explore        llm_call           explore local  in 500 out 50 cached 0  90 ms  rate_limited
  +   2.100s  planner        validation_failure FAILED: a | b | permanent (+1 more)
  +   2.200s  planner        decision           stopped reason=cap
  +   2.300s  executor       action             post_comment ok
total: 2 LLM calls, 2 tool calls
  role        calls  tokens in        out     cached  cost (USD)
  explore         1        500         50          0  0.0000 + unknown (no price for local)
  planner         1    2000000     100000    1000000  2.1000
  all                                                 2.1000 + unknown
";
        assert_eq!(render(&[run], &events, &prices), expected);
    }

    #[test]
    fn prices_parse_from_toml() {
        let prices: Prices =
            toml::from_str("[\"gpt-5-mini\"]\ninput = 0.25\noutput = 2.0\ncached_input = 0.025\n")
                .unwrap();
        assert_eq!(prices["gpt-5-mini"].cached_input, Some(0.025));
    }
}
