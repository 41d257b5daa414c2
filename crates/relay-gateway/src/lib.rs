#![doc = include_str!("../README.md")]
//!
//! Layout:
//! - [`settings`]: `ServerSettings` (`[server]`).
//! - [`routes`]: one module per route (`webhook`, `health`, `metrics`, `api/*`).
//! - [`providers`]: GitHub and GitLab authentication, delivery identity and payload parsing.
//! - [`payload`]: the body as storable JSON (NULs replaced).
//! - [`event`]: the provider-neutral event; [`mention`] and [`engage`]: engagement rules.
//! - [`intake`]: the transaction that records a delivery and enqueues work.
//! - [`error`]: `ApiError`, the only place errors become HTTP statuses.
//! - [`ui`]: the status page (`/ui`): server-rendered HTML, sessions, the live trace script.
//! - [`trace_feed`]: wakes the SSE streams of `GET /api/jobs/{id}/events` when a trace grows.
//! - [`listener`]: the HTTP/1.1 listener: connection caps (total, per client), header timeout,
//!   shutdown grace.
//! - [`limits`]: the client behind a request, the request deadline, the body budget and the
//!   sign-in throttle.
//! - [`projects`]: per project, the repository's `.relay.toml` in effect and its learnings; per
//!   issue, its cap, spend and stop state (for the API and the status page).

pub mod engage;
pub mod error;
pub mod event;
pub mod intake;
pub mod limits;
pub mod listener;
pub mod mention;
pub mod payload;
pub mod projects;
pub mod providers;
pub mod routes;
pub mod settings;
pub mod trace_feed;
pub mod ui;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath};
use axum::http::Request;
use axum::middleware;
use axum::routing::{get, post};
use metrics_exporter_prometheus::PrometheusHandle;
use relay_core::TrackerSettings;
use relay_core::repo_config::ServerPolicy;
use relay_store::PgPool;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_http::timeout::RequestBodyTimeoutLayer;
use tower_http::trace::TraceLayer;

pub use settings::{ApiSettings, ServerSettings, UiSettings};

/// Everything handlers need, cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub pool: PgPool,
    pub trackers: Arc<HashMap<String, Arc<TrackerSettings>>>,
    pub settings: Arc<ServerSettings>,
    /// `[api]`: the read API's token (none: `/api` answers 404).
    pub api: Arc<ApiSettings>,
    pub metrics: PrometheusHandle,
    /// `max_attempts` given to the jobs webhooks create.
    pub job_max_attempts: i32,
    /// Wakes workers after a job was committed (coalesced; see [`spawn_notifier`]).
    pub(crate) wake_workers: tokio::sync::mpsc::Sender<()>,
    /// Wakes the trace event streams (one LISTEN connection, started with the first stream).
    pub(crate) trace_feed: trace_feed::TraceFeed,
    /// `[ui]` and the status page's sessions.
    pub(crate) ui: Arc<ui::UiState>,
    /// `[prices]`: what the status page shows as cost.
    pub(crate) prices: Arc<relay_core::prices::Prices>,
    /// Per tracker name, what the server allows as it runs now (`[agent]` and the tracker's
    /// settings): the read API and the status page narrow each repository's recorded file by it
    /// ([`projects`]). Empty: the configuration is shown as the last job recorded it.
    pub(crate) policies: Arc<HashMap<String, ServerPolicy>>,
    /// Parts running degraded (component → what still works), shown in `/readyz`'s detail.
    pub(crate) degraded: Degraded,
    /// Bytes of request bodies buffered across requests in flight (`[server] body_budget_bytes`).
    pub(crate) budget: limits::budget::BodyBudget,
    /// Connections and proxied requests per client (`[server] max_connections_per_client`).
    pub(crate) clients: limits::client::ClientCounts,
    /// Failed sign-ins per client (`[ui] signin_max_failures`).
    pub(crate) throttle: Arc<limits::throttle::SigninThrottle>,
    /// Wrong webhook secrets per client (GitLab's token; the same allowance as sign-ins, its own
    /// count, so a sender's wrong secrets lock no operator out and no operator's typos hold up
    /// deliveries).
    pub(crate) webhook_throttle: Arc<limits::throttle::SigninThrottle>,
    /// Cancelled when the gateway shuts down: open event streams end.
    pub(crate) shutdown: CancellationToken,
}

