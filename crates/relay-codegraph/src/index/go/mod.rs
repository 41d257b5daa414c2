//! Go: the facts of each file, the tables built from all of them, and what each file emits.
//!
//! The modules read one way, each importing only those before it:
//! [`facts`] (declarations and bodies of one file, as parsed) → [`tables`] (packages, types,
//! method sets, and the solved flow: data and lookups only) → [`eval`] (what an expression
//! denotes) → [`implements`] (which types satisfy which interfaces) and [`flow`] (which
//! concrete types and functions reach each dynamic call site) → [`build`] (declare, infer,
//! implements, flow: the tables from all files) → [`resolve`] (the edges and symbols one file
//! emits). [`patch`] and [`dependents`] keep the tables current on an incremental update.
//! [`modules`] maps directories to import paths and [`gomod`] reads `go.mod` directives (the
//! `replace`s an import follows, and what `crate::related` reports).

pub(crate) mod build;
pub(crate) mod dependents;
mod eval;
pub(crate) mod facts;
mod flow;
mod frontend;
pub(crate) mod gomod;
mod implements;
pub(crate) mod modules;
pub(crate) mod patch;
mod resolve;
pub(crate) mod same_decls;
mod tables;

pub(crate) use facts::GoFile;
pub(crate) use flow::same_flow_inputs;
pub(crate) use frontend::{GoFrontend, resolve_into};
pub(crate) use resolve::{file_symbols, implements_edges, resolve_file};
pub(crate) use tables::{GoFlow, GoIndex, Implementation, Target};
