//! Helpers shared by the orchestrator's tests: a local origin repository to clone.

use std::path::Path;
use std::process::Command;

/// Runs `git` in `dir` with no global or system configuration, failing the test on an error.
fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A one-commit origin repository (`config.go` on `main`) in a temporary folder.
pub fn origin() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.go"),
        "package main\n\ntype Config struct {\n\tRetries int\n}\n",
    )
    .unwrap();
    git(dir.path(), &["init", "-q", "-b", "main"]);
    git(dir.path(), &["add", "."]);
    git(
        dir.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@x",
            "commit",
            "-q",
            "-m",
            "v1",
        ],
    );
    dir
}
