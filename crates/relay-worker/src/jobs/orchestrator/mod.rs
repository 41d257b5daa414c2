//! Pieces of the Orchestrator that `process_issue` becomes. What is here:
//! - [`issue_context`]: the ContextBuilder's input loaded from the store (gaps, findings,
//!   learnings, spec, pending events) and the thread (fresh from the tracker, or the cache);
//! - [`status`]: the one short status comment a stopped cycle posts;
//! - [`admission`]: who may make Relay act, per pending event;
//! - [`outbox_care`]: refused replies said once in a status comment;
//! - [`spec_step`]: the spec writer after a go-ahead, and its retry while the go-ahead is pending;
//! - [`pre_cycle`]: the clone credential, and the status comment of a failure before a cycle;
//! - [`run`]: the [`Orchestrator`] and its loop only: start → engagement → spend gates → setup →
//!   up to `cycles_per_job` [`cycle`]s → the follow-up job;
//! - [`job_run`]: the job attempt it serves ([`JobRun`]);
//! - [`setup`]: the issue and its tracker, then the snapshot, code graph, toolbox, explorers,
//!   metered LLM clients and traversal state;
//! - [`engagement`]: actors → roles → the decision whether the job plans, narrowed by the
//!   repository's `.relay.toml`;
//! - [`commands`]: `@bot help`, `status`, `refresh`, `stop`, `resume`, `forget`, `budget`,
//!   answered before any planning;
//! - [`stop`]: the spend gates before each cycle, and a cycle stopped without a decision;
//! - [`graph`]: the code graph of the snapshot's commit for the explorers;
//! - [`role_cache`]: authors' roles kept for a TTL per (tracker, project, username);
//! - [`secrets`]: tracker and LLM secrets registered for the outbox's outgoing scan;
//! - [`budget`]: the per-issue cap (tokens, dollars) across jobs, and its raises;
//! - [`follow_up`]: the next job when events are left after the last cycle;
//! - [`validator`]: the write-back Validator as the planner's `submit_actions` judge;
//! - [`traversal`]: thorough mode's traversal state of the issue, loaded per job, saved per cycle.

pub mod admission;
pub mod budget;
pub mod commands;
pub mod cycle;
pub mod daily_budget;
pub mod engagement;
pub mod follow_up;
pub mod graph;
pub mod issue_context;
pub mod job_run;
pub mod outbox_care;
pub mod pre_cycle;
pub mod role_cache;
pub mod run;
pub mod secrets;
pub mod setup;
pub mod spec_step;
pub mod status;
pub mod stop;
pub mod traversal;
pub mod validator;

pub use job_run::JobRun;
pub use run::Orchestrator;
pub use setup::metered_client;