/// The parts of the process that run degraded, e.g. the code graph while its store cannot be
/// reached. Shared by every clone of the state, so the worker can note a part after
/// the listener started.
#[derive(Debug, Clone, Default)]
pub struct Degraded(Arc<std::sync::RwLock<std::collections::BTreeMap<String, Degradation>>>);

/// One degraded part: what still works (a fixed sentence of Relay's) and why (an error's text).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Degradation {
    works: &'static str,
    reason: String,
}

impl Degraded {
    /// Notes that `component` runs degraded: `works` says what still works (a fixed text, shown
    /// on every listener), `reason` why (shown only on the admin listener: it is an error's
    /// text, and the public listener names components, not errors).
    pub fn note(&self, component: &str, works: &'static str, reason: impl Into<String>) {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(
                component.to_owned(),
                Degradation {
                    works,
                    reason: reason.into(),
                },
            );
    }

    /// Notes that `component` runs whole again.
    pub fn clear(&self, component: &str) {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(component);
    }

    /// Component → what still works, with the reason when `detail` allows it; sorted by
    /// component.
    pub fn snapshot(&self, detail: ReadinessDetail) -> std::collections::BTreeMap<String, String> {
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|(component, part)| {
                let text = match detail {
                    ReadinessDetail::Components => part.works.to_owned(),
                    ReadinessDetail::Reasons => format!("{} ({})", part.works, part.reason),
                };
                (component.clone(), text)
            })
            .collect()
    }
}

/// How much `/readyz` says of a degraded part: on a listener anyone may reach (`listen`), the
/// component and what still works; on the admin listener (`admin_listen`), also the reason,
/// which is an error's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadinessDetail {
    Components,
    Reasons,
}

impl AppState {
    pub fn new(
        pool: PgPool,
        trackers: Vec<TrackerSettings>,
        settings: ServerSettings,
        job_max_attempts: i32,
    ) -> AppState {
        let trackers: HashMap<String, Arc<TrackerSettings>> = trackers
            .into_iter()
            .map(|t| (t.name.as_str().to_owned(), Arc::new(t)))
            .collect();
        let metrics = relay_telemetry::metrics::install();
        routes::webhook::zero_counters(trackers.keys().map(String::as_str));
        let wake_workers = spawn_notifier(pool.clone());
        let trace_feed = trace_feed::TraceFeed::new(pool.clone());
        let ui = settings::UiSettings::default();
        AppState {
            budget: limits::budget::BodyBudget::new(settings.body_budget_bytes),
            clients: limits::client::ClientCounts::new(settings.client_cap()),
            throttle: Arc::new(throttle(&ui)),
            webhook_throttle: Arc::new(throttle(&ui)),
            shutdown: CancellationToken::new(),
            pool,
            trackers: Arc::new(trackers),
            settings: Arc::new(settings),
            api: Arc::new(ApiSettings::default()),
            metrics,
            job_max_attempts,
            wake_workers,
            trace_feed,
            ui: Arc::new(ui::UiState::new(ui)),
            prices: Arc::new(relay_core::prices::Prices::new()),
            policies: Arc::default(),
            degraded: Degraded::default(),
        }
    }

    /// The degraded parts `/readyz` reports (note one with [`Degraded::note`]).
    pub fn degraded(&self) -> Degraded {
        self.degraded.clone()
    }

    /// The status page's settings (it is served when the API has a token).
    pub fn with_ui(mut self, ui: settings::UiSettings) -> AppState {
        self.throttle = Arc::new(throttle(&ui));
        self.webhook_throttle = Arc::new(throttle(&ui));
        self.ui = Arc::new(ui::UiState::new(ui));
        self
    }

    /// Ends the event streams when `shutdown` is cancelled ([`run`] sets its own token).
    pub fn with_shutdown(mut self, shutdown: CancellationToken) -> AppState {
        self.shutdown = shutdown;
        self
    }

