//! What every action's validation shares: the state as the batch changes it
//! ([`Working`]), the text checks, and the limits.

use std::collections::{BTreeMap, BTreeSet};

use relay_core::action::{ActionBatch, Severity};

use crate::authority::Refusal;
use crate::context::ValidationContext;
use crate::keys::MARKER_PREFIX;
use crate::report::Failure;

/// Longest gap question, close note, evidence or finding synthesis, in characters.
pub const MAX_TEXT_CHARS: usize = 4_000;
/// Longest learning, in characters.
pub const MAX_LEARNING_CHARS: usize = 1_000;
/// Most sources of one finding.
pub const MAX_SOURCES_PER_FINDING: usize = 10;

/// The state as the batch changes it.
pub(crate) struct Working {
    /// number → (open, severity)
    pub gaps: BTreeMap<i32, (bool, Severity)>,
    pub added_blocking: usize,
    pub findings: BTreeSet<i32>,
    /// Live findings with a stale source (removing one in the batch takes it out of `findings`).
    pub stale: BTreeSet<i32>,
    pub added_findings: usize,
    /// Gaps this batch adds so far (they are open once applied).
    pub added_gaps: usize,
    /// Normalised question → where this batch first asks it.
    pub asked: BTreeMap<String, String>,
    /// Normalised (synthesis, sources) → where this batch first adds it.
    pub found: BTreeMap<(String, Vec<String>), String>,
    /// Findings removed anywhere in the batch, and stale ones: either may be added again
    /// (re-verified), so neither counts as a duplicate.
    pub replaced: BTreeSet<i32>,
}

impl Working {
    /// The state before `batch`.
    pub fn new(ctx: &ValidationContext, batch: &ActionBatch) -> Working {
        let replaced = batch
            .actions
            .iter()
            .filter_map(|a| match a {
                relay_core::action::Action::UpdateFindings(u) => Some(u.remove.iter().copied()),
                _ => None,
            })
            .flatten()
            .chain(ctx.stale_findings.iter().copied())
            .collect();
        Working {
            gaps: ctx
                .gaps
                .iter()
                .map(|g| (g.number, (g.open, g.severity)))
                .collect(),
            added_blocking: 0,
            findings: ctx.findings.iter().copied().collect(),
            stale: ctx.stale_findings.iter().copied().collect(),
            added_findings: 0,
            added_gaps: 0,
            asked: BTreeMap::new(),
            found: BTreeMap::new(),
            replaced,
        }
    }
}

/// Lower case with every run of whitespace one space, trimmed: how duplicates are compared.
pub fn normalise(text: &str) -> String {
    text.split_whitespace()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The failure line of a refused decision: on the action's id field (`note_id`,
/// `proceed_note_id`) or on its quote field.
pub(crate) fn refusal_line(at: &str, quote_field: &str, refusal: Refusal) -> Failure {
    let field = if refusal.on_id {
        refusal.id_field
    } else {
        quote_field.to_owned()
    };
    Failure::permanent(format!("{at}.{field}"), refusal.problem)
}

/// Non-empty, within `max` characters, and free of Relay's write marker.
pub(crate) fn check_text(failures: &mut Vec<Failure>, at: &str, text: &str, max: usize) {
    if text.trim().is_empty() {
        failures.push(Failure::permanent(at, "is empty"));
    }
    check_len(failures, at, text, max);
}

pub(crate) fn check_len(failures: &mut Vec<Failure>, at: &str, text: &str, max: usize) {
    let chars = text.chars().count();
    if chars > max {
        failures.push(Failure::permanent(
            at,
            format!("{chars} characters, at most {max}"),
        ));
    }
    if text.contains(MARKER_PREFIX) {
        failures.push(Failure::permanent(
            at,
            "contains Relay's reserved write marker",
        ));
    }
}

/// Quotes a model-supplied value for an error line, shortened so a huge value cannot flood it.
pub(crate) fn quoted(value: &str) -> String {
    const SHOWN: usize = 40;
    let short: String = value.chars().take(SHOWN).collect();
    if value.chars().count() > SHOWN {
        format!("{short:?}…")
    } else {
        format!("{short:?}")
    }
}
