//! `relay eval --repo PATH --suite FILE.toml [--format text|json]`: runs a suite of questions
//! through the ExploreAgent on a plain checkout (as `relay explore` does: the configured explore
//! model, the in-memory code graph) and scores each (see `relay_agent::eval`). A question with an
//! `issue` starts from that issue: the planner (the planner role's model, the same overrides)
//! reads it, explores and submits actions to the Validator, as `relay plan` does.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use clap::Args;
use relay_agent::eval::{PlannerEval, Suite, run_suite_with_planner};
use relay_agent::explore::ExploreAgent;
use relay_agent::planner::{BatchValidator, PlannerLimits};
use relay_tools::sandbox::Sandbox;
use relay_worker::jobs::orchestrator::validator::ActionsValidator;

use super::explore::{Format, LlmOverrides, explore_error, workbench};

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The checkout the suite asks about.
    #[arg(long, value_name = "PATH")]
    repo: PathBuf,
    /// The suite: `[[question]]` tables (see `eval/relay.toml`).
    #[arg(long, value_name = "FILE")]
    suite: PathBuf,
    /// `text` (a table) or `json` (every score, tool sequences included).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    llm: LlmOverrides,
}

/// Reads and parses a suite file.
pub fn load_suite(path: &Path) -> anyhow::Result<Suite> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the suite {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("the suite {} is not valid", path.display()))
}

pub async fn run(config: Option<&Path>, args: EvalArgs) -> anyhow::Result<()> {
    let suite = load_suite(&args.suite)?;
    let bench = workbench(config, &args.repo, &args.llm, args.format == Format::Text).await?;
    let sandbox = Sandbox::new(&bench.root)
        .with_context(|| format!("failed to open {}", bench.root.display()))?;
    let planner = PlannerEval {
        llm: bench.planner_llm,
        limits: PlannerLimits::from(&bench.agent),
        context_max_tokens: bench.agent.context_max_tokens,
        validator: Box::new(move |issue| {
            Arc::new(ActionsValidator::new(super::plan::validation_context(
                issue,
                sandbox.clone(),
            ))) as Arc<dyn BatchValidator>
        }),
    };
    let agent = ExploreAgent::new(bench.llm, Arc::new(bench.toolbox), bench.config);
    let report = run_suite_with_planner(&agent, &suite, Some(&planner))
        .await
        .map_err(explore_error)?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Text => print!("{}", report.to_text()),
    }
    Ok(())
}
