//! Goals of a thorough query and the Critic's updates to them: applied in the order given, each
//! to the goal its id names; an update naming no goal is reported, never guessed at.

use serde::{Deserialize, Serialize};

/// Where a goal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GoalStatus {
    Pending,
    Satisfied,
    Partial,
    Unmet,
    Blocked,
}

/// One goal, with a stable id (`g1`, `g2`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Goal {
    pub id: String,
    pub description: String,
    /// 1 is most important.
    pub priority: u8,
    /// Ids of goals this one needs first.
    #[serde(default)]
    pub depends_on: Vec<String>,
    pub status: GoalStatus,
    /// Why it is blocked, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocked_reason: Option<String>,
}

/// One change the Critic asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GoalUpdate {
    /// A goal the stage revealed.
    New {
        id: String,
        description: String,
        priority: u8,
    },
    /// A sharper wording of a goal.
    Refined { id: String, description: String },
    /// No longer worth pursuing.
    Dropped {
        id: String,
        /// Why (the answer lists dropped goals with it).
        #[serde(default)]
        reason: Option<String>,
    },
    /// Cannot be pursued (e.g. the code is not in the repository).
    Blocked { id: String, reason: String },
}

impl GoalUpdate {
    fn id(&self) -> &str {
        match self {
            Self::New { id, .. }
            | Self::Refined { id, .. }
            | Self::Dropped { id, .. }
            | Self::Blocked { id, .. } => id,
        }
    }
}

/// An update that could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub update: GoalUpdate,
    pub why: &'static str,
}

/// A goal the Critic dropped: no longer pursued, but listed in the answer with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DroppedGoal {
    pub id: String,
    pub description: String,
    pub reason: Option<String>,
}

/// What applying a batch of updates did besides changing the goals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// Updates that could not be applied.
    pub rejected: Vec<Rejected>,
    /// Goals that left the list.
    pub dropped: Vec<DroppedGoal>,
}

/// Applies `updates` to `goals` in order. Dropped goals leave the list (and are returned); an
/// update of an unknown id, or a `new` whose id exists, is rejected and reported.
pub fn apply_updates(goals: &mut Vec<Goal>, updates: &[GoalUpdate]) -> Applied {
    let mut rejected = Vec::new();
    let mut dropped = Vec::new();
    for update in updates {
        let at = goals.iter().position(|g| g.id == update.id());
        match (update, at) {
            (
                GoalUpdate::New {
                    id,
                    description,
                    priority,
                },
                None,
            ) => goals.push(Goal {
                id: id.clone(),
                description: description.clone(),
                priority: *priority,
                depends_on: Vec::new(),
                status: GoalStatus::Pending,
                blocked_reason: None,
            }),
            (GoalUpdate::New { .. }, Some(_)) => rejected.push(Rejected {
                update: update.clone(),
                why: "a goal with this id exists",
            }),
            (_, None) => rejected.push(Rejected {
                update: update.clone(),
                why: "no goal has this id",
            }),
            (GoalUpdate::Refined { description, .. }, Some(at)) => {
                goals[at].description = description.clone();
            }
            (GoalUpdate::Dropped { reason, .. }, Some(at)) => {
                let goal = goals.remove(at);
                dropped.push(DroppedGoal {
                    id: goal.id,
                    description: goal.description,
                    reason: reason.clone().filter(|r| !r.trim().is_empty()),
                });
            }
            (GoalUpdate::Blocked { reason, .. }, Some(at)) => {
                goals[at].status = GoalStatus::Blocked;
                goals[at].blocked_reason = Some(reason.clone());
            }
        }
    }
    Applied { rejected, dropped }
}

/// Goals still to work on: pending, partial or unmet.
pub fn open_goals(goals: &[Goal]) -> impl Iterator<Item = &Goal> {
    goals.iter().filter(|g| {
        matches!(
            g.status,
            GoalStatus::Pending | GoalStatus::Partial | GoalStatus::Unmet
        )
    })
}

/// The targets a stage takes, in the order it takes them, and those it defers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Targets {
    /// Targets whose dependencies are settled, by priority (1 first; ties in the Navigator's order).
    pub taken: Vec<String>,
    /// Targets left for later, each with the open goals it waits for.
    pub deferred: Vec<Deferred>,
}

/// A target left for later.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Deferred {
    pub id: String,
    /// The goals it depends on that are still open.
    pub waits_for: Vec<String>,
}

impl Deferred {
    /// The line the next Navigator reads.
    pub fn explain(&self) -> String {
        format!(
            "{} was deferred: it depends on {}, still open; take that first",
            self.id,
            self.waits_for.join(", ")
        )
    }
}

/// Whether `status` still needs work (a dependency in it holds its dependants back): the goals
/// routing counts as open.
fn open(status: GoalStatus) -> bool {
    matches!(
        status,
        GoalStatus::Pending | GoalStatus::Partial | GoalStatus::Unmet
    )
}

