//! The configuration in effect as a list of keys, each with its value and origin (what the
//! status page, the API and `relay config check` show), and the words refusals use.

use super::file::Thoroughness;
use super::narrow::{EffectiveConfig, KeyInEffect, Origin};
use crate::roles::EngageRole;

pub(super) fn names(roles: &[EngageRole]) -> String {
    if roles.is_empty() {
        return "nobody".into();
    }
    roles
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn quoted(labels: &[String]) -> String {
    if labels.is_empty() {
        return "none".into();
    }
    labels
        .iter()
        .map(|l| format!("`{l}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Every key in effect, in the file's documented order.
pub(super) fn keys_of(config: &EffectiveConfig, from_repo: &[&str]) -> Vec<KeyInEffect> {
    let origin = |key: &str| {
        if from_repo.contains(&key) {
            Origin::Repository
        } else {
            Origin::Server
        }
    };
    let roles = |list: &[EngageRole]| {
        serde_json::json!(list.iter().map(|r| r.as_str()).collect::<Vec<_>>())
    };
    let cap_tokens = if config.issue_token_budget == 0 {
        serde_json::json!("none")
    } else {
        serde_json::json!(config.issue_token_budget)
    };
    let cap_usd = if config.issue_cost_budget_usd > 0.0 {
        serde_json::json!(config.issue_cost_budget_usd)
    } else {
        serde_json::json!("none")
    };
    let instructions = config.instructions.as_ref().map_or_else(
        || serde_json::json!(null),
        |text| serde_json::json!(format!("{} characters", text.chars().count())),
    );
    [
        ("instructions", instructions),
        ("guidance_files", serde_json::json!(config.guidance_files)),
        ("exclude", serde_json::json!(config.exclude)),
        (
            "thoroughness",
            serde_json::json!(config.thoroughness.map_or("medium", Thoroughness::as_str)),
        ),
        ("summary_comment", serde_json::json!(config.summary_comment)),
        ("engage.public", roles(&config.engage_public)),
        ("engage.private", roles(&config.engage_private)),
        ("labels.trigger", serde_json::json!(config.trigger_labels)),
        ("labels.opt_out", serde_json::json!(config.opt_out_labels)),
        ("budget.issue_tokens", cap_tokens),
        ("budget.issue_cost_usd", cap_usd),
        ("related", serde_json::json!(config.related)),
    ]
    .into_iter()
    .map(|(key, value)| KeyInEffect {
        key: key.to_owned(),
        value,
        origin: origin(key),
    })
    .collect()
}
