//! Pieces of the Orchestrator that `process_issue` becomes (issue #15 §1). What is here:
//! - [`issue_context`]: the ContextBuilder's input loaded from the store (gaps, findings,
//!   learnings, spec, pending events) and the thread (fresh from the tracker, or the cache);
//! - [`status`]: the one short status comment a stopped cycle posts;
//! - [`admission`]: who may make Relay act, per pending event (issue #22 §4);
//! - [`outbox_care`]: refused replies said once in a status comment (issue #22 §1);
//! - [`spec_step`]: the spec writer after a go-ahead, and its retry while the go-ahead is pending;
//! - [`pre_cycle`]: the clone credential, and the status comment of a failure before a cycle;
//! - [`brain`]: the job: engage check, budget gate, snapshot, code graph, metered LLM clients,
//!   up to `cycles_per_job` [`cycle`]s, the follow-up job;
//! - [`graph`]: the code graph of the snapshot's commit for the explorers;
//! - [`role_cache`]: authors' roles kept for a TTL per (tracker, project, username);
//! - [`secrets`]: tracker and LLM secrets registered for the outbox's outgoing scan;
//! - [`budget`]: the per-issue token budget across jobs;
//! - [`follow_up`]: the next job when events are left after the last cycle;
//! - [`validator`]: the write-back Validator as the planner's `submit_actions` judge;
//! - [`traversal`]: thorough mode's traversal state of the issue, loaded per job, saved per cycle.

pub mod admission;
pub mod brain;
pub mod budget;
pub mod cycle;
pub mod daily_budget;
pub mod follow_up;
pub mod graph;
pub mod issue_context;
pub mod outbox_care;
pub mod pre_cycle;
pub mod role_cache;
pub mod secrets;
pub mod spec_step;
pub mod status;
pub mod traversal;
pub mod validator;
