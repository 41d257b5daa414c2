//! relay-tools: grep, read, glob/tree, history and the sandbox over real files, and their bounds.
//!
//! One test binary for the crate (each file a module): two cores link one binary, not one per file.

mod bounded;
mod common;
mod excludes;
mod glob_tree;
mod grep;
mod history;
mod read;
mod related;
mod sandbox;
