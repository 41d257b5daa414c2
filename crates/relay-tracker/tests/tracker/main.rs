//! relay-tracker: the GitHub and GitLab clients against the local fake servers built from recorded payloads.
//!
//! One test binary for the crate (each file a module): two cores link one binary, not one per file.

mod contract;
mod contract_github;
mod contract_gitlab;
mod github;
mod github_app;
mod gitlab;
mod gitlab_members;
mod hostile_server;
mod quick_action_search;
mod registry;
