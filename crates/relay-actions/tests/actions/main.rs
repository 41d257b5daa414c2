//! relay-actions end to end: the validator, the executor's batch transaction, the outbox drain and crash recovery, against the real Postgres.
//!
//! One test binary for the crate (each file a module): two cores link one binary, not one per file.

mod crash;
mod drain;
mod executor;
mod related;
mod support;
mod validator;
