//! `relay config check PATH`: a checkout's `.relay.toml` validated locally, with the same
//! messages (file, line, key, why) and the same narrowing as a job applies, against this
//! server's configuration (`--config`), then the keys in effect with their origin.

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use relay_core::repo_config::{
    self, CONFIG_PATHS, EffectiveConfig, Origin, ServerPolicy, file::MAX_CONFIG_BYTES,
};

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// A checkout (its `.relay.toml`, `.github/relay.toml` or `.gitlab/relay.toml` is read) or
    /// the file itself.
    pub path: PathBuf,
    /// The configured tracker whose policy applies (default: the first configured).
    #[arg(long)]
    pub tracker: Option<String>,
}

pub fn run(config: Option<&Path>, args: &CheckArgs) -> anyhow::Result<()> {
    let loaded = crate::settings::load(config)?;
    let settings = &loaded.settings;
    let tracker = match &args.tracker {
        Some(name) => Some(
            settings
                .trackers
                .iter()
                .find(|t| t.name.as_str() == name)
                .with_context(|| format!("no tracker named {name:?} is configured"))?,
        ),
        None => settings.trackers.first(),
    };
    let roles = settings
        .agent
        .engage_roles
        .policy(tracker.map_or("", |t| t.name.as_str()));
    let policy = ServerPolicy {
        engage_public: roles.public,
        engage_private: roles.private,
        trigger_labels: tracker
            .map(|t| t.trigger_labels.clone())
            .unwrap_or_default(),
        issue_token_budget: settings.agent.issue_token_budget,
        issue_cost_budget_usd: settings.agent.issue_cost_budget_usd,
        summary_comment: settings.agent.summary_comment,
        related_repositories: settings.agent.related_repositories,
    };
    let (root, file) = locate(&args.path)?;
    let effective = match &file {
        None => repo_config::effective(&policy, "working tree", None),
        Some(rel) => {
            let raw = read_bounded(&root.join(rel))?;
            let parsed = repo_config::parse(rel, &raw);
            repo_config::effective(&policy, "working tree", Some((rel, &raw, parsed)))
        }
    };
    print!("{}", render(&effective, &root));
    print!(
        "{}",
        render_related(&effective, tracker, settings.agent.related_repositories)
    );
    if effective.errors.is_empty() && effective.refused.is_empty() {
        Ok(())
    } else {
        anyhow::bail!(
            "{} error(s), {} refused key(s)",
            effective.errors.len(),
            effective.refused.len()
        )
    }
}

/// The checkout root and the configuration file in it (relative), if any.
fn locate(path: &Path) -> anyhow::Result<(PathBuf, Option<String>)> {
    if path.is_file() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .context("not a file name")?;
        let root = path
            .parent()
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        return Ok((root, Some(name)));
    }
    anyhow::ensure!(
        path.is_dir(),
        "{} is neither a checkout nor a file",
        path.display()
    );
    let found = CONFIG_PATHS
        .iter()
        .find(|rel| path.join(rel).is_file())
        .map(|rel| (*rel).to_owned());
    Ok((path.to_path_buf(), found))
}

/// The file's text, reading at most one byte past the bound (the parser reports the size).
fn read_bounded(path: &Path) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .with_context(|| format!("failed to open {}", path.display()))?
        .take(MAX_CONFIG_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("failed to read {}", path.display()))?;
    String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8", path.display()))
}

/// The related repositories the file names, each with what can be judged without the tracker
/// (the rest — readable, not more private — is judged by each job and shown on the project page).
fn render_related(
    effective: &EffectiveConfig,
    tracker: Option<&relay_core::TrackerSettings>,
    enabled: bool,
) -> String {
    use relay_core::related::{self, Admission, RelatedPolicy, Verdict};
    let mut out = String::new();
    if effective.related.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "
related repositories:"
    );
    let policy = RelatedPolicy {
        enabled,
        own_path: "",
        issue_visibility: None,
    };
    let mut judged: Vec<Admission> = Vec::new();
    for request in related::requests(&effective.related, &[]) {
        let refusal = related::precheck(&policy, &request, &judged, |path| {
            tracker.is_none_or(|t| t.allows_project("", path))
        });
        let _ = match &refusal {
            Some(refusal) => writeln!(out, "  {:<32} refused: {refusal}", request.path),
            None => writeln!(
                out,
                "  {:<32} asked of the tracker at each job (readable, not more private than this repository)",
                request.path
            ),
        };
        // Counted as looked up, as a job would, so the ninth is refused here too.
        let verdict = match refusal {
            Some(refusal) => Verdict::Refused(refusal),
            None => Verdict::Admitted {
                project_id: String::new(),
                visibility: relay_core::ProjectVisibility::Public,
            },
        };
        judged.push(Admission { request, verdict });
    }
    out
}

