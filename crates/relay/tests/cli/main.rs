//! The relay binary, run as a process: its commands, the status page it serves, and the process lifecycle.
//!
//! One test binary for the crate (each file a module): two cores link one binary, not one per file.

mod analyze;
mod cli;
mod db_commands;
mod eval;
mod explore;
mod intake_kill;
mod plan;
mod process;
mod slow_clients;
mod status_page_serve;
mod support;
