//! The commands that read the database (`relay trace`, `relay tool-graph`), run as a user runs
//! them, against a real database.

use relay_core::JobId;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use relay_store::PgPool;
use relay_store::trace::{self, NewEvent, NewRun, RunOutcome};
use serde_json::{Value, json};

/// The test database's URL (the pool's database on the server `DATABASE_URL` names).
fn url_of(pool: &PgPool) -> String {
    let base =
        std::env::var("DATABASE_URL").expect("DATABASE_URL must point at the test PostgreSQL");
    let (prefix, _) = base
        .rsplit_once('/')
        .expect("DATABASE_URL has a database name");
    let database = pool
        .connect_options()
        .get_database()
        .expect("the test pool names its database")
        .to_owned();
    format!("{prefix}/{database}")
}

fn config(dir: &Path, url: &str) -> std::path::PathBuf {
    let path = dir.join("relay.toml");
    std::fs::write(
        &path,
        format!(
            "[database]\nurl = \"{url}\"\nmigrate_on_start = false\n\n\
             [prices.\"gpt-x\"]\ninput = 1.0\noutput = 10.0\ncached_input = 0.1\n"
        ),
    )
    .unwrap();
    path
}

fn relay(config: &Path, args: &[&str], url: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_relay"));
    command
        .arg("--config")
        .arg(config)
        .args(args)
        .env("DATABASE_URL", url)
        .env("RUST_LOG", "error");
    command
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

async fn seed(pool: &PgPool, status: &str) -> (i64, i64) {
    let job: i64 = sqlx::query_scalar(
        "INSERT INTO jobs (kind, payload, max_attempts, status) VALUES ('process_issue', '{}', 3, $1)
         RETURNING id",
    )
    .bind(status)
    .fetch_one(pool)
    .await
    .unwrap();
    let run = trace::start_run(
        pool,
        &NewRun {
            job_id: JobId(job),
            issue_id: None,
            attempt: 1,
            worker: "host:1:ab",
        },
    )
    .await
    .unwrap();
    (job, run)
}

async fn write(
    pool: &PgPool,
    job: i64,
    run: i64,
    seq: i32,
    kind: &str,
    agent: &str,
    payload: Value,
) {
    trace::insert_events(
        pool,
        run,
        JobId(job),
        &[NewEvent {
            seq,
            at: chrono::Utc::now(),
            kind,
            agent,
            payload: &payload,
        }],
    )
    .await
    .unwrap();
}

fn llm(tokens_in: u64) -> Value {
    json!({"role": "planner", "model": "gpt-x", "tokens_in": tokens_in, "tokens_out": 100_000,
           "tokens_cached": 0, "latency_ms": 800, "outcome": "ok"})
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn prints_the_timeline_and_the_cost_per_role(pool: PgPool) {
    let (job, run) = seed(&pool, "succeeded").await;
    write(&pool, job, run, 0, "llm_call", "planner", llm(1_000_000)).await;
    write(&pool, job, run, 1, "tool_call", "explore#1",
        json!({"tool": "grep", "args": "{\"pattern\":\"Retry\"}", "duration_ms": 3, "result_tokens": 40, "ok": true})).await;
    trace::finish_run(&pool, run, JobId(job), RunOutcome::Succeeded, 0)
        .await
        .unwrap();
    let url = url_of(&pool);
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &url);

    let output = relay(&config, &["trace", &job.to_string()], &url)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stdout.contains(&format!("run {run} · attempt 1 · worker host:1:ab")),
        "{stdout}"
    );
    assert!(
        stdout.contains("planner gpt-x  in 1000000 out 100000 cached 0  800 ms  ok"),
        "{stdout}"
    );
    assert!(
        stdout.contains("grep {\"pattern\":\"Retry\"}  3 ms  40 tok  ok"),
        "{stdout}"
    );
    assert!(
        stdout.contains("total: 1 LLM calls, 1 tool calls"),
        "{stdout}"
    );
    // 1M input at $1 + 100k output at $10 per million.
    assert!(stdout.contains("2.0000"), "{stdout}");

    let output = relay(
        &config,
        &["trace", &job.to_string(), "--format", "json"],
        &url,
    )
    .output()
    .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["type"], "llm_call");
    assert_eq!(lines[2]["totals"]["planner"]["cost_usd"], 2.0);
    assert_eq!(lines[2]["runs"][0]["outcome"], "succeeded");

    let output = relay(&config, &["trace", "999999"], &url).output().unwrap();
    assert!(!output.status.success());
    assert!(text(&output).1.contains("job 999999 does not exist"));
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn follow_prints_events_as_they_come_until_the_job_finishes(pool: PgPool) {
    let (job, run) = seed(&pool, "running").await;
    write(&pool, job, run, 0, "llm_call", "planner", llm(10)).await;
    let url = url_of(&pool);
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &url);
    let child = relay(&config, &["trace", &job.to_string(), "--follow"], &url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Written while it follows (or before it starts: either way it must print them), then the job
    // finishes and the command returns by itself.
    write(
        &pool,
        job,
        run,
        1,
        "decision",
        "planner",
        json!({"decision": "submit_actions"}),
    )
    .await;
    trace::finish_run(&pool, run, JobId(job), RunOutcome::Succeeded, 0)
        .await
        .unwrap();
    sqlx::query("UPDATE jobs SET status = 'succeeded' WHERE id = $1")
        .bind(job)
        .execute(&pool)
        .await
        .unwrap();
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("in 10 out 100000"), "{stdout}");
    assert!(
        stdout.contains("decision           submit_actions"),
        "{stdout}"
    );
    assert!(
        stdout.contains("total: 1 LLM calls, 0 tool calls"),
        "{stdout}"
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn tool_graph_shows_the_learned_sequences_and_imports_at_a_lower_weight(pool: PgPool) {
    use relay_store::tool_graph::{Call, Source, record_run};
    let repo = "github:acme/app";
    let calls: Vec<Call> = ["codegraph search", "read"]
        .iter()
        .map(|t| Call {
            tool: (*t).to_owned(),
            result_tokens: 80,
        })
        .collect();
    for grounded in [true, true, false] {
        record_run(&pool, repo, Source::Observed, &calls, grounded)
            .await
            .unwrap();
    }
    let url = url_of(&pool);
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &url);

    let output = relay(&config, &["tool-graph", "--repo", repo], &url)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("3 observed runs (2 grounded)"), "{stdout}");
    assert!(
        stdout.contains("  codegraph search → read: 2 of 3 runs grounded"),
        "{stdout}"
    );

    let file = dir.path().join("sequences.json");
    std::fs::write(
        &file,
        r#"[{"tools": ["grep", "read"], "grounded": true}, {"tools": ["grep"]}]"#,
    )
    .unwrap();
    let output = relay(
        &config,
        &[
            "tool-graph",
            "--repo",
            repo,
            "--format",
            "json",
            "--import",
            file.to_str().unwrap(),
        ],
        &url,
    )
    .output()
    .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("imported 2 sequences (2 new transitions) at weight 0.5"),
        "{stderr}"
    );
    let graph: Value = serde_json::from_str(&stdout).unwrap();
    let imported: Vec<(&str, &str, i64, f64)> = graph["edges"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["source"] == "imported")
        .map(|e| {
            (
                e["from_tool"].as_str().unwrap(),
                e["to_tool"].as_str().unwrap(),
                e["count"].as_i64().unwrap(),
                e["weight"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(imported, [("^", "grep", 2, 0.5), ("grep", "read", 1, 0.5)]);
    assert_eq!(graph["runs"][0]["source"], "imported");

    let output = relay(&config, &["tool-graph", "--repo", "github:none/here"], &url)
        .output()
        .unwrap();
    assert!(text(&output).0.contains("nothing learned yet"));
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn prune_dry_run_counts_then_prune_deletes(pool: PgPool) {
    // Two jobs finished 40 days ago (one with a trace of 3 events), one finished now.
    sqlx::query(
        "INSERT INTO jobs (kind, payload, max_attempts, status, finished_at) VALUES
         ('process_issue', '{}', 3, 'succeeded', now() - interval '40 days'),
         ('process_issue', '{}', 3, 'dead', now() - interval '40 days'),
         ('process_issue', '{}', 3, 'succeeded', now())",
    )
    .execute(&pool)
    .await
    .unwrap();
    let (job, run) = seed(&pool, "succeeded").await;
    for seq in 0..3 {
        write(&pool, job, run, seq, "tool_call", "explore", json!({})).await;
    }
    trace::finish_run(&pool, run, JobId(job), RunOutcome::Succeeded, 0)
        .await
        .unwrap();
    sqlx::query("UPDATE trace_runs SET finished_at = now() - interval '40 days' WHERE id = $1")
        .bind(run)
        .execute(&pool)
        .await
        .unwrap();
    let jobs = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM jobs")
            .fetch_one(&pool)
            .await
            .unwrap()
    };
    let url = url_of(&pool);
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &url);

    let output = relay(&config, &["prune", "--dry-run"], &url)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stdout.contains("would prune         2 rows jobs (with their job_runs)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("would prune         1 rows (+3 dependent) trace_runs"),
        "{stdout}"
    );
    assert_eq!(jobs().await, 4);

    let output = relay(&config, &["prune"], &url).output().unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("pruned         2 rows jobs"), "{stdout}");
    assert_eq!(jobs().await, 2);
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM trace_events")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(events, 0);
}

/// `relay prune` applies the snapshot rule to ArangoDB when it holds the code graph (here the
/// ArangoDB double): of four snapshots of one repository the oldest goes, the newest three stay.
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn prune_applies_the_snapshot_rule_to_arangodb(pool: PgPool) {
    use relay_codegraph::store::arangodb::aql;
    use relay_codegraph::store::arangodb::double::FakeArango;
    let arango = FakeArango::start().await;
    let listing: Vec<serde_json::Value> = (0..4_u64)
        .map(|i| json!({"repo": "github/o/r", "commit": format!("c{i}"), "seq": 1_700_000_000_000_000 + i * 60_000_000}))
        .collect();
    let url = url_of(&pool);
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &url);
    // Awaited, not blocking: the double is served by this test's runtime.
    let prune = |args: &'static [&'static str]| {
        let mut command = relay(&config, args, &url);
        command
            .env("RELAY__CODEGRAPH__BACKEND", "arangodb")
            .env("RELAY__CODEGRAPH__ARANGODB__URL", &arango.url)
            .env("RELAY__CODEGRAPH__ARANGODB__DATABASE", "relay")
            .env("RELAY__CODEGRAPH__ARANGODB__PASSWORD", "secret");
        async move {
            tokio::process::Command::from(command)
                .output()
                .await
                .unwrap()
        }
    };

    arango.expect(aql::ALL_SNAPSHOTS, listing.clone());
    let output = prune(&["prune", "--dry-run"]).await;
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stdout.contains("would prune         1 rows codegraph snapshots in arangodb"),
        "{stdout}"
    );
    arango.finish();

    arango.expect(aql::ALL_SNAPSHOTS, listing);
    arango.expect(aql::FIND_SNAPSHOT, vec![json!("k0")]);
    arango.expect(aql::REMOVE_SNAPSHOT, vec![json!("k0")]);
    for _ in 0..4 {
        arango.expect(aql::REMOVE_SNAPSHOT_DATA, vec![]);
    }
    let output = prune(&["prune"]).await;
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stdout.contains("pruned         1 rows codegraph snapshots in arangodb"),
        "{stdout}"
    );
    let requests = arango.finish();
    assert_eq!(requests[2]["bindVars"]["commit"], "c0");
}

