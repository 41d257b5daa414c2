//! The toolbox over related repositories: the `repo` argument and places (`acme/sdk:path`) pick
//! the checkout, an unrelated repository is refused without reading anything, every checkout
//! charges the job's one budget, the schemas offer `repo` only when there are related
//! repositories, and an explore's report may cite a related repository's code.

use std::path::Path;
use std::sync::Arc;

use relay_agent::explore::{ExploreAgent, ExploreConfig, StopReason};
use relay_agent::llm::ToolCall;
use relay_agent::llm::scripted::ScriptedLlm;
use relay_agent::toolbox::{RelatedCheckout, Toolbox, ToolboxError};
use relay_tools::ToolLimits;
use serde_json::{Value, json};

use crate::support::*;

/// The SDK's checkout: `pkg/client.go` with `Dial` at line 3.
fn sdk() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("pkg")).unwrap();
    std::fs::write(
        dir.path().join("pkg/client.go"),
        "package pkg\n\nfunc Dial() error {\n\treturn nil\n}\n",
    )
    .unwrap();
    dir
}

fn related(label: &str, root: &Path) -> RelatedCheckout {
    RelatedCheckout {
        label: label.to_owned(),
        root: root.to_owned(),
        excludes: Arc::default(),
        history: None,
    }
}

fn toolbox(app: &Path, sdk: &Path, limits: ToolLimits) -> Toolbox {
    Toolbox::new(app, None, limits)
        .unwrap()
        .with_related(vec![related("acme/sdk", sdk), related("acme/cli", sdk)])
        .unwrap()
}

async fn run(toolbox: &Toolbox, tool: &str, arguments: Value) -> (bool, String) {
    let outcome = toolbox
        .call(&ToolCall {
            id: "c".to_owned(),
            name: tool.to_owned(),
            arguments: arguments.to_string(),
        })
        .await;
    (outcome.result.is_error, outcome.result.content)
}

#[tokio::test]
async fn repo_or_a_place_picks_the_related_checkout() {
    let (app, sdk) = (checkout(), sdk());
    let toolbox = toolbox(app.path(), sdk.path(), ToolLimits::default());

    let (failed, by_repo) = run(
        &toolbox,
        "read",
        json!({"path": "pkg/client.go", "repo": "acme/sdk"}),
    )
    .await;
    assert!(!failed, "{by_repo}");
    assert!(
        by_repo.starts_with("acme/sdk:pkg/client.go (lines 1-5 of 5)"),
        "{by_repo}"
    );
    let (_, by_place) = run(&toolbox, "read", json!({"path": "acme/sdk:pkg/client.go"})).await;
    assert_eq!(by_place, by_repo);
    let (_, both) = run(
        &toolbox,
        "read",
        json!({"path": "acme/sdk:pkg/client.go", "repo": "acme/sdk"}),
    )
    .await;
    assert_eq!(both, by_repo);

    let (_, grep) = run(
        &toolbox,
        "grep",
        json!({"pattern": "func Dial", "repo": "acme/sdk"}),
    )
    .await;
    assert!(
        grep.starts_with("acme/sdk:pkg/client.go:3: func Dial() error {"),
        "{grep}"
    );
    let (_, glob) = run(&toolbox, "glob", json!({"pattern": "acme/cli:**/*.go"})).await;
    assert!(glob.starts_with("acme/cli:pkg/client.go\n"), "{glob}");

    // Without either, the issue's own repository, with bare paths.
    let (_, own) = run(&toolbox, "read", json!({"path": "pkg/planner/plan.go"})).await;
    assert!(own.starts_with("pkg/planner/plan.go (lines"), "{own}");
    let (_, missing) = run(&toolbox, "read", json!({"path": "pkg/client.go"})).await;
    assert!(missing.starts_with("pkg/client.go: not found"), "{missing}");

    let (failed, clash) = run(
        &toolbox,
        "read",
        json!({"path": "acme/cli:pkg/client.go", "repo": "acme/sdk"}),
    )
    .await;
    assert!(failed);
    assert_eq!(
        clash,
        "`repo` acme/sdk and `path` name different repositories (acme/sdk and acme/cli); name one"
    );
}

#[tokio::test]
async fn an_unrelated_repository_is_refused_without_reading() {
    let (app, sdk) = (checkout(), sdk());
    let toolbox = toolbox(app.path(), sdk.path(), ToolLimits::default());
    let refusal = "FAILED: repository \"acme/secret\" is not related to this issue; related repositories: acme/sdk, acme/cli";
    for (tool, arguments) in [
        (
            "read",
            json!({"path": "pkg/client.go", "repo": "acme/secret"}),
        ),
        ("read", json!({"path": "acme/secret:pkg/client.go"})),
        (
            "grep",
            json!({"pattern": "Dial", "path": "acme/secret:pkg"}),
        ),
        ("glob", json!({"pattern": "acme/secret:**/*.go"})),
        ("tree", json!({"repo": "acme/secret"})),
    ] {
        let (failed, text) = run(&toolbox, tool, arguments.clone()).await;
        assert!(failed, "{tool} {arguments}");
        assert_eq!(text, refusal, "{tool} {arguments}");
    }
    assert_eq!(toolbox.job_usage().calls, 0, "nothing ran");

    let alone = Toolbox::new(app.path(), None, ToolLimits::default()).unwrap();
    let (failed, text) = run(&alone, "read", json!({"path": "x.go", "repo": "acme/sdk"})).await;
    assert!(failed);
    assert_eq!(
        text,
        "FAILED: repository \"acme/sdk\" is not related to this issue; this issue has no related repositories"
    );
    let (_, text) = run(&alone, "read", json!({"path": "acme/sdk:x.go"})).await;
    assert_eq!(
        text,
        "FAILED: repository \"acme/sdk\" is not related to this issue; this issue has no related repositories"
    );
}

