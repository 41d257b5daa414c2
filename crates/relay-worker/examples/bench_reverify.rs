//! Re-verification figures ("Figures for the closing note"): one project with 200
//! issues × 20 findings (4,000 cited sources over 200 files), one push, against a full code-graph
//! index of the same commit (`relay index`'s work, in-memory store) measured in the same run.
//!
//! A first push (a README change) establishes the project's re-verification watermark: with no
//! watermark yet, every source is read once (as after the upgrade that introduced it). Then the
//! push measured: three lines at the top of 20 cited files (their sources re-anchor), a cited
//! line changed in 5 more (those sources go stale) and 2 renamed (their sources follow); it is
//! pushed, then undone by another push, [`TOUCH_ROUNDS`] times (p50 of those pushes, each
//! touching 27 cited files); then [`QUIET_PUSHES`] pushes touching no cited file (p50).
//! Reported: each push's re-verification time, the statements it ran, the summaries it queued
//! (= tracker writes per push: at most one per issue whose summary changed), the full index's
//! time, and one planner cycle's Relay-side time (p50 of 20 cycles:
//! the scripted LLM over local HTTP answers at once, the explorer is a stub, the writes go to the
//! local GitHub server — what is left is Relay's own work: context, validation, batch
//! transaction, summary, outbox drain).
//!
//! `DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres cargo run --release -p relay-worker --example bench_reverify`
//! Runs in a throwaway database it creates and drops.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use relay_actions::Snapshot;
use relay_agent::agent_settings::AgentSettings;
use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::{LlmClient, LlmSettings, Role};
use relay_agent::planner::{ExploreFailure, ExploreOutcome, ExploreRequest, Explorer};
use relay_agent::trace::Tracer;
use relay_core::Citation;
use relay_repo::{Provider, RepoManager, RepoSettings, RepoSpec};
use relay_store::findings::SourceRow;
use relay_tracker::fake::FakeGitHub;
use relay_worker::jobs::orchestrator::JobRun;
use relay_worker::jobs::orchestrator::admission::Admission;
use relay_worker::jobs::orchestrator::cycle::{self, CycleEnd, CycleEnv};
use relay_worker::jobs::orchestrator::start;
use relay_worker::jobs::reindex::CodegraphIndexing;
use relay_worker::jobs::reverify::publish::{Channel, publish};
use relay_worker::jobs::reverify::{PushTarget, reverify_project};
use secrecy::SecretString;
use serde_json::json;
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;

const ISSUES: usize = 200;
const FINDINGS_PER_ISSUE: usize = 20;
const FILES: usize = 200;
const LINES_PER_FILE: usize = 120;
/// Pushes touching 27 cited files, and the pushes undoing them.
const TOUCH_ROUNDS: usize = 3;
/// Pushes touching no cited file.
const QUIET_PUSHES: usize = 20;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let admin_url = std::env::var("DATABASE_URL").context("DATABASE_URL must be set")?;
    let scratch =
        relay_store::bench::ScratchDatabase::create(&admin_url, "relay_bench_reverify").await?;
    let result = run(&scratch.url).await;
    scratch.drop_database().await?;
    result
}

fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()?;
    anyhow::ensure!(output.status.success(), "git {args:?} failed");
    Ok(String::from_utf8(output.stdout)?.trim().to_owned())
}

fn file_text(file: usize) -> String {
    (1..=LINES_PER_FILE)
        .map(|line| {
            if line % 2 == 1 {
                format!("def f_{file}_{line}(x):\n")
            } else {
                format!("    return x + {line}  # file {file}\n")
            }
        })
        .collect()
}

fn path_of(file: usize) -> String {
    format!("pkg/m{file:03}.py")
}

/// Statements Postgres has executed in this database so far (every backend's transactions
/// committed, a proxy for round trips of autocommit statements).
async fn transactions(pool: &PgPool) -> anyhow::Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()",
    )
    .fetch_one(pool)
    .await?)
}

