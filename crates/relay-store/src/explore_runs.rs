//! Per-run learning rows (migration 0060): one row per observed explore, quick to thorough, with
//! its query class, tool sequence, duration and outcome, so the hint for the next explore can be
//! chosen by the kind of question ([`class_sequences`]) rather than only from the repository's
//! aggregate transitions ([`crate::tool_graph`]).

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::Result;
use crate::tool_graph::{MAX_SEQUENCE_TOOLS, Sequence};

/// Rows kept per repository: the oldest go when a run is recorded past it.
pub const MAX_RUNS_PER_REPO: i64 = 1_000;
/// Tools of one run stored at most (a run past it keeps its first ones).
pub const MAX_TOOLS_PER_RUN: usize = 100;
/// Recent runs of a class a hint is drawn from.
const HINT_WINDOW: i64 = 200;

/// One run to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRun<'a> {
    pub repo: &'a str,
    pub run_id: &'a str,
    pub query_class: &'a str,
    /// `quick`, `medium` or `thorough`.
    pub mode: &'a str,
    pub tools: &'a [String],
    pub duration_ms: u64,
    pub grounded: bool,
}

/// A stored run.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow, serde::Serialize)]
pub struct RunRow {
    pub run_id: String,
    pub query_class: String,
    pub mode: String,
    pub tools: Vec<String>,
    pub duration_ms: i64,
    pub outcome: String,
    pub created_at: DateTime<Utc>,
}

/// Records one run (a run id already recorded for the repository is left as it was) and drops
/// the repository's rows past [`MAX_RUNS_PER_REPO`].
pub async fn record(pool: &PgPool, run: &NewRun<'_>) -> Result<()> {
    let tools: Vec<&str> = run
        .tools
        .iter()
        .take(MAX_TOOLS_PER_RUN)
        .map(String::as_str)
        .collect();
    let mut tx = pool.begin().await?;
    sqlx::query(
        "INSERT INTO explore_runs (repo, run_id, query_class, mode, tools, duration_ms, outcome)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (repo, run_id) DO NOTHING",
    )
    .bind(run.repo)
    .bind(run.run_id)
    .bind(run.query_class)
    .bind(run.mode)
    .bind(&tools)
    .bind(i64::try_from(run.duration_ms).unwrap_or(i64::MAX))
    .bind(if run.grounded {
        "grounded"
    } else {
        "ungrounded"
    })
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "DELETE FROM explore_runs WHERE repo = $1 AND id < (
             SELECT id FROM explore_runs WHERE repo = $1 ORDER BY id DESC OFFSET $2 - 1 LIMIT 1)",
    )
    .bind(run.repo)
    .bind(MAX_RUNS_PER_REPO)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// The newest `limit` runs of `repo`, newest first.
pub async fn recent(pool: &PgPool, repo: &str, limit: i64) -> Result<Vec<RunRow>> {
    Ok(sqlx::query_as(
        "SELECT run_id, query_class, mode, tools, duration_ms, outcome, created_at
         FROM explore_runs WHERE repo = $1 ORDER BY id DESC LIMIT $2",
    )
    .bind(repo)
    .bind(limit)
    .fetch_all(pool)
    .await?)
}