    /// Model prices, for the cost the status page shows.
    pub fn with_prices(mut self, prices: relay_core::prices::Prices) -> AppState {
        self.prices = Arc::new(prices);
        self
    }

    /// What the server allows per tracker name, as it runs (kept in the state's `policies`).
    pub fn with_policies(mut self, policies: HashMap<String, ServerPolicy>) -> AppState {
        self.policies = Arc::new(policies);
        self
    }

    /// The running server policy of `tracker`, when known.
    pub(crate) fn policy(&self, tracker: &str) -> Option<&ServerPolicy> {
        self.policies.get(tracker)
    }

    /// Enables the read API with these settings.
    pub fn with_api(mut self, api: ApiSettings) -> AppState {
        self.api = Arc::new(api);
        self
    }

    pub(crate) fn db_timeout(&self) -> Duration {
        Duration::from_millis(self.settings.db_timeout_ms)
    }
}

fn throttle(ui: &settings::UiSettings) -> limits::throttle::SigninThrottle {
    limits::throttle::SigninThrottle::new(
        ui.signin_max_failures,
        Duration::from_secs(ui.signin_failure_window_secs),
    )
}

/// Starts the task that wakes workers with `NOTIFY` after jobs are committed.
///
/// Requests only signal a channel of capacity one, so a burst of deliveries costs one `NOTIFY`, and
/// the `NOTIFY` runs in its own statement after the intake transaction committed: inside it, Postgres'
/// global notify lock would be held across every commit's WAL flush and serialize all intake. Workers
/// also poll, so a lost wake-up only delays a job by the poll interval.
fn spawn_notifier(pool: PgPool) -> tokio::sync::mpsc::Sender<()> {
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<()>(1);
    tokio::spawn(async move {
        while receiver.recv().await.is_some() {
            if let Err(e) = relay_store::queue::notify_workers(&pool).await {
                tracing::debug!(error.message = %e, "failed to notify workers");
            }
        }
    });
    sender
}

/// The gateway's router: webhooks, the read API, the status page and the ops endpoints (one
/// listener, `[server] admin_listen` unset).
pub fn app(state: AppState) -> Router {
    // One listener, reachable by whoever reaches the webhooks: `/readyz` names components only.
    let routes = webhook_routes(&state)
        .merge(admin_routes(&state, ReadinessDetail::Components))
        .route("/healthz", get(routes::health::healthz));
    finish(routes, state)
}

/// What the public listener serves when `[server] admin_listen` is set: webhooks and `/healthz`.
pub fn public_app(state: AppState) -> Router {
    let routes = webhook_routes(&state).route("/healthz", get(routes::health::healthz));
    finish(routes, state)
}

/// What the admin listener serves: the status page, the read API and the ops endpoints.
pub fn admin_app(state: AppState) -> Router {
    let routes = admin_routes(&state, ReadinessDetail::Reasons)
        .route("/healthz", get(routes::health::healthz));
    finish(routes, state)
}

/// Only the ops endpoints (`/healthz`, `/readyz`, `/metrics`): what a worker-only process serves,
/// on `admin_listen` when it is set (then `/readyz` gives the reasons), else on `listen`.
pub fn ops_app(state: AppState) -> Router {
    let detail = if state.settings.admin_listen.is_some() {
        ReadinessDetail::Reasons
    } else {
        ReadinessDetail::Components
    };
    finish(ops_routes(detail), state)
}

/// Webhooks: each body is read whole within `body_limit_bytes`, charged against the budget.
fn webhook_routes(state: &AppState) -> Router<AppState> {
    let body_limit = state.settings.body_limit_bytes;
    Router::new()
        .route("/webhooks/{tracker}", post(routes::webhook::receive))
        .route_layer(middleware::from_fn_with_state(
            limits::budget::BodyLimit {
                budget: state.budget.clone(),
                limit: body_limit,
            },
            limits::budget::buffer_body,
        ))
        .layer(DefaultBodyLimit::max(body_limit))
}

fn admin_routes(state: &AppState, detail: ReadinessDetail) -> Router<AppState> {
    routes::api::router(state)
        .merge(ui::router(state))
        .route("/readyz", readyz(detail))
        .route("/metrics", get(routes::metrics::render))
}