#[tokio::test]
async fn every_checkout_charges_the_one_job_budget() {
    let (app, sdk) = (checkout(), sdk());
    let limits = ToolLimits {
        job_max_files_read: 2,
        ..ToolLimits::default()
    };
    let toolbox = toolbox(app.path(), sdk.path(), limits);
    let (failed, _) = run(&toolbox, "read", json!({"path": "pkg/planner/plan.go"})).await;
    assert!(!failed);
    let (failed, _) = run(&toolbox, "read", json!({"path": "acme/sdk:pkg/client.go"})).await;
    assert!(!failed);
    assert_eq!(toolbox.job_usage().files_read, 2);
    let (failed, text) = run(
        &toolbox,
        "read",
        json!({"path": "pkg/client.go", "repo": "acme/cli"}),
    )
    .await;
    assert!(failed);
    assert!(text.starts_with("budget exhausted"), "{text}");
}

#[tokio::test]
async fn the_schemas_offer_repo_only_with_related_repositories() {
    let (app, sdk) = (checkout(), sdk());
    let alone = Toolbox::new(app.path(), None, ToolLimits::default()).unwrap();
    for definition in alone.definitions() {
        assert!(
            definition.parameters["properties"].get("repo").is_none(),
            "{}",
            definition.name
        );
        assert!(!definition.description.contains("Related repositories"));
    }
    let toolbox = toolbox(app.path(), sdk.path(), ToolLimits::default());
    let names = toolbox.names();
    assert_eq!(names, ["grep", "read", "glob", "tree"]);
    for definition in toolbox.definitions() {
        let repo = &definition.parameters["properties"]["repo"];
        assert_eq!(repo["type"], "string", "{}", definition.name);
        let described = repo["description"].as_str().unwrap();
        assert!(described.contains("acme/sdk, acme/cli"), "{described}");
        assert!(
            described.contains("default: the issue's own repository"),
            "{described}"
        );
        let required = definition.parameters["required"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(!required.contains(&json!("repo")));
        assert!(
            definition
                .description
                .contains("Related repositories: acme/sdk, acme/cli."),
            "{}",
            definition.description
        );
    }
}

#[test]
fn bad_related_repositories_are_refused() {
    let (app, sdk) = (checkout(), sdk());
    let build = |related: Vec<RelatedCheckout>| {
        Toolbox::new(app.path(), None, ToolLimits::default())
            .unwrap()
            .with_related(related)
    };
    let twice = build(vec![
        related("acme/sdk", sdk.path()),
        related("acme/sdk", sdk.path()),
    ]);
    assert!(matches!(twice, Err(ToolboxError::Related { .. })));
    let not_a_path = build(vec![related("sdk", sdk.path())]);
    assert!(matches!(not_a_path, Err(ToolboxError::Related { .. })));
    let missing = build(vec![related("acme/sdk", &sdk.path().join("nope"))]);
    assert!(matches!(missing, Err(ToolboxError::Snapshot(_))));
    let many = (0..=relay_agent::toolbox::MAX_RELATED_REPOSITORIES)
        .map(|n| related(&format!("acme/r{n}"), sdk.path()))
        .collect();
    assert!(matches!(build(many), Err(ToolboxError::Related { .. })));
}

/// An explore's report citing the SDK keeps the citation, verified in the SDK's checkout.
#[tokio::test]
async fn a_report_may_cite_a_related_repository() {
    let (app, sdk) = (checkout(), sdk());
    let evidence = json!([
        {"path": "acme/sdk:pkg/client.go", "start_line": 3, "end_line": 3, "quote": "func Dial() error {"},
        {"path": "acme/secret:pkg/client.go", "start_line": 3, "end_line": 3},
    ]);
    let server = ScriptedLlm::start(vec![
        call("read", json!({"path": "acme/sdk:pkg/client.go"})),
        submit("Dial is in the SDK.", evidence.clone(), "high"),
        submit("Dial is in the SDK.", evidence, "high"),
    ])
    .await;
    let toolbox = toolbox(app.path(), sdk.path(), ToolLimits::default());
    let agent = ExploreAgent::new(client(&server), Arc::new(toolbox), ExploreConfig::default());
    let report = explore(&agent).await;
    assert_eq!(report.stop, StopReason::Submitted);
    assert_eq!(report.evidence.len(), 1);
    assert_eq!(report.evidence[0].path, "acme/sdk:pkg/client.go");
    assert_eq!(report.dropped_citations, 1);
    let feedback = tool_results(&server.requests()[2]).pop().unwrap();
    assert!(
        feedback.contains("repository \"acme/secret\" is not related to this issue"),
        "{feedback}"
    );
}

#[tokio::test]
async fn repo_naming_the_issues_own_repository_reads_its_checkout() {
    let (app, sdk) = (checkout(), sdk());
    let knowing = toolbox(app.path(), sdk.path(), ToolLimits::default()).with_own_label("acme/app");
    let (failed, own) = run(
        &knowing,
        "glob",
        json!({"pattern": "**/*", "repo": "Acme/App"}),
    )
    .await;
    assert!(!failed, "{own}");
    let (_, default) = run(&knowing, "glob", json!({"pattern": "**/*"})).await;
    assert_eq!(own, default);
    // Without knowing its own path, the toolbox says the repository is not related.
    let unknowing = toolbox(app.path(), sdk.path(), ToolLimits::default());
    let (failed, text) = run(
        &unknowing,
        "glob",
        json!({"pattern": "**/*", "repo": "acme/app"}),
    )
    .await;
    assert!(
        failed && text.starts_with("FAILED: repository \"acme/app\""),
        "{text}"
    );
}
