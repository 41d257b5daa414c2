//! The sandbox escape suite: every attempt must be refused (or find nothing) and no byte from
//! outside the checkout may appear in the result.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

use crate::common::{call, text, write};
use relay_tools::ToolError;
use serde_json::json;

const CANARY: &str = "TOP-SECRET-CANARY-7f3a";

struct Fixture {
    _dir: tempfile::TempDir,
    repo: std::path::PathBuf,
    outside: std::path::PathBuf,
}

/// `<tmp>/repo` is the checkout; `<tmp>/outside-zone/secret.txt` holds the canary.
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let outside = dir.path().join("outside-zone");
    write(&outside, "secret.txt", format!("{CANARY}\n"));
    write(&outside, "nested/deeper.txt", format!("{CANARY} deeper\n"));
    write(&repo, "src/main.rs", "fn main() {}\n");
    write(&repo, "src/lib.rs", "pub fn lib() {}\n");
    symlink("/etc", repo.join("etc_link")).unwrap();
    symlink("/", repo.join("root_link")).unwrap();
    symlink(outside.join("secret.txt"), repo.join("secret_link")).unwrap();
    symlink("../outside-zone/secret.txt", repo.join("relative_link")).unwrap();
    // A chain: chain1 -> chain2 -> outside.
    symlink(repo.join("chain2"), repo.join("chain1")).unwrap();
    symlink(outside.join("secret.txt"), repo.join("chain2")).unwrap();
    // A loop.
    symlink(repo.join("loop2"), repo.join("loop1")).unwrap();
    symlink(repo.join("loop1"), repo.join("loop2")).unwrap();
    // A symlinked directory in the middle of a path.
    symlink(&outside, repo.join("src/inner")).unwrap();
    // A dangling link to a path outside.
    symlink(outside.join("missing.txt"), repo.join("dangling_link")).unwrap();
    let status = Command::new("mkfifo")
        .arg(repo.join("pipe"))
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo failed");
    Fixture {
        _dir: dir,
        repo,
        outside,
    }
}

/// Asserts that nothing from outside appears in `result`, after removing the agent's own input
/// (echoing the requested path or pattern back reveals nothing).
fn assert_no_leak_for(fixture: &Fixture, result: &str, args: &serde_json::Value) {
    let mut scrubbed = result.to_string();
    if let Some(object) = args.as_object() {
        for value in object.values().filter_map(|value| value.as_str()) {
            let escaped: String = value.chars().flat_map(char::escape_debug).collect();
            scrubbed = scrubbed
                .replace(&escaped, "<input>")
                .replace(value, "<input>");
            // Retry descriptions echo broadened forms of the pattern.
            scrubbed = scrubbed.replace(&value.to_lowercase(), "<input>");
        }
    }
    assert_no_leak(fixture, &scrubbed);
}

fn assert_no_leak(fixture: &Fixture, result: &str) {
    assert!(!result.contains(CANARY), "canary leaked: {result}");
    assert!(
        !result.contains("outside-zone"),
        "outside path leaked: {result}"
    );
    assert!(
        !result.contains("root:x:0:0"),
        "/etc/passwd leaked: {result}"
    );
    assert!(
        !result.contains(&*fixture.outside.to_string_lossy()),
        "outside path leaked: {result}"
    );
}

fn assert_refused(fixture: &Fixture, tool: &str, args: serde_json::Value) -> String {
    let result = call(&fixture.repo, tool, args.clone());
    let message = match &result {
        Ok(text) => panic!("{tool} {args} was not refused: {text}"),
        Err(error @ ToolError::Refused { .. }) => error.to_string(),
        Err(other) => panic!("{tool} {args}: expected a refusal, got {other:?}"),
    };
    assert_no_leak_for(fixture, &message, &args);
    message
}

