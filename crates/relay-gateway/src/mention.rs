//! `@bot` mention detection: lives in `relay_core::engage::mention` (shared with the reconciler).

pub use relay_core::engage::mention::mentions;
