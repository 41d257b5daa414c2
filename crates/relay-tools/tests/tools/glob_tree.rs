//! The `glob` and `tree` tools, and the registry around them.

use crate::common::{body, ok, text, write};
use relay_tools::{ToolContext, ToolLimits, ToolRegistry};
use serde_json::json;

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for path in [
        "main.rs",
        "src/lib.rs",
        "src/net/mod.rs",
        "src/net/http.rs",
        "src/net/deep/x.rs",
        "docs/guide.md",
        "Makefile",
        "build/gen.rs",
        "vendor/dep/dep.rs",
    ] {
        write(root, path, "x\n");
    }
    write(root, ".gitignore", "build/\n");
    dir
}

#[test]
fn glob_semantics() {
    let dir = repo();
    let root = dir.path();
    assert_eq!(
        body(&ok(root, "glob", json!({ "pattern": "*.rs" }))),
        "main.rs\n1 path match *.rs"
    );
    assert_eq!(
        body(&ok(root, "glob", json!({ "pattern": "**/*.rs" }))),
        "main.rs\nsrc/lib.rs\nsrc/net/deep/x.rs\nsrc/net/http.rs\nsrc/net/mod.rs\n5 paths match **/*.rs"
    );
    assert_eq!(
        body(&ok(root, "glob", json!({ "pattern": "src/*/mod.rs" }))),
        "src/net/mod.rs\n1 path match src/*/mod.rs"
    );
    assert_eq!(
        body(&ok(
            root,
            "glob",
            json!({ "pattern": "{Makefile,docs/*.md}" })
        )),
        "Makefile\ndocs/guide.md\n2 paths match {Makefile,docs/*.md}"
    );
    assert_eq!(
        body(&ok(
            root,
            "glob",
            json!({ "pattern": "*.rs", "path": "src/net" })
        )),
        "src/net/http.rs\nsrc/net/mod.rs\n2 paths match *.rs in src/net"
    );
    assert_eq!(
        body(&ok(root, "glob", json!({ "pattern": "src/ne?" }))),
        "src/net/\n1 path match src/ne?"
    );
    // Ignored and skipped directories are not listed.
    let all = ok(root, "glob", json!({ "pattern": "**" }));
    assert!(!all.contains("build/") && !all.contains("vendor/"), "{all}");
}

#[test]
fn glob_retries_and_caps() {
    let dir = repo();
    let result = ok(dir.path(), "glob", json!({ "pattern": "http.rs" }));
    assert_eq!(
        body(&result),
        "Attempts: tried http.rs: 0 paths; tried **/http.rs: 1 path\nsrc/net/http.rs\n1 path match **/http.rs"
    );
    let result = ok(dir.path(), "glob", json!({ "pattern": "**/MAKEFILE" }));
    assert!(
        body(&result).contains("tried **/MAKEFILE (case-insensitive): 1 path\nMakefile"),
        "{result}"
    );

    let many = tempfile::tempdir().unwrap();
    for index in 0..130 {
        write(many.path(), &format!("f{index:03}.txt"), "");
    }
    let result = ok(many.path(), "glob", json!({ "pattern": "*.txt" }));
    let lines: Vec<&str> = body(&result).lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[99], "f099.txt");
    assert_eq!(
        lines[100],
        "… and 30 more (130 paths match *.txt) — narrow the pattern"
    );
    let message = text(many.path(), "glob", json!({ "pattern": "[" }));
    assert!(
        message.starts_with("invalid pattern: glob `[`"),
        "{message}"
    );
}

