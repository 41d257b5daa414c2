//! Every metric Relay exports, named once.
//!
//! | name | type | labels | meaning |
//! |---|---|---|---|
//! | `relay_webhook_deliveries_total` | counter | `tracker`, `event`, `outcome` (`accepted`, `duplicate`, `ignored`, `rejected`) | webhook deliveries by outcome |
//! | `relay_webhook_request_duration_seconds` | histogram | `tracker` | time to verify, record and answer a webhook |
//! | `relay_jobs_total` | counter | `kind`, `outcome` (`succeeded`, `retried`, `failed`, `dead`) | finished job attempts |
//! | `relay_job_duration_seconds` | histogram | `kind` | wall time of one job attempt |
//! | `relay_queue_depth` | gauge | `status` (`queued`, `running`) | live jobs per status, refreshed on every scrape from the partial indexes of live rows (finished jobs: `relay_jobs_total`) |
//! | `relay_queue_oldest_due_seconds` | gauge | – | how long the longest-waiting due job has waited to be claimed (0: none waits), refreshed on every scrape |
//! | `relay_jobs_running` | gauge | – | jobs running in this process |
//! | `relay_llm_tokens_total` | counter | `role`, `model`, `kind` | LLM tokens (prompt, completion, cached) |
//! | `relay_llm_requests_total` | counter | `role`, `model`, `outcome` | LLM calls |
//! | `relay_llm_request_duration_seconds` | histogram | `role`, `model` | LLM call latency |
//! | `relay_tool_graph_updates_total` | counter | `outcome` (`ok`, `error`) | explores recorded in the tool graph |
//! | `relay_tool_graph_edges_created_total` | counter | `source` (`observed`, `imported`) | new transitions in the tool graph |
//! | `relay_explore_tools_per_run` | histogram | – | successful tool calls of each recorded explore |
//! | `relay_trace_events_written_total` | counter | – | run trace events written to Postgres |
//! | `relay_reconcile_events_total` | counter | `origin` (`webhook`, `reconcile`) | engaging issue events recorded, by the path that brought them |
//! | `relay_reconcile_passes_total` | counter | `outcome` (`ok`, `failed`) | reconciler passes over one project |
//! | `relay_trace_events_dropped_total` | counter | `reason` (`buffer_full`, `write_failed`) | run trace events lost (the job went on) |
//! | `relay_tracker_writes_total` | counter | `kind` (`post_comment`, `edit_comment`, `add_reaction`), `outcome` (`sent`, `rescheduled`, `failed`) | outbox writes by how their drain attempt ended; `failed` = refused for good (a 4xx) |
//! | `relay_outbox_sweeps_total` | counter | – | drain jobs the outbox sweeper queued for stranded writes |
//! | `relay_http_refused_total` | counter | `reason` (`connections`, `client_connections`, `deadline`, `body_limit`, `body_budget`, `body_failed`, `signin_throttled`, `webhook_throttled`) | connections and requests the gateway refused to protect itself |
//! | `relay_http_body_buffered_bytes` | gauge | – | request body bytes held by requests in flight (counted against `[server] body_budget_bytes`) |
//! | `relay_codegraph_store_up` | gauge | – | 1 while the worker's code-graph store is connected, 0 while it reconnects |
//! | `relay_codegraph_store_outages_total` | counter | – | times the code-graph store was found unavailable (at start or mid-run) |
//! | `relay_outgoing_credentials_redacted_total` | counter | `kind` (`configured_secret`, or a token shape: `github_token`, `github_fine_grained_token`, `gitlab_token`, `openai_key`, `anthropic_key`, `aws_access_key_id`, `pem_private_key`) | credentials found in an outgoing tracker write and replaced by `[REDACTED]` |

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

