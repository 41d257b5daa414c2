//! relay-gateway: the read API, the listener and the trace event stream over real HTTP.
//!
//! One test binary for the crate (each file a module): two cores link one binary, not one per file.

mod api;
mod limits;
mod listener;
mod sessions;
mod support;
mod trace_events;
