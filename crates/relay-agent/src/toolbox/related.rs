//! The toolbox's related repositories: their tool contexts (one job budget with the issue's
//! own), the `repo` argument the code tools gain, and the routing of a call to the checkout it
//! names (by `repo`, or by a `label:` place in `path` or in glob's `pattern`).

use std::path::PathBuf;
use std::sync::Arc;

use relay_core::repo_config::ExcludeSet;
use relay_tools::place::{label_like_prefix, split_place};
use relay_tools::{NotRelated, ToolContext, ToolName};
use serde_json::Value;

use super::ToolboxError;
use crate::llm::ToolDefinition;

/// Most related repositories one toolbox explores (each is a checkout on disk and a line in
/// every code tool's description).
pub const MAX_RELATED_REPOSITORIES: usize = 8;

/// The argument that picks a related repository; removed before the tool sees the arguments.
pub const REPO_ARGUMENT: &str = "repo";

/// One related repository's checkout, as the worker hands it over.
#[derive(Debug, Clone)]
pub struct RelatedCheckout {
    /// The repository's tracker path (`acme/sdk`, GitLab `group/sub/project`): its paths are
    /// written `label:path`.
    pub label: String,
    /// The checkout's root directory.
    pub root: PathBuf,
    /// The paths that repository's configuration excludes.
    pub excludes: Arc<ExcludeSet>,
    /// Its git history at the checked-out commit (`None`: `history` cannot answer there).
    pub history: Option<relay_tools::GitHistory>,
}

/// A related repository's tool context.
#[derive(Debug, Clone)]
pub(super) struct RelatedContext {
    pub label: String,
    pub context: ToolContext,
}

/// The contexts of `related`, each sharing `primary`'s job state (one budget for the job).
pub(super) fn contexts(
    primary: &ToolContext,
    related: Vec<RelatedCheckout>,
) -> Result<Vec<RelatedContext>, ToolboxError> {
    if related.len() > MAX_RELATED_REPOSITORIES {
        return Err(ToolboxError::Related {
            label: related
                .get(MAX_RELATED_REPOSITORIES)
                .map(|r| r.label.clone())
                .unwrap_or_default(),
            reason: format!("at most {MAX_RELATED_REPOSITORIES} related repositories"),
        });
    }
    let mut contexts: Vec<RelatedContext> = Vec::with_capacity(related.len());
    for checkout in related {
        let refuse = |reason: &str| ToolboxError::Related {
            label: relay_tools::sandbox::display_input(&checkout.label),
            reason: reason.to_owned(),
        };
        if !relay_tools::place::is_label(&checkout.label) {
            return Err(refuse(
                "not a repository path (`owner/name`, `group/sub/project`)",
            ));
        }
        if contexts.iter().any(|c| c.label == checkout.label) {
            return Err(refuse("named twice"));
        }
        let mut context = primary
            .related_checkout(&checkout.label, &checkout.root)?
            .with_excludes(checkout.excludes);
        if let Some(history) = checkout.history {
            context = context.with_history(history);
        }
        contexts.push(RelatedContext {
            label: checkout.label,
            context,
        });
    }
    Ok(contexts)
}

/// Whether the code tool `name` works over a checkout (and so can look in a related one).
pub(super) fn is_code_tool(name: &str) -> bool {
    name.parse::<ToolName>()
        .is_ok_and(|tool| tool != ToolName::Codegraph)
}

/// A code tool's definition offering the related repositories: the optional `repo` argument
/// and a description that names them.
pub(super) fn offer_related(mut definition: ToolDefinition, labels: &[&str]) -> ToolDefinition {
    let list = labels.join(", ");
    let first = labels.first().copied().unwrap_or("owner/name");
    if let Some(properties) = definition
        .parameters
        .get_mut("properties")
        .and_then(Value::as_object_mut)
    {
        properties.insert(
            REPO_ARGUMENT.to_owned(),
            serde_json::json!({
                "type": "string",
                "description": format!(
                    "The repository to look in: one of the related repositories {list} (default: the issue's own repository)."
                ),
            }),
        );
    }
    definition.description.push_str(&format!(
        " Related repositories: {list}. To look in one, pass `repo` (or write the path as a place, \
`{first}:path`); its paths are shown, and cited, as `{first}:path`. Without either, the tool \
looks in the issue's own repository."
    ));
    definition
}

/// Takes the `repo` argument out of a code tool call's JSON arguments: `Ok(None)` when absent,
/// null or empty; arguments that are not a JSON object are left for the schema check.
pub(super) fn take_repo(arguments: &str) -> Result<(String, Option<String>), String> {
    let Ok(Value::Object(mut object)) = serde_json::from_str::<Value>(arguments) else {
        return Ok((arguments.to_owned(), None));
    };
    let repo = match object.remove(REPO_ARGUMENT) {
        None | Some(Value::Null) => None,
        Some(Value::String(repo)) if repo.trim().is_empty() => None,
        Some(Value::String(repo)) => Some(repo.trim().to_owned()),
        Some(_) => return Err(format!("`{REPO_ARGUMENT}` must be a string")),
    };
    Ok((Value::Object(object).to_string(), repo))
}

/// The refusal of a repository that was not admitted, as a FAILED line: nothing was read, and
/// no retry with the same repository can succeed.
fn failed(refusal: NotRelated) -> String {
    format!("FAILED: {refusal}")
}

/// Which repository a call looks in: `None` for the issue's own, `Some(i)` for `related[i]`.
/// A `repo`, or a `path` (glob's `pattern`) written `label:…`, names it; a name that is not a
/// related repository's is refused with [`NotRelated`]'s text, and so are two that disagree.
pub(super) fn route(
    related: &[RelatedContext],
    tool: &str,
    repo: Option<&str>,
    arguments: &Value,
) -> Result<Option<usize>, String> {
    let labels: Vec<&str> = related.iter().map(|r| r.label.as_str()).collect();
    let index_of = |label: &str| labels.iter().position(|known| *known == label);
    let mut chosen: Option<(usize, String)> = None;
    if let Some(repo) = repo {
        let index = index_of(repo).ok_or_else(|| failed(NotRelated::new(repo, &labels)))?;
        chosen = Some((index, format!("`{REPO_ARGUMENT}` {repo}")));
    }
    let mut fields = vec!["path"];
    if tool == ToolName::Glob.as_str() {
        fields.push("pattern");
    }
    for field in fields {
        let Some(value) = arguments.get(field).and_then(Value::as_str) else {
            continue;
        };
        let value = value.trim_start();
        let index = match split_place(&labels, value).label {
            Some(label) => index_of(label),
            None => match label_like_prefix(value) {
                Some(prefix) => return Err(failed(NotRelated::new(prefix, &labels))),
                None => continue,
            },
        };
        let Some(index) = index else { continue };
        match &chosen {
            Some((other, by)) if *other != index => {
                return Err(format!(
                    "{by} and `{field}` name different repositories ({} and {}); name one",
                    labels[*other], labels[index]
                ));
            }
            _ => chosen = Some((index, format!("`{field}`"))),
        }
    }
    Ok(chosen.map(|(index, _)| index))
}
