//! Who may make Relay act, decided per event.
//!
//! Each pending event's author is looked up (role cache, then the tracker) and judged by
//! `[agent.engage_roles]`. Only a definite answer (not a member, a role too low, a name the
//! tracker cannot have) ignores an author; a lookup that failed (5xx, 429, 403, a missing scope)
//! fails the job retryably, so the queue backs off and tries again, and on the last attempt the
//! trace and the log say why. Events of ignored authors stay in the context, marked as context
//! only, and the validator refuses any decision that names one of their notes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use relay_actions::{Authority, PendingNote};
use relay_agent::agent_settings::{EngageDecision, EngageRole};
use relay_agent::trace::{TraceKind, Tracer};
use relay_core::AuthorRole;
use relay_store::issues::{IssueEventRow, IssueRow};
use relay_tracker::{IssueRef, IssueTracker, TrackerError};
use serde_json::json;

use relay_agent::agent_settings::Visibility;

use super::cycle::Attempt;
use super::issue_context::Note;
use super::role_cache::RoleKey;
use super::{JobRun, Orchestrator};
use crate::handler::JobError;

/// The per-event decision for one cycle's pending events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Admission {
    /// Lowercased usernames whose events may make Relay act.
    admitted: HashSet<String>,
    /// `@actor: reason`, one per author whose events are context only.
    pub ignored: Vec<String>,
    /// Each author's role as the tracker said it (lowercased username; `None`: no role).
    roles: HashMap<String, Option<AuthorRole>>,
}

impl Admission {
    /// Admits exactly these authors (tests and callers that decided elsewhere).
    pub fn of<'a>(actors: impl IntoIterator<Item = &'a str>) -> Admission {
        Admission {
            admitted: actors.into_iter().map(str::to_lowercase).collect(),
            ignored: Vec::new(),
            roles: HashMap::new(),
        }
    }

    /// The role the tracker gave `actor` (`None`: no role, or not looked up).
    pub fn role(&self, actor: &str) -> Option<AuthorRole> {
        self.roles.get(&actor.to_lowercase()).copied().flatten()
    }

    /// This admission narrowed by the repository's `engage` roles (`.relay.toml`): an admitted
    /// author whose role none of `roles` admits becomes context only, with why.
    pub fn narrowed(mut self, roles: &[EngageRole]) -> Admission {
        let mut dropped: Vec<String> = self
            .admitted
            .iter()
            .filter(|actor| !roles.iter().any(|r| r.admits(self.role(actor))))
            .cloned()
            .collect();
        dropped.sort();
        for actor in dropped {
            self.admitted.remove(&actor);
            let role = self
                .role(&actor)
                .map_or_else(|| "unknown".to_owned(), |r| format!("{r:?}").to_lowercase());
            self.ignored.push(format!(
                "@{actor}: author role {role} may not engage relay on this repository (its .relay.toml narrows who may)"
            ));
        }
        self
    }

    /// Whether `actor`'s events may make Relay act.
    pub fn admits(&self, actor: &str) -> bool {
        !actor.is_empty() && self.admitted.contains(&actor.to_lowercase())
    }

    /// Whether any of `events` comes from an admitted author.
    pub fn any_admitted(&self, events: &[IssueEventRow]) -> bool {
        events.iter().any(|e| self.admits(&e.actor))
    }

    /// What the validator may accept as a decision: the events' notes (id and text as the
    /// thread shows them), split by whether their author is admitted.
    pub fn authority(&self, events: &[IssueEventRow], thread: &[Note]) -> Authority {
        let mut admitted = Vec::new();
        let mut refused = Vec::new();
        for event in events {
            let Some(note) = event
                .note_id
                .as_deref()
                .and_then(|id| thread.iter().find(|n| n.note_id == id))
            else {
                continue;
            };
            let pending = PendingNote::new(note.note_id.clone(), note.body.clone());
            if self.admits(&event.actor) && !note.by_bot {
                admitted.push(pending);
            } else {
                refused.push(pending);
            }
        }
        Authority::Events { admitted, refused }
    }
}