#[test]
fn parent_dir_escapes_are_refused() {
    let f = fixture();
    for path in [
        "../outside-zone/secret.txt",
        "./../outside-zone/secret.txt",
        "src/../../outside-zone/secret.txt",
        "src/./../../outside-zone/nested/../secret.txt",
        "..",
        "../",
        "src/../../..",
    ] {
        let message = assert_refused(&f, "read", json!({ "path": path }));
        assert!(message.contains("escapes the repository root"), "{message}");
    }
}

#[test]
fn absolute_paths_outside_are_refused() {
    let f = fixture();
    let secret = f.outside.join("secret.txt");
    for path in [
        "/etc/passwd",
        "/",
        secret.to_str().unwrap(),
        "/proc/self/environ",
        "/dev/null",
    ] {
        let message = assert_refused(&f, "read", json!({ "path": path }));
        assert!(
            message.contains("absolute path outside the repository"),
            "{message}"
        );
    }
    // An absolute path inside the root is fine.
    let inside = f.repo.join("src/main.rs");
    let text = crate::common::ok(&f.repo, "read", json!({ "path": inside.to_str().unwrap() }));
    assert!(text.contains("fn main()"), "{text}");
}

#[test]
fn symlinks_resolving_outside_are_refused() {
    let f = fixture();
    for path in [
        "etc_link/passwd",
        "etc_link",
        "root_link/etc/passwd",
        "secret_link",
        "relative_link",
        "chain1",
        "src/inner/secret.txt",
        "src/inner/nested/deeper.txt",
        "src/inner",
    ] {
        let message = assert_refused(&f, "read", json!({ "path": path }));
        assert!(
            message.contains("symbolic link that does not resolve inside the repository"),
            "{path}: {message}"
        );
    }
}

#[test]
fn existence_outside_is_not_revealed() {
    let f = fixture();
    // A missing file behind an outside link gets the same refusal as an existing one.
    let existing = assert_refused(&f, "read", json!({ "path": "etc_link/passwd" }));
    let missing = assert_refused(&f, "read", json!({ "path": "etc_link/definitely-missing" }));
    assert_eq!(
        existing.replace("etc_link/passwd", "X"),
        missing.replace("etc_link/definitely-missing", "X")
    );
    // Dangling, looping and outside links are indistinguishable.
    let dangling = assert_refused(&f, "read", json!({ "path": "dangling_link" }));
    let outside = assert_refused(&f, "read", json!({ "path": "secret_link" }));
    let looping = assert_refused(&f, "read", json!({ "path": "loop1" }));
    assert_eq!(
        dangling.replace("dangling_link", "X"),
        outside.replace("secret_link", "X")
    );
    assert_eq!(
        looping.replace("loop1", "X"),
        outside.replace("secret_link", "X")
    );
}

#[test]
fn loops_fifos_nul_and_encoded_paths() {
    let f = fixture();
    let message = assert_refused(&f, "read", json!({ "path": "loop1" }));
    assert!(message.contains("loops"), "{message}");
    // The FIFO is refused without blocking.
    let message = assert_refused(&f, "read", json!({ "path": "pipe" }));
    assert!(message.contains("FIFO"), "{message}");
    let message = assert_refused(
        &f,
        "read",
        json!({ "path": "src/main.rs\u{0}../../outside-zone/secret.txt" }),
    );
    assert!(message.contains("NUL byte"), "{message}");
    // URL-encoding is not decoded: these are just odd names that do not exist.
    for path in [
        "..%2f..%2foutside-zone%2fsecret.txt",
        "%2e%2e/outside-zone/secret.txt",
        "..\\outside-zone\\secret.txt",
    ] {
        let args = json!({ "path": path });
        let result = text(&f.repo, "read", args.clone());
        assert_no_leak_for(&f, &result, &args);
        assert!(result.contains("not found"), "{path}: {result}");
    }
}