async fn run(url: &str) -> anyhow::Result<()> {
    let pool = PgPoolOptions::new().max_connections(4).connect(url).await?;
    relay_store::migrate(&pool).await?;
    let upstream = tempfile::tempdir()?;
    let data = tempfile::tempdir()?;
    let dir = upstream.path();
    git(dir, &["init", "-q"])?;
    std::fs::create_dir_all(dir.join("pkg"))?;
    for file in 0..FILES {
        std::fs::write(dir.join(path_of(file)), file_text(file))?;
    }
    git(dir, &["add", "-A"])?;
    git(dir, &["commit", "-qm", "base"])?;
    let base = git(dir, &["rev-parse", "HEAD"])?;

    // 200 issues × 20 findings, each citing one line (with its quote) of one of the files.
    let issues: Vec<i64> = sqlx::query_scalar(
        "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
         SELECT 'github', '77', 'octo/repo', n, 'issue', 'open', 'a',
                'https://github.com/octo/repo/issues/' || n, now()
         FROM generate_series(1, $1) AS n RETURNING id",
    )
    .bind(ISSUES as i64)
    .fetch_all(&pool)
    .await?;
    let mut conn = pool.acquire().await?;
    for (i, issue) in issues.iter().enumerate() {
        for f in 0..FINDINGS_PER_ISSUE {
            let file = (i * FINDINGS_PER_ISSUE + f) % FILES;
            let line = 2 * ((i + f) % (LINES_PER_FILE / 2)) + 1;
            relay_store::findings::insert(
                &mut conn,
                relay_core::IssueId(*issue),
                &format!("finding {f} of issue {i}"),
                None,
                &[SourceRow {
                    path: path_of(file),
                    start_line: line as i32,
                    end_line: line as i32,
                    quote: Some(format!("def f_{file}_{line}(x):")),
                    commit_sha: base.clone(),
                    ..SourceRow::default()
                }],
            )
            .await?;
        }
    }
    drop(conn);

    let repos = RepoManager::new(RepoSettings {
        data_dir: data.path().to_path_buf(),
        ..Default::default()
    })?;
    let spec =
        RepoSpec::new(Provider::GitHub, "https://github.com", "octo/repo").with_local_path(dir);
    repos.sync_to(&spec, Some(&base)).await?;

    // Push 0: the first push ever re-verifies every source (no watermark yet).
    std::fs::write(dir.join("README.md"), "# readme\n")?;
    git(dir, &["add", "-A"])?;
    git(dir, &["commit", "-qm", "push 0"])?;
    let first = git(dir, &["rev-parse", "HEAD"])?;
    push(
        &pool,
        &repos,
        &spec,
        &first,
        "push 0 (first push, no watermark yet: every source read)",
    )
    .await?;

    // Push 1: 20 files get three lines on top, 5 lose a cited line, 2 are renamed; then a push
    // undoing it (27 cited files again).
    let mut touching = Vec::new();
    for round in 0..TOUCH_ROUNDS {
        for file in 0..20 {
            let text = format!("# a\n# b\n# c\n{}", file_text(file));
            std::fs::write(dir.join(path_of(file)), text)?;
        }
        for file in 20..25 {
            let text = file_text(file).replace(&format!("def f_{file}_1(x):"), "def changed(x):");
            std::fs::write(dir.join(path_of(file)), text)?;
        }
        for file in 25..27 {
            git(
                dir,
                &["mv", &path_of(file), &format!("pkg/renamed{file}.py")],
            )?;
        }
        git(dir, &["add", "-A"])?;
        git(dir, &["commit", "-qm", "push 1"])?;
        let commit = git(dir, &["rev-parse", "HEAD"])?;
        touching.push(
            push(
                &pool,
                &repos,
                &spec,
                &commit,
                &format!("push 1.{round} (27 cited files changed)"),
            )
            .await?,
        );
        for file in 0..25 {
            std::fs::write(dir.join(path_of(file)), file_text(file))?;
        }
        for file in 25..27 {
            git(
                dir,
                &["mv", &format!("pkg/renamed{file}.py"), &path_of(file)],
            )?;
        }
        git(dir, &["add", "-A"])?;
        git(dir, &["commit", "-qm", "undo push 1"])?;
        let commit = git(dir, &["rev-parse", "HEAD"])?;
        touching.push(
            push(
                &pool,
                &repos,
                &spec,
                &commit,
                &format!("push 1.{round} undone (27 cited files changed)"),
            )
            .await?,
        );
    }

    // Push 2: a file nobody cites.
    let mut quiet = Vec::new();
    let mut second_push = String::new();
    for n in 0..QUIET_PUSHES {
        std::fs::write(dir.join("README.md"), format!("# readme {n}\n"))?;
        git(dir, &["add", "-A"])?;
        git(dir, &["commit", "-qm", "push 2"])?;
        second_push = git(dir, &["rev-parse", "HEAD"])?;
        let name = format!("push 2.{n} (no cited file)");
        quiet.push(push(&pool, &repos, &spec, &second_push, &name).await?);
    }
    touching.sort();
    quiet.sort();
    let touching_p50 = touching[touching.len() / 2];
    let quiet_p50 = quiet[quiet.len() / 2];
    println!(
        "push touching 27 cited files: p50 of {} {touching_p50:?}; push touching none: p50 of {} {quiet_p50:?}",
        touching.len(),
        quiet.len()
    );

    // Baseline: a full index of the same commit, as `relay index` does.
    let snapshot = repos.snapshot(&spec, Some(&second_push)).await?;
    let indexing = CodegraphIndexing::new(
        Arc::new(relay_codegraph::store::memory::MemoryStore::new()),
        1,
    );
    let started = Instant::now();
    indexing
        .index_commit(
            &repos,
            &spec,
            "github/octo/repo",
            &second_push,
            snapshot.path().to_path_buf(),
            Default::default(),
        )
        .await?;
    let index = started.elapsed();
    println!("baseline: full code-graph index of the same commit ({FILES} files): {index:?}");
    let cycle = planner_cycles(&pool, 20).await?;
    println!(
        "ratios to one planner cycle (p50): push touching 27 cited files {:.2}x, push touching none {:.2}x",
        touching_p50.as_secs_f64() / cycle.as_secs_f64(),
        quiet_p50.as_secs_f64() / cycle.as_secs_f64()
    );
    Ok(())
}

