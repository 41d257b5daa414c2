//! Tool-sequence learning in the worker (issue #11 §3): [`StoreExploreObserver`] writes each
//! observed explore into the repository's tool graph, and [`load_hint`] reads the strongest
//! sequences back for the next explores' prompt. Learning never fails a run: errors are warnings.

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
