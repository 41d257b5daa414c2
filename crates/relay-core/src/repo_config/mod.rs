//! Configuration as code: the repository's `.relay.toml` (also `.github/relay.toml`,
//! `.gitlab/relay.toml`), read at the checkout's commit, validated, and applied only as far as
//! it narrows what the server allows.
//!
//! Layout: [`file`](mod@file) (the keys, their bounds, the JSON Schema), [`parse`](mod@parse) (text → keys, with
//! every problem located by file, line and key), [`narrow`] (the server's policy and the
//! configuration in effect, with each key's origin and each refused widening), [`exclude`] (the
//! `exclude` globs as one matcher for the tools and the code graph), [`guidance`] (instructions
//! and guidance files bounded and labelled with their origin), `keys` (the configuration in
//! effect as keys with their origin, as the status page, the API and `relay config check` show
//! it), [`recorded`] (the configuration in effect now, from the file as recorded and the server's
//! settings as they run).
//!
//! Invariants:
//! - A bad file never stops Relay: any error falls back to the server's settings whole
//!   ([`narrow::effective`] with the errors), and the errors are kept to be shown.
//! - The repository can only narrow: every key that would widen what the server allows is
//!   refused, reported, and not applied; the rest of the file still applies.

pub mod exclude;
pub mod file;
pub mod guidance;
mod keys;
pub mod narrow;
pub mod parse;
pub mod recorded;

pub use exclude::ExcludeSet;
pub use file::{CONFIG_PATHS, DEFAULT_GUIDANCE_FILES, RepoConfigFile, Thoroughness, schema};
pub use guidance::{GuidanceDoc, GuidanceText};
pub use narrow::{EffectiveConfig, KeyInEffect, Origin, ServerPolicy, effective};
pub use parse::{ConfigProblem, ParsedFile, parse};
pub use recorded::{Recorded, in_effect_now};
