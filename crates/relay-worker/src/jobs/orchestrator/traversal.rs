//! Thorough mode's traversal state across jobs: a job's explorer starts from what earlier jobs on
//! the issue explored, and what its thorough queries add is written back after each cycle. Both
//! are best effort: a state that cannot be read or written costs the next query its head start,
//! never the job.

use relay_agent::explore::ExploreAgent;
use relay_agent::thorough::state::TraversalState;
use relay_core::IssueId;
use relay_store::PgPool;

/// The issue's stored state (empty when there is none or it cannot be read).
pub async fn load(pool: &PgPool, issue_id: IssueId) -> TraversalState {
    let loaded = async {
        let mut conn = pool.acquire().await?;
        relay_store::traversal::load(&mut conn, issue_id).await
    }
    .await;
    match loaded {
        Ok(Some(row)) => serde_json::from_value(row.state).unwrap_or_else(|error| {
            tracing::warn!(issue.id = issue_id.get(), error.message = %error, "stored traversal state unreadable; starting empty");
            TraversalState::default()
        }),
        Ok(None) => TraversalState::default(),
        Err(error) => {
            tracing::warn!(issue.id = issue_id.get(), error.message = %error, "cannot load the traversal state; starting empty");
            TraversalState::default()
        }
    }
}

/// Writes back the explorer's state when it differs from `last` (which it then becomes).
pub async fn save_if_changed(
    pool: &PgPool,
    issue_id: IssueId,
    commit_sha: &str,
    explorer: &ExploreAgent,
    last: &mut TraversalState,
) {
    let state = explorer.traversal_state();
    if state == *last {
        return;
    }
    let saved = async {
        let json = serde_json::to_value(&state)
            .map_err(|error| relay_store::Error::Decode(error.to_string()))?;
        let mut conn = pool.acquire().await?;
        relay_store::traversal::save(&mut conn, issue_id, &json, commit_sha).await
    }
    .await;
    match saved {
        Ok(()) => *last = state,
        Err(error) => {
            tracing::warn!(issue.id = issue_id.get(), error.message = %error, "cannot store the traversal state");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use relay_agent::explore::{ExploreAgent, ExploreConfig};
    use relay_agent::llm::{LlmClient, LlmSettings, Role};
    use relay_agent::toolbox::Toolbox;

    use super::*;

    fn explorer(root: &std::path::Path) -> ExploreAgent {
        let settings: LlmSettings = toml::from_str(
            "[default]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key = \"k\"\n",
        )
        .unwrap();
        ExploreAgent::new(
            LlmClient::from_settings(&settings, Role::Explore).unwrap(),
            Arc::new(Toolbox::new(root, None, Default::default()).unwrap()),
            ExploreConfig::default(),
        )
    }

    #[sqlx::test(migrator = "relay_store::MIGRATOR")]
    async fn a_jobs_state_is_stored_when_it_changed_and_seeds_the_next_job(pool: PgPool) {
        let issue_id: IssueId = sqlx::query_scalar(
            "INSERT INTO issues (tracker, project_id, project_path, number, title, state, author, url, updated_at)
             VALUES ('github', '1', 'acme/app', 7, 't', 'open', 'alice', 'https://x/7', now()) RETURNING id",
        )
        .fetch_one(&pool)
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        assert!(load(&pool, issue_id).await.is_empty());

        let mut explored = TraversalState::default();
        explored.files.push("config.go".into());
        explored.call_chain.push("main.run".into());
        let agent = explorer(dir.path()).with_traversal_state(explored.clone());
        let mut last = TraversalState::default();
        save_if_changed(&pool, issue_id, "c1", &agent, &mut last).await;
        assert_eq!(last, explored);
        // Unchanged: nothing is written (the stored commit stays the first job's).
        save_if_changed(&pool, issue_id, "c2", &agent, &mut last).await;
        let commit: String =
            sqlx::query_scalar("SELECT commit_sha FROM traversal_states WHERE issue_id = $1")
                .bind(issue_id)
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(commit, "c1");

        let next = explorer(dir.path()).with_traversal_state(load(&pool, issue_id).await);
        assert_eq!(next.traversal_state(), explored);
    }
}
