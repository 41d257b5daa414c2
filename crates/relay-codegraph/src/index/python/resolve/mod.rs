//! What one Python file emits, read from the built tables and the value flow: its edges
//! ([`edges`]) and its symbols ([`symbols`]).

mod edges;
mod symbols;

pub(crate) use edges::resolve_file;
pub(crate) use symbols::file_symbols;
