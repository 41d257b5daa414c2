//! The `relay` binary: one executable for every role.
//!
//! Layout: `cmd` (one module per command), `settings` (the configuration's layers: the defaults
//! of `config/relay.toml`, the file, the environment; validation and the secrets it holds).

mod cmd;
mod settings;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

// jemalloc for Rust allocations and (unprefixed `malloc`) for the C parts too: tree-sitter parsing
// is allocation-heavy, and glibc malloc costs the indexer about a tenth of its CPU time (mimalloc
// measured no better than glibc here).
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Relay turns vague GitHub and GitLab issues into well-scoped work.
#[derive(Debug, Parser)]
#[command(name = "relay", version, about, long_about = None)]
struct Cli {
    /// Configuration file (TOML). Defaults to $RELAY_CONFIG; without either, built-in defaults and
    /// RELAY__* environment variables apply.
    #[arg(long, global = true, value_name = "PATH")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the gateway and a worker in one process (the default deployment).
    Serve,
    /// Run only the webhook gateway and ops endpoints (scale-out deployment).
    Gateway,
    /// Run only a job worker (scale-out deployment; run as many as you like).
    Worker,
    /// Apply pending database migrations and exit.
    Migrate,
    /// Run one `[retention]` pass now and print what it deleted per table (`--dry-run`: what it
    /// would delete). Worker processes run the same pass periodically.
    Prune(cmd::prune::PruneArgs),
    /// Dead jobs: `relay jobs list`, `relay jobs retry ID…`, `relay jobs discard ID…` (each
    /// idempotent, safe while workers run, recorded in the job's trace).
    #[command(subcommand)]
    Jobs(cmd::operate::JobsCommand),
    /// Tracker writes refused for good: `relay writes list`, `relay writes retry ID…`.
    #[command(subcommand)]
    Writes(cmd::operate::WritesCommand),
    /// Print the effective configuration with every secret redacted; `relay config schema`
    /// prints the JSON Schema of a repository's `.relay.toml`, `relay config check PATH`
    /// validates one.
    Config(cmd::config::ConfigArgs),
    /// What Relay learned about repositories: `relay learnings list [--repo github:acme/app]`,
    /// `relay learnings forget ID`.
    #[command(subcommand)]
    Learnings(cmd::learnings::LearningsCommand),
    /// Talk to the configured LLM (e.g. `relay llm ping --role planner`).
    #[command(subcommand)]
    Llm(cmd::llm::LlmCommand),
    /// Check a configured issue tracker's credentials (e.g. `relay tracker check github
    /// --issue octo-org/hello#12`).
    #[command(subcommand)]
    Tracker(cmd::tracker::TrackerCommand),
    /// One reconciliation pass now: ask each tracker what changed since the last pass and record
    /// what no webhook brought (`--dry-run` prints what it would enqueue; `--since 6h` looks
    /// back that far for every project).
    Reconcile(cmd::reconcile::ReconcileArgs),
    /// Run one code tool on a checkout and print exactly what an agent would receive:
    /// `relay tool grep --repo . '{"pattern": "fn main"}'`.
    Tool(cmd::tool::ToolArgs),
    /// Index a checkout's Go and Python code and print a summary, or the whole graph with
    /// `--format json` (the documented export format).
    Index(cmd::index::IndexArgs),
    /// Answer a question about a checkout with the ExploreAgent (no database needed):
    /// `relay explore --repo . "who calls Planner.Plan?"`.
    Explore(cmd::explore::ExploreArgs),
    /// Thorough analysis of a question that spans many files (no database needed): goals, at
    /// most 5 stages of plan → tools → synthesis → critique, an answer of verified claims only:
    /// `relay analyze --repo . "how does a webhook become a comment?"`.
    Analyze(cmd::analyze::AnalyzeArgs),
    /// Score the explorer on a suite of questions about a checkout (no database needed):
    /// `relay eval --repo . --suite eval/relay.toml`; compare models with `--model`.
    Eval(cmd::eval::EvalArgs),
    /// Ask the code graph of a checkout: search, callers, callees, implementations, usages, resolve.
    Codegraph(cmd::codegraph::CodegraphArgs),
    /// Dry run: one planner cycle on an issue from a JSON file against a local checkout; prints
    /// the actions and the Validator's verdicts and writes nothing.
    Plan(cmd::plan::PlanArgs),
    /// Show what Relay learned about exploring a repository (tool transitions, the hinted
    /// sequences); `--import FILE` adds sequences from other sources at a lower weight.
    ToolGraph(cmd::tool_graph::ToolGraphArgs),
    /// Print a job's run trace (LLM calls, tool calls, decisions) as a timeline with the tokens
    /// and cost per role; `--follow` keeps printing until the job finishes.
    Trace(cmd::trace::TraceArgs),
    /// Load-test a running gateway with signed GitHub deliveries and compare with the raw
    /// Postgres INSERT ceiling.
    BenchIntake(cmd::bench_intake::BenchIntakeArgs),
}

/// Stack of the main thread and of the runtime's threads: indexing recurses over syntax trees
/// (the main thread and blocking-pool threads run it, as well as the indexer's own threads), and
/// deeply nested (often generated) code needs far more than the platform default. The indexer
/// owns the figure; only touched pages cost memory.
const MAIN_STACK_BYTES: usize = relay_codegraph::index::INDEX_STACK_BYTES;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match std::thread::Builder::new()
        .name("relay-main".into())
        .stack_size(MAIN_STACK_BYTES)
        .spawn(move || run_main(cli))
    {
        Ok(handle) => handle.join().unwrap_or(ExitCode::FAILURE),
        Err(e) => {
            eprintln!("error: failed to start the main thread: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run_main(cli: Cli) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Blocking-pool threads run indexing and tool calls; give them room to recurse.
        .thread_stack_size(MAIN_STACK_BYTES)
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: failed to start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let config = cli.config.as_deref();
    match cli.command {
        Command::Serve => cmd::serve::run(config, cmd::serve::Roles::Both).await,
        Command::Gateway => cmd::serve::run(config, cmd::serve::Roles::Gateway).await,
        Command::Worker => cmd::serve::run(config, cmd::serve::Roles::Worker).await,
        Command::Migrate => cmd::migrate::run(config).await,
        Command::Prune(args) => cmd::prune::run(config, &args).await,
        Command::Jobs(command) => cmd::operate::jobs(config, &command).await,
        Command::Writes(command) => cmd::operate::writes(config, &command).await,
        Command::Config(args) => cmd::config::run(config, &args),
        Command::Learnings(command) => cmd::learnings::run(config, command).await,
        Command::BenchIntake(args) => cmd::bench_intake::run(args).await,
        Command::Llm(command) => cmd::llm::run(config, command).await,
        Command::Tool(args) => cmd::tool::run(config, &args),
        Command::Tracker(command) => cmd::tracker::run(config, command).await,
        Command::Reconcile(args) => cmd::reconcile::run(config, args).await,
        Command::Index(args) => cmd::index::run(&args),
        Command::Codegraph(args) => cmd::codegraph::run(config, args).await,
        Command::Plan(args) => cmd::plan::run(config, &args).await,
        Command::Explore(args) => cmd::explore::run(config, args).await,
        Command::Analyze(args) => cmd::analyze::run(config, args).await,
        Command::Eval(args) => cmd::eval::run(config, args).await,
        Command::Trace(args) => cmd::trace::run(config, &args).await,
        Command::ToolGraph(args) => cmd::tool_graph::run(config, &args).await,
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        super::Cli::command().debug_assert();
    }
}
