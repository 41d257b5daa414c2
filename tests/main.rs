//! End-to-end tests against the real PostgreSQL (`DATABASE_URL`, required: tests fail loudly without it).
//!
//! Layout: `helpers` (test app, signing, fixtures, a TCP proxy to cut the database), `gateway`
//! (every recorded webhook, authentication, redelivery, limits), `engagement` (mention and thread
//! rules end to end), `nul` (NULs in payloads stored replaced, never 5xx), `outage` (database down mid-test), `queue` (leases, concurrency, retries,
//! shutdown), `process_issue` (the issue job's bookkeeping), `orchestrator` / `orchestrator_gitlab` /
//! `orchestrator_flows` (the planner end to end on the fake GitHub and GitLab with the scripted LLM),
//! `orchestrator_latency` (an ignored figure: webhook accepted → first LLM request), `trace_live`
//! (a running job's trace over SSE), `thorough` (the planner's thorough explore and the issue's
//! traversal state), `visibility` (the project's visibility from every webhook), `spec_flow` (go-ahead → spec in
//! parts → approved), `findings` (findings re-verified on every push, the living summary comment).

mod engagement;
mod findings;
mod fuzz;
mod gateway;
mod helpers;
mod installation;
mod llm_usage;
mod nul;
mod orchestrator;
mod orchestrator_flows;
mod orchestrator_gitlab;
mod orchestrator_latency;
mod outage;
mod process_issue;
mod push;
mod queue;
mod spec_flow;
mod thorough;
mod trace_live;
mod visibility;
