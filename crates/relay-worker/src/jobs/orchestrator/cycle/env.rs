//! What every cycle of a job runs with ([`CycleEnv`]): built once by the job's `prepare` stage
//! and never changed; what changes between cycles lives in the job.

use std::sync::Arc;

use relay_actions::Snapshot;
use relay_agent::agent_settings::AgentSettings;
use relay_agent::explore::ExploreAgent;
use relay_agent::llm::LlmClient;
use relay_agent::planner::Explorer;
use relay_core::prices::Prices;
use relay_core::repo_config::GuidanceText;
use relay_store::PgPool;
use secrecy::SecretString;

use super::super::job::JobRun;

/// What every cycle of a job runs with.
#[derive(Clone)]
pub struct CycleEnv {
    pub pool: PgPool,
    /// The job attempt the cycles serve: their batches' job id, the trace, the lease that fences
    /// the batch transaction, whether the queue runs the job again if a cycle stops.
    pub run: JobRun,
    pub planner: LlmClient,
    pub spec: LlmClient,
    pub explorer: Arc<dyn Explorer>,
    /// The explorer whose thorough-mode traversal state is saved after each cycle (`None`:
    /// nothing to save).
    pub traversal: Option<Arc<ExploreAgent>>,
    /// The explored checkout (`None`: findings cannot be verified and are refused).
    pub snapshot: Option<Snapshot>,
    pub settings: AgentSettings,
    /// Secret values never to appear in a prompt.
    pub redactions: Vec<SecretString>,
    /// `[prices]`, for the cost in the living summary's footer.
    pub prices: Arc<Prices>,
    /// The repository's guidance (`.relay.toml` instructions, guidance files) at the commit.
    pub guidance: GuidanceText,
}
