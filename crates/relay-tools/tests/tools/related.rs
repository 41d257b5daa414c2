//! The tools over a related repository's checkout (a labelled context): every path they print
//! is a place `acme/sdk:path`, and a path argument with the label reads the same file as one
//! without.

use std::path::Path;
use std::process::Command;

use relay_tools::{ToolContext, ToolLimits, ToolRegistry};
use serde_json::json;

use crate::common::{body, write};

const LABEL: &str = "acme/sdk";

/// The SDK's checkout: a client with a `Dial` function.
fn sdk() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pkg/client.go",
        "package pkg\n\nfunc Dial() error {\n\treturn nil\n}\n",
    );
    write(dir.path(), "README.md", "the sdk\n");
    write(dir.path(), "blob.bin", b"a\0b");
    dir
}

fn labelled(root: &Path) -> ToolContext {
    ToolContext::new(root, ToolLimits::default())
        .unwrap()
        .with_worktree_history()
        .with_label(LABEL)
}

/// The text of a call in the labelled context (the error's text when it fails).
fn run(context: &ToolContext, tool: &str, args: serde_json::Value) -> String {
    match ToolRegistry::standard().call(context, tool, &args.to_string()) {
        Ok(text) => body(&text).to_owned(),
        Err(error) => error.to_string(),
    }
}

#[test]
fn grep_prints_places_and_accepts_its_label() {
    let dir = sdk();
    let context = labelled(dir.path());
    let plain = run(
        &context,
        "grep",
        json!({"pattern": "func Dial", "path": "pkg"}),
    );
    assert!(
        plain.starts_with("acme/sdk:pkg/client.go:3: func Dial() error {"),
        "{plain}"
    );
    let prefixed = run(
        &context,
        "grep",
        json!({"pattern": "func Dial", "path": "acme/sdk:pkg", "glob": "acme/sdk:pkg/*.go"}),
    );
    assert_eq!(prefixed, plain);
    let retried = run(
        &context,
        "grep",
        json!({"pattern": "NoSuchThing", "path": "acme/sdk:pkg"}),
    );
    assert!(retried.contains("in acme/sdk:pkg"), "{retried}");
    let missing = run(
        &context,
        "grep",
        json!({"pattern": "x", "path": "acme/sdk:pkg/clent.go"}),
    );
    assert!(
        missing.starts_with(
            "acme/sdk:pkg/clent.go: not found; closest existing paths: acme/sdk:pkg/client.go"
        ),
        "{missing}"
    );
}

#[test]
fn read_prints_places_and_accepts_its_label() {
    let dir = sdk();
    let context = labelled(dir.path());
    let plain = run(&context, "read", json!({"path": "pkg/client.go"}));
    assert!(
        plain.starts_with("acme/sdk:pkg/client.go (lines 1-5 of 5)\n"),
        "{plain}"
    );
    assert_eq!(
        run(&context, "read", json!({"path": "acme/sdk:pkg/client.go"})),
        plain
    );
    let listing = run(&context, "read", json!({"path": "acme/sdk:pkg"}));
    assert!(
        listing.starts_with("acme/sdk:pkg/ (directory, 1 entry)"),
        "{listing}"
    );
    let fallback = run(&context, "read", json!({"path": "acme/sdk:pkg/clent.go"}));
    assert!(
        fallback.starts_with(
            "Attempts: tried acme/sdk:pkg/clent.go: not found; tried closest existing path acme/sdk:pkg/client.go: found\nacme/sdk:pkg/client.go (lines"
        ),
        "{fallback}"
    );
    assert_eq!(
        run(&context, "read", json!({"path": "acme/sdk:blob.bin"})),
        "acme/sdk:blob.bin: binary file, not shown"
    );
    assert_eq!(
        run(&context, "read", json!({"path": "acme/sdk:../etc/passwd"})),
        "refused `acme/sdk:../etc/passwd`: path escapes the repository root"
    );
}

#[test]
fn glob_and_tree_print_places_and_accept_their_label() {
    let dir = sdk();
    let context = labelled(dir.path());
    let globbed = run(&context, "glob", json!({"pattern": "**/*.go"}));
    assert_eq!(
        globbed,
        "acme/sdk:pkg/client.go\n1 path match **/*.go in acme/sdk"
    );
    assert_eq!(
        run(&context, "glob", json!({"pattern": "acme/sdk:**/*.go"})),
        globbed
    );
    let under = run(
        &context,
        "glob",
        json!({"pattern": "*.go", "path": "acme/sdk:pkg"}),
    );
    assert_eq!(
        under,
        "acme/sdk:pkg/client.go\n1 path match *.go in acme/sdk:pkg"
    );

    let tree = run(&context, "tree", json!({}));
    assert!(tree.starts_with("acme/sdk:./ (3 files)\n"), "{tree}");
    let sub = run(&context, "tree", json!({"path": "acme/sdk:pkg"}));
    assert!(sub.starts_with("acme/sdk:pkg/ (1 file)\n"), "{sub}");
    assert_eq!(run(&context, "tree", json!({"path": "pkg"})), sub);
}

#[test]
fn history_prints_places_and_accepts_its_label() {
    let dir = sdk();
    let git = |args: &[&str]| {
        let output = Command::new("git")
            .args(["-c", "user.name=Ann", "-c", "user.email=a@example.com"])
            .args(args)
            .current_dir(dir.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}");
    };
    git(&["init", "--quiet", "--initial-branch=main"]);
    git(&["add", "--all"]);
    git(&["commit", "--quiet", "-m", "client: dial"]);
    let context = labelled(dir.path());
    let plain = run(&context, "history", json!({"path": "pkg/client.go"}));
    assert!(
        plain.starts_with("History of acme/sdk:pkg/client.go at "),
        "{plain}"
    );
    assert!(plain.contains("client: dial"), "{plain}");
    assert_eq!(
        run(
            &context,
            "history",
            json!({"path": "acme/sdk:pkg/client.go"})
        ),
        plain
    );
    let missing = run(
        &context,
        "history",
        json!({"path": "acme/sdk:pkg/clent.go"}),
    );
    assert!(
        missing.starts_with(
            "acme/sdk:pkg/clent.go: not found; closest existing paths: acme/sdk:pkg/client.go"
        ),
        "{missing}"
    );
}

/// The issue's own repository keeps bare paths, and a repository's prefix is not cut there (the
/// toolbox routes a place to its repository's context before any tool sees it).
#[test]
fn an_unlabelled_context_prints_bare_paths() {
    let dir = sdk();
    let context = ToolContext::new(dir.path(), ToolLimits::default()).unwrap();
    let read = run(&context, "read", json!({"path": "pkg/client.go"}));
    assert!(
        read.starts_with("pkg/client.go (lines 1-5 of 5)\n"),
        "{read}"
    );
    let other = run(&context, "read", json!({"path": "acme/sdk:pkg/client.go"}));
    assert!(
        other.starts_with("Attempts: tried acme/sdk:pkg/client.go: not found;"),
        "{other}"
    );
}

/// A related repository's context charges the same job budget as the one it was made from.
#[test]
fn a_related_checkout_shares_the_job_state() {
    let app = tempfile::tempdir().unwrap();
    write(app.path(), "main.go", "package main\n");
    let sdk = sdk();
    let primary = ToolContext::new(app.path(), ToolLimits::default()).unwrap();
    let related = primary.related_checkout(LABEL, sdk.path()).unwrap();
    assert!(related.shares_job_with(&primary));
    assert_eq!(related.label(), Some(LABEL));
    run(&related, "read", json!({"path": "pkg/client.go"}));
    assert_eq!(primary.job().budget.files_read, 1);
}
