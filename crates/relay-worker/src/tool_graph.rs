//! Tool-sequence learning in the worker: [`StoreExploreObserver`] writes each
//! observed explore into the repository's tool graph, and [`load_hint`] reads the strongest
//! sequences back for the next explores' prompt. Learning never fails a run: errors are warnings.

use std::collections::BTreeMap;

use relay_agent::explore::observe::QueryClass;
use relay_agent::explore::{ExploreObserver, ObservedRun, ToolHint};
use relay_store::PgPool;
use relay_store::tool_graph::{self, Call, MAX_SEQUENCE_TOOLS, Sequence, Source};
use relay_telemetry::metrics as m;

/// Runs a transition must have been seen in before it is hinted (fewer is noise).
pub const MIN_HINT_RUNS: i64 = 3;
/// Sequences in a hint.
pub const HINT_SEQUENCES: usize = relay_agent::explore::observe::MAX_HINT_LINES;

/// The graph key of a repository: `<tracker>:<project path>`.
pub fn repo_key(tracker: &str, project_path: &str) -> String {
    format!("{tracker}:{project_path}")
}

/// Records observed explores of one repository.
#[derive(Debug, Clone)]
pub struct StoreExploreObserver {
    pool: PgPool,
    repo: String,
}

impl StoreExploreObserver {
    pub fn new(pool: PgPool, repo: String) -> StoreExploreObserver {
        StoreExploreObserver { pool, repo }
    }
}

#[async_trait::async_trait]
impl ExploreObserver for StoreExploreObserver {
    async fn observe(&self, run: &ObservedRun) {
        let calls: Vec<Call> = run
            .calls
            .iter()
            .map(|call| Call {
                tool: call.tool.clone(),
                result_tokens: i64::try_from(call.result_tokens).unwrap_or(i64::MAX),
            })
            .collect();
        metrics::histogram!(m::EXPLORE_TOOLS_PER_RUN).record(calls.len() as f64);
        // The run's own row (what a hint per kind of question is drawn from).
        let tools: Vec<String> = calls.iter().map(|c| c.tool.clone()).collect();
        let row = relay_store::explore_runs::NewRun {
            repo: &self.repo,
            run_id: &run.run_id,
            query_class: run.query_class.as_str(),
            mode: run.mode,
            tools: &tools,
            duration_ms: run.duration_ms,
            grounded: run.grounded,
        };
        if let Err(error) = relay_store::explore_runs::record(&self.pool, &row).await {
            tracing::warn!(repo = %self.repo, error.message = %error, "failed to record the explore's run row");
        }
        match tool_graph::record_run(
            &self.pool,
            &self.repo,
            Source::Observed,
            &calls,
            run.grounded,
        )
        .await
        {
            Ok(recorded) => {
                metrics::counter!(m::TOOL_GRAPH_UPDATES_TOTAL, "outcome" => "ok").increment(1);
                metrics::counter!(m::TOOL_GRAPH_EDGES_CREATED_TOTAL, "source" => Source::Observed.as_str())
                    .increment(recorded.edges_created);
            }
            Err(error) => {
                metrics::counter!(m::TOOL_GRAPH_UPDATES_TOTAL, "outcome" => "error").increment(1);
                tracing::warn!(repo = %self.repo, error.message = %error, "failed to record the explore in the tool graph");
            }
        }
    }
}

/// The hint for `repo`'s explores: its strongest sequences, or `None` (nothing learned yet, or
/// the store failed: logged, never an error).
pub async fn load_hint(pool: &PgPool, repo: &str) -> Option<ToolHint> {
    match tool_graph::strongest_sequences(pool, repo, HINT_SEQUENCES, MIN_HINT_RUNS).await {
        Ok(sequences) => ToolHint::new(sequences.iter().map(hint_line)),
        Err(error) => {
            tracing::warn!(repo, error.message = %error, "failed to read the tool graph; no hint");
            None
        }
    }
}

/// The hints per kind of question for `repo`'s explores, from its recent run rows (classes with
/// too few runs have none; a store failure is logged and gives none).
pub async fn load_class_hints(pool: &PgPool, repo: &str) -> BTreeMap<QueryClass, ToolHint> {
    let rows = match relay_store::explore_runs::class_sequences(
        pool,
        repo,
        HINT_SEQUENCES as i64,
        MIN_HINT_RUNS,
    )
    .await
    {
        Ok(rows) => rows,
        Err(error) => {
            tracing::warn!(repo, error.message = %error, "failed to read the run rows; no class hints");
            return BTreeMap::new();
        }
    };
    let mut lines: BTreeMap<QueryClass, Vec<String>> = BTreeMap::new();
    for (class, sequence) in rows {
        if let Some(class) = QueryClass::parse(&class) {
            lines.entry(class).or_default().push(format!(
                "{} (for {} questions)",
                hint_line(&sequence),
                class.as_str()
            ));
        }
    }
    lines
        .into_iter()
        .filter_map(|(class, lines)| ToolHint::new(lines).map(|hint| (class, hint)))
        .collect()
}

/// `codegraph search → codegraph callers → read: 12 of 14 runs grounded`.
pub fn hint_line(sequence: &Sequence) -> String {
    debug_assert!(sequence.tools.len() <= MAX_SEQUENCE_TOOLS);
    format!(
        "{}: {} of {} runs grounded",
        sequence.tools.join(" → "),
        sequence.successes,
        sequence.runs
    )
}

#[cfg(test)]
mod tests {
    use relay_agent::explore::ObservedCall;

    use super::*;