/// Enforces the goals' order on the Navigator's `asked` targets: a target whose dependency is
/// still open is deferred; the rest are taken by priority. When every asked target waits, the
/// stage takes what they wait for instead (those of them that are ready), so the order moves on
/// rather than stalling. Ids naming no goal are dropped.
pub fn order_targets(goals: &[Goal], asked: &[String]) -> Targets {
    let find = |id: &str| goals.iter().find(|g| g.id == id);
    let waits_for = |goal: &Goal| -> Vec<String> {
        goal.depends_on
            .iter()
            .filter(|d| find(d).is_some_and(|dep| open(dep.status)))
            .cloned()
            .collect()
    };
    let mut targets = Targets::default();
    let mut ready: Vec<&Goal> = Vec::new();
    for id in asked {
        let Some(goal) = find(id) else { continue };
        if ready.iter().any(|g| g.id == goal.id) || targets.deferred.iter().any(|d| d.id == goal.id)
        {
            continue;
        }
        let waiting = waits_for(goal);
        if waiting.is_empty() {
            ready.push(goal);
        } else {
            targets.deferred.push(Deferred {
                id: goal.id.clone(),
                waits_for: waiting,
            });
        }
    }
    if ready.is_empty() {
        for deferred in &targets.deferred {
            for id in &deferred.waits_for {
                if let Some(dep) = find(id)
                    && waits_for(dep).is_empty()
                    && !ready.iter().any(|g| g.id == dep.id)
                {
                    ready.push(dep);
                }
            }
        }
    }
    ready.sort_by_key(|g| g.priority);
    targets.taken = ready.into_iter().map(|g| g.id.clone()).collect();
    targets
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ordered(id: &str, priority: u8, depends_on: &[&str], status: GoalStatus) -> Goal {
        Goal {
            id: id.into(),
            description: format!("goal {id}"),
            priority,
            depends_on: depends_on.iter().map(|d| (*d).to_owned()).collect(),
            status,
            blocked_reason: None,
        }
    }

    #[test]
    fn a_target_waiting_for_an_open_goal_is_deferred_and_the_rest_go_by_priority() {
        let goals = [
            ordered("g1", 2, &[], GoalStatus::Pending),
            ordered("g2", 1, &["g1"], GoalStatus::Pending),
            ordered("g3", 3, &[], GoalStatus::Pending),
            ordered("g4", 1, &[], GoalStatus::Satisfied),
            ordered("g5", 1, &["g4"], GoalStatus::Pending),
        ];
        let asked = ["g3", "g2", "g1", "g5", "nope"].map(String::from);
        let targets = order_targets(&goals, &asked);
        assert_eq!(
            targets.taken,
            ["g5", "g1", "g3"],
            "by priority; g5's dependency is satisfied"
        );
        assert_eq!(
            targets.deferred,
            [Deferred {
                id: "g2".into(),
                waits_for: vec!["g1".into()]
            }]
        );
        assert_eq!(
            targets.deferred[0].explain(),
            "g2 was deferred: it depends on g1, still open; take that first"
        );
    }

    #[test]
    fn when_every_target_waits_the_stage_takes_what_they_wait_for() {
        let goals = [
            ordered("g1", 3, &[], GoalStatus::Partial),
            ordered("g2", 1, &["g1"], GoalStatus::Pending),
            ordered("g3", 2, &["g2"], GoalStatus::Pending),
        ];
        let targets = order_targets(&goals, &["g2".into(), "g3".into()]);
        // g2 waits for g1 (ready: taken instead); g3 waits for g2 (not ready itself).
        assert_eq!(targets.taken, ["g1"]);
        assert_eq!(targets.deferred.len(), 2);
    }

    fn goal(id: &str) -> Goal {
        Goal {
            id: id.into(),
            description: format!("goal {id}"),
            priority: 1,
            depends_on: Vec::new(),
            status: GoalStatus::Pending,
            blocked_reason: None,
        }
    }

    #[test]
    fn updates_apply_in_order_by_id() {
        let mut goals = vec![goal("g1"), goal("g2"), goal("g3")];
        let updates = vec![
            GoalUpdate::Refined {
                id: "g2".into(),
                description: "where is the webhook stored".into(),
            },
            GoalUpdate::New {
                id: "g4".into(),
                description: "who drains the outbox".into(),
                priority: 2,
            },
            // In order: g4 exists by now, so this refines the new goal.
            GoalUpdate::Refined {
                id: "g4".into(),
                description: "who drains the outbox, and when".into(),
            },
            GoalUpdate::Dropped {
                id: "g1".into(),
                reason: Some("the question is about the gateway only".into()),
            },
            GoalUpdate::Blocked {
                id: "g3".into(),
                reason: "vendored code is not indexed".into(),
            },
            GoalUpdate::Dropped {
                id: "g1".into(),
                reason: None,
            },
            GoalUpdate::New {
                id: "g2".into(),
                description: "duplicate".into(),
                priority: 1,
            },
        ];
        let Applied { rejected, dropped } = apply_updates(&mut goals, &updates);
        assert_eq!(
            dropped
                .iter()
                .map(|d| (d.id.as_str(), d.reason.as_deref()))
                .collect::<Vec<_>>(),
            [("g1", Some("the question is about the gateway only"))]
        );
        let ids: Vec<&str> = goals.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["g2", "g3", "g4"]);
        assert_eq!(goals[0].description, "where is the webhook stored");
        assert_eq!(goals[2].description, "who drains the outbox, and when");
        assert_eq!(goals[1].status, GoalStatus::Blocked);
        assert_eq!(
            rejected.iter().map(|r| r.why).collect::<Vec<_>>(),
            ["no goal has this id", "a goal with this id exists"]
        );
        assert_eq!(
            open_goals(&goals)
                .map(|g| g.id.as_str())
                .collect::<Vec<_>>(),
            ["g2", "g4"]
        );
    }
}
