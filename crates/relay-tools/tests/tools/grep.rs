//! The `grep` tool: output format, filters, caps and every retry step.

use crate::common::{body, ok, text, write};
use serde_json::json;

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/b.rs", "fn beta() {}\nlet needle = 2;\n");
    write(root, "src/a.rs", "fn alpha() {}\nlet needle = 1;\n");
    write(root, "README.md", "The needle in the haystack\n");
    write(root, ".gitignore", "build/\n*.log\n");
    write(root, "build/out.rs", "let needle = 99;\n");
    write(root, "debug.log", "needle\n");
    write(root, "vendor/dep/lib.rs", "needle\n");
    write(root, "node_modules/pkg/index.js", "needle\n");
    write(root, "assets/blob.bin", b"needle\x00\x01\x02binary");
    write(root, ".github/workflows/ci.yml", "run: needle\n");
    dir
}

#[test]
fn matches_are_sorted_by_path_and_filtered() {
    let dir = repo();
    let result = ok(dir.path(), "grep", json!({ "pattern": "needle" }));
    assert_eq!(
        body(&result),
        ".github/workflows/ci.yml:1: run: needle\n\
         README.md:1: The needle in the haystack\n\
         src/a.rs:2: let needle = 1;\n\
         src/b.rs:2: let needle = 2;\n\
         4 matches in 4 files"
    );
    // The size note closes every result.
    assert!(result.ends_with("tokens, 5 lines]"), "{result}");
}

#[test]
fn path_glob_literal_and_context() {
    let dir = repo();
    let result = ok(
        dir.path(),
        "grep",
        json!({ "pattern": "needle", "path": "src/a.rs" }),
    );
    assert_eq!(
        body(&result),
        "src/a.rs:2: let needle = 1;\n1 match in 1 file"
    );
    let result = ok(
        dir.path(),
        "grep",
        json!({ "pattern": "needle", "glob": "*.md" }),
    );
    assert_eq!(
        body(&result),
        "README.md:1: The needle in the haystack\n1 match in 1 file"
    );
    let result = ok(
        dir.path(),
        "grep",
        json!({ "pattern": "needle", "glob": "src/**/*.rs" }),
    );
    assert!(body(&result).ends_with("2 matches in 2 files"), "{result}");
    let result = ok(
        dir.path(),
        "grep",
        json!({ "pattern": "fn alpha()", "literal": true }),
    );
    assert_eq!(
        body(&result),
        "src/a.rs:1: fn alpha() {}\n1 match in 1 file"
    );
    let result = ok(
        dir.path(),
        "grep",
        json!({ "pattern": "alpha", "path": "src", "context": 1 }),
    );
    assert_eq!(
        body(&result),
        "src/a.rs:1: fn alpha() {}\nsrc/a.rs-2- let needle = 1;\n1 match in 1 file"
    );
    // An explicit path into a skipped directory is searched.
    let result = ok(
        dir.path(),
        "grep",
        json!({ "pattern": "needle", "path": "vendor" }),
    );
    assert!(
        body(&result).starts_with("vendor/dep/lib.rs:1: needle"),
        "{result}"
    );
}

#[test]
fn caps_and_long_lines() {
    let dir = tempfile::tempdir().unwrap();
    for file in 0..12 {
        let content: String = (0..5)
            .map(|line| format!("match {file} {line}\n"))
            .collect();
        write(dir.path(), &format!("f{file:02}.txt"), content);
    }
    write(
        dir.path(),
        "long.txt",
        format!("match {}\n", "x".repeat(5_000)),
    );
    let result = ok(dir.path(), "grep", json!({ "pattern": "match" }));
    let lines: Vec<&str> = body(&result).lines().collect();
    assert_eq!(lines.len(), 51);
    assert_eq!(lines[0], "f00.txt:1: match 0 0");
    assert_eq!(lines[49], "f09.txt:5: match 9 4");
    assert_eq!(
        lines[50],
        "Showing 50 of 61 matches in 13 files — narrow with path or a more specific pattern"
    );

    let result = ok(
        dir.path(),
        "grep",
        json!({ "pattern": "match x", "path": "long.txt" }),
    );
    let first = body(&result).lines().next().unwrap();
    assert!(first.starts_with("long.txt:1: match xxx"), "{first}");
    assert!(
        first.ends_with("… [line cut, ~4,706 more bytes]"),
        "{first}"
    );
    assert!(first.len() < 400, "{}", first.len());
}

#[test]
fn binary_files_are_skipped() {
    let dir = repo();
    let result = ok(dir.path(), "grep", json!({ "pattern": "binary" }));
    assert!(
        body(&result).ends_with("No matches (1 binary file skipped)"),
        "{result}"
    );
    let result = ok(
        dir.path(),
        "grep",
        json!({ "pattern": "needle", "path": "assets" }),
    );
    assert!(!result.contains("blob.bin:"), "{result}");
}

