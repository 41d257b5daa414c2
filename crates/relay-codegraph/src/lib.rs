#![doc = include_str!("../README.md")]
//!
//! # Layout
//! - [`model`]: symbols, edges and the graph (the `relay index --format json` export format).
//! - [`index`]: the tolerant tree-sitter indexer for Go and Python, full and incremental.
//! - [`store`]: graph stores (in-memory, Postgres, ArangoDB) behind one trait.
//! - [`ops`]: the `codegraph` tool operations.

pub mod index;
pub mod model;
pub mod ops;
pub mod store;