pub const WEBHOOK_DELIVERIES_TOTAL: &str = "relay_webhook_deliveries_total";
pub const WEBHOOK_REQUEST_DURATION_SECONDS: &str = "relay_webhook_request_duration_seconds";
pub const JOBS_TOTAL: &str = "relay_jobs_total";
pub const JOB_DURATION_SECONDS: &str = "relay_job_duration_seconds";
pub const QUEUE_DEPTH: &str = "relay_queue_depth";
pub const QUEUE_OLDEST_DUE_SECONDS: &str = "relay_queue_oldest_due_seconds";
pub const JOBS_RUNNING: &str = "relay_jobs_running";
pub const LLM_TOKENS_TOTAL: &str = "relay_llm_tokens_total";
pub const LLM_REQUESTS_TOTAL: &str = "relay_llm_requests_total";
pub const LLM_REQUEST_DURATION_SECONDS: &str = "relay_llm_request_duration_seconds";
pub const TOOL_GRAPH_UPDATES_TOTAL: &str = "relay_tool_graph_updates_total";
pub const TOOL_GRAPH_EDGES_CREATED_TOTAL: &str = "relay_tool_graph_edges_created_total";
pub const EXPLORE_TOOLS_PER_RUN: &str = "relay_explore_tools_per_run";
pub const TRACE_EVENTS_WRITTEN_TOTAL: &str = "relay_trace_events_written_total";
pub const TRACE_EVENTS_DROPPED_TOTAL: &str = "relay_trace_events_dropped_total";
pub const RECONCILE_EVENTS_TOTAL: &str = "relay_reconcile_events_total";
pub const RECONCILE_PASSES_TOTAL: &str = "relay_reconcile_passes_total";
pub const TRACKER_WRITES_TOTAL: &str = "relay_tracker_writes_total";
pub const OUTBOX_SWEEPS_TOTAL: &str = "relay_outbox_sweeps_total";
pub const HTTP_REFUSED_TOTAL: &str = "relay_http_refused_total";
pub const HTTP_BODY_BUFFERED_BYTES: &str = "relay_http_body_buffered_bytes";
pub const CODEGRAPH_STORE_UP: &str = "relay_codegraph_store_up";
pub const CODEGRAPH_STORE_OUTAGES_TOTAL: &str = "relay_codegraph_store_outages_total";
pub const OUTGOING_CREDENTIALS_REDACTED_TOTAL: &str = "relay_outgoing_credentials_redacted_total";

/// What kind of metric a family is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// One metric family: its name, kind and the `# HELP` text `/metrics` shows.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    pub name: &'static str,
    pub kind: Kind,
    pub help: &'static str,
}

const fn family(name: &'static str, kind: Kind, help: &'static str) -> Family {
    Family { name, kind, help }
}

/// Every family Relay exports, with its help text (the table above, and the families other
/// crates name: `relay_llm_*` in `relay_agent::llm`, the daily budget in `relay_worker`).
/// [`install`] describes each, so every exported family carries `# HELP` (what `promtool check
/// metrics` asks for).
pub const FAMILIES: &[Family] = &[
    family(
        WEBHOOK_DELIVERIES_TOTAL,
        Kind::Counter,
        "Webhook deliveries by tracker, event and outcome.",
    ),
    family(
        WEBHOOK_REQUEST_DURATION_SECONDS,
        Kind::Histogram,
        "Time to verify, record and answer a webhook.",
    ),
    family(
        JOBS_TOTAL,
        Kind::Counter,
        "Finished job attempts by kind and outcome.",
    ),
    family(
        JOB_DURATION_SECONDS,
        Kind::Histogram,
        "Wall time of one job attempt.",
    ),
    family(
        QUEUE_DEPTH,
        Kind::Gauge,
        "Live jobs per status (queued, running).",
    ),
    family(
        QUEUE_OLDEST_DUE_SECONDS,
        Kind::Gauge,
        "Seconds the longest-waiting due job has waited to be claimed.",
    ),
    family(JOBS_RUNNING, Kind::Gauge, "Jobs running in this process."),
    family(
        LLM_TOKENS_TOTAL,
        Kind::Counter,
        "LLM tokens by role, model and kind.",
    ),
    family(
        LLM_REQUESTS_TOTAL,
        Kind::Counter,
        "LLM calls by role, model and outcome.",
    ),
    family(
        LLM_REQUEST_DURATION_SECONDS,
        Kind::Histogram,
        "LLM call latency.",
    ),
    family(
        "relay_llm_estimated_usage_total",
        Kind::Counter,
        "LLM calls whose token usage was estimated (the provider sent none).",
    ),
    family(
        TOOL_GRAPH_UPDATES_TOTAL,
        Kind::Counter,
        "Explores recorded in the tool graph, by outcome.",
    ),
    family(
        TOOL_GRAPH_EDGES_CREATED_TOTAL,
        Kind::Counter,
        "New transitions in the tool graph, by source.",
    ),
    family(
        EXPLORE_TOOLS_PER_RUN,
        Kind::Histogram,
        "Successful tool calls of each recorded explore.",
    ),
    family(
        TRACE_EVENTS_WRITTEN_TOTAL,
        Kind::Counter,
        "Run trace events written to Postgres.",
    ),
    family(
        TRACE_EVENTS_DROPPED_TOTAL,
        Kind::Counter,
        "Run trace events lost (the job went on), by reason.",
    ),
    family(
        RECONCILE_EVENTS_TOTAL,
        Kind::Counter,
        "Engaging issue events recorded, by the path that brought them.",
    ),
    family(
        RECONCILE_PASSES_TOTAL,
        Kind::Counter,
        "Reconciler passes over one project, by outcome.",
    ),
    family(
        TRACKER_WRITES_TOTAL,
        Kind::Counter,
        "Outbox writes by kind and how their drain attempt ended.",
    ),
    family(
        OUTBOX_SWEEPS_TOTAL,
        Kind::Counter,
        "Drain jobs the outbox sweeper queued for stranded writes.",
    ),
    family(
        HTTP_REFUSED_TOTAL,
        Kind::Counter,
        "Connections and requests the gateway refused to protect itself, by reason.",
    ),
    family(
        HTTP_BODY_BUFFERED_BYTES,
        Kind::Gauge,
        "Request body bytes held by requests in flight (against body_budget_bytes).",
    ),
    family(
        CODEGRAPH_STORE_UP,
        Kind::Gauge,
        "1 while the code-graph store is connected, 0 while it reconnects.",
    ),
    family(
        CODEGRAPH_STORE_OUTAGES_TOTAL,
        Kind::Counter,
        "Times the code-graph store was found unavailable.",
    ),
    family(
        OUTGOING_CREDENTIALS_REDACTED_TOTAL,
        Kind::Counter,
        "Credentials found in an outgoing tracker write and redacted, by kind.",
    ),
    family(
        "relay_daily_token_budget_reached_total",
        Kind::Counter,
        "Times a tracker's daily token budget was found reached (once per tracker, day and process).",
    ),
];

