#![doc = include_str!("../README.md")]
//!
//! Layout: [`ids`] (the row ids: `IssueId`, `JobId`, `DeliveryId`, `SpecId`, `OutboxId`),
//! [`tracker`] (providers and tracker names), [`bot`] (which login is the bot), [`issue`] (issue and note snapshots),
//! [`job`] (job kinds and payloads), [`action`] (the planner's Action contract),
//! [`citation`] (`path:start-end` citations of code), [`prices`] (`[prices]`, the cost of tokens),
//! [`engage`] (engagement rules and event identity, shared by the gateway and the reconciler),
//! [`error`] (the one cause-chain formatter), [`outgoing`] (quick-action neutralisation of every
//! tracker write), [`roles`] (the roles that may engage Relay),
//! [`repo_config`] (the repository's `.relay.toml`: parsed, narrowed, in effect), [`related`]
//! (related repositories: which the server admits and why each refused one is refused), [`command`]
//! (commands in a mention, parsed deterministically), [`learning_review`] (when a learning is
//! marked for review), [`secrets`] (the configured secrets: the registry every tracker write,
//! prompt and job error is scrubbed with, and the one redaction of a URL), [`token_shapes`]
//! (credentials recognised by their shape, whoever's they are: every tracker write is scanned
//! for them too).

pub mod action;
pub mod bot;
pub mod citation;
pub mod command;
pub mod engage;
pub mod error;
pub mod ids;
pub mod issue;
pub mod job;
pub mod learning_review;
pub mod outgoing;
pub mod prices;
pub mod related;
pub mod repo_config;
pub mod roles;
pub mod secrets;
pub mod token_shapes;
pub mod tracker;

pub use action::{Action, ActionBatch};
pub use bot::BotAccount;
pub use citation::Citation;
pub use ids::{DeliveryId, IssueId, JobId, OutboxId, SpecId};
pub use issue::{IssueSnapshot, NoteSnapshot, ProjectVisibility};
pub use job::{JobKind, ProcessIssue, UpdateCheckout};
pub use tracker::{AuthorRole, Provider, TokenAuth, TrackerName, TrackerSettings};
