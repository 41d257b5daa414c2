//! The repository's `.relay.toml` at a checkout's commit: read through git (never through the
//! working tree, so a symlink is its target's name, not its target), parsed, narrowed by the
//! server's settings, and recorded per repository for the status page and the API. Used by every
//! `process_issue` job (at its snapshot's commit) and by `update_checkout` on every push.

use std::sync::Arc;

use relay_agent::agent_settings::AgentSettings;
use relay_core::TrackerSettings;
use relay_core::repo_config::file::MAX_CONFIG_BYTES;
use relay_core::repo_config::{
    self, CONFIG_PATHS, ConfigProblem, EffectiveConfig, ExcludeSet, GuidanceText, ServerPolicy,
};
use relay_repo::{RepoManager, RepoSpec};
use relay_store::PgPool;
use serde_json::json;

/// A repository's configuration at one commit, ready to use.
#[derive(Debug, Clone, Default)]
pub struct LoadedConfig {
    pub effective: EffectiveConfig,
    /// Instructions and guidance files, bounded, with their origin.
    pub guidance: GuidanceText,
    /// The `exclude` globs, compiled.
    pub excludes: Arc<ExcludeSet>,
    /// The configuration file's text as read (within `MAX_CONFIG_BYTES`), recorded so the read
    /// API can narrow it by the server's settings as they run then.
    pub file_text: Option<String>,
}

impl LoadedConfig {
    /// The server's settings whole (no file, or none could be read).
    pub fn server_only(policy: &ServerPolicy, commit: &str) -> LoadedConfig {
        LoadedConfig {
            effective: repo_config::effective(policy, commit, None),
            guidance: GuidanceText::default(),
            excludes: Arc::default(),
            file_text: None,
        }
    }
}

/// The server's policy for a repository of `tracker`.
pub fn server_policy(agent: &AgentSettings, tracker: &TrackerSettings) -> ServerPolicy {
    let roles = agent.engage_roles.policy(tracker.name.as_str());
    ServerPolicy {
        engage_public: roles.public,
        engage_private: roles.private,
        trigger_labels: tracker.trigger_labels.clone(),
        issue_token_budget: agent.issue_token_budget,
        issue_cost_budget_usd: agent.issue_cost_budget_usd,
        summary_comment: agent.summary_comment,
        related_repositories: agent.related_repositories,
    }
}

/// Reads the configuration at `commit` (a synced commit of `spec`). Never fails: a file that
/// cannot be read or used falls back to the server's settings, with the reason in
/// `effective.errors`.
pub async fn load(
    repos: &RepoManager,
    spec: &RepoSpec,
    commit: &str,
    policy: &ServerPolicy,
) -> LoadedConfig {
    let wanted: Vec<String> = CONFIG_PATHS
        .iter()
        .chain(repo_config::DEFAULT_GUIDANCE_FILES.iter())
        .map(|p| (*p).to_owned())
        .collect();
    let mut texts = match repos.files_at(spec, commit, &wanted).await {
        Ok(texts) => texts,
        Err(error) => {
            let mut loaded = LoadedConfig::server_only(policy, commit);
            loaded.effective.errors.push(ConfigProblem {
                file: CONFIG_PATHS[0].to_owned(),
                line: None,
                key: None,
                why: format!(
                    "the repository's configuration could not be read at {commit}: {error}"
                ),
            });
            return loaded;
        }
    };
    let present: Vec<(&str, String)> = CONFIG_PATHS
        .iter()
        .filter_map(|path| Some((*path, texts.get(*path)?.clone()?)))
        .collect();
    let mut effective = match present.first() {
        None => repo_config::effective(policy, commit, None),
        Some((path, raw)) => {
            let parsed = repo_config::parse(path, raw);
            repo_config::effective(policy, commit, Some((path, raw, parsed)))
        }
    };
    effective.ignored_files = present
        .iter()
        .skip(1)
        .map(|(path, _)| (*path).to_owned())
        .collect();
    // Guidance files the file names beyond the defaults read in.
    let missing: Vec<String> = effective
        .guidance_files
        .iter()
        .filter(|path| !texts.contains_key(*path))
        .cloned()
        .collect();
    if !missing.is_empty() {
        match repos.files_at(spec, commit, &missing).await {
            Ok(more) => texts.extend(more),
            Err(error) => tracing::warn!(
                error.message = %error,
                "guidance files could not be read; the planner goes without them"
            ),
        }
    }
    // Validated by `parse`; a file whose patterns did not compile never gets here.
    let excludes = ExcludeSet::new(&effective.exclude).unwrap_or_default();
    // An excluded path reaches no prompt, a guidance file included (`CLAUDE.md` in `exclude`
    // keeps it from the planner as from the code tools).
    let files: Vec<(String, String)> = effective
        .guidance_files
        .iter()
        .filter(|path| !excludes.is_excluded(path, false))
        .filter_map(|path| Some((path.clone(), texts.get(path)?.clone()?)))
        .collect();
    let instructions = effective
        .instructions
        .as_deref()
        .zip(effective.file.as_deref())
        .map(|(text, file)| (file, text));
    let guidance = GuidanceText::bound(commit, instructions, &files);
    // Over the bound, the file's only effect is its error, which the record keeps.
    let file_text = present
        .first()
        .map(|(_, raw)| raw)
        .filter(|raw| raw.len() <= MAX_CONFIG_BYTES)
        .cloned();
    LoadedConfig {
        effective,
        guidance,
        excludes: Arc::new(excludes),
        file_text,
    }
}

/// Records the configuration in effect for the repository; the first time a commit's file has
/// errors (or refused widenings), they are logged once.
pub async fn record(
    pool: &PgPool,
    tracker: &str,
    project_id: &str,
    project_path: &str,
    loaded: &LoadedConfig,
) {
    let effective = serde_json::to_value(&loaded.effective).unwrap_or_default();
    let guidance: Vec<_> = loaded
        .guidance
        .docs
        .iter()
        .map(|doc| {
            json!({
                "origin": doc.origin,
                "commit": doc.commit,
                "chars": doc.text.chars().count(),
                "truncated": doc.truncated,
            })
        })
        .collect();
    let guidance = json!(guidance);
    let digest = (!loaded.guidance.is_empty()).then(|| loaded.guidance.digest());
    let config = &loaded.effective;
    let outcome = async {
        let mut conn = pool.acquire().await?;
        relay_store::repo_configs::record(
            &mut conn,
            &relay_store::repo_configs::NewRepoConfig {
                tracker,
                project_id,
                project_path,
                commit_sha: &config.commit,
                effective: &effective,
                guidance: &guidance,
                guidance_digest: digest.as_deref(),
                has_errors: !config.errors.is_empty(),
                file_text: loaded.file_text.as_deref(),
            },
        )
        .await
    }
    .await;
    match outcome {
        Ok(true) => {
            for problem in &config.errors {
                tracing::warn!(
                    repo.path = %project_path,
                    commit = %config.commit,
                    problem = %problem,
                    "repository configuration unusable; the server's settings apply"
                );
            }
            for problem in &config.refused {
                tracing::warn!(
                    repo.path = %project_path,
                    commit = %config.commit,
                    problem = %problem,
                    "repository configuration tried to widen the server's settings; refused"
                );
            }
        }
        Ok(false) => {}
        Err(error) => tracing::warn!(
            error.message = %error,
            "failed to record the repository's configuration"
        ),
    }
}
