#![doc = include_str!("../README.md")]
//!
//! Layout:
//! - [`llm`]: the LLM client layer (providers, tool calling, structured output, retries, usage).

pub mod llm;
