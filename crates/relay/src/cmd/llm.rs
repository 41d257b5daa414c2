//! `relay llm ping`.

use std::path::Path;

use clap::Subcommand;
use relay_agent::llm::{self, Role};

#[derive(Debug, Subcommand)]
pub enum LlmCommand {
    /// Send one tiny request with the configured settings; print provider, model, latency and
    /// token usage, or the classified error (and exit non-zero).
    Ping {
        /// Which role's configuration to use: planner, explore or spec.
        #[arg(long, default_value = "planner")]
        role: Role,
    },
}

pub async fn run(config: Option<&Path>, command: LlmCommand) -> anyhow::Result<()> {
    let loaded = crate::settings::load(config)?;
    match command {
        LlmCommand::Ping { role } => match llm::ping(&loaded.settings.llm, role).await {
            Ok(report) => {
                println!("{report}");
                Ok(())
            }
            Err(error) => Err(anyhow::anyhow!("{error} [{}]", error.kind().as_str())),
        },
    }
}
