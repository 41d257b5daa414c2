//! Every hint a tool prints that names a tool call — `read(path, offset)`, `continue with
//! offset=201` — must name arguments that tool really accepts: a model that follows a hint must
//! not get an argument error. The hints are collected from real outputs of every tool.

use relay_agent::llm::ToolCall;
use relay_agent::toolbox::{Toolbox, index_in_memory};
use relay_codegraph::ops::CodegraphArgs;
use relay_tools::glob::GlobArgs;
use relay_tools::grep::GrepArgs;
use relay_tools::read::ReadArgs;
use relay_tools::tree::TreeArgs;
use serde_json::{Map, Value, json};

use crate::support::*;

const TOOLS: [&str; 5] = ["grep", "read", "glob", "tree", "codegraph"];

/// `tool(a, b=1)` mentions in `text`: (tool, argument names).
fn call_hints(text: &str) -> Vec<(String, Vec<String>)> {
    let mut hints = Vec::new();
    for tool in TOOLS {
        let needle = format!("{tool}(");
        let mut rest = text;
        while let Some(at) = rest.find(&needle) {
            let preceded_by_word = rest[..at]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_');
            let after = &rest[at + needle.len()..];
            let Some(end) = after.find(')') else { break };
            if !preceded_by_word {
                let names = after[..end]
                    .split(',')
                    .map(|part| part.split('=').next().unwrap().trim().to_owned())
                    .filter(|name| !name.is_empty())
                    .collect();
                hints.push((tool.to_owned(), names));
            }
            rest = &after[end..];
        }
    }
    hints
}

/// `continue with offset=201`-style hints: argument names of the tool that printed them.
fn continuation_hints(text: &str) -> Vec<String> {
    text.match_indices("continue with ")
        .filter_map(|(at, _)| {
            let rest = &text[at + "continue with ".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            rest[name.len()..].starts_with('=').then_some(name)
        })
        .collect()
}

/// Parses `names` (with placeholder values of the right type) with the tool's real argument type.
fn parses(tool: &str, names: &[String]) -> Result<(), String> {
    let mut object = Map::new();
    for name in names {
        let value = match name.as_str() {
            "offset" | "limit" | "context" | "depth" | "max_depth" => json!(1),
            _ => json!("x"),
        };
        object.insert(name.clone(), value);
    }
    // The required arguments the hint does not repeat (the tool's own call supplies them).
    let required: &[(&str, Value)] = match tool {
        "read" => &[("path", json!("x"))],
        "grep" | "glob" => &[("pattern", json!("x"))],
        "codegraph" => &[("operation", json!("search"))],
        _ => &[],
    };
    for (name, value) in required {
        object.entry(*name).or_insert(value.clone());
    }
    let value = Value::Object(object);
    let check =
        |result: Result<(), serde_json::Error>| result.map_err(|e| format!("{tool}{names:?}: {e}"));
    match tool {
        "read" => check(serde_json::from_value::<ReadArgs>(value).map(drop)),
        "grep" => check(serde_json::from_value::<GrepArgs>(value).map(drop)),
        "glob" => check(serde_json::from_value::<GlobArgs>(value).map(drop)),
        "tree" => check(serde_json::from_value::<TreeArgs>(value).map(drop)),
        "codegraph" => {
            // CodegraphArgs ignores unknown fields; check the names against its fields too.
            let known = ["operation", "name", "kind", "file", "qname", "depth"];
            if let Some(unknown) = names.iter().find(|n| !known.contains(&n.as_str())) {
                return Err(format!("codegraph has no argument `{unknown}`"));
            }
            check(serde_json::from_value::<CodegraphArgs>(value).map(drop))
        }
        other => Err(format!("hint names unknown tool {other}")),
    }
}

#[tokio::test]
async fn every_hint_names_arguments_the_tool_accepts() {
    let repo = checkout();
    let long: String = (1..=600).map(|n| format!("line {n}\n")).collect();
    std::fs::write(repo.path().join("long.txt"), long).unwrap();
    let graph = index_in_memory(repo.path(), None).await.unwrap();
    let toolbox = Toolbox::new(repo.path(), Some(graph), Default::default()).unwrap();
    let calls: Vec<(&str, Value)> = vec![
        ("read", json!({"path": "long.txt"})),
        ("read", json!({"path": "pkg/planner/plann.go"})),
        ("read", json!({"path": "pkg"})),
        ("grep", json!({"pattern": "NoSuchThingAnywhere"})),
        ("grep", json!({"pattern": "Plan"})),
        ("glob", json!({"pattern": "**/*.rs"})),
        ("tree", json!({})),
        ("codegraph", json!({"operation": "search", "name": "Plan"})),
        (
            "codegraph",
            json!({"operation": "search", "name": "Nothing"}),
        ),
        (
            "codegraph",
            json!({"operation": "callers", "qname": "example.com/relay/pkg/planner.Planner.Plan"}),
        ),
        (
            "codegraph",
            json!({"operation": "callers", "qname": "nope"}),
        ),
        (
            "codegraph",
            json!({"operation": "callees", "qname": "example.com/relay/pkg/planner.Planner.Plan"}),
        ),
        (
            "codegraph",
            json!({"operation": "usages", "qname": "example.com/relay/pkg/planner.Planner"}),
        ),
        (
            "codegraph",
            json!({"operation": "implementations", "qname": "example.com/relay/pkg/planner.Planner"}),
        ),
        ("codegraph", json!({"operation": "resolve", "name": "Plan"})),
        ("codegraph", json!({"operation": "callers"})),
        ("codegraph", json!({"operation": "fly"})),
    ];
    let mut texts: Vec<(String, String)> = vec![
        (
            "prompt".to_owned(),
            relay_agent::explore::SYSTEM_PROMPT.to_owned(),
        ),
        (
            "codegraph description".to_owned(),
            relay_codegraph::ops::TOOL_DESCRIPTION.to_owned(),
        ),
    ];
    for definition in toolbox.definitions() {
        texts.push((definition.name.clone(), definition.description.clone()));
    }
    for (tool, arguments) in calls {
        let outcome = toolbox
            .call(&ToolCall {
                id: "c".to_owned(),
                name: tool.to_owned(),
                arguments: arguments.to_string(),
            })
            .await;
        texts.push((tool.to_owned(), outcome.result.content));
    }

    let mut checked = 0;
    let mut failures = Vec::new();
    for (source, text) in &texts {
        for (tool, names) in call_hints(text) {
            checked += 1;
            if let Err(error) = parses(&tool, &names) {
                failures.push(format!("{source}: {error}"));
            }
        }
        if TOOLS.contains(&source.as_str()) {
            for name in continuation_hints(text) {
                checked += 1;
                if let Err(error) = parses(source, std::slice::from_ref(&name)) {
                    failures.push(format!("{source} (continuation): {error}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "hints with arguments the tool rejects:\n{}",
        failures.join("\n")
    );
    assert!(checked >= 3, "the outputs carry hints to check ({checked})");
}

#[test]
fn the_checker_catches_a_wrong_hint() {
    let hints = call_hints("Use read(file_path, offset) to see the code.");
    assert_eq!(
        hints,
        [(
            "read".to_owned(),
            vec!["file_path".to_owned(), "offset".to_owned()]
        )]
    );
    assert!(parses("read", &hints[0].1).is_err());
    assert!(parses("read", &["path".to_owned(), "offset".to_owned()]).is_ok());
    assert_eq!(
        continuation_hints("… more lines — continue with offset=201"),
        ["offset"]
    );
}
