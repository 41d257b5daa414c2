//! The configuration in effect for one repository at one commit: the server's policy narrowed
//! by the repository's file, each key with where it came from, each refused widening reported.

use serde::{Deserialize, Serialize};

use super::file::{DEFAULT_GUIDANCE_FILES, RepoConfigFile, Thoroughness};
use super::keys::{keys_of, names, quoted};
use super::parse::{ConfigProblem, ParsedFile, locate};
use crate::roles::EngageRole;

/// What the server allows, the bound every repository key is checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerPolicy {
    /// `[agent.engage_roles]` of the repository's tracker.
    pub engage_public: Vec<EngageRole>,
    pub engage_private: Vec<EngageRole>,
    /// The tracker's `trigger_labels`.
    pub trigger_labels: Vec<String>,
    /// `[agent] issue_token_budget` (0: no cap).
    pub issue_token_budget: u64,
    /// `[agent] issue_cost_budget_usd` (0: no cap).
    pub issue_cost_budget_usd: f64,
    /// `[agent] summary_comment`.
    pub summary_comment: bool,
    /// `[agent] related_repositories`: whether a repository may name related repositories.
    pub related_repositories: bool,
}

/// Where a key's value in effect came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Server,
    Repository,
}

/// One key of the configuration in effect, as the status page and the API show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyInEffect {
    pub key: String,
    pub value: serde_json::Value,
    pub origin: Origin,
}

/// The configuration in effect for a repository at `commit`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EffectiveConfig {
    /// The commit the file was read at.
    pub commit: String,
    /// The file read (`None`: none exists, or it could not be used).
    pub file: Option<String>,
    pub instructions: Option<String>,
    /// The guidance files to read (those present are shown).
    pub guidance_files: Vec<String>,
    pub exclude: Vec<String>,
    pub thoroughness: Option<Thoroughness>,
    pub summary_comment: bool,
    pub engage_public: Vec<EngageRole>,
    pub engage_private: Vec<EngageRole>,
    pub trigger_labels: Vec<String>,
    pub opt_out_labels: Vec<String>,
    /// Tokens per issue (0: no cap).
    pub issue_token_budget: u64,
    /// Dollars per issue (0: no cap).
    pub issue_cost_budget_usd: f64,
    /// The related repositories the file names: requests, judged by each job
    /// (`crate::related`), never admitted here.
    #[serde(default)]
    pub related: Vec<String>,
    /// Every key with its value and origin.
    pub keys: Vec<KeyInEffect>,
    /// Widening attempts: reported, not applied.
    pub refused: Vec<ConfigProblem>,
    /// Why the file could not be used (then every key is the server's).
    pub errors: Vec<ConfigProblem>,
    /// Other configuration files present and ignored (only the first is read).
    pub ignored_files: Vec<String>,
}

impl EffectiveConfig {
    /// Whether any issue carries a label of `labels` that keeps Relay silent.
    pub fn opted_out(&self, labels: &[String]) -> Option<String> {
        labels
            .iter()
            .find(|label| {
                self.opt_out_labels
                    .iter()
                    .any(|o| o.eq_ignore_ascii_case(label))
            })
            .cloned()
    }

    /// Whether `label` (on the issue) may engage Relay here.
    pub fn triggers_on(&self, label: &str) -> bool {
        self.trigger_labels
            .iter()
            .any(|t| t.eq_ignore_ascii_case(label))
    }

    /// The roles that may engage Relay on a project of this visibility.
    pub fn engage_roles(&self, private: bool) -> &[EngageRole] {
        if private {
            &self.engage_private
        } else {
            &self.engage_public
        }
    }
}

/// The file as read: its path and text, or the problems that made it unusable.
pub type FileOutcome<'a> = Option<(&'a str, &'a str, Result<ParsedFile, Vec<ConfigProblem>>)>;

/// The configuration in effect at `commit`: `file` is the configuration file found (its path,
/// its text, and what parsing made of it), `None` when the repository has none.
pub fn effective(server: &ServerPolicy, commit: &str, file: FileOutcome<'_>) -> EffectiveConfig {
    let mut config = EffectiveConfig {
        commit: commit.to_owned(),
        file: None,
        instructions: None,
        guidance_files: DEFAULT_GUIDANCE_FILES.map(str::to_owned).to_vec(),
        exclude: Vec::new(),
        thoroughness: None,
        summary_comment: server.summary_comment,
        engage_public: server.engage_public.clone(),
        engage_private: server.engage_private.clone(),
        trigger_labels: server.trigger_labels.clone(),
        opt_out_labels: Vec::new(),
        issue_token_budget: server.issue_token_budget,
        issue_cost_budget_usd: server.issue_cost_budget_usd,
        related: Vec::new(),
        keys: Vec::new(),
        refused: Vec::new(),
        errors: Vec::new(),
        ignored_files: Vec::new(),
    };
    let mut from_repo: Vec<&str> = Vec::new();
    match file {
        None => {}
        Some((_, _, Err(problems))) => config.errors = problems,
        Some((path, raw, Ok(parsed))) => {
            config.file = Some(path.to_owned());
            config.refused = parsed.refused;
            apply(
                server,
                &parsed.file,
                &mut config,
                &mut from_repo,
                &Refuser { path, raw },
            );
        }
    }
    config.keys = keys_of(&config, &from_repo);
    config
}

