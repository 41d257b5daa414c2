#![doc = include_str!("../README.md")]
//!
//! Layout:
//! - [`llm`]: the LLM client layer (providers, tool calling, structured output, retries, usage);
//! - [`toolbox`]: one async surface over the code tools and the code graph, with call records;
//! - [`explore`]: the ExploreAgent (one question, a bounded tool loop, verified citations);
//! - [`eval`]: the explorer's evaluation harness (a suite of questions, scored);
//! - [`agent_settings`]: the `[agent]` section (planner, spec and orchestrator limits, engage roles);
//! - [`context`]: the ContextBuilder (an issue and Relay's state as bounded chat turns);
//! - [`planner`]: the planning loop (`explore` + `submit_actions`);
//! - [`spec`]: the spec writer;
//! - [`trace`]: the run trace seam (`Tracer`, `TraceEvent`), written to Postgres by the worker;
//! - [`thorough`]: thorough mode (the Traverser, the Critic and their bounds);
//! - `error`: [`Error`], an agent run that could not run at all (the LLM is unusable).

pub mod agent_settings;
pub mod context;
mod error;
pub mod eval;
pub mod explore;
pub mod llm;
pub mod planner;
pub mod spec;
pub mod thorough;
pub mod toolbox;
pub mod trace;

pub use error::{Error, Result};
