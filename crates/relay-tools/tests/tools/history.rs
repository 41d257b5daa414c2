//! The `history` tool over real git repositories: a file's commits and a line range's blame at
//! the checkout's commit; the sandbox's path rules; a huge log shown bounded with an honest count;
//! no history, no tool.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use relay_core::repo_config::ExcludeSet;
use relay_tools::{Tool, ToolContext, ToolError, ToolLimits, ToolRegistry};
use serde_json::json;

use crate::common::{body, call, ok, text, write};

fn git(root: &Path, args: &[&str], at: i64, author: &str) {
    let date = format!("@{at} +0000");
    let output = Command::new("git")
        .args([
            "-c",
            &format!("user.name={author}"),
            "-c",
            "user.email=a@example.com",
        ])
        .args(args)
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn commit(root: &Path, files: &[(&str, &str)], message: &str, author: &str, day: i64) {
    for (rel, content) in files {
        write(root, rel, content);
    }
    git(root, &["add", "--all"], 0, author);
    git(
        root,
        &["commit", "--quiet", "-m", message],
        day * 86_400,
        author,
    );
}

/// A repository whose `plan.go` gained a check on day 2 and whose line 3 changed on day 3.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "--quiet", "--initial-branch=main"], 0, "x");
    commit(
        root,
        &[("pkg/plan.go", "a\nb\nc\n"), ("README", "r\n")],
        "start the planner",
        "Ann",
        1,
    );
    commit(
        root,
        &[("pkg/plan.go", "a\nb\nc\ncheck\n")],
        "plan: validate each batch first (a batch once ran twice)",
        "Bo",
        2,
    );
    commit(
        root,
        &[("pkg/plan.go", "a\nb\nC\ncheck\n")],
        "plan: rename c",
        "Cy",
        3,
    );
    dir
}

#[test]
fn a_files_commits_and_a_line_ranges_blame() {
    let dir = repo();
    let root = dir.path();
    let log = ok(root, "history", json!({"path": "pkg/plan.go"}));
    let lines: Vec<&str> = body(&log).lines().collect();
    assert!(lines[0].starts_with("History of pkg/plan.go at "), "{log}");
    assert!(
        lines[0].ends_with("(newest first; renames followed):"),
        "{log}"
    );
    assert!(
        lines[1].contains(" 1970-01-04 Cy — plan: rename c"),
        "{log}"
    );
    assert!(
        lines[2]
            .contains(" 1970-01-03 Bo — plan: validate each batch first (a batch once ran twice)"),
        "{log}"
    );
    assert!(
        lines[3].contains(" 1970-01-02 Ann — start the planner"),
        "{log}"
    );
    assert_eq!(lines[4], "Showing 3 of 3 commits", "{log}");

    let range = ok(
        root,
        "history",
        json!({"path": "pkg/plan.go", "start_line": 3, "end_line": 4}),
    );
    let range_body = body(&range);
    assert!(
        range_body.contains("Lines 3-4 of pkg/plan.go at "),
        "{range}"
    );
    assert!(
        range_body.contains("\nLine 3: ") && range_body.contains("Cy — plan: rename c"),
        "{range}"
    );
    assert!(
        range_body.contains("\nLine 4: ") && range_body.contains("Bo — plan: validate each batch"),
        "{range}"
    );
    assert!(
        range_body.contains("Commits that touched lines 3-4 (newest first):"),
        "{range}"
    );
    assert!(range_body.ends_with("Showing 3 of 3 commits"), "{range}");

    let fewer = ok(root, "history", json!({"path": "pkg/plan.go", "limit": 1}));
    assert!(
        body(&fewer).ends_with("Showing 1 of 3 commits — ask a line range (`start_line`, `end_line`) or a larger `limit` (at most 30) to see others"),
        "{fewer}"
    );
    let root_log = ok(root, "history", json!({"path": "."}));
    assert!(root_log.contains("Showing 3 of 3 commits"), "{root_log}");
}

