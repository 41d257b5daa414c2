#![doc = include_str!("../README.md")]
//!
//! Layout:
//! - [`llm`]: the LLM client layer (providers, tool calling, structured output, retries, usage).
//! - [`toolbox`]: one async surface over the code tools and the code graph, with call records.
//! - [`explore`]: the ExploreAgent (one question, a bounded tool loop, verified citations).

pub mod explore;
pub mod llm;
pub mod toolbox;