struct StubExplorer;

#[async_trait::async_trait]
impl Explorer for StubExplorer {
    async fn explore(&self, _request: ExploreRequest) -> Result<ExploreOutcome, ExploreFailure> {
        Ok(ExploreOutcome {
            answer: "Retries is a field of Config".into(),
            evidence: vec![Citation {
                path: "config.go".into(),
                start_line: 4,
                end_line: 4,
                quote: None,
            }],
            confidence: "high".into(),
            tokens: 100,
            ..ExploreOutcome::default()
        })
    }
}

/// p50 of `cycles` planner cycles (explore, then a batch: a reply, a gap, a finding), each on its
/// own issue with one pending mention.
async fn planner_cycles(pool: &PgPool, cycles: usize) -> anyhow::Result<std::time::Duration> {
    let github = FakeGitHub::start().await;
    let checkout = tempfile::tempdir()?;
    std::fs::write(
        checkout.path().join("config.go"),
        "package main\n\ntype Config struct {\n\tRetries int\n}\n",
    )?;
    let mut times = Vec::with_capacity(cycles);
    for n in 0..cycles {
        let number = 10_000 + n as i64;
        github.seed_issue("acme/app", number, "Retries", "Make retries configurable.");
        let comment = github.seed_comment("acme/app", number, "alice", "@relay-bot please look");
        let issue: i64 = sqlx::query_scalar(
            "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
             VALUES ('github', '42', 'acme/app', $1, 'Retries', 'open', 'alice',
                     'https://github.com/acme/app/issues/' || $1, now()) RETURNING id",
        )
        .bind(number)
        .fetch_one(pool)
        .await?;
        sqlx::query(
            "INSERT INTO deliveries (tracker, event_type, action, delivery_key, outcome, reason, payload, issue_id, actor, note_id)
             VALUES ('github', 'issue_comment', 'created', $3, 'accepted', 'mention', '{}', $1, 'alice', $2)",
        )
        .bind(issue)
        .bind(comment.to_string())
        .bind(format!("bench-{n}"))
        .execute(pool)
        .await?;
        let llm = ScriptedLlm::start(vec![
            ScriptedReply::tool_calls(vec![(
                "explore",
                json!({"query": "where is the retry count?", "thoroughness": "quick"}),
            )]),
            ScriptedReply::tool_calls(vec![(
                "submit_actions",
                json!({"actions": [
                    {"type": "post_comment", "content": "Retries live in `Config.Retries` (config.go:4). Gap 1: which calls?"},
                    {"type": "update_gaps", "add": [{"question": "Which calls should retry?", "severity": "blocking", "respondent": "reporter"}]},
                    {"type": "update_findings", "add": [{"synthesis": "Retries is a Config field.", "sources": [{"path": "config.go", "start_line": 4, "end_line": 4}]}]}
                ]}),
            )]),
        ])
        .await;
        let llm_settings: LlmSettings = toml::from_str(&format!(
            "[default]\nprovider = \"openai\"\nbase_url = \"{}\"\nmodel = \"m\"\napi_key = \"sk-x\"\n",
            llm.base_url()
        ))?;
        let tracker = github.settings("ghs_bench", "relay-bot");
        let trackers = relay_tracker::Trackers::from_settings(std::slice::from_ref(&tracker))?;
        let run_of = JobRun::new(
            relay_core::JobId(n as i64 + 1),
            3,
            relay_core::IssueId(issue),
        );
        let mut job = start::open(&trackers, std::slice::from_ref(&tracker), pool, &run_of).await?;
        start::start(pool, &run_of, &mut job)
            .await
            .map_err(|end| anyhow::anyhow!("the job ended at its start: {end:?}"))?;
        job.admission = Admission::of(["alice"]);
        let env = CycleEnv {
            pool: pool.clone(),
            run: run_of.with_tracer(Tracer::noop()),
            planner: LlmClient::from_settings(&llm_settings, Role::Planner)?,
            spec: LlmClient::from_settings(&llm_settings, Role::Spec)?,
            explorer: Arc::new(StubExplorer),
            traversal: None,
            snapshot: Some(Snapshot {
                sandbox: relay_tools::sandbox::Sandbox::new(checkout.path())
                    .context("failed to sandbox the checkout")?,
                commit_sha: "c0ffee".into(),
                related: Vec::new(),
            }),
            settings: AgentSettings::default(),
            redactions: vec![SecretString::from("ghs_bench".to_owned())],
            prices: Default::default(),
            guidance: Default::default(),
        };
        let started = Instant::now();
        let end = cycle::run(&env, &mut job, 0).await?;
        times.push(started.elapsed());
        anyhow::ensure!(
            matches!(end, CycleEnd::Applied { .. }),
            "cycle {n}: {end:?}"
        );
    }
    times.sort();
    println!(
        "baseline: one planner cycle's Relay-side time, p50 of {cycles}: {:?} (min {:?}, max {:?})",
        times[cycles / 2],
        times[0],
        times[cycles - 1]
    );
    Ok(times[cycles / 2])
}