    fn run(tools: &[&str], grounded: bool) -> ObservedRun {
        ObservedRun {
            run_id: uuid::Uuid::new_v4().to_string(),
            query_class: QueryClass::Callers,
            mode: "quick",
            duration_ms: 40,
            calls: tools
                .iter()
                .map(|t| ObservedCall {
                    tool: (*t).to_owned(),
                    result_tokens: 50,
                })
                .collect(),
            grounded,
        }
    }

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn observed_explores_become_the_hint(pool: PgPool) {
        let repo = repo_key("github", "acme/app");
        let observer = StoreExploreObserver::new(pool.clone(), repo.clone());
        assert_eq!(load_hint(&pool, &repo).await, None, "nothing learned yet");
        for grounded in [true, true, true, false] {
            observer
                .observe(&run(
                    &["codegraph search", "codegraph callers", "read"],
                    grounded,
                ))
                .await;
        }
        observer.observe(&run(&["grep", "read"], true)).await;
        let hint = load_hint(&pool, &repo).await.unwrap();
        // grep → read was seen once: below MIN_HINT_RUNS, not hinted.
        assert_eq!(
            hint.lines(),
            ["codegraph search → codegraph callers → read: 3 of 4 runs grounded"]
        );
        assert_eq!(load_hint(&pool, "github:other/repo").await, None);
        // Every run also has its row, and the class's hint comes from those rows.
        let rows = relay_store::explore_runs::recent(&pool, &repo, 10)
            .await
            .unwrap();
        assert_eq!(rows.len(), 5);
        assert!(
            rows.iter()
                .all(|r| r.query_class == "callers" && r.duration_ms == 40)
        );
        let hints = load_class_hints(&pool, &repo).await;
        assert_eq!(
            hints[&QueryClass::Callers].lines(),
            [
                "codegraph search → codegraph callers → read: 3 of 4 runs grounded (for callers questions)"
            ]
        );
        assert!(!hints.contains_key(&QueryClass::Flow));
    }

    /// Seed 002's three tool-graph metrics: updates by outcome, edges created, tools per run.
    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn the_three_tool_graph_metrics_are_recorded(pool: PgPool) {
        use metrics_util::debugging::{DebugValue, DebuggingRecorder};
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        // The test runs on one thread: the local recorder sees every metric of this test only.
        let _local = metrics::set_default_local_recorder(&recorder);
        let observer = StoreExploreObserver::new(pool.clone(), "github:m/m".into());
        // Each snapshot drains the recorder: it holds what the runs since the last one recorded.
        type Snapshot = Vec<(
            metrics_util::CompositeKey,
            Option<metrics::Unit>,
            Option<metrics::SharedString>,
            DebugValue,
        )>;
        fn value<'s>(
            snapshot: &'s Snapshot,
            name: &str,
            label: Option<(&str, &str)>,
        ) -> Option<&'s DebugValue> {
            snapshot
                .iter()
                .find(|(key, _, _, _)| {
                    key.key().name() == name
                        && label.is_none_or(|(k, v)| {
                            key.key().labels().any(|l| l.key() == k && l.value() == v)
                        })
                })
                .map(|(_, _, _, value)| value)
        }
        let counter = |snapshot: &Snapshot, name: &str, label: (&str, &str)| match value(
            snapshot,
            name,
            Some(label),
        ) {
            Some(DebugValue::Counter(n)) => *n,
            None => 0,
            other => panic!("{name} is not a counter: {other:?}"),
        };
        let tools_per_run =
            |snapshot: &Snapshot| match value(snapshot, m::EXPLORE_TOOLS_PER_RUN, None) {
                Some(DebugValue::Histogram(values)) => {
                    values.iter().map(|v| v.into_inner()).collect::<Vec<_>>()
                }
                other => panic!("tools per run is not a histogram: {other:?}"),
            };
        let edges = m::TOOL_GRAPH_EDGES_CREATED_TOTAL;
        let updates = m::TOOL_GRAPH_UPDATES_TOTAL;

        observer.observe(&run(&["grep", "read"], true)).await;
        let first = snapshotter.snapshot().into_vec();
        assert!(
            counter(&first, edges, ("source", "observed")) > 0,
            "a first run creates transitions"
        );
        assert_eq!(counter(&first, updates, ("outcome", "ok")), 1);
        assert_eq!(tools_per_run(&first), [2.0]);

        observer.observe(&run(&["grep", "read"], true)).await;
        let second = snapshotter.snapshot().into_vec();
        assert_eq!(
            counter(&second, edges, ("source", "observed")),
            0,
            "the same run again creates no transition"
        );
        assert_eq!(counter(&second, updates, ("outcome", "ok")), 1);

        sqlx::query("DROP TABLE tool_graph_edges")
            .execute(&pool)
            .await
            .unwrap();
        observer
            .observe(&run(&["grep", "read", "tree"], true))
            .await;
        let third = snapshotter.snapshot().into_vec();
        assert_eq!(counter(&third, updates, ("outcome", "error")), 1);
        assert_eq!(counter(&third, updates, ("outcome", "ok")), 0);
        assert_eq!(tools_per_run(&third), [3.0]);
    }

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn a_store_failure_is_a_warning_not_an_error(pool: PgPool) {
        sqlx::query("DROP TABLE tool_graph_edges")
            .execute(&pool)
            .await
            .unwrap();
        let observer = StoreExploreObserver::new(pool.clone(), "github:a/b".into());
        observer.observe(&run(&["grep"], true)).await;
        assert_eq!(load_hint(&pool, "github:a/b").await, None);
    }
}
