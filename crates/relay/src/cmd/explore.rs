//! `relay explore --repo PATH "question"`: one ExploreAgent run on a plain checkout — no Postgres,
//! no tracker. The code graph is built in memory (with a progress bar on a terminal); the LLM is
//! `[llm.explore]` over `[llm.default]`, with `--base-url`, `--model`, `--api-key-env` on top.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use relay_agent::explore::{ExploreAgent, ExploreReport, ExploreRequest, Thoroughness};
use relay_agent::llm::{LlmClient, LlmSettings, ProviderSettings, Role};
use relay_agent::toolbox::{Toolbox, index_in_memory};
use relay_codegraph::index::{Phase, Progress, ProgressFn};

#[derive(Debug, Args)]
pub struct ExploreArgs {
    /// The checkout to explore.
    #[arg(long, value_name = "PATH")]
    repo: PathBuf,
    /// Effort: quick (15 turns, ~25k tokens), medium (30 turns, ~60k tokens) or thorough (the
    /// multi-stage mode of `relay analyze`: goals, at most 5 stages, 10 LLM calls).
    #[arg(long, default_value = "quick")]
    thoroughness: Thoroughness,
    /// `text` for people, `json` for scripts (the whole report, tool calls included).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    #[command(flatten)]
    llm: LlmOverrides,
    /// A related repository the explorer may read beside `--repo`: `PATH` (named
    /// `local/<directory name>`) or `LABEL=PATH` (`acme/sdk=../sdk`); repeatable, at most 8.
    /// Its places are written `LABEL:path`; the tools take `repo = LABEL`.
    #[arg(long, value_name = "[LABEL=]PATH")]
    related: Vec<String>,
    /// The question, e.g. "who calls Planner.Plan?".
    question: String,
}

/// A `--related` value: the label its places are written with and the checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelatedArg {
    pub label: String,
    pub root: PathBuf,
}

impl RelatedArg {
    /// `LABEL=PATH`, or `PATH` named `local/<directory name>`.
    pub fn parse(value: &str) -> anyhow::Result<RelatedArg> {
        let (label, path) = match value.split_once('=') {
            Some((label, path)) => (label.trim().to_owned(), PathBuf::from(path)),
            None => {
                let path = PathBuf::from(value);
                let root = std::fs::canonicalize(&path).with_context(|| {
                    format!("related repository {} is not accessible", path.display())
                })?;
                let name = root
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .context("a related repository needs a directory name or LABEL=PATH")?;
                (format!("local/{name}"), path)
            }
        };
        anyhow::ensure!(
            relay_core::related::is_repository_path(&label),
            "--related {value}: the label {label:?} is not a repository path (owner/name)"
        );
        let root = std::fs::canonicalize(&path)
            .with_context(|| format!("related repository {} is not accessible", path.display()))?;
        Ok(RelatedArg { label, root })
    }
}

/// The LLM overrides `relay explore`, `relay analyze` and `relay eval` take (the explore role's,
/// and the planner role's for `relay eval`'s planner-level questions).
#[derive(Debug, Args)]
pub struct LlmOverrides {
    /// Overrides the LLM base URL (e.g. `http://localhost:11434/v1` for Ollama).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// Overrides the model.
    #[arg(long)]
    model: Option<String>,
    /// Reads the API key from this environment variable.
    #[arg(long, value_name = "NAME")]
    api_key_env: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// What `relay explore` and `relay analyze` run on: the explore role's client, the checkout's
/// toolbox with its in-memory code graph, and the `[agent]` explore settings.
pub struct Workbench {
    pub llm: LlmClient,
    pub toolbox: Toolbox,
    pub config: relay_agent::explore::ExploreConfig,
    /// The checkout, canonical.
    pub root: PathBuf,
    /// The planner role's client (with the same overrides) and `[agent]` settings, for
    /// `relay eval`'s planner-level questions.
    pub planner_llm: LlmClient,
    pub agent: relay_agent::agent_settings::AgentSettings,
}

/// Loads the settings, resolves the explore role with `overrides`, and indexes `repo` in memory
/// (with a progress bar when `progress` and stderr is a terminal).
pub async fn workbench(
    config: Option<&Path>,
    repo: &Path,
    overrides: &LlmOverrides,
    progress: bool,
) -> anyhow::Result<Workbench> {
    let loaded = crate::settings::load(config)?;
    let settings = loaded.settings;
    let llm_settings = overridden(settings.llm, overrides);
    let llm = LlmClient::from_settings(&llm_settings, Role::Explore)
        .map_err(|error| anyhow::anyhow!("{error} [{}]", error.kind().as_str()))?;
    let planner_llm = LlmClient::from_settings(&llm_settings, Role::Planner)
        .map_err(|error| anyhow::anyhow!("{error} [{}]", error.kind().as_str()))?;
    let root = std::fs::canonicalize(repo)
        .with_context(|| format!("repository path {} is not accessible", repo.display()))?;

    let bar = (std::io::stderr().is_terminal() && progress).then(progress_bar);
    let on_progress = bar.clone().map(|bar| {
        Arc::new(move |p: Progress| {
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
            bar.set_message(match p.phase {
                Phase::Parsing => "parsing",
                Phase::Resolving => "resolving",
            });
        }) as ProgressFn
    });
    let graph = index_in_memory(&root, on_progress)
        .await
        .with_context(|| format!("failed to build the code graph of {}", root.display()))?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    // On a git checkout the explorer also gets `history` (the commits at HEAD).
    let toolbox = Toolbox::new(&root, Some(graph), settings.tools)
        .with_context(|| format!("cannot open {}", root.display()))?
        .with_worktree_history();
    Ok(Workbench {
        llm,
        toolbox,
        config: settings.agent.explore.clone(),
        root,
        planner_llm,
        agent: settings.agent,
    })
}

/// An explore error as the command reports it (the LLM's error kind in brackets).
pub fn explore_error(error: relay_agent::Error) -> anyhow::Error {
    match error {
        relay_agent::Error::Llm { source } => {
            anyhow::anyhow!("{source} [{}]", source.kind().as_str())
        }
        other => anyhow::Error::new(other),
    }
}

pub async fn run(config: Option<&Path>, args: ExploreArgs) -> anyhow::Result<()> {
    let related = args
        .related
        .iter()
        .map(|value| RelatedArg::parse(value))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let bench = workbench(config, &args.repo, &args.llm, args.format == Format::Text).await?;
    let toolbox = bench
        .toolbox
        .with_related(
            related
                .iter()
                .map(|r| relay_agent::toolbox::RelatedCheckout {
                    label: r.label.clone(),
                    root: r.root.clone(),
                    excludes: Arc::default(),
                    history: relay_tools::GitHistory::of_worktree(&r.root),
                })
                .collect(),
        )
        .context("cannot explore the related repositories")?;
    // Each related checkout's graph beside the repository's own, linked at query time.
    let mut graphs = Vec::with_capacity(related.len());
    if let Some(graph) = toolbox.graph() {
        for r in &related {
            graphs.push(
                relay_agent::toolbox::index_related_in_memory(
                    graph.store.as_ref(),
                    &r.label,
                    &r.root,
                )
                .await
                .with_context(|| {
                    format!("failed to build the code graph of {}", r.root.display())
                })?,
            );
        }
    }
    let toolbox = toolbox.with_related_graphs(graphs);
    let agent = ExploreAgent::new(bench.llm, Arc::new(toolbox), bench.config);
    let report = agent
        .explore(ExploreRequest::new(
            args.question.clone(),
            args.thoroughness,
        ))
        .await
        .map_err(explore_error)?;
    match args.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Format::Text => print!("{}", render(&report)),
    }
    Ok(())
}

