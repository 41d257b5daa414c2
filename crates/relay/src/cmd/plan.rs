//! `relay plan`: one planner cycle on an issue described in a JSON file, against a local
//! checkout, with the configured LLM. Prints the actions and the Validator's verdicts; writes
//! nothing (no database, no tracker).

use relay_core::{IssueId, SpecId};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use relay_actions::{GapState, Snapshot, SpecState, ThreadRef, ValidationContext};
use relay_agent::context::{BuiltContext, ContextBuilder, IssueContext};
use relay_agent::explore::ExploreAgent;
use relay_agent::llm::{LlmClient, Role};
use relay_agent::planner::{PlanOutcome, PlanResult, Planner, PlannerLimits};
use relay_agent::toolbox::Toolbox;
use relay_tools::sandbox::Sandbox;
use relay_worker::jobs::orchestrator::validator::ActionsValidator;
use serde_json::json;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PlanFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The checkout the explore agents search (read only).
    #[arg(long)]
    repo: PathBuf,
    /// The issue: title, body, labels, thread, open/closed gaps, findings (the ContextBuilder's
    /// input as JSON).
    #[arg(long)]
    issue: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    format: PlanFormat,
}

pub async fn run(config: Option<&Path>, args: &PlanArgs) -> anyhow::Result<()> {
    let loaded = super::load(config)?;
    let settings = &loaded.settings;
    let text = std::fs::read_to_string(&args.issue)
        .with_context(|| format!("cannot read {}", args.issue.display()))?;
    let issue: IssueContext = serde_json::from_str(&text)
        .with_context(|| format!("{} is not an issue file", args.issue.display()))?;

    let toolbox = Toolbox::new(&args.repo, None, settings.tools.clone())
        .with_context(|| format!("failed to open {}", args.repo.display()))?
        .with_worktree_history();
    let explorer = ExploreAgent::new(
        LlmClient::from_settings(&settings.llm, Role::Explore)?,
        Arc::new(toolbox),
        settings.agent.explore.clone(),
    );
    let sandbox = Sandbox::new(&args.repo)
        .with_context(|| format!("failed to open {}", args.repo.display()))?;
    let validator = ActionsValidator::new(validation_context(&issue, sandbox));
    let planner = Planner::new(
        LlmClient::from_settings(&settings.llm, Role::Planner)?,
        Arc::new(explorer),
        Arc::new(validator),
        PlannerLimits::from(&settings.agent),
    );
    let context = ContextBuilder::new(settings.agent.context_max_tokens).build(&issue);
    let outcome = planner.plan(&context).await;
    match args.format {
        PlanFormat::Json => println!(
            "{}",
            serde_json::to_string_pretty(&as_json(&context, &outcome))?
        ),
        PlanFormat::Text => print_text(&context, &outcome),
    }
    Ok(())
}

/// What the Validator checks against, from the file: its gaps, findings and thread, and the
/// checkout (`sandbox`) as the explored snapshot. `relay eval`'s planner-level questions use it too.
pub fn validation_context(issue: &IssueContext, sandbox: Sandbox) -> ValidationContext {
    let open = issue.open_gaps.iter().map(|g| GapState {
        number: g.number,
        open: true,
        severity: g.severity,
    });
    let closed = issue.closed_gaps.iter().map(|g| GapState {
        number: g.number,
        open: false,
        // Closed gaps never block; the severity only matters while open.
        severity: relay_core::action::Severity::Low,
    });
    ValidationContext {
        // A context file has no roles to check: the dry run validates every other rule.
        authority: relay_actions::Authority::Unrestricted,
        issue_id: IssueId(0),
        tracker: "plan".into(),
        project_id: "plan".into(),
        gaps: open.chain(closed).collect(),
        findings: issue.findings.iter().map(|f| f.id).collect(),
        stale_findings: issue
            .findings
            .iter()
            .filter(|f| f.stale)
            .map(|f| f.id)
            .collect(),
        thread: issue
            .thread
            .iter()
            .map(|n| ThreadRef {
                note_id: n.note_id.clone(),
                discussion_id: n.discussion_id.clone(),
            })
            .collect(),
        snapshot: Some(Snapshot {
            sandbox,
            commit_sha: "working-tree".into(),
            related: Vec::new(),
        }),
        spec: issue.spec.as_ref().map(|s| SpecState {
            id: SpecId(0),
            version: s.version,
            status: s.status.clone(),
        }),
        default_reply: None,
        private_context: false,
        visibility: relay_core::ProjectVisibility::Public,
        existing: relay_actions::Existing {
            gaps: issue
                .open_gaps
                .iter()
                .map(|g| (g.number, &g.question))
                .chain(issue.closed_gaps.iter().map(|g| (g.number, &g.question)))
                .map(|(number, question)| relay_actions::KnownGap {
                    number,
                    question: question.clone(),
                })
                .collect(),
            findings: issue
                .findings
                .iter()
                .map(|f| relay_actions::KnownFinding {
                    number: f.id,
                    synthesis: f.synthesis.clone(),
                    sources: f
                        .sources
                        .iter()
                        .map(|c| {
                            relay_actions::context::source_key(&c.path, c.start_line, c.end_line)
                        })
                        .collect(),
                })
                .collect(),
        },
        internal_context: false,
        provenance: Default::default(),
    }
}

fn result_text(outcome: &PlanOutcome) -> String {
    match &outcome.result {
        PlanResult::Submitted(_) => "accepted".into(),
        PlanResult::Stopped(reason) => format!("stopped: {reason}"),
    }
}

fn as_json(context: &BuiltContext, outcome: &PlanOutcome) -> serde_json::Value {
    json!({
        "result": result_text(outcome),
        "actions": match &outcome.result {
            PlanResult::Submitted(batch) => serde_json::to_value(batch).unwrap_or_default(),
            PlanResult::Stopped(_) => serde_json::Value::Null,
        },
        "submissions": outcome.submissions.iter().map(|s| json!({
            "batch": s.batch,
            "verdict": s.refusal.as_deref().unwrap_or("accepted"),
        })).collect::<Vec<_>>(),
        "iterations": outcome.iterations,
        "replans": outcome.replans,
        "explores": outcome.explores,
        "tokens": {
            "planner_prompt": outcome.usage.prompt_tokens,
            "planner_completion": outcome.usage.completion_tokens,
            "explore": outcome.explore_tokens,
            "context_estimate": context.estimated_tokens,
            "context_truncated": context.truncated,
        },
    })
}

fn print_text(context: &BuiltContext, outcome: &PlanOutcome) {
    println!(
        "context: ~{} tokens{}",
        context.estimated_tokens,
        if context.truncated {
            " (truncated)"
        } else {
            ""
        }
    );
    for (index, submission) in outcome.submissions.iter().enumerate() {
        println!("\nsubmission {}:", index + 1);
        match &submission.batch {
            Some(batch) => {
                for action in &batch.actions {
                    let body = serde_json::to_string(action).unwrap_or_default();
                    println!("  - {body}");
                }
            }
            None => println!("  (arguments outside the action contract)"),
        }
        match &submission.refusal {
            None => println!("  verdict: accepted"),
            Some(text) => {
                println!("  verdict: refused");
                for line in text.lines() {
                    println!("    {line}");
                }
            }
        }
    }
    println!(
        "\nresult: {} after {} turns, {} explorations, {} planner tokens + {} explore tokens",
        result_text(outcome),
        outcome.iterations,
        outcome.explores,
        outcome.usage.total(),
        outcome.explore_tokens
    );
}
