#![doc = include_str!("../README.md")]
//!
//! Layout: [`tracker`] (providers and tracker names), [`issue`] (issue and note snapshots),
//! [`job`] (job kinds and payloads).

pub mod issue;
pub mod job;
pub mod tracker;

pub use issue::{IssueSnapshot, NoteSnapshot};
pub use job::{JobKind, ProcessIssue, UpdateCheckout};
pub use tracker::{Provider, TrackerName, TrackerSettings};
