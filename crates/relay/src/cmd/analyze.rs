//! `relay analyze --repo PATH "question"`: one thorough query (goals, stages, verified claims) on a
//! plain checkout — no Postgres, no tracker. It is what `explore(thoroughness: thorough)` runs
//! inside a job; the LLM is the explore role's (`[llm.explore]` over `[llm.default]`), with the
//! same `--base-url`, `--model`, `--api-key-env` overrides as `relay explore`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use relay_agent::thorough::bounds::{
    QUERY_AGENT_HOPS, QUERY_CODE_TOKENS, QUERY_FILES, QUERY_LLM_CALLS,
};
use relay_agent::thorough::state::TraversalState;
use relay_agent::thorough::traverser::StepStatus;
use relay_agent::thorough::{ThoroughReport, analyze};
use relay_agent::trace::Tracer;

use super::explore::{Format, LlmOverrides, explore_error, workbench};

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// The checkout to analyze.
    #[arg(long, value_name = "PATH")]
    repo: PathBuf,
    /// `text` for people, `json` for scripts (the whole report: intent, goals, every stage with
    /// its steps and attempt histories, the answer with its evidence chain, the figures).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    llm: LlmOverrides,
    /// The question, e.g. "how does a webhook become a comment, and where can it be lost?".
    question: String,
}

pub async fn run(config: Option<&Path>, args: AnalyzeArgs) -> anyhow::Result<()> {
    let bench = workbench(config, &args.repo, &args.llm, args.format == Format::Text).await?;
    let report = analyze(
        &bench.llm,
        &bench.toolbox,
        &args.question,
        &mut TraversalState::default(),
        &Tracer::noop(),
        bench.config.thorough_time_limit(),
    )
    .await
    .map_err(explore_error)?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Text => print!("{}", render(&report)),
    }
    Ok(())
}

/// The report for people: the answer, the goals, one line per stage, then the figures.
fn render(report: &ThoroughReport) -> String {
    let mut out = format!("{}\n", report.answer.text.trim_end());
    if !report.goals.is_empty() {
        out.push_str("\nGoals:\n");
        for goal in &report.goals {
            let status = serde_json::to_value(goal.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let _ = writeln!(out, "  {:<4} {status:<9} {}", goal.id, goal.description);
        }
    }
    if !report.stages.is_empty() {
        out.push_str("\nStages:\n");
        for stage in &report.stages {
            let ok = stage
                .steps
                .iter()
                .filter(|s| s.status == StepStatus::Ok)
                .count();
            let verdict = stage
                .verdict
                .and_then(|v| serde_json::to_value(v).ok())
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_else(|| "-".to_owned());
            let route = stage
                .route
                .map_or_else(|| "-".to_owned(), |r| r.to_string());
            let _ = writeln!(
                out,
                "  {}.{}  {} steps ({ok} ok) · {} verified claims, {} dropped · {verdict} → {route}",
                stage.stage,
                stage.attempt,
                stage.steps.len(),
                stage.verified_claims,
                stage.dropped_claims,
            );
        }
    }
    let _ = write!(
        out,
        "\nended: {} · llm calls: {}/{QUERY_LLM_CALLS} · tokens in/out: {}/{} · hops: {}/{QUERY_AGENT_HOPS} · files: {}/{QUERY_FILES} · code tokens: {}/{QUERY_CODE_TOKENS} · {:.1} s",
        report.answer.reason.as_str(),
        report.llm_calls,
        report.tokens_in,
        report.tokens_out,
        report.agent_hops,
        report.files_read,
        report.code_tokens,
        report.total_time_ms as f64 / 1000.0,
    );
    if let Some(error) = &report.llm_error {
        let _ = write!(out, " · llm error: {error}");
    }
    out.push('\n');
    out
}