/// Builds refusals located in the file.
struct Refuser<'a> {
    path: &'a str,
    raw: &'a str,
}

impl Refuser<'_> {
    fn refuse(&self, key: &str, why: String) -> ConfigProblem {
        ConfigProblem {
            file: self.path.to_owned(),
            line: locate(self.raw, key),
            key: Some(key.to_owned()),
            why,
        }
    }
}

fn apply(
    server: &ServerPolicy,
    file: &RepoConfigFile,
    config: &mut EffectiveConfig,
    from_repo: &mut Vec<&str>,
    refuser: &Refuser<'_>,
) {
    if let Some(text) = &file.instructions {
        config.instructions = Some(text.clone());
        from_repo.push("instructions");
    }
    if let Some(files) = &file.guidance_files {
        config.guidance_files = files.clone();
        from_repo.push("guidance_files");
    }
    if !file.exclude.is_empty() {
        config.exclude = file.exclude.clone();
        from_repo.push("exclude");
    }
    if let Some(thoroughness) = file.thoroughness {
        config.thoroughness = Some(thoroughness);
        from_repo.push("thoroughness");
    }
    if let Some(on) = file.summary_comment {
        if on && !server.summary_comment {
            config.refused.push(refuser.refuse(
                "summary_comment",
                "the server has the summary comment off; a repository can only turn it off (not applied)".into(),
            ));
        } else {
            config.summary_comment = on;
            from_repo.push("summary_comment");
        }
    }
    if let Some(engage) = &file.engage {
        let sides = [
            ("engage.public", &engage.public, &server.engage_public),
            ("engage.private", &engage.private, &server.engage_private),
        ];
        for (key, wanted, allowed) in sides {
            let Some(wanted) = wanted else { continue };
            let (kept, widened): (Vec<EngageRole>, Vec<EngageRole>) =
                wanted.iter().partition(|role| role.within(allowed));
            if !widened.is_empty() {
                config.refused.push(refuser.refuse(
                    key,
                    format!(
                        "{} may not engage Relay under the server's policy ({}); a repository cannot add roles (not applied)",
                        names(&widened),
                        names(allowed)
                    ),
                ));
            }
            if key == "engage.public" {
                config.engage_public = kept;
                from_repo.push("engage.public");
            } else {
                config.engage_private = kept;
                from_repo.push("engage.private");
            }
        }
    }
    if let Some(labels) = &file.labels {
        if let Some(trigger) = &labels.trigger {
            let (kept, widened): (Vec<String>, Vec<String>) =
                trigger.iter().cloned().partition(|l| {
                    server
                        .trigger_labels
                        .iter()
                        .any(|s| s.eq_ignore_ascii_case(l))
                });
            if !widened.is_empty() {
                config.refused.push(refuser.refuse(
                    "labels.trigger",
                    format!(
                        "{} {} not among the server's trigger labels ({}); a repository cannot add trigger labels (not applied)",
                        quoted(&widened),
                        if widened.len() == 1 { "is" } else { "are" },
                        quoted(&server.trigger_labels)
                    ),
                ));
            }
            config.trigger_labels = kept;
            from_repo.push("labels.trigger");
        }
        if !labels.opt_out.is_empty() {
            config.opt_out_labels = labels.opt_out.clone();
            from_repo.push("labels.opt_out");
        }
    }
    if !file.related.is_empty() {
        if server.related_repositories {
            config.related = file.related.clone();
            from_repo.push("related");
        } else {
            config.refused.push(refuser.refuse(
                "related",
                "the server has related repositories turned off ([agent] related_repositories = false) (not applied)".into(),
            ));
        }
    }
    if let Some(budget) = &file.budget {
        if let Some(tokens) = budget.issue_tokens {
            match narrower(server.issue_token_budget as f64, tokens as f64) {
                Ok(()) => {
                    config.issue_token_budget = tokens;
                    from_repo.push("budget.issue_tokens");
                }
                Err(()) => config.refused.push(refuser.refuse(
                    "budget.issue_tokens",
                    if tokens == 0 {
                        format!("0 would remove the server's cap of {} tokens per issue (not applied)", server.issue_token_budget)
                    } else {
                        format!(
                            "{tokens} tokens would raise the server's cap of {} tokens per issue (not applied)",
                            server.issue_token_budget
                        )
                    },
                )),
            }
        }
        if let Some(usd) = budget.issue_cost_usd {
            match narrower(server.issue_cost_budget_usd, usd) {
                Ok(()) => {
                    config.issue_cost_budget_usd = usd;
                    from_repo.push("budget.issue_cost_usd");
                }
                Err(()) => config.refused.push(refuser.refuse(
                    "budget.issue_cost_usd",
                    format!(
                        "${usd} would raise or remove the server's cap of ${} per issue (not applied)",
                        server.issue_cost_budget_usd
                    ),
                )),
            }
        }
    }
}

