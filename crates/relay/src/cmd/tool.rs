//! `relay tool`: one code-tool call, printed exactly as an agent receives it.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;

#[derive(Debug, Args)]
pub struct ToolArgs {
    /// The tool: grep, read, glob, tree or history (history: the commits at the checkout's HEAD).
    name: String,
    /// The checkout to run it in (the sandbox root).
    #[arg(long, default_value = ".")]
    repo: PathBuf,
    /// The tool's arguments as JSON, e.g. '{"pattern": "TODO", "path": "src"}'.
    #[arg(default_value = "{}")]
    arguments: String,
}

pub fn run(config: Option<&Path>, args: &ToolArgs) -> anyhow::Result<()> {
    let limits = crate::settings::load(config)?.settings.tools;
    let text = relay_tools::run_tool_with_limits(&args.name, &args.repo, &args.arguments, limits)
        .with_context(|| format!("the {} tool failed", args.name))?;
    println!("{text}");
    Ok(())
}