fn progress_bar() -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg:>10} [{bar:40}] {pos}/{len} files ({elapsed})",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    bar
}

/// `[llm.explore]` with the command-line overrides on top.
/// `llm` with the flags on top, for the explore role and the planner role (which only `relay
/// eval`'s planner-level questions use): one endpoint answers both.
fn overridden(mut llm: LlmSettings, args: &LlmOverrides) -> LlmSettings {
    let mut key_flag = false;
    for role in [&mut llm.explore, &mut llm.planner] {
        let role = role.get_or_insert_with(ProviderSettings::default);
        if let Some(url) = &args.base_url {
            role.base_url = Some(url.clone());
        }
        if let Some(model) = &args.model {
            role.model = Some(model.clone());
        }
        if let Some(name) = &args.api_key_env {
            // The flag names the key to use: a literal key configured anywhere must not win over it.
            role.api_key_env = Some(name.clone());
            role.api_key = None;
            key_flag = true;
        }
    }
    if key_flag {
        llm.default.api_key = None;
    }
    llm
}

/// The report for people: the answer, the verified citations, then the run's figures.
fn render(report: &ExploreReport) -> String {
    let mut out = format!("{}\n", report.answer.trim_end());
    if !report.evidence.is_empty() {
        out.push_str("\nEvidence:\n");
        for citation in &report.evidence {
            out.push_str(&format!("  {citation}\n"));
        }
    }
    if !report.unanswered.is_empty() {
        out.push_str("\nUnanswered:\n");
        for item in &report.unanswered {
            out.push_str(&format!("  - {item}\n"));
        }
    }
    out.push_str(&format!(
        "\nconfidence: {} · stopped: {} · iterations: {} · tokens in/out: {}/{} · tool calls: {}",
        report.confidence.as_str(),
        report.stop,
        report.iterations,
        report.tokens_in,
        report.tokens_out,
        report.tool_calls.len()
    ));
    if report.dropped_citations > 0 {
        out.push_str(&format!(
            " · citations dropped: {}",
            report.dropped_citations
        ));
    }
    if let Some(error) = &report.llm_error {
        out.push_str(&format!(" · llm error: {error}"));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_related_checkout_is_named_by_its_label_or_its_directory() {
        let dir = tempfile::tempdir().unwrap();
        let sdk = dir.path().join("sdk");
        std::fs::create_dir(&sdk).unwrap();
        let named = RelatedArg::parse(&format!("acme/sdk={}", sdk.display())).unwrap();
        assert_eq!(named.label, "acme/sdk");
        assert_eq!(named.root, std::fs::canonicalize(&sdk).unwrap());
        let bare = RelatedArg::parse(&sdk.display().to_string()).unwrap();
        assert_eq!(bare.label, "local/sdk");
        // Not a repository path, or not there: said so.
        let error = RelatedArg::parse(&format!("sdk={}", sdk.display())).unwrap_err();
        assert!(
            error.to_string().contains("not a repository path"),
            "{error}"
        );
        assert!(RelatedArg::parse("acme/sdk=/nonexistent/sdk").is_err());
    }
}
