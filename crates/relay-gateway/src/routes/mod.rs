//! One module per route.

pub mod api;
pub mod health;
pub mod metrics;
pub mod webhook;
