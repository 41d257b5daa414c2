//! Who may make Relay act, decided per pending event (by the job's `admit` stage): events of
//! authors left out stay in the context, marked as context only, and the validator refuses any
//! decision that names one of their notes.

use std::collections::{HashMap, HashSet};

use relay_actions::{Authority, PendingNote};
use relay_agent::agent_settings::EngageRole;
use relay_core::AuthorRole;
use relay_store::issues::IssueEventRow;

use super::pending::PendingCommand;
use super::planning_input::Note;

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

    /// Records the role the tracker gave `actor` (`None`: none).
    pub fn set_role(&mut self, actor: &str, role: Option<AuthorRole>) {
        self.roles.insert(actor.to_lowercase(), role);
    }

    /// Lets `actor`'s events make Relay act.
    pub fn admit(&mut self, actor: &str) {
        self.admitted.insert(actor.to_lowercase());
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

    /// Whether any of `commands` comes from an admitted author.
    pub fn any_command(&self, commands: &[PendingCommand]) -> bool {
        commands.iter().any(|c| self.admits(&c.actor))
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
