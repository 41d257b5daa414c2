//! One module per route.

pub mod health;
pub mod metrics;
pub mod webhook;
