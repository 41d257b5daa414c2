//! The `read` tool: windows, cuts, listings, binary refusal and the closest-path fallback.

use crate::common::{body, ok, text, write};
use serde_json::json;

fn numbered(lines: usize) -> String {
    (1..=lines).map(|line| format!("line {line}\n")).collect()
}

#[test]
fn default_window_and_offsets() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "big.txt", numbered(450));
    let result = ok(dir.path(), "read", json!({ "path": "big.txt" }));
    let lines: Vec<&str> = body(&result).lines().collect();
    assert_eq!(lines[0], "big.txt (lines 1-200 of 450)");
    assert_eq!(lines[1], "   1\tline 1");
    assert_eq!(lines[200], " 200\tline 200");
    assert_eq!(lines[201], "… 250 more lines — continue with offset=201");
    assert_eq!(lines.len(), 202);

    let result = ok(
        dir.path(),
        "read",
        json!({ "path": "big.txt", "offset": 440, "limit": 20 }),
    );
    let lines: Vec<&str> = body(&result).lines().collect();
    assert_eq!(lines[0], "big.txt (lines 440-450 of 450)");
    assert_eq!(lines.last().unwrap(), &" 450\tline 450");

    let message = text(
        dir.path(),
        "read",
        json!({ "path": "big.txt", "limit": 501 }),
    );
    assert!(
        message.contains("`limit` must be between 1 and 500"),
        "{message}"
    );
    let result = ok(
        dir.path(),
        "read",
        json!({ "path": "big.txt", "offset": 999 }),
    );
    assert!(
        body(&result).contains("offset 999 is past the end of the file (450 lines)"),
        "{result}"
    );
}

#[test]
fn long_lines_binary_and_empty() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "min.js", format!("{}\nok\n", "a".repeat(2_500)));
    let result = ok(dir.path(), "read", json!({ "path": "min.js" }));
    let first = body(&result).lines().nth(1).unwrap();
    assert_eq!(
        first,
        format!("   1\t{}… [line cut, 500 more chars]", "a".repeat(2_000))
    );
    write(dir.path(), "image.png", b"\x89PNG\r\n\x1a\n\x00\x00");
    assert_eq!(
        text(dir.path(), "read", json!({ "path": "image.png" })),
        "image.png: binary file, not shown"
    );
    write(dir.path(), "empty.txt", "");
    assert_eq!(
        body(&ok(dir.path(), "read", json!({ "path": "empty.txt" }))),
        "empty.txt (empty file)"
    );
}

#[test]
fn large_files_are_sliced_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    // 17 MiB: above the 16 MiB counting limit.
    let line = format!("{}\n", "y".repeat(1023));
    write(dir.path(), "huge.txt", line.repeat(17 * 1024));
    let result = ok(
        dir.path(),
        "read",
        json!({ "path": "huge.txt", "limit": 2 }),
    );
    let lines: Vec<&str> = body(&result).lines().collect();
    assert_eq!(
        lines[0],
        "huge.txt (lines 1-2; 17,825,792 bytes, not counted to the end)"
    );
    assert_eq!(lines[3], "… more lines — continue with offset=3");
}

#[test]
fn directories_are_listed() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/main.rs", "");
    write(dir.path(), "src/util/mod.rs", "");
    write(dir.path(), ".gitignore", "target/\n");
    write(dir.path(), "target/debug/x", "");
    let result = ok(dir.path(), "read", json!({ "path": "." }));
    assert_eq!(
        body(&result),
        "./ (directory, 2 entries)\n  .gitignore\n  src/"
    );
    let result = ok(dir.path(), "read", json!({ "path": "src" }));
    assert_eq!(
        body(&result),
        "src/ (directory, 2 entries)\n  main.rs\n  util/"
    );
}

#[test]
fn missing_files_fall_back_to_the_closest_path() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "src/main.rs", "fn main() {}\n");
    write(dir.path(), "src/lib.rs", "pub mod a;\n");
    write(dir.path(), "a/config.rs", "// a\n");
    write(dir.path(), "b/config.rs", "// b\n");
    // Unambiguous: the typo is corrected and the file is read.
    let result = ok(dir.path(), "read", json!({ "path": "src/mian.rs" }));
    assert_eq!(
        body(&result),
        "Attempts: tried src/mian.rs: not found; tried closest existing path src/main.rs: found \
         (other candidates: src/lib.rs)\nsrc/main.rs (lines 1-1 of 1)\n   1\tfn main() {}"
    );
    // Ambiguous: suggestions only.
    let message = text(dir.path(), "read", json!({ "path": "config.rs" }));
    assert_eq!(
        message,
        "config.rs: not found; closest existing paths: a/config.rs, b/config.rs"
    );
    // Nothing similar: a plain not-found.
    let message = text(dir.path(), "read", json!({ "path": "zzzzzzzzzzzz.qq" }));
    assert_eq!(message, "zzzzzzzzzzzz.qq: not found");
}
