//! `relay config`: the effective server configuration (`--default`: the commented defaults);
//! `relay config schema` and `relay config check PATH` for the repository's `.relay.toml`.

use std::path::Path;

use clap::{Args, Subcommand};

use crate::settings;

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Print the commented default configuration instead of the effective one.
    #[arg(long)]
    default: bool,
    #[command(subcommand)]
    action: Option<ConfigAction>,
}

#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Print the JSON Schema of a repository's `.relay.toml` (for editors).
    Schema,
    /// Validate a checkout's `.relay.toml` (or the file itself) against this server's
    /// configuration, with the messages the status page shows; non-zero exit on an error or a
    /// refused widening.
    Check(super::repo_config_check::CheckArgs),
}

pub fn run(config: Option<&Path>, args: &ConfigArgs) -> anyhow::Result<()> {
    match &args.action {
        Some(ConfigAction::Schema) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&relay_core::repo_config::schema())?
            );
            return Ok(());
        }
        Some(ConfigAction::Check(check)) => return super::repo_config_check::run(config, check),
        None => {}
    }
    if args.default {
        print!("{}", settings::DEFAULT_CONFIG);
        return Ok(());
    }
    let loaded = settings::load(config)?;
    print!(
        "{}",
        toml::to_string_pretty(&settings::redacted(&loaded.document))?
    );
    Ok(())
}
