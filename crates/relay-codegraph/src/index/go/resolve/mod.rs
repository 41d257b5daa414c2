//! What one Go file emits, read from the built tables: its edges ([`edges`]) and its symbols
//! ([`symbols`]).

mod edges;
mod symbols;

pub(crate) use edges::{implements_edges, resolve_file};
pub(crate) use symbols::file_symbols;