/// The query classes `repo` has runs of, each with its strongest opening sequences (the first
/// [`MAX_SEQUENCE_TOOLS`] tools of its recent runs, by grounded runs then runs), at most `limit`
/// per class and only those seen in `min_runs` runs.
pub async fn class_sequences(
    pool: &PgPool,
    repo: &str,
    limit: i64,
    min_runs: i64,
) -> Result<Vec<(String, Sequence)>> {
    let rows: Vec<(String, Vec<String>, i64, i64)> = sqlx::query_as(
        "WITH recent AS (
             SELECT query_class, tools, outcome,
                    row_number() OVER (PARTITION BY query_class ORDER BY id DESC) AS n
             FROM explore_runs WHERE repo = $1 AND cardinality(tools) > 0
         ),
         heads AS (
             SELECT query_class, tools[1:$4] AS head, count(*) AS runs,
                    count(*) FILTER (WHERE outcome = 'grounded') AS successes
             FROM recent WHERE n <= $5
             GROUP BY query_class, head HAVING count(*) >= $3
         ),
         ranked AS (
             SELECT *, row_number() OVER (PARTITION BY query_class
                                          ORDER BY successes DESC, runs DESC, head) AS rank
             FROM heads
         )
         SELECT query_class, head, runs, successes FROM ranked WHERE rank <= $2
         ORDER BY query_class, rank",
    )
    .bind(repo)
    .bind(limit)
    .bind(min_runs)
    .bind(MAX_SEQUENCE_TOOLS as i32)
    .bind(HINT_WINDOW)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(class, tools, runs, successes)| {
            (
                class,
                Sequence {
                    tools,
                    runs,
                    successes,
                },
            )
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn runs_are_kept_per_row_and_hint_by_class(pool: PgPool) {
        let graph = tools(&["codegraph search", "codegraph callers", "read", "read"]);
        let greps = tools(&["grep", "read"]);
        for i in 0..4 {
            let run = NewRun {
                repo: "github:acme/app",
                run_id: &format!("r{i}"),
                query_class: "callers",
                mode: if i == 0 { "thorough" } else { "quick" },
                tools: &graph,
                duration_ms: 1_200,
                grounded: i != 3,
            };
            record(&pool, &run).await.unwrap();
        }
        for i in 0..3 {
            let run = NewRun {
                repo: "github:acme/app",
                run_id: &format!("o{i}"),
                query_class: "overview",
                mode: "medium",
                tools: &greps,
                duration_ms: 300,
                grounded: true,
            };
            record(&pool, &run).await.unwrap();
        }
        // The same run id again: recorded once.
        record(
            &pool,
            &NewRun {
                repo: "github:acme/app",
                run_id: "o0",
                query_class: "overview",
                mode: "medium",
                tools: &greps,
                duration_ms: 1,
                grounded: false,
            },
        )
        .await
        .unwrap();
        let rows = recent(&pool, "github:acme/app", 100).await.unwrap();
        assert_eq!(rows.len(), 7);
        let first = rows.last().unwrap();
        assert_eq!(
            (
                first.run_id.as_str(),
                first.query_class.as_str(),
                first.mode.as_str(),
                first.duration_ms,
                first.outcome.as_str()
            ),
            ("r0", "callers", "thorough", 1_200, "grounded")
        );
        assert_eq!(first.tools, graph);

        let hints = class_sequences(&pool, "github:acme/app", 3, 3)
            .await
            .unwrap();
        assert_eq!(
            hints,
            vec![
                (
                    "callers".to_owned(),
                    Sequence {
                        tools: tools(&["codegraph search", "codegraph callers", "read"]),
                        runs: 4,
                        successes: 3
                    }
                ),
                (
                    "overview".to_owned(),
                    Sequence {
                        tools: greps.clone(),
                        runs: 3,
                        successes: 3
                    }
                ),
            ]
        );
        assert!(
            class_sequences(&pool, "github:acme/app", 3, 5)
                .await
                .unwrap()
                .is_empty(),
            "too few runs: no hint"
        );
    }

    #[sqlx::test(migrator = "crate::MIGRATOR")]
    async fn the_oldest_rows_go_past_the_cap(pool: PgPool) {
        let tools = tools(&["grep"]);
        // Insert past the cap in one statement, then record one more run.
        sqlx::query(
            "INSERT INTO explore_runs (repo, run_id, query_class, mode, tools, duration_ms, outcome)
             SELECT 'r', 'old' || n, 'other', 'quick', ARRAY['grep'], 1, 'grounded'
             FROM generate_series(1, $1) AS n",
        )
        .bind(MAX_RUNS_PER_REPO + 5)
        .execute(&pool)
        .await
        .unwrap();
        let run = NewRun {
            repo: "r",
            run_id: "new",
            query_class: "other",
            mode: "quick",
            tools: &tools,
            duration_ms: 1,
            grounded: true,
        };
        record(&pool, &run).await.unwrap();
        let count: i64 = sqlx::query_scalar("SELECT count(*) FROM explore_runs WHERE repo = 'r'")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(count, MAX_RUNS_PER_REPO);
        assert_eq!(recent(&pool, "r", 1).await.unwrap()[0].run_id, "new");
    }
}
