//! relay-store: queue depth, retention and status-page sessions against the real Postgres.
//!
//! One test binary for the crate (each file a module): two cores link one binary, not one per file.

mod operator;
mod queue_depth;
mod retention;
mod ui_sessions;