#[test]
fn tree_outline() {
    let dir = repo();
    let result = ok(dir.path(), "tree", json!({}));
    assert_eq!(
        body(&result),
        "./ (8 files)\n\
         ├── docs/ (1 file)\n\
         │   └── guide.md\n\
         ├── src/ (4 files)\n\
         │   ├── net/ (3 files)\n\
         │   └── lib.rs\n\
         ├── vendor/ (skipped)\n\
         ├── .gitignore\n\
         ├── Makefile\n\
         └── main.rs"
    );
    let result = ok(dir.path(), "tree", json!({ "path": "src/net", "depth": 1 }));
    assert_eq!(
        body(&result),
        "src/net/ (3 files)\n├── deep/ (1 file)\n├── http.rs\n└── mod.rs"
    );
    let message = text(dir.path(), "tree", json!({ "depth": 9 }));
    assert!(
        message.contains("`depth` must be between 1 and 6"),
        "{message}"
    );
}

#[test]
fn registry_tools_and_budget() {
    let registry = ToolRegistry::standard();
    let names: Vec<&str> = registry.tools().map(|tool| tool.name()).collect();
    assert_eq!(names, ["grep", "read", "glob", "tree", "history"]);
    for tool in registry.tools() {
        assert!(tool.description().len() > 100, "{}", tool.name());
        assert_eq!(
            tool.parameters_schema()["type"],
            "object",
            "{}",
            tool.name()
        );
    }
    let schemas = schemas(&registry);
    assert!(schemas[0]["properties"]["pattern"].is_object());
    assert_eq!(schemas[1]["required"], json!(["path"]));

    let dir = repo();
    let limits = ToolLimits {
        job_max_files_read: 2,
        ..ToolLimits::default()
    };
    let context = ToolContext::new(dir.path(), limits).unwrap();
    registry
        .call(&context, "read", r#"{"path":"main.rs"}"#)
        .unwrap();
    registry
        .call(&context, "read", r#"{"path":"src/lib.rs","limit":1}"#)
        .unwrap();
    let error = registry
        .call(&context, "read", r#"{"path":"Makefile"}"#)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("budget exhausted: this job already read 2 files"),
        "{error}"
    );
    {
        let job = context.job();
        assert_eq!(job.budget.calls, 2);
        assert!(job.budget.tokens_returned > 0);
    }
    let error = registry.call(&context, "bash", "{}").unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown tool `bash`; available tools: grep, read, glob, tree, history"
    );
    let error = registry.call(&context, "grep", "not json").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("invalid arguments: arguments are not valid JSON"),
        "{error}"
    );

    // The per-call token cap cuts long results at a line boundary.
    let limits = ToolLimits {
        max_call_tokens: 20,
        ..ToolLimits::default()
    };
    let context = ToolContext::new(dir.path(), limits).unwrap();
    let result = registry
        .call(&context, "glob", r#"{"pattern":"**"}"#)
        .unwrap();
    assert!(result.contains("… output cut at ~20 tokens"), "{result}");
}

#[tokio::test]
async fn async_calls_run_on_the_blocking_pool() {
    let dir = repo();
    let registry = std::sync::Arc::new(ToolRegistry::standard());
    let context = ToolContext::new(dir.path(), ToolLimits::default()).unwrap();
    let result = registry
        .call_async(
            context.clone(),
            "read".into(),
            r#"{"path":"Makefile"}"#.into(),
        )
        .await
        .unwrap();
    assert!(result.starts_with("Makefile (lines 1-1 of 1)"), "{result}");
    assert_eq!(context.job().budget.files_read, 1);
}

#[test]
fn schemas_carry_ranges_and_descriptions() {
    let schemas = schemas(&ToolRegistry::standard());
    let read = &schemas[1]["properties"];
    assert_eq!(read["limit"]["maximum"], 500);
    assert!(
        read["path"]["description"]
            .as_str()
            .unwrap()
            .contains("relative to the repository root")
    );
    let grep = &schemas[0]["properties"];
    assert_eq!(grep["context"]["maximum"], 10);
    assert_eq!(schemas[3]["properties"]["depth"]["maximum"], 6);
}

/// The argument schemas of the registry's tools, in registration order.
fn schemas(registry: &ToolRegistry) -> Vec<serde_json::Value> {
    registry
        .tools()
        .map(|tool| tool.parameters_schema())
        .collect()
}