#[test]
fn retry_case_insensitive() {
    let dir = repo();
    let result = ok(
        dir.path(),
        "grep",
        json!({ "pattern": "NEEDLE", "path": "src" }),
    );
    assert_eq!(
        body(&result).lines().next().unwrap(),
        "Attempts: tried /NEEDLE/ in src: 0 matches; tried /NEEDLE/ (case-insensitive) in src: 2 matches"
    );
    assert!(body(&result).ends_with("2 matches in 2 files"), "{result}");
}

#[test]
fn retry_broadened_pattern() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "app/users.py",
        "def get_user_name(user):\n    return user.name\n",
    );
    let result = ok(dir.path(), "grep", json!({ "pattern": r"\bgetUserName\(" }));
    assert_eq!(
        body(&result),
        "Attempts: tried /\\bgetUserName\\(/ in the repository: 0 matches; \
         tried /\\bgetUserName\\(/ (case-insensitive) in the repository: 0 matches; \
         tried /get[_\\-]?user[_\\-]?name\\(/ (case-insensitive) in the repository: 1 match\n\
         app/users.py:1: def get_user_name(user):\n\
         1 match in 1 file"
    );
}

#[test]
fn retry_parent_directory() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pkg/server/http.go", "package server\n");
    write(dir.path(), "pkg/client/http.go", "func Dial() {}\n");
    let result = ok(
        dir.path(),
        "grep",
        json!({ "pattern": "dial", "path": "pkg/server", "case_insensitive": true }),
    );
    assert_eq!(
        body(&result),
        "Attempts: tried /dial/ (case-insensitive) in pkg/server: 0 matches; \
         tried /dial/ (case-insensitive) in pkg: 1 match\n\
         pkg/client/http.go:1: func Dial() {}\n\
         1 match in 1 file"
    );
}

#[test]
fn at_most_two_retries() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "pkg/server/a.go", "package server\n");
    write(dir.path(), "pkg/client/b.go", "get_user_name()\n");
    // Needs all three steps (case, broaden, parent) but only two run.
    let result = ok(
        dir.path(),
        "grep",
        json!({ "pattern": "getUserName", "path": "pkg/server" }),
    );
    let text = body(&result);
    assert_eq!(text.matches("tried ").count(), 3, "{text}");
    assert!(text.ends_with("No matches"), "{text}");
    assert!(!text.contains(" in pkg:"), "{text}");
}

#[test]
fn errors_are_clear() {
    let dir = repo();
    let message = text(dir.path(), "grep", json!({ "pattern": "(unclosed" }));
    assert!(message.starts_with("invalid pattern: "), "{message}");
    let message = text(
        dir.path(),
        "grep",
        json!({ "pattern": "x", "path": "src/alpha.rs" }),
    );
    assert!(
        message.starts_with("src/alpha.rs: not found; closest existing paths: src/a.rs"),
        "{message}"
    );
    let message = text(dir.path(), "grep", json!({ "pattern": "x", "bogus": 1 }));
    assert!(message.contains("unknown field `bogus`"), "{message}");
    let message = text(dir.path(), "grep", json!({ "pattern": "x", "context": 50 }));
    assert!(message.contains("`context` is at most 10"), "{message}");
    let message = text(dir.path(), "grep", json!({ "pattern": "" }));
    assert!(message.contains("must not be empty"), "{message}");
}

#[test]
fn ignore_files_apply_from_the_root_down_only() {
    let outer = tempfile::tempdir().unwrap();
    // The checkout lives inside a directory whose .gitignore ignores it (e.g. `data/`).
    write(outer.path(), ".gitignore", "data/\n*.rs\n");
    let root = outer.path().join("data/checkout");
    write(&root, ".gitignore", "*.log\ngenerated/\n");
    write(&root, "src/app.rs", "needle\n");
    write(&root, "src/trace.log", "needle\n");
    write(&root, "src/generated/out.rs", "needle\n");
    write(&root, "src/nested/.gitignore", "skip.txt\n");
    write(&root, "src/nested/deeper/skip.txt", "needle\n");
    write(&root, "src/nested/deeper/keep.txt", "needle\n");
    let expected =
        "src/app.rs:1: needle\nsrc/nested/deeper/keep.txt:1: needle\n2 matches in 2 files";
    assert_eq!(
        body(&ok(&root, "grep", json!({ "pattern": "needle" }))),
        expected
    );
    // Starting below the root still applies the root's and intermediate ignore files.
    assert_eq!(
        body(&ok(
            &root,
            "grep",
            json!({ "pattern": "needle", "path": "src" })
        )),
        expected
    );
    assert_eq!(
        body(&ok(
            &root,
            "grep",
            json!({ "pattern": "needle", "path": "src/nested/deeper" })
        )),
        "src/nested/deeper/keep.txt:1: needle\n1 match in 1 file"
    );
    let listing = ok(&root, "glob", json!({ "pattern": "src/**" }));
    assert!(
        listing.contains("src/app.rs") && !listing.contains("trace.log"),
        "{listing}"
    );
    let tree = ok(&root, "tree", json!({ "path": "src", "depth": 1 }));
    assert!(tree.starts_with("src/ (3 files)"), "{tree}");
}
