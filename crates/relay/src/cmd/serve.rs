//! `relay serve`, `relay gateway` and `relay worker`.

use std::path::Path;

use anyhow::Context as _;
use tokio_util::sync::CancellationToken;

/// Which roles this process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Roles {
    Both,
    Gateway,
    Worker,
}

pub async fn run(config: Option<&Path>, roles: Roles) -> anyhow::Result<()> {
    let loaded = super::load(config)?;
    let settings = loaded.settings;
    // Before anything can be written to a tracker: the outbox scrubs these from every body.
    relay_worker::jobs::orchestrator::secrets::register_all(&settings.secrets());
    let pool = super::connect(&settings.database).await?;
    let shutdown = CancellationToken::new();
    tokio::spawn(wait_for_signal(shutdown.clone()));

    let mut tasks = tokio::task::JoinSet::new();
    // Every role serves the ops endpoints; only the gateway roles take webhooks. With
    // `admin_listen`, the gateway roles serve the status page, the read API and the ops endpoints
    // there and only webhooks and /healthz on `listen`; a worker serves its ops endpoints there.
    let admin_listen = settings.server.admin_listen;
    let listener = match (roles, admin_listen) {
        (Roles::Worker, Some(admin)) => bind(admin, "server.admin_listen").await?,
        _ => bind(settings.server.listen, "server.listen").await?,
    };
    let admin_listener = match (roles, admin_listen) {
        (Roles::Worker, _) | (_, None) => None,
        (_, Some(admin)) => Some(bind(admin, "server.admin_listen").await?),
    };
    if roles != Roles::Worker && settings.server.trusted_proxies.is_empty() {
        tracing::warn!(
            "{}",
            relay_gateway::limits::client::NO_TRUSTED_PROXY_WARNING
        );
    }
    let trackers = if roles == Roles::Worker {
        Vec::new()
    } else {
        if settings.trackers.is_empty() {
            tracing::warn!("no [[trackers]] configured: every webhook will be answered 404");
        }
        settings.trackers.clone()
    };
    let state = relay_gateway::AppState::new(
        pool.clone(),
        trackers,
        settings.server.clone(),
        settings.worker.max_attempts,
    )
    .with_api(settings.api.clone())
    .with_ui(settings.ui.clone())
    .with_prices(settings.prices.clone())
    // The read API and the status page narrow each repository's recorded file by these, as
    // this process runs them (not as the job that recorded it did).
    .with_policies(
        settings
            .trackers
            .iter()
            .map(|t| {
                let policy = relay_worker::jobs::repo_config::server_policy(&settings.agent, t);
                (t.name.as_str().to_owned(), policy)
            })
            .collect(),
    );
    let degraded = state.degraded();
    {
        let shutdown = shutdown.clone();
        tasks.spawn(async move {
            let served = match (roles, admin_listener) {
                (Roles::Worker, _) => relay_gateway::run_ops(listener, state, shutdown).await,
                (_, Some(admin)) => {
                    relay_gateway::run_split(listener, admin, state, shutdown).await
                }
                (_, None) => relay_gateway::run(listener, state, shutdown).await,
            };
            served.context("HTTP server failed")
        });
    }
    if roles != Roles::Gateway {
        let repos = relay_repo::RepoManager::new(settings.repo.clone())
            .context("failed to prepare the repository data directory (repo.data_dir)")?;
        let graph_store = open_codegraph(&settings, &pool, &degraded, &shutdown).await;
        let codegraph = Some(std::sync::Arc::new(
            // Keep the last index of a few repositories in memory for incremental updates.
            relay_worker::jobs::reindex::CodegraphIndexing::new(graph_store.clone(), 4)
                .with_limits(settings.codegraph.index),
        ));
        let orchestrator = orchestrator(&settings, codegraph.clone())?;
        let mut worker_settings = settings.worker.clone();
        if orchestrator.is_none() && worker_settings.sweep_interval().is_some() {
            // Without the orchestrator no job sends tracker writes: a sweeper would queue a job
            // every tick for a pending write that job cannot drain.
            tracing::warn!(
                "no usable [llm] configuration: the outbox sweeper is off; pending tracker writes wait for one"
            );
            worker_settings.sweep_interval_secs = 0;
        }
        let deps = relay_worker::jobs::JobDeps {
            repos: std::sync::Arc::new(repos),
            specs: std::sync::Arc::new(relay_worker::jobs::RepoSpecs::new(&settings.trackers)),
            codegraph,
            orchestrator,
        };
        let configured: Vec<String> = settings
            .trackers
            .iter()
            .map(|t| t.name.as_str().to_owned())
            .collect();
        warn_unroutable_writes(&pool, &configured).await;
        // After `AppState::new` installed the recorder: the series the alert rules read exist
        // from the first scrape.
        relay_worker::zero_counters(&configured.iter().map(String::as_str).collect::<Vec<_>>());
        let worker = relay_worker::Worker::new(
            pool.clone(),
            relay_worker::jobs::registry(&deps),
            worker_settings,
        )
        .with_sweep_trackers(configured)
        .with_trace_settings(&settings.trace);
        if !settings.trackers.is_empty() {
            let reconciler = reconciler(&settings, pool.clone())?;
            let shutdown = shutdown.clone();
            tasks.spawn(async move {
                reconciler.run(shutdown.clone()).await;
                // Off (interval 0) returns at once: the other roles keep running until shutdown.
                shutdown.cancelled().await;
                Ok(())
            });
        }
        let shutdown_worker = shutdown.clone();
        tasks.spawn(async move {
            worker.run(shutdown_worker).await;
            Ok(())
        });
        // Not in `tasks`: a pruning pass ending never stops the process.
        tokio::spawn(relay_worker::retention::run_pruner(
            pool.clone(),
            settings.retention.clone(),
            Some(graph_store),
            shutdown.clone(),
        ));
    }
    // The first role to stop (normally because of the signal) stops the others.
    let mut result = Ok(());
    while let Some(joined) = tasks.join_next().await {
        shutdown.cancel();
        match joined {
            Ok(Ok(())) => {}
            Ok(Err(e)) => result = Err(e),
            Err(e) => result = Err(anyhow::anyhow!("a task panicked: {e}")),
        }
    }
    pool.close().await;
    result
}