async fn push(
    pool: &PgPool,
    repos: &RepoManager,
    spec: &RepoSpec,
    commit: &str,
    name: &str,
) -> anyhow::Result<std::time::Duration> {
    repos.sync_to(spec, Some(commit)).await?;
    let snapshot = repos.snapshot(spec, Some(commit)).await?;
    let before = transactions(pool).await?;
    let started = Instant::now();
    let outcome = reverify_project(
        pool,
        repos,
        spec,
        PushTarget {
            tracker: "github",
            project_id: "77",
            project_path: "octo/repo",
            commit,
        },
        snapshot.path(),
    )
    .await?;
    let reverify = started.elapsed();
    let statements = transactions(pool).await? - before;
    let started = Instant::now();
    let prices = relay_core::prices::Prices::new();
    let channel = Channel::Summary { prices: &prices };
    let published = publish(
        pool,
        relay_core::JobId(1),
        commit,
        channel,
        3,
        &outcome.issues,
    )
    .await?;
    let queued = started.elapsed();
    println!(
        "{name}: {}{} sources loaded, {} read, {} verified, {} re-anchored, {} stale; re-verification {reverify:?} \
         in {statements} database transactions; {} issues changed → {} summaries queued (tracker \
         writes) in {queued:?}",
        if outcome.untouched {
            "untouched (watermark moved): "
        } else {
            ""
        },
        outcome.sources,
        outcome.read,
        outcome.verified,
        outcome.reanchored,
        outcome.stale,
        outcome.issues.len(),
        published.summaries,
    );
    Ok(reverify)
}
