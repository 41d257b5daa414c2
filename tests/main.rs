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
//! parts → approved), `status_page` / `status_content` (the /ui pages over HTTP; fixture in `status_fixture`) and `status_browser` (the same in
//! headless Chromium), `reconcile` (lost webhooks found by polling, on `reconcile_harness`), `identity` (a replayed
//! signed body is a duplicate; the projects allow-list), `reconcile_latency` (an
//! ignored figure: lost mention → reply with the reconciler running), `outbox_delivery` (no write stranded: outages, crashes, Retry-After, the
//! sweeper, refused writes, a failed spec writer), `outbox_engagement` (authorization per event), `context_poisoning` (learnings as fenced data; private ones stay in
//! their issue), `hostile_text` (nothing Relay posts can run a GitLab quick action or carry
//! a secret; answers land in the triggering discussion), `private_clone` (a GitHub App's private
//! repository cloned with the installation token over git smart HTTP; a failed clone says so),
//! `findings` (findings re-verified on every push, the living summary comment), `repo_config`
//! (the repository's `.relay.toml` narrowing, excluding, guiding; refused widenings; a
//! malformed file) and `commands` (every `@bot` command on both trackers, forget, the cap), on
//! `repo_config_harness`; `retried_reply` (a retried job's reply lands: after the operator's
//! retry of a dead job, an automatic retry, a worker that died); `related` / `related_gitlab` (an answer in a
//! related repository cited from it and verified there; refused names with their reasons, never
//! read; a push to the related repository re-anchoring and staling what cites it).

mod commands;
mod context_poisoning;
mod engagement;
mod findings;
mod fuzz;
mod gateway;
mod helpers;
mod hostile_text;
mod identity;
mod installation;
mod llm_usage;
mod metrics_scrape;
mod nul;
mod orchestrator;
mod orchestrator_flows;
mod orchestrator_gitlab;
mod orchestrator_latency;
mod outage;
mod outbox_delivery;
mod outbox_engagement;
mod private_clone;
mod process_issue;
mod project_browser;
mod push;
mod queue;
mod reconcile;
mod reconcile_harness;
mod reconcile_latency;
mod related;
mod related_gitlab;
mod repo_config;
mod repo_config_harness;
mod retried_reply;
mod spec_flow;
mod status_browser;
mod status_content;
mod status_fixture;
mod status_page;
mod thorough;
mod trace_live;
mod visibility;
