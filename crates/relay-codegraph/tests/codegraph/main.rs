//! relay-codegraph: the indexer (golden graphs, hostile input, incremental equals full, Python value flow), the operations' errors and output, and every graph store's conformance.
//!
//! One test binary for the crate (each file a module): two cores link one binary, not one per file.

mod go_dispatch;
mod index_exclude;
mod index_golden;
mod index_hostile;
mod index_incremental;
mod ops_errors;
mod ops_output;
mod python_flow;
mod related;
mod related_incremental;
mod store_arangodb;
mod store_memory;
mod store_postgres;
mod store_supervised;