/// Describes every family in [`FAMILIES`] to the installed recorder.
fn describe_all() {
    for family in FAMILIES {
        match family.kind {
            Kind::Counter => metrics::describe_counter!(family.name, family.help),
            Kind::Gauge => metrics::describe_gauge!(family.name, family.help),
            Kind::Histogram => metrics::describe_histogram!(family.name, family.help),
        }
    }
}

/// Creates the counter series `name{labels}` at 0, or leaves it as it is when it exists.
///
/// A counter a process creates only when it first increases appears at 1, and `increase()` sees
/// no increase in a series' first sample: an alert on "any increase" stays silent for the first
/// event after a start. So the series the alert rules (`deploy/prometheus/alerts.yml`) read are
/// created at start-up, for every label value known then (Prometheus' instrumentation
/// guidelines: "avoid missing metrics"); each owner names its own label values.
pub fn zero_counter(name: &'static str, labels: &[(&'static str, &str)]) {
    let labels: Vec<metrics::Label> = labels
        .iter()
        .map(|&(key, value)| metrics::Label::new(key, value.to_owned()))
        .collect();
    metrics::counter!(name, labels).increment(0);
}

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process-wide Prometheus recorder (once; later calls return the same handle).
pub fn install() -> PrometheusHandle {
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Full(JOB_DURATION_SECONDS.to_owned()),
                    &[
                        0.1, 0.5, 1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0,
                    ],
                )
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        Matcher::Full(WEBHOOK_REQUEST_DURATION_SECONDS.to_owned()),
                        &[
                            0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                        ],
                    )
                })
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        Matcher::Full(EXPLORE_TOOLS_PER_RUN.to_owned()),
                        &[1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0],
                    )
                })
                .and_then(|b| {
                    b.set_buckets_for_metric(
                        Matcher::Full(LLM_REQUEST_DURATION_SECONDS.to_owned()),
                        &[0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0],
                    )
                })
                .expect("bucket lists are non-empty");
            let recorder = builder.build_recorder();
            let handle = recorder.handle();
            // Another recorder may already be installed (e.g. by a test harness); ours still renders
            // what it records only if it is the global one, so say so loudly.
            if metrics::set_global_recorder(recorder).is_err() {
                tracing::warn!(
                    "a metrics recorder was already installed; /metrics may be incomplete"
                );
            }
            describe_all();
            handle
        })
        .clone()
}
