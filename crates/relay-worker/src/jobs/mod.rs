//! One module per job kind.

pub mod orchestrator;
pub mod process_issue;
pub mod reindex;
pub mod repo_config;
pub mod reverify;
pub mod update_checkout;

use std::sync::Arc;

use relay_core::JobKind;
use relay_repo::RepoManager;

use crate::handler::Registry;
pub use update_checkout::RepoSpecs;

/// What the built-in jobs need from the process.
#[derive(Clone)]
pub struct JobDeps {
    pub repos: Arc<RepoManager>,
    pub specs: Arc<RepoSpecs>,
    /// Re-indexes the code graph after each checkout update (`None`: no graph is kept).
    pub codegraph: Option<Arc<reindex::CodegraphIndexing>>,
    /// The orchestrator (`None`: no LLM configured; `process_issue` only does its bookkeeping).
    pub orchestrator: Option<Arc<orchestrator::Orchestrator>>,
}

/// The registry with every built-in job handler.
pub fn registry(deps: &JobDeps) -> Registry {
    // No tracker write may carry a configured secret: the outbox scrubs what is registered.
    if let Some(orchestrator) = &deps.orchestrator {
        orchestrator::secrets::register_outgoing_secrets(
            &orchestrator.tracker_settings,
            &orchestrator.llm,
        );
    }
    Registry::new()
        .register(
            JobKind::ProcessIssue.as_str(),
            process_issue::ProcessIssueJob {
                orchestrator: deps.orchestrator.clone().map(|orchestrator| {
                    process_issue::Orchestration {
                        orchestrator,
                        repos: deps.repos.clone(),
                        specs: deps.specs.clone(),
                    }
                }),
            },
        )
        .register(
            JobKind::UpdateCheckout.as_str(),
            update_checkout::UpdateCheckoutJob {
                repos: deps.repos.clone(),
                specs: deps.specs.clone(),
                codegraph: deps.codegraph.clone(),
                orchestrator: deps.orchestrator.clone(),
            },
        )
}