/// A role lookup that failed: not an answer, so the job is retried.
#[derive(Debug)]
pub struct RoleLookupFailed {
    pub actor: String,
    pub error: TrackerError,
}

impl RoleLookupFailed {
    /// The job's error (retryable), traced and logged; on the last attempt loudly, with why.
    pub fn fail_job(self, run: &JobRun, tracer: &Tracer) -> JobError {
        let why = format!("role lookup for @{} failed: {}", self.actor, self.error);
        let last = run.attempt == Attempt::Last;
        tracer.event(
            TraceKind::Decision,
            json!({
                "decision": "role_lookup_failed", "actor": self.actor,
                "error": relay_agent::trace::capped(&self.error.to_string()),
                "last_attempt": last,
            }),
        );
        if last {
            tracing::error!(
                issue.id = run.issue_id.get(),
                actor = %self.actor,
                error.message = %self.error,
                "could not look up who mentioned Relay on the job's last attempt; the events stay pending"
            );
        } else {
            tracing::warn!(
                issue.id = run.issue_id.get(),
                actor = %self.actor,
                error.message = %self.error,
                "role lookup failed; the job backs off and tries again"
            );
        }
        JobError::Retryable(anyhow::anyhow!(why))
    }
}

impl Orchestrator {
    /// Decides, per author of `events`, whether their events may make Relay act.
    pub(crate) async fn admit(
        &self,
        tracker: &Arc<dyn IssueTracker>,
        issue: &IssueRow,
        issue_ref: &IssueRef,
        events: &[IssueEventRow],
    ) -> Result<Admission, RoleLookupFailed> {
        let mut admission = Admission::default();
        let mut seen = HashSet::new();
        for event in events {
            let actor = event.actor.as_str();
            if !seen.insert(actor.to_lowercase()) {
                continue;
            }
            if actor.is_empty() {
                // An issue change the reconciler found: the tracker's lists do not say who.
                admission.ignored.push(
                    "an issue change found by polling names nobody who made it: context only"
                        .to_owned(),
                );
                continue;
            }
            let role = if actor.is_empty() {
                None
            } else {
                let key = RoleKey {
                    tracker: issue.tracker.clone(),
                    project: issue.project_id.clone(),
                    username: actor.to_owned(),
                };
                match self.roles.get(&key, Instant::now()) {
                    Some(role) => Some(role),
                    None => match tracker
                        .author_role_by_id(issue_ref, actor, event.actor_id)
                        .await
                    {
                        Ok(role) => {
                            self.roles.insert(key, role, Instant::now());
                            Some(role)
                        }
                        // A name the tracker cannot have is a definite answer: nobody.
                        Err(TrackerError::Validation(_)) => None,
                        Err(error) => {
                            return Err(RoleLookupFailed {
                                actor: actor.to_owned(),
                                error,
                            });
                        }
                    },
                }
            };
            admission.roles.insert(actor.to_lowercase(), role);
            match self
                .agent
                .engage_roles
                .decide(&issue.tracker, engage_visibility(issue), role)
            {
                EngageDecision::Engage => {
                    admission.admitted.insert(actor.to_lowercase());
                }
                EngageDecision::Ignore { reason } => {
                    admission.ignored.push(format!("@{actor}: {reason}"));
                }
            }
        }
        Ok(admission)
    }
}

/// Which engage policy applies to the issue's project. Only a project the webhooks said is private
/// gets the private policy: an internal project (any signed-in user of the instance can comment)
/// and one whose visibility is not known yet get the stricter public rule.
pub(crate) fn engage_visibility(issue: &relay_store::issues::IssueRow) -> Visibility {
    match issue
        .project_visibility
        .as_deref()
        .and_then(relay_core::ProjectVisibility::parse)
    {
        Some(relay_core::ProjectVisibility::Private) => Visibility::Private,
        _ => Visibility::Public,
    }
}