async fn bind(address: std::net::SocketAddr, key: &str) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("failed to listen on {address} ({key})"))
}

/// What `/readyz` says of a code graph whose store is not connected (on the admin listener the
/// reason follows).
pub const CODEGRAPH_UNAVAILABLE: &str =
    "store unavailable, reconnecting: explores use grep and read meanwhile";

/// The code-graph store (kept connected by its supervisor, [`SupervisedStore`]) and the indexer.
/// The worker never stops over the store: while it is unavailable explores run with grep and
/// read only, pushes skip indexing, and the log, `/readyz` (`degraded`) and the metrics
/// `relay_codegraph_store_up` / `relay_codegraph_store_outages_total` say so.
///
/// [`SupervisedStore`]: relay_codegraph::store::supervised::SupervisedStore
async fn open_codegraph(
    settings: &crate::settings::Settings,
    pool: &relay_store::PgPool,
    degraded: &relay_gateway::Degraded,
    shutdown: &CancellationToken,
) -> std::sync::Arc<relay_codegraph::store::supervised::SupervisedStore> {
    // Not ready until the first attempt says otherwise: the listener already answers /readyz.
    degraded.note("codegraph", CODEGRAPH_UNAVAILABLE, "not connected yet");
    let store = relay_codegraph::store::supervised::SupervisedStore::start(
        settings.codegraph.clone(),
        Some(pool.clone()),
    )
    .await;
    tokio::spawn(report_codegraph_health(
        store.health(),
        degraded.clone(),
        shutdown.clone(),
    ));
    tokio::spawn(store.clone().supervise(shutdown.clone()));
    store
}

