//! `relay learnings list [--repo TRACKER:PROJECT] [--format text|json]` and
//! `relay learnings forget ID [--by NAME]`: what Relay learned about repositories, with where
//! each came from and how often it reached a prompt; forgetting one is recorded (who, when) and
//! it never reaches a prompt again.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use clap::Subcommand;
use relay_store::learnings::{Forgotten, LearningRow};

/// Most learnings listed.
const MAX_LISTED: i64 = 1_000;

#[derive(Debug, Subcommand)]
pub enum LearningsCommand {
    /// List learnings, newest first (forgotten ones included, marked).
    List {
        /// One repository: `<tracker>:<project path>`, e.g. `github:acme/app`.
        #[arg(long)]
        repo: Option<String>,
        /// `text` or `json`.
        #[arg(long, value_enum, default_value_t = super::tool_graph::Format::Text)]
        format: super::tool_graph::Format,
    },
    /// Forget a learning: it never reaches a prompt again.
    Forget {
        id: i64,
        /// Who forgets it, as recorded (default: the operator's login).
        #[arg(long)]
        by: Option<String>,
    },
}

pub async fn run(config: Option<&Path>, command: LearningsCommand) -> anyhow::Result<()> {
    let loaded = super::load(config)?;
    let pool = loaded
        .settings
        .database
        .pool()
        .map_err(anyhow::Error::msg)?;
    let mut conn = pool
        .acquire()
        .await
        .context("failed to reach the database")?;
    match command {
        LearningsCommand::List { repo, format } => {
            let (tracker, project_id) = match repo.as_deref() {
                None => (None, None),
                Some(repo) => {
                    let (tracker, path) = repo
                        .split_once(':')
                        .context("--repo is <tracker>:<project path>, e.g. github:acme/app")?;
                    let id = relay_store::repo_configs::project_id_of(&mut conn, tracker, path)
                        .await?
                        .with_context(|| format!("Relay knows no issue of {repo}"))?;
                    (Some(tracker.to_owned()), Some(id))
                }
            };
            let rows = relay_store::learnings::list(
                &mut conn,
                tracker.as_deref(),
                project_id.as_deref(),
                MAX_LISTED,
            )
            .await?;
            match format {
                super::tool_graph::Format::Json => {
                    println!("{}", serde_json::to_string_pretty(&rows)?);
                }
                super::tool_graph::Format::Text => print!("{}", render(&rows)),
            }
        }
        LearningsCommand::Forget { id, by } => {
            let row = relay_store::learnings::get(&mut conn, id)
                .await?
                .with_context(|| format!("no learning {id}"))?;
            let by = by.unwrap_or_else(|| {
                format!(
                    "{} (relay learnings forget)",
                    std::env::var("USER").unwrap_or_else(|_| "operator".into())
                )
            });
            match relay_store::learnings::forget(&mut conn, &row.tracker, &row.project_id, id, &by)
                .await?
            {
                Forgotten::Now(_) => println!("forgot learning {id}"),
                Forgotten::Already(row) => println!(
                    "learning {id} was already forgotten by {}",
                    row.forgotten_by.as_deref().unwrap_or("?")
                ),
                Forgotten::NotFound => anyhow::bail!("no learning {id}"),
            }
        }
    }
    Ok(())
}

/// One block per learning.
pub fn render(rows: &[LearningRow]) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        out.push_str("no learnings\n");
    }
    for row in rows {
        let state = match (&row.forgotten_at, &row.forgotten_by) {
            (Some(at), by) => format!(
                "forgotten by {} at {}",
                by.as_deref().unwrap_or("?"),
                at.format("%Y-%m-%d %H:%M UTC")
            ),
            (None, _) => "in use".into(),
        };
        let _ = writeln!(
            out,
            "#{} [{}] {}:{} — {state}\n  {}\n  from issue {} note {} job {}; made {}; {} prompt(s), last {}",
            row.id,
            row.kind,
            row.tracker,
            row.project_id,
            row.content.split_whitespace().collect::<Vec<_>>().join(" "),
            row.issue_id.map_or_else(|| "-".into(), |i| i.to_string()),
            row.note_id.as_deref().unwrap_or("-"),
            row.created_by_run
                .map_or_else(|| "-".into(), |j| j.to_string()),
            row.created_at.format("%Y-%m-%d %H:%M UTC"),
            row.prompt_uses,
            row.last_used_at.map_or_else(
                || "never".into(),
                |at| at.format("%Y-%m-%d %H:%M UTC").to_string()
            ),
        );
    }
    out
}