/// A cap `wanted` narrows `server` (0 is "no cap" on both sides).
fn narrower(server: f64, wanted: f64) -> Result<(), ()> {
    let server_capped = server > 0.0;
    let wanted_capped = wanted > 0.0;
    match (server_capped, wanted_capped) {
        (false, _) => Ok(()),
        (true, false) => Err(()),
        (true, true) if wanted <= server => Ok(()),
        (true, true) => Err(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repo_config::parse::parse;

    fn server() -> ServerPolicy {
        ServerPolicy {
            engage_public: vec![
                EngageRole::Owner,
                EngageRole::Member,
                EngageRole::Collaborator,
            ],
            engage_private: vec![EngageRole::Anyone],
            trigger_labels: vec!["relay".into(), "bug".into()],
            issue_token_budget: 500_000,
            issue_cost_budget_usd: 0.0,
            summary_comment: true,
            related_repositories: true,
        }
    }

    fn from(raw: &str) -> EffectiveConfig {
        effective(
            &server(),
            "abc",
            Some((".relay.toml", raw, parse(".relay.toml", raw))),
        )
    }

    #[test]
    fn narrowing_keys_apply_with_their_origin() {
        let config = from(
            "exclude = [\"vendor/\"]\nsummary_comment = false\n[engage]\npublic = [\"owner\"]\nprivate = [\"member\"]\n[labels]\ntrigger = [\"Relay\"]\n[budget]\nissue_tokens = 1000\nissue_cost_usd = 2.0\n",
        );
        assert!(config.refused.is_empty(), "{:?}", config.refused);
        assert_eq!(config.engage_public, [EngageRole::Owner]);
        assert_eq!(config.engage_private, [EngageRole::Member]);
        assert_eq!(config.trigger_labels, ["Relay"]);
        assert_eq!(config.issue_token_budget, 1000);
        assert_eq!(config.issue_cost_budget_usd, 2.0);
        assert!(!config.summary_comment);
        let origin = |key: &str| config.keys.iter().find(|k| k.key == key).unwrap().origin;
        assert_eq!(origin("engage.public"), Origin::Repository);
        assert_eq!(origin("guidance_files"), Origin::Server);
        assert_eq!(config.file.as_deref(), Some(".relay.toml"));
    }

    #[test]
    fn each_widening_is_refused_reported_and_not_applied() {
        let config = from(
            "summary_comment = true\n[engage]\npublic = [\"owner\", \"anyone\"]\n[labels]\ntrigger = [\"relay\", \"help-wanted\"]\n[budget]\nissue_tokens = 900000\n",
        );
        let refused: Vec<String> = config.refused.iter().map(ToString::to_string).collect();
        assert_eq!(
            refused,
            [
                ".relay.toml:3: `engage.public`: anyone may not engage Relay under the server's policy (owner, member, collaborator); a repository cannot add roles (not applied)",
                ".relay.toml:5: `labels.trigger`: `help-wanted` is not among the server's trigger labels (`relay`, `bug`); a repository cannot add trigger labels (not applied)",
                ".relay.toml:7: `budget.issue_tokens`: 900000 tokens would raise the server's cap of 500000 tokens per issue (not applied)",
            ]
        );
        assert_eq!(config.engage_public, [EngageRole::Owner]);
        assert_eq!(config.trigger_labels, ["relay"]);
        assert_eq!(config.issue_token_budget, 500_000);
        let origin = |key: &str| config.keys.iter().find(|k| k.key == key).unwrap().origin;
        assert_eq!(origin("budget.issue_tokens"), Origin::Server);
    }

    #[test]
    fn a_summary_the_server_turned_off_stays_off() {
        let mut policy = server();
        policy.summary_comment = false;
        let raw = "summary_comment = true\n";
        let config = effective(
            &policy,
            "c",
            Some((".relay.toml", raw, parse(".relay.toml", raw))),
        );
        assert!(!config.summary_comment);
        assert_eq!(config.refused.len(), 1);
    }

    #[test]
    fn a_bad_file_falls_back_to_the_server_whole() {
        let config = from("exclude = [\"vendor/\"]\n[engage]\npublic = \"owner\"\n");
        assert_eq!(config.errors.len(), 1);
        assert_eq!(config.file, None);
        assert!(config.exclude.is_empty(), "nothing of a bad file applies");
        assert_eq!(config.engage_public, server().engage_public);
        assert!(config.keys.iter().all(|k| k.origin == Origin::Server));
    }

    #[test]
    fn labels_narrow_triggers_and_add_opt_outs() {
        let config = from("[labels]\ntrigger = [\"bug\"]\nopt_out = [\"Relay-Off\"]\n");
        assert!(config.triggers_on("BUG"));
        assert!(
            !config.triggers_on("relay"),
            "the server's other trigger label is dropped"
        );
        assert_eq!(
            config
                .opted_out(&["x".into(), "relay-off".into()])
                .as_deref(),
            Some("relay-off")
        );
        assert_eq!(config.opted_out(&["x".into()]), None);
        let none = from("[labels]\ntrigger = []\n");
        assert!(!none.triggers_on("bug"), "`[]`: no label engages Relay");
    }
}
