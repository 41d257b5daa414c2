//! Thorough mode (issue #12): goal-driven multi-stage analysis for questions that span many files.
//!
//! This module holds the deterministic core the pipeline runs on: perception ([`perception`]), the
//! traversal state with its FIFO bounds ([`state`]), one counter per bound ([`bounds`]), goals and
//! their ordered updates ([`goals`]), the routing between stages ([`routing`]), the Traverser
//! that runs planned tool steps under the bounds ([`traverser`]) and Integration, which answers
//! only with verified claims and lists open goals ([`integration`]). The LLM stages (intent,
//! planner, synthesizer, critic) and the stage loop are not built yet:
//! `explore(thoroughness: thorough)` still runs one ExploreAgent with twice the medium budget.

pub mod bounds;
pub mod goals;
pub mod integration;
pub mod perception;
pub mod routing;
pub mod state;
pub mod traverser;