/// Mirrors the store's health into `/readyz` and the metrics until `shutdown`.
async fn report_codegraph_health(
    mut health: tokio::sync::watch::Receiver<relay_codegraph::store::supervised::StoreHealth>,
    degraded: relay_gateway::Degraded,
    shutdown: CancellationToken,
) {
    use relay_codegraph::store::supervised::StoreHealth;
    use relay_telemetry::metrics::{CODEGRAPH_STORE_OUTAGES_TOTAL, CODEGRAPH_STORE_UP};
    let mut was_up: Option<bool> = None;
    loop {
        let current = health.borrow_and_update().clone();
        match current {
            StoreHealth::Up => {
                degraded.clear("codegraph");
                metrics::gauge!(CODEGRAPH_STORE_UP).set(1.0);
                was_up = Some(true);
            }
            StoreHealth::Unavailable { reason } => {
                degraded.note("codegraph", CODEGRAPH_UNAVAILABLE, reason);
                metrics::gauge!(CODEGRAPH_STORE_UP).set(0.0);
                // One outage per fall from up, and the one a process starts in.
                if was_up != Some(false) {
                    metrics::counter!(CODEGRAPH_STORE_OUTAGES_TOTAL).increment(1);
                }
                was_up = Some(false);
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            changed = health.changed() => if changed.is_err() { return },
        }
    }
}

/// The reconciler of every configured tracker (its loop returns at once when it is off).
pub fn reconciler(
    settings: &crate::settings::Settings,
    pool: relay_store::PgPool,
) -> anyhow::Result<relay_worker::reconcile::Reconciler> {
    let trackers = relay_tracker::Trackers::from_settings(&settings.trackers)
        .context("failed to build the tracker clients ([[trackers]])")?;
    Ok(relay_worker::reconcile::Reconciler::new(
        pool,
        trackers,
        settings.trackers.clone(),
        settings.reconcile.clone(),
        settings.worker.max_attempts,
    ))
}

async fn wait_for_signal(shutdown: CancellationToken) {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = terminate => {}
    }
    tracing::info!("shutdown requested");
    shutdown.cancel();
}

/// Hosts of LLM APIs that always need a key (local servers often need none).
const HOSTED_LLM_APIS: [&str; 2] = ["api.openai.com", "api.anthropic.com"];

/// The orchestrator's dependencies when an LLM is configured for every role; otherwise
/// `process_issue` keeps to its bookkeeping (and says so in the log).
fn orchestrator(
    settings: &crate::settings::Settings,
    codegraph: Option<std::sync::Arc<relay_worker::jobs::reindex::CodegraphIndexing>>,
) -> anyhow::Result<Option<std::sync::Arc<relay_worker::jobs::orchestrator::Orchestrator>>> {
    use relay_agent::llm::Role;
    if let Some(error) = Role::ALL
        .iter()
        .find_map(|role| settings.llm.resolve(*role).err())
    {
        tracing::warn!(error.message = %error, "no usable [llm] configuration: issues are recorded but not planned");
        return Ok(None);
    }
    // A hosted API without a key refuses every call: each issue would end in a status comment.
    // Say so once at start-up instead of letting operators find out from their issues.
    for role in Role::ALL {
        if let Ok(config) = settings.llm.resolve(role)
            && config.api_key.is_none()
            && HOSTED_LLM_APIS
                .iter()
                .any(|host| config.base_url.contains(host))
        {
            tracing::warn!(
                llm.role = role.as_str(),
                llm.base_url = %config.base_url,
                "no API key for a hosted LLM API (set api_key_env or api_key): its calls will be refused"
            );
        }
    }
    let trackers = relay_tracker::Trackers::from_settings(&settings.trackers)
        .context("failed to build the tracker clients ([[trackers]])")?;
    Ok(Some(std::sync::Arc::new(
        relay_worker::jobs::orchestrator::Orchestrator {
            trackers,
            tracker_settings: settings.trackers.clone(),
            llm: settings.llm.clone(),
            agent: settings.agent.clone(),
            tools: settings.tools.clone(),
            codegraph,
            roles: Default::default(),
            prices: std::sync::Arc::new(settings.prices.clone()),
        },
    )))
}

/// Pending tracker writes of trackers no longer configured are kept (nothing is lost if the
/// tracker comes back) but nothing sends them: say so once at startup, per tracker.
async fn warn_unroutable_writes(pool: &relay_store::PgPool, configured: &[String]) {
    let found = match pool.acquire().await {
        Ok(mut conn) => relay_store::outbox::unroutable(&mut conn, configured).await,
        Err(error) => Err(error.into()),
    };
    match found {
        Ok(found) => {
            for stranded in found {
                tracing::warn!(
                    tracker = %stranded.tracker,
                    writes = stranded.writes,
                    "pending tracker writes belong to a tracker that is not configured: they are kept and sent once it is configured again"
                );
            }
        }
        Err(error) => {
            tracing::warn!(error.message = %error, "failed to look for writes of unconfigured trackers")
        }
    }
}
