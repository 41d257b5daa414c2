//! Pieces of the Orchestrator that `process_issue` becomes (issue #15 §1). What is here:
//! - [`issue_context`]: the ContextBuilder's input loaded from the store (gaps, findings,
//!   learnings, spec, pending events) and the thread (fresh from the tracker, or the cache);
//! - [`status`]: the one short status comment a stopped cycle posts.
//!
//! Not wired yet: the cycle loop itself (planner → validator → executor with the watermark raise,
//! the spec step, the acknowledgement reaction, the per-issue budget) — see ARCHITECTURE.md.

pub mod brain;
pub mod budget;
pub mod cycle;
pub mod follow_up;
pub mod graph;
pub mod issue_context;
pub mod status;
pub mod validator;
