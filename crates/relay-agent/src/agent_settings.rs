//! `[agent]`: the limits of the planner, the spec writer and the orchestrator, and who may make
//! Relay spend tokens (`engage_roles`).
//!
//! Every limit has a named default so `config/relay.toml` and the code agree.

use std::collections::BTreeMap;

use relay_core::AuthorRole;
use serde::Deserialize;

use crate::explore::ExploreConfig;

/// Planner turns per cycle (each turn is one LLM call).
pub const DEFAULT_PLANNER_MAX_ITERATIONS: u32 = 8;
/// Re-plans after the validator refused a batch.
pub const DEFAULT_PLANNER_MAX_REPLANS: u32 = 2;
/// Tokens one planning cycle may spend (planner, its explorers and the spec writer together).
pub const DEFAULT_CYCLE_TOKEN_BUDGET: u64 = 150_000;
/// Planning cycles one job runs before it hands over to a follow-up job.
pub const DEFAULT_CYCLES_PER_JOB: u32 = 3;
/// Bound of the injected issue context, in estimated tokens.
pub const DEFAULT_CONTEXT_MAX_TOKENS: usize = 12_000;
/// Tokens one issue may spend across all its jobs before Relay stops engaging.
pub const DEFAULT_ISSUE_TOKEN_BUDGET: u64 = 500_000;
/// Spec writer turns (explore calls plus the final answer).
pub const DEFAULT_SPEC_MAX_ITERATIONS: u32 = 6;

/// `[agent]`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AgentSettings {
    /// LLM turns per planning cycle.
    pub planner_max_iterations: u32,
    /// Re-plans after validation failures, per cycle.
    pub planner_max_replans: u32,
    /// Tokens per planning cycle (all roles).
    pub cycle_token_budget: u64,
    /// Cycles per job before a follow-up job takes over.
    pub cycles_per_job: u32,
    /// Bound of the injected context, in estimated tokens.
    pub context_max_tokens: usize,
    /// Tokens per issue across jobs (0: no cap); past it Relay posts one note and stays silent
    /// on the issue until a maintainer raises its cap (`@bot budget …`).
    pub issue_token_budget: u64,
    /// US dollars per issue across jobs, priced with `[prices]` (0: no cap); calls of a model
    /// without a price do not count toward it. Past it, as for the token cap.
    pub issue_cost_budget_usd: f64,
    /// Tokens all issues of one tracker may spend per UTC day (0: no limit). Past it, issues are
    /// still recorded, and answered after midnight UTC.
    pub daily_token_budget: u64,
    /// Spec writer turns.
    pub spec_max_iterations: u32,
    /// Who may engage Relay, by default and per tracker name.
    pub engage_roles: EngageRoles,
    /// `[agent.explore]`: the ExploreAgent's budgets (its `max_parallel_explores` also bounds the
    /// explorations one planner turn runs).
    pub explore: ExploreConfig,
    /// Add the repository's strongest tool sequences (learned from earlier explores) to the
    /// explore prompt. Learning itself always runs.
    pub tool_hints: bool,
    /// Keep one living summary comment per issue (open questions, findings with their
    /// citations' status, the spec, the spend), edited in place after each change. Off: a push
    /// that makes findings stale posts one short notice instead.
    pub summary_comment: bool,
    /// Let a repository name related repositories (`.relay.toml` `related`, and the trackers'
    /// `related` tables) whose code its issues' explorations may read. Off: every name is
    /// refused, and only the issue's own repository is explored.
    pub related_repositories: bool,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            planner_max_iterations: DEFAULT_PLANNER_MAX_ITERATIONS,
            planner_max_replans: DEFAULT_PLANNER_MAX_REPLANS,
            cycle_token_budget: DEFAULT_CYCLE_TOKEN_BUDGET,
            cycles_per_job: DEFAULT_CYCLES_PER_JOB,
            context_max_tokens: DEFAULT_CONTEXT_MAX_TOKENS,
            issue_token_budget: DEFAULT_ISSUE_TOKEN_BUDGET,
            issue_cost_budget_usd: 0.0,
            daily_token_budget: 0,
            explore: ExploreConfig::default(),
            spec_max_iterations: DEFAULT_SPEC_MAX_ITERATIONS,
            engage_roles: EngageRoles::default(),
            tool_hints: true,
            summary_comment: true,
            related_repositories: true,
        }
    }
}

/// A role an author may hold (moved to `relay-core`, shared with the repository's `.relay.toml`).
pub use relay_core::roles::EngageRole;

/// Roles that may engage Relay on public and on private projects.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngagePolicy {
    /// On public projects (anyone on the internet can comment there).
    pub public: Vec<EngageRole>,
    /// On private projects (only people given access can comment).
    pub private: Vec<EngageRole>,
}