/// What a person reads: the problems first, then every key with its origin.
pub fn render(effective: &EffectiveConfig, root: &Path) -> String {
    let mut out = String::new();
    match &effective.file {
        Some(file) => {
            let _ = writeln!(out, "{file}: read");
        }
        None if effective.errors.is_empty() => {
            let _ = writeln!(out, "no .relay.toml: the server's settings apply");
        }
        None => {}
    }
    for problem in &effective.errors {
        let _ = writeln!(out, "error: {problem}");
    }
    if !effective.errors.is_empty() {
        let _ = writeln!(out, "the file cannot be used: the server's settings apply");
    }
    for problem in &effective.refused {
        let _ = writeln!(out, "refused: {problem}");
    }
    let _ = writeln!(out, "\nin effect:");
    for key in &effective.keys {
        let origin = match key.origin {
            Origin::Repository => "repository",
            Origin::Server => "server",
        };
        let _ = writeln!(out, "  {:<24} {:<11} {}", key.key, origin, key.value);
    }
    let present: Vec<&String> = effective
        .guidance_files
        .iter()
        .filter(|p| root.join(p).is_file())
        .collect();
    if !present.is_empty() {
        let _ = writeln!(
            out,
            "\nguidance files: {}",
            present
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkout_file_is_checked_with_located_messages() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".relay.toml"),
            "exclude = [\"vendor/\"]\n[budget]\nissue_tokens = 9000000\n",
        )
        .unwrap();
        let (root, file) = locate(dir.path()).unwrap();
        assert_eq!(file.as_deref(), Some(".relay.toml"));
        let raw = read_bounded(&root.join(".relay.toml")).unwrap();
        let policy = ServerPolicy {
            engage_public: vec![],
            engage_private: vec![],
            trigger_labels: vec![],
            issue_token_budget: 500_000,
            issue_cost_budget_usd: 0.0,
            summary_comment: true,
            related_repositories: true,
        };
        let effective = repo_config::effective(
            &policy,
            "working tree",
            Some((".relay.toml", &raw, repo_config::parse(".relay.toml", &raw))),
        );
        let text = render(&effective, &root);
        assert!(text.contains("refused: .relay.toml:3: `budget.issue_tokens`: 9000000 tokens would raise the server's cap of 500000 tokens per issue (not applied)"), "{text}");
        assert!(text.contains("exclude"), "{text}");
    }

    #[test]
    fn the_readme_example_file_is_valid_and_only_narrows_the_defaults() {
        let readme = include_str!("../../../../README.md");
        let start = readme
            .find("# .relay.toml\n")
            .expect("the README's example file");
        let example = &readme[start..];
        let example = &example[..example.find("```").unwrap()];
        let agent = relay_agent::agent_settings::AgentSettings::default();
        let roles = agent.engage_roles.policy("github");
        let policy = ServerPolicy {
            engage_public: roles.public,
            engage_private: roles.private,
            trigger_labels: vec!["relay".into()],
            issue_token_budget: agent.issue_token_budget,
            issue_cost_budget_usd: agent.issue_cost_budget_usd,
            summary_comment: agent.summary_comment,
            related_repositories: agent.related_repositories,
        };
        let parsed = repo_config::parse(".relay.toml", example);
        let effective =
            repo_config::effective(&policy, "c", Some((".relay.toml", example, parsed)));
        assert!(effective.errors.is_empty(), "{:?}", effective.errors);
        assert!(effective.refused.is_empty(), "{:?}", effective.refused);
        assert_eq!(effective.exclude.len(), 5);
        assert_eq!(effective.issue_token_budget, 200_000);
    }
}
