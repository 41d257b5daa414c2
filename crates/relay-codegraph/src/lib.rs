#![doc = include_str!("../README.md")]
//!
//! # Layout
//! - [`model`]: symbols, edges and the graph (the `relay index --format json` export format).
//! - [`index`]: the tolerant tree-sitter indexer for Go and Python, full and incremental.

pub mod index;
pub mod model;
pub mod ops;
pub mod store;