/// `relay jobs` and `relay writes` on the real Postgres: list what the operations page shows,
/// act on it, and a second run says there is nothing to do (exit 0).
#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn jobs_and_writes_commands_list_retry_discard_idempotently(pool: PgPool) {
    for sql in [
        "INSERT INTO issues (id, tracker, project_id, project_path, number, title, state, author, url, updated_at)
         OVERRIDING SYSTEM VALUE VALUES (7, 'github', '1', 'o/r', 1, 't', 'open', 'a', 'u', now())",
        "INSERT INTO jobs (id, kind, payload, concurrency_key, max_attempts, status, attempts, last_error, last_cause, finished_at)
         OVERRIDING SYSTEM VALUE VALUES
         (1001, 'process_issue', '{\"issue_id\": 7}', 'issue:7', 5, 'dead', 5, 'tracker said no', 'tracker forbidden', now()),
         (1002, 'update_checkout', '{}', NULL, 5, 'dead', 5, 'clone failed', NULL, now())",
        "INSERT INTO outbox (id, idempotency_key, issue_id, job_id, kind, body, status, attempts, last_error)
         OVERRIDING SYSTEM VALUE VALUES (1, 'w1', 7, 1001, 'comment', 'hello', 'failed', 1, '422 Validation Failed')",
    ] {
        sqlx::query(sql).execute(&pool).await.unwrap();
    }
    let url = url_of(&pool);
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &url);
    let run = |args: &[&str]| {
        let output = relay(&config, args, &url).output().unwrap();
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{args:?}: {stderr}");
        stdout
    };

    let listed = run(&["jobs", "list"]);
    assert!(
        listed.contains("1001\tprocess_issue\tdead\t5/5"),
        "{listed}"
    );
    assert!(listed.contains("tracker said no"), "{listed}");
    // The root cause, and where every step is.
    assert!(
        listed.contains("\ttracker forbidden\ttracker said no\trelay trace 1001\n"),
        "{listed}"
    );
    assert!(
        listed.contains("\t-\tclone failed\trelay trace 1002\n"),
        "{listed}"
    );
    assert_eq!(run(&["jobs", "retry", "1001"]), "job 1001: retried\n");
    assert_eq!(
        run(&["jobs", "retry", "1001"]),
        "job 1001: nothing to do (it is queued)\n"
    );
    assert_eq!(run(&["jobs", "discard", "1002"]), "job 1002: discarded\n");
    assert_eq!(
        run(&["jobs", "discard", "1002"]),
        "job 1002: nothing to do (it is discarded)\n"
    );
    assert_eq!(run(&["jobs", "list"]), "no jobs\n");
    assert!(run(&["jobs", "list", "--status", "discarded"]).contains("1002\tupdate_checkout"));

    let writes = run(&["writes", "list"]);
    assert!(
        writes.contains("1\t7\t1001\tcomment\t1\t422 Validation Failed"),
        "{writes}"
    );
    // The issue's job 1001 is queued again (the retry above): it will send the write.
    assert_eq!(
        run(&["writes", "retry", "1"]),
        "write 1: queued to be sent again (the issue's running or queued job sends it)\n"
    );
    assert_eq!(
        run(&["writes", "retry", "1"]),
        "write 1: nothing to do (it is pending)\n"
    );
    assert_eq!(
        run(&["writes", "list"]),
        "no tracker writes refused for good\n"
    );
    let traced: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM trace_events WHERE job_id = 1001 AND agent = 'operator'",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(
        traced, 4,
        "two job retries and two write retries in job 1001's trace"
    );
}
