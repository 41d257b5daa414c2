//! relay-repo: checkouts, snapshots and history against real local git repositories.
//!
//! One test binary for the crate (each file a module).

mod checkout;
mod code_history;
mod support;
