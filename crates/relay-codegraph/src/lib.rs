#![doc = include_str!("../README.md")]
//!
//! # Layout
//! - [`model`]: symbols, edges and the graph (the `relay index --format json` export format).
//! - [`index`]: the tolerant tree-sitter indexer for Go and Python, full and incremental.
//! - [`store`]: graph stores (in-memory, Postgres, ArangoDB) behind one trait.
//! - [`ops`]: the `codegraph` tool operations, over one graph or a set of related repositories' graphs.
//! - [`related`]: what a checkout provides for linking repositories and what it depends on.

pub mod index;
pub mod model;
pub mod ops;
pub mod related;
pub mod store;
