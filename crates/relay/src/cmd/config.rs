//! `relay config`.

use std::path::Path;

use clap::Args;

use crate::settings;

#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// Print the commented default configuration instead of the effective one.
    #[arg(long)]
    default: bool,
}

pub fn run(config: Option<&Path>, args: &ConfigArgs) -> anyhow::Result<()> {
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