fn ops_routes(detail: ReadinessDetail) -> Router<AppState> {
    Router::new()
        .route("/healthz", get(routes::health::healthz))
        .route("/readyz", readyz(detail))
        .route("/metrics", get(routes::metrics::render))
}

fn readyz(detail: ReadinessDetail) -> axum::routing::MethodRouter<AppState> {
    get(move |state: axum::extract::State<AppState>| routes::health::readyz(state, detail))
}

/// The layers every listener's routes run under, outermost first: the total deadline, the
/// request span, the idle-body timeout (a body that stalls between chunks fails even before the
/// deadline), and the client's attribution and cap.
fn finish(router: Router<AppState>, state: AppState) -> Router {
    let body_read_timeout = Duration::from_millis(state.settings.body_read_timeout_ms);
    router
        .layer(middleware::from_fn_with_state(state.clone(), limits::admit))
        .layer(RequestBodyTimeoutLayer::new(body_read_timeout))
        .layer(
            TraceLayer::new_for_http().make_span_with(|request: &Request<_>| {
                let route = request
                    .extensions()
                    .get::<MatchedPath>()
                    .map(MatchedPath::as_str)
                    .unwrap_or("unmatched");
                let delivery = request
                    .headers()
                    .get("x-github-delivery")
                    .or_else(|| request.headers().get("idempotency-key"))
                    .or_else(|| request.headers().get("x-gitlab-event-uuid"))
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("");
                tracing::info_span!(
                    "http.request",
                    http.method = %request.method(),
                    http.route = route,
                    delivery.id = delivery,
                    tracker = tracing::field::Empty,
                    event = tracing::field::Empty,
                )
            }),
        )
        .layer(middleware::from_fn_with_state(
            state.settings.request_deadline(),
            limits::deadline::deadline,
        ))
        .with_state(state)
}

/// Serves everything on `listener` until `shutdown` is cancelled, then drains in-flight requests
/// for up to `[server] shutdown_grace_secs`.
pub async fn run(
    listener: TcpListener,
    state: AppState,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let state = state.with_shutdown(shutdown.clone());
    let limits = listener_limits(&state);
    serve(listener, app(state), limits, shutdown, "gateway").await
}

/// Serves webhooks and `/healthz` on `public`, and the status page, the read API and the ops
/// endpoints on `admin` (`[server] admin_listen`), until `shutdown` is cancelled.
pub async fn run_split(
    public: TcpListener,
    admin: TcpListener,
    state: AppState,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let state = state.with_shutdown(shutdown.clone());
    let limits = listener_limits(&state);
    let (public, admin) = tokio::join!(
        serve(
            public,
            public_app(state.clone()),
            limits.clone(),
            shutdown.clone(),
            "gateway (webhooks)"
        ),
        serve(admin, admin_app(state), limits, shutdown, "gateway (admin)"),
    );
    public.and(admin)
}

/// Serves only the ops endpoints (for worker-only processes).
pub async fn run_ops(
    listener: TcpListener,
    state: AppState,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let state = state.with_shutdown(shutdown.clone());
    let limits = listener_limits(&state);
    serve(listener, ops_app(state), limits, shutdown, "ops endpoints").await
}

fn listener_limits(state: &AppState) -> listener::ListenerLimits {
    let settings = &state.settings;
    listener::ListenerLimits {
        header_read_timeout: Duration::from_millis(settings.header_read_timeout_ms),
        max_connections: settings.max_connections,
        clients: state.clients.clone(),
        trusted_proxies: settings.trusted_proxies.clone(),
        shutdown_grace: Duration::from_secs(settings.shutdown_grace_secs),
    }
}

async fn serve(
    listener: TcpListener,
    router: Router,
    limits: listener::ListenerLimits,
    shutdown: CancellationToken,
    what: &'static str,
) -> std::io::Result<()> {
    let address = listener.local_addr()?;
    tracing::info!(
        listen = %address,
        server.max_connections = limits.max_connections,
        server.header_read_timeout_ms = limits.header_read_timeout.as_millis() as u64,
        "{what} listening"
    );
    listener::serve(listener, router, limits, shutdown).await
}