#[test]
fn search_tools_never_follow_links_outside() {
    let f = fixture();
    // grep over the whole repository: the links are not followed, so the canary is never found.
    let args = json!({ "pattern": CANARY });
    let result = text(&f.repo, "grep", args.clone());
    assert_no_leak_for(&f, &result, &args);
    assert!(
        result.contains("No matches") || result.contains("Attempts"),
        "{result}"
    );
    let result = text(
        &f.repo,
        "grep",
        json!({ "pattern": "root:x", "literal": true }),
    );
    assert_no_leak(&f, &result);
    // grep with a path filter through a link or a parent escape is refused.
    assert_refused(&f, "grep", json!({ "pattern": "x", "path": "src/inner" }));
    assert_refused(
        &f,
        "grep",
        json!({ "pattern": "x", "path": "../outside-zone" }),
    );
    assert_refused(&f, "grep", json!({ "pattern": "x", "path": "/etc" }));
    // glob cannot climb out and does not descend into linked directories.
    let message = assert_refused(&f, "glob", json!({ "pattern": "../*" }));
    assert!(message.contains("not allowed"), "{message}");
    let result = text(&f.repo, "glob", json!({ "pattern": "**/*.txt" }));
    assert_no_leak(&f, &result);
    assert!(result.contains("No paths match"), "{result}");
    assert_refused(&f, "glob", json!({ "pattern": "*", "path": "etc_link" }));
    // tree neither.
    assert_refused(&f, "tree", json!({ "path": "src/inner" }));
    let result = text(&f.repo, "tree", json!({ "depth": 6 }));
    assert_no_leak(&f, &result);
    assert!(!result.contains("passwd"), "{result}");
    // The directory listing shows link names only, never their targets.
    let result = text(&f.repo, "read", json!({ "path": "." }));
    assert_no_leak(&f, &result);
    assert!(result.contains("etc_link@"), "{result}");
    assert!(!result.contains("/etc"), "{result}");
}

#[test]
fn device_files_are_refused() {
    let f = fixture();
    // A character device inside the checkout (needs root; skipped silently otherwise is not an
    // option, so fall back to a link to /dev/null, which must be refused as outside).
    let device = f.repo.join("null_device");
    let made = Command::new("mknod")
        .arg(&device)
        .args(["c", "1", "3"])
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let message = assert_refused(&f, "read", json!({ "path": "null_device" }));
        assert!(message.contains("device"), "{message}");
    }
    symlink("/dev/zero", f.repo.join("zero_link")).unwrap();
    assert_refused(&f, "read", json!({ "path": "zero_link" }));
    let result = text(&f.repo, "grep", json!({ "pattern": "." }));
    assert_no_leak(&f, &result);
    assert!(!result.contains("null_device"), "{result}");
    let _ = Path::new("/");
}

/// Git's own directory is never readable: a plain checkout's `.git/config` can hold a token
/// (`relay explore` runs on one), whether named directly, through `..`, or through a symlink.
#[test]
fn git_directory_is_refused() {
    let f = fixture();
    write(
        &f.repo,
        ".git/config",
        format!("[remote \"origin\"]\n\turl = https://x:{CANARY}@example.com/r.git\n"),
    );
    symlink(f.repo.join(".git/config"), f.repo.join("git_config_link")).unwrap();
    symlink(f.repo.join(".git"), f.repo.join("git_dir_link")).unwrap();
    for (tool, args) in [
        ("read", json!({ "path": ".git/config" })),
        ("read", json!({ "path": "src/../.git/config" })),
        ("read", json!({ "path": "git_config_link" })),
        ("read", json!({ "path": "git_dir_link/config" })),
        ("tree", json!({ "path": ".git" })),
        ("glob", json!({ "pattern": "*", "path": ".git" })),
        ("grep", json!({ "pattern": "url", "path": ".git" })),
    ] {
        let message = assert_refused(&f, tool, args);
        assert!(message.contains("inside .git/"), "{message}");
    }
    for (tool, args) in [
        ("grep", json!({ "pattern": "example.com" })),
        ("glob", json!({ "pattern": "**/config" })),
    ] {
        let result = text(&f.repo, tool, args);
        assert!(!result.contains(CANARY), "{tool}: {result}");
    }
}