/// The same path rules as `read`: nothing outside the checkout, nothing in `.git`, no excluded
/// path, a missing path gets the closest ones; git never sees a path it could take for an option.
#[test]
fn history_paths_follow_the_sandbox_rules() {
    let dir = repo();
    let root = dir.path();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.txt", "s\n");
    std::os::unix::fs::symlink(outside.path(), root.join("pkg/out")).unwrap();
    for path in [
        "../outside",
        "/etc/passwd",
        "pkg/out/secret.txt",
        ".git/config",
        "pkg/../../x",
    ] {
        let refused = text(root, "history", json!({"path": path}));
        assert_eq!(refused, text(root, "read", json!({"path": path})), "{path}");
        assert!(
            !refused.contains("secret") || refused.contains(path),
            "{refused}"
        );
        assert!(
            refused.starts_with("refused") || refused.contains("not found"),
            "{path}: {refused}"
        );
    }
    let missing = text(root, "history", json!({"path": "pkg/plan.og"}));
    assert!(
        missing.contains("not found; closest existing paths: pkg/plan.go"),
        "{missing}"
    );

    // A tracked file whose name git could read as an option: the sandbox finds it, relay-repo
    // refuses it before git runs (and git writes nothing).
    write(root, "--output=pwned", "x\n");
    git(root, &["add", "--", "--output=pwned"], 0, "x");
    git(
        root,
        &["commit", "--quiet", "-m", "odd name"],
        5 * 86_400,
        "x",
    );
    let refused = text(root, "history", json!({"path": "--output=pwned"}));
    assert!(refused.contains("may not start with `-`"), "{refused}");
    assert!(!root.join("pwned").exists());

    // A repository that excludes paths: a file's history, not a directory's (whose log would
    // list commits that only touched excluded paths).
    let excludes = ExcludeSet::new(&["secret/".to_owned()]).unwrap();
    let context = ToolContext::new(root, ToolLimits::default())
        .unwrap()
        .with_excludes(Arc::new(excludes))
        .with_worktree_history();
    let registry = ToolRegistry::standard();
    let directory = registry.call(&context, "history", &json!({"path": "pkg"}).to_string());
    assert!(
        matches!(directory, Err(ToolError::Refused { .. })),
        "{directory:?}"
    );
    let file = registry.call(
        &context,
        "history",
        &json!({"path": "pkg/plan.go"}).to_string(),
    );
    assert!(file.is_ok(), "{file:?}");
}

/// A log of more commits than are counted, each with a long subject: ten shown, the count says
/// "at least", the answer stays small.
#[test]
fn a_huge_log_is_shown_bounded_with_an_honest_count() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    git(root, &["init", "--quiet", "--initial-branch=main"], 0, "x");
    let mut stream = Vec::new();
    for i in 0..1_200 {
        let message = format!("change {i}: {}", "why ".repeat(200));
        let content = format!("{i}\n");
        write!(
            stream,
            "commit refs/heads/main\ncommitter B <b@example.com> {} +0000\ndata {}\n{message}\nM 644 inline f.txt\ndata {}\n{content}\n",
            1_700_000_000 + i,
            message.len(),
            content.len()
        )
        .unwrap();
    }
    let mut import = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(root)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    import.stdin.take().unwrap().write_all(&stream).unwrap();
    assert!(import.wait().unwrap().success());
    git(root, &["checkout", "--quiet", "main"], 0, "x");
    let log = ok(root, "history", json!({"path": "f.txt"}));
    let lines: Vec<&str> = body(&log).lines().collect();
    assert_eq!(lines.len(), 12, "{log}");
    assert!(lines[1].contains("change 1199: why why"), "{log}");
    assert!(
        lines[1].chars().count() < 220,
        "a subject is one bounded line: {}",
        lines[1]
    );
    assert!(lines[11].starts_with("Showing 10 of at least "), "{log}");
}

/// Without git history the tool is not offered by the toolbox, and a call says why.
#[test]
fn without_git_history_there_is_no_history_tool() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.go", "package a\n");
    let context = ToolContext::new(dir.path(), ToolLimits::default())
        .unwrap()
        .with_worktree_history();
    assert!(context.history().is_none());
    assert!(!relay_tools::history::HistoryTool.available(&context));
    let answer = call(dir.path(), "history", json!({"path": "a.go"}));
    let Err(ToolError::Unavailable(message)) = answer else {
        panic!("{answer:?}")
    };
    assert!(
        message.contains("not a git repository; use grep and read"),
        "{message}"
    );
}
