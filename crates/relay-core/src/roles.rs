//! The roles that may engage Relay, as an operator (`[agent.engage_roles]`) or a repository
//! (`.relay.toml` `[engage]`) names them. Shared so both read the same words and the repository
//! can only name a subset of what the server allows.

use serde::{Deserialize, Serialize};

use crate::{AuthorRole, Provider};

/// A role an author may hold, as configured (`"owner"`, `"member"`, ... or `"anyone"`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EngageRole {
    /// GitHub OWNER; GitLab Owner or Maintainer.
    Owner,
    /// GitHub MEMBER (of the organization); GitLab Developer or Reporter.
    Member,
    /// GitHub COLLABORATOR.
    Collaborator,
    /// GitHub CONTRIBUTOR and first-timers; GitLab Guest.
    Contributor,
    /// Anyone who can comment, including authors the tracker says nothing about.
    Anyone,
}

impl EngageRole {
    /// Every role, in the order they are documented.
    pub const ALL: [EngageRole; 5] = [
        EngageRole::Owner,
        EngageRole::Member,
        EngageRole::Collaborator,
        EngageRole::Contributor,
        EngageRole::Anyone,
    ];

    /// Whether an author whose role on the project is `role` (`None`: the tracker did not say)
    /// holds this configured role.
    pub fn admits(self, role: Option<AuthorRole>) -> bool {
        match (self, role) {
            (EngageRole::Anyone, _) => true,
            (_, None) => false,
            (EngageRole::Owner, Some(role)) => role == AuthorRole::Owner,
            (EngageRole::Member, Some(role)) => role == AuthorRole::Member,
            (EngageRole::Collaborator, Some(role)) => role == AuthorRole::Collaborator,
            (EngageRole::Contributor, Some(role)) => role == AuthorRole::Contributor,
        }
    }

    /// The configured spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EngageRole::Owner => "owner",
            EngageRole::Member => "member",
            EngageRole::Collaborator => "collaborator",
            EngageRole::Contributor => "contributor",
            EngageRole::Anyone => "anyone",
        }
    }

    /// Whether a list of allowed roles includes `self` (a list with `anyone` includes every
    /// role): the test a repository's narrower list passes.
    pub fn within(self, allowed: &[EngageRole]) -> bool {
        allowed.contains(&EngageRole::Anyone) || allowed.contains(&self)
    }
}

/// Whether an author with `role` is a maintainer of the project: on GitHub the `admin`
/// permission on the repository (a repository's owner has it), on GitLab the Owner or Maintainer
/// role (each tracker's client maps those to [`AuthorRole::Owner`]). Only maintainers may raise
/// an issue's budget (`@bot budget …`).
pub fn is_maintainer(role: Option<AuthorRole>) -> bool {
    role == Some(AuthorRole::Owner)
}

/// What [`is_maintainer`] checks on `provider`, in words for a reply that refuses.
pub fn maintainer_rule(provider: Provider) -> &'static str {
    match provider {
        Provider::GitHub => "someone with admin permission on this repository",
        Provider::GitLab => "a member with the Maintainer or Owner role on this project",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anyone_contains_every_role_and_others_only_themselves() {
        for role in EngageRole::ALL {
            assert!(role.within(&[EngageRole::Anyone]));
            assert!(role.within(&[role]));
        }
        assert!(!EngageRole::Anyone.within(&[EngageRole::Owner, EngageRole::Member]));
        assert!(!EngageRole::Contributor.within(&[EngageRole::Owner]));
        assert!(EngageRole::Owner.admits(Some(AuthorRole::Owner)));
        assert!(!EngageRole::Owner.admits(None));
        assert!(EngageRole::Anyone.admits(None));
    }
}
