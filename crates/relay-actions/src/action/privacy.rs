//! Related repositories' privacy: nothing the batch writes may show, or point into, a repository
//! more private than the issue's (public < internal < private; a confidential issue is private),
//! even a related one. What the batch writes is read by everyone who can read the issue.

use relay_core::ProjectVisibility;

use crate::context::ValidationContext;
use crate::report::Failure;

pub use relay_core::related::privacy_rank;

/// The related repositories more private than the issue, with their visibility.
fn hidden(ctx: &ValidationContext) -> Vec<(&str, ProjectVisibility)> {
    ctx.snapshot
        .as_ref()
        .map(|snapshot| hidden_in(snapshot, ctx.visibility))
        .unwrap_or_default()
}

/// The related repositories of `snapshot` more private than an issue of `issue` visibility.
pub fn hidden_in(
    snapshot: &crate::context::Snapshot,
    issue: ProjectVisibility,
) -> Vec<(&str, ProjectVisibility)> {
    snapshot
        .related
        .iter()
        .filter(|related| !relay_core::related::may_quote(related.visibility, issue))
        .map(|related| (related.label.as_str(), related.visibility))
        .collect()
}

fn refusal(
    ctx: &ValidationContext,
    at: &str,
    label: &str,
    visibility: ProjectVisibility,
) -> Failure {
    Failure::permanent(
        at,
        format!(
            "names a place in {label}, a {} repository, on a {} issue: leave its code out of what is written here",
            visibility.as_str(),
            ctx.visibility.as_str()
        ),
    )
}

/// Refuses `text` (at `at`) when it names a place (`label:path`) of a repository more private
/// than the issue. `true` when it was refused.
pub(crate) fn check_text_places(
    ctx: &ValidationContext,
    failures: &mut Vec<Failure>,
    at: &str,
    text: &str,
) -> bool {
    for (label, visibility) in hidden(ctx) {
        if relay_tools::place::names_place_of(text, label) {
            failures.push(refusal(ctx, at, label, visibility));
            return true;
        }
    }
    false
}

/// Refuses a cited `path` (at `at`) in a repository more private than the issue. `true` when it
/// was refused (the source is then not verified: nothing of that repository is read for it).
pub(crate) fn check_source_place(
    ctx: &ValidationContext,
    failures: &mut Vec<Failure>,
    at: &str,
    path: &str,
) -> bool {
    let hidden = hidden(ctx);
    let labels: Vec<&str> = hidden.iter().map(|(label, _)| *label).collect();
    let Some(label) = relay_tools::place::split_place(&labels, path.trim()).label else {
        // A differently-cased label is still that repository.
        return check_text_places(ctx, failures, at, path.trim());
    };
    let visibility = hidden
        .iter()
        .find(|(known, _)| *known == label)
        .map_or(ProjectVisibility::Private, |(_, visibility)| *visibility);
    failures.push(refusal(ctx, at, label, visibility));
    true
}
