//! Prints exactly what the agent would receive for one tool call, like `relay tool`:
//!
//! `cargo run -p relay-tools --example tool -- <grep|read|glob|tree> --repo PATH '<json arguments>'`

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (name, repo, json) = match args.as_slice() {
        [name, flag, repo, json] if flag == "--repo" => (name, PathBuf::from(repo), json),
        _ => {
            eprintln!("usage: tool <grep|read|glob|tree> --repo PATH '<json arguments>'");
            return ExitCode::from(2);
        }
    };
    match relay_tools::run_tool(name, &repo, json) {
        Ok(text) => {
            println!("{text}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