impl Default for EngagePolicy {
    fn default() -> Self {
        // OpenHands' rule: on public projects only people the project trusts may make the bot
        // spend; on private ones, commenting already requires access.
        Self {
            public: vec![
                EngageRole::Owner,
                EngageRole::Member,
                EngageRole::Collaborator,
            ],
            private: vec![EngageRole::Anyone],
        }
    }
}

/// `[agent.engage_roles]`: the default policy plus per-tracker overrides
/// (`[agent.engage_roles.trackers.<name>]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngageRoles {
    /// Default roles on public projects.
    pub public: Vec<EngageRole>,
    /// Default roles on private projects.
    pub private: Vec<EngageRole>,
    /// Overrides by tracker name.
    pub trackers: BTreeMap<String, EngagePolicy>,
}

impl Default for EngageRoles {
    fn default() -> Self {
        let EngagePolicy { public, private } = EngagePolicy::default();
        Self {
            public,
            private,
            trackers: BTreeMap::new(),
        }
    }
}

/// Whether the project is visible to everyone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    Public,
    Private,
}

/// Whether an author may engage Relay, and if not, why (recorded with the ignored event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngageDecision {
    Engage,
    Ignore { reason: String },
}

impl EngageRoles {
    /// The policy of one tracker.
    pub fn policy(&self, tracker: &str) -> EngagePolicy {
        self.trackers
            .get(tracker)
            .cloned()
            .unwrap_or_else(|| EngagePolicy {
                public: self.public.clone(),
                private: self.private.clone(),
            })
    }

    /// Decides for an author whose role on the project is `role` (`None`: the tracker did not say).
    pub fn decide(
        &self,
        tracker: &str,
        visibility: Visibility,
        role: Option<AuthorRole>,
    ) -> EngageDecision {
        let policy = self.policy(tracker);
        let allowed = match visibility {
            Visibility::Public => &policy.public,
            Visibility::Private => &policy.private,
        };
        if allowed.iter().any(|r| r.admits(role)) {
            return EngageDecision::Engage;
        }
        let role = role.map_or_else(|| "unknown".to_owned(), |r| format!("{r:?}").to_lowercase());
        let project = match visibility {
            Visibility::Public => "public",
            Visibility::Private => "private",
        };
        EngageDecision::Ignore {
            reason: format!("author role {role} may not engage relay on this {project} project"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_gate_public_projects_only() {
        let roles = EngageRoles::default();
        for (visibility, role, engage) in [
            (Visibility::Public, Some(AuthorRole::Owner), true),
            (Visibility::Public, Some(AuthorRole::Member), true),
            (Visibility::Public, Some(AuthorRole::Collaborator), true),
            (Visibility::Public, Some(AuthorRole::Contributor), false),
            (Visibility::Public, Some(AuthorRole::None), false),
            (Visibility::Public, None, false),
            (Visibility::Private, Some(AuthorRole::None), true),
            (Visibility::Private, None, true),
        ] {
            let decision = roles.decide("github", visibility, role);
            assert_eq!(
                decision == EngageDecision::Engage,
                engage,
                "{visibility:?} {role:?}: {decision:?}"
            );
        }
        assert_eq!(
            roles.decide("github", Visibility::Public, Some(AuthorRole::Contributor)),
            EngageDecision::Ignore {
                reason: "author role contributor may not engage relay on this public project"
                    .into()
            }
        );
    }

    #[test]
    fn the_documented_section_matches_the_defaults() {
        let config: toml::Value =
            toml::from_str(include_str!("../../../config/relay.toml")).unwrap();
        let documented: AgentSettings = config["agent"].clone().try_into().unwrap();
        assert_eq!(documented, AgentSettings::default());
    }

    #[test]
    fn per_tracker_overrides_parse_and_apply() {
        let settings: AgentSettings = toml::from_str(
            r#"
            planner_max_iterations = 5
            [engage_roles]
            public = ["owner"]
            [engage_roles.trackers.gitlab]
            public = ["anyone"]
            private = ["anyone"]
            "#,
        )
        .unwrap();
        assert_eq!(settings.planner_max_iterations, 5);
        assert_eq!(settings.cycles_per_job, DEFAULT_CYCLES_PER_JOB);
        let roles = &settings.engage_roles;
        assert_eq!(
            roles.decide("github", Visibility::Public, Some(AuthorRole::Member)),
            EngageDecision::Ignore {
                reason: "author role member may not engage relay on this public project".into()
            }
        );
        assert_eq!(
            roles.decide("gitlab", Visibility::Public, None),
            EngageDecision::Engage
        );
        assert!(toml::from_str::<AgentSettings>("bogus = 1").is_err());
    }
}
