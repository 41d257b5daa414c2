//! Runs the `grep` tool once with every output cap off and writes the result to stdout, so that
//! `scripts/bench-grep.sh` can time it against `rg` the same way (one process, output to
//! /dev/null). The match and file counts go to stderr as `matches=N files=M`.
//!
//! Usage: `bench_grep <dir> <pattern> [--literal] [--ignore-case]`

use std::io::Write;
use std::path::PathBuf;

use relay_tools::{ToolLimits, run_tool_with_limits};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(pattern)) = (args.next(), args.next()) else {
        return Err("usage: bench_grep <dir> <pattern> [--literal] [--ignore-case]".into());
    };
    let mut literal = false;
    let mut case_insensitive = false;
    for flag in args {
        match flag.as_str() {
            "--literal" => literal = true,
            "--ignore-case" | "-i" => case_insensitive = true,
            other => return Err(format!("unknown flag {other}").into()),
        }
    }
    let arguments = serde_json::json!({ "pattern": pattern, "literal": literal, "case_insensitive": case_insensitive });
    let text = run_tool_with_limits(
        "grep",
        &PathBuf::from(dir),
        &arguments.to_string(),
        ToolLimits::unbounded(),
    )?;
    std::io::stdout().lock().write_all(text.as_bytes())?;
    // The summary line is "N matches in M files" (or "No matches"), just before the size note.
    let summary = text.lines().rev().nth(1).unwrap_or_default();
    let numbers: Vec<String> = summary
        .split_whitespace()
        .filter(|word| word.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(|word| word.replace(',', ""))
        .collect();
    match numbers.as_slice() {
        [matches, files, ..] => eprintln!("matches={matches} files={files}"),
        _ => eprintln!("matches=0 files=0"),
    }
    Ok(())
}
