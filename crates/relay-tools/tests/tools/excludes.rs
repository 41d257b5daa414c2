//! The repository's `exclude` globs (`.relay.toml`): no tool shows an excluded path — not as a
//! match, a listing entry, a tree node, a read, a "did you mean", nor through a symlink — and a
//! citation into one does not verify.

use std::sync::Arc;

use relay_core::repo_config::ExcludeSet;
use relay_tools::{ToolContext, ToolLimits, ToolRegistry};
use serde_json::json;

use crate::common::write;

const MARK: &str = "EXCLUDED_MARK";

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "src/main.go",
        format!("package main // {MARK} kept\n"),
    );
    write(
        root,
        "external/lib/lib.go",
        format!("package lib // {MARK} externaled\n"),
    );
    write(
        root,
        "gen/api.pb.go",
        format!("package gen // {MARK} generated\n"),
    );
    write(
        root,
        "src/api.pb.go",
        format!("package src // {MARK} generated too\n"),
    );
    std::os::unix::fs::symlink(root.join("external"), root.join("src/third_party")).unwrap();
    dir
}

fn context(root: &std::path::Path) -> ToolContext {
    let excludes = ExcludeSet::new(&["external/".to_owned(), "*.pb.go".to_owned()]).unwrap();
    ToolContext::new(root, ToolLimits::default())
        .unwrap()
        .with_excludes(Arc::new(excludes))
}

fn call(context: &ToolContext, tool: &str, args: serde_json::Value) -> String {
    match ToolRegistry::standard().call(context, tool, &args.to_string()) {
        Ok(text) => text,
        Err(error) => error.to_string(),
    }
}

#[test]
fn no_tool_shows_an_excluded_path() {
    let dir = repo();
    let context = context(dir.path());
    let grep = call(&context, "grep", json!({ "pattern": MARK }));
    assert!(grep.contains("src/main.go"), "{grep}");
    for hidden in ["externaled", "generated", "external/", ".pb.go"] {
        assert!(!grep.contains(hidden), "grep shows {hidden}: {grep}");
    }
    let glob = call(&context, "glob", json!({ "pattern": "**/*.go" }));
    assert!(
        glob.contains("src/main.go") && !glob.contains("external") && !glob.contains(".pb.go"),
        "{glob}"
    );
    let tree = call(&context, "tree", json!({}));
    assert!(
        !tree.contains("external") && !tree.contains("api.pb.go"),
        "{tree}"
    );
    let listing = call(&context, "read", json!({ "path": "." }));
    assert!(!listing.contains("external"), "{listing}");
    for path in [
        "external/lib/lib.go",
        "./external/../external/lib/lib.go",
        "gen/api.pb.go",
        "src/third_party/lib/lib.go",
        "external",
    ] {
        let read = call(&context, "read", json!({ "path": path }));
        assert!(
            read.contains("excluded by the repository's configuration") && !read.contains(MARK),
            "{path}: {read}"
        );
    }
    let scoped = call(
        &context,
        "grep",
        json!({ "pattern": MARK, "path": "external" }),
    );
    assert!(!scoped.contains("externaled"), "{scoped}");
    // "Did you mean" never offers an excluded file.
    let near = call(&context, "read", json!({ "path": "lib.go" }));
    assert!(!near.contains("external/lib/lib.go"), "{near}");

    let sandbox = context.sandbox();
    let citation = relay_core::Citation {
        path: "external/lib/lib.go".into(),
        start_line: 1,
        end_line: 1,
        quote: None,
    };
    assert!(relay_tools::citation::verify(sandbox, &citation).is_err());
}

#[test]
fn without_excludes_everything_is_visible() {
    let dir = repo();
    let context = ToolContext::new(dir.path(), ToolLimits::default()).unwrap();
    let grep = call(&context, "grep", json!({ "pattern": MARK }));
    assert!(grep.contains("generated"), "{grep}");
}
