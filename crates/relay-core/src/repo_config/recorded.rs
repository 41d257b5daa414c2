//! The configuration in effect *now* for a repository whose file was read earlier: the file as
//! recorded at its commit (`repo_configs.file_text`), narrowed by the server's settings as they
//! run now — not by the settings of the process that recorded it. A lowered `[agent]
//! issue_token_budget` shows at once on the read API and the status page, without waiting for the
//! next job on the repository to record it again (issue #45 §4).

use super::narrow::{EffectiveConfig, ServerPolicy, effective};
use super::parse::parse;

/// What a job or a push recorded of a repository's configuration.
#[derive(Debug, Clone, Copy)]
pub struct Recorded<'a> {
    /// The configuration in effect as recorded (for its commit, its file's path, the errors of a
    /// file that could not be read).
    pub effective: &'a EffectiveConfig,
    /// The configuration file's text as read at the commit; `None` when there was none, it was
    /// over the size bound, or the record predates keeping it.
    pub file_text: Option<&'a str>,
}

/// The configuration in effect under `server`, from `recorded`. `None` when only the record can
/// say: a file was applied but its text was not kept (recorded before the text was).
pub fn in_effect_now(server: &ServerPolicy, recorded: Recorded<'_>) -> Option<EffectiveConfig> {
    let was = recorded.effective;
    let mut now = match (was.file.as_deref(), recorded.file_text) {
        (Some(path), Some(text)) => {
            effective(server, &was.commit, Some((path, text, parse(path, text))))
        }
        (Some(_), None) => return None,
        // No file applied: the server's settings, with why a file present was not used (it could
        // not be read or parsed — facts of the file, not of the settings).
        (None, _) => {
            let mut now = effective(server, &was.commit, None);
            now.errors = was.errors.clone();
            now
        }
    };
    now.ignored_files = was.ignored_files.clone();
    Some(now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roles::EngageRole;

    fn server(tokens: u64) -> ServerPolicy {
        ServerPolicy {
            engage_public: vec![EngageRole::Member],
            engage_private: vec![EngageRole::Anyone],
            trigger_labels: vec!["relay".into()],
            issue_token_budget: tokens,
            issue_cost_budget_usd: 0.0,
            summary_comment: true,
            related_repositories: true,
        }
    }

    const FILE: &str = "[budget]\nissue_tokens = 300000\n";

    fn recorded_under(server: &ServerPolicy) -> EffectiveConfig {
        effective(
            server,
            "c1",
            Some((".relay.toml", FILE, parse(".relay.toml", FILE))),
        )
    }

    #[test]
    fn a_lowered_server_cap_is_in_effect_at_once() {
        let then = recorded_under(&server(500_000));
        assert_eq!(then.issue_token_budget, 300_000);
        let now = in_effect_now(
            &server(100_000),
            Recorded {
                effective: &then,
                file_text: Some(FILE),
            },
        )
        .unwrap();
        assert_eq!(
            now.issue_token_budget, 100_000,
            "the repository's 300k is refused now"
        );
        assert_eq!(now.refused.len(), 1, "{:?}", now.refused);
        assert_eq!(now.commit, "c1");
    }

    #[test]
    fn without_a_file_the_server_settings_now_apply_with_the_recorded_errors() {
        let mut then = effective(&server(500_000), "c1", None);
        then.errors = parse(".relay.toml", "not = [toml").unwrap_err();
        let now = in_effect_now(
            &server(100_000),
            Recorded {
                effective: &then,
                file_text: None,
            },
        )
        .unwrap();
        assert_eq!(now.issue_token_budget, 100_000);
        assert_eq!(now.errors, then.errors);
    }

    #[test]
    fn a_file_applied_without_its_text_kept_can_only_be_shown_as_recorded() {
        let then = recorded_under(&server(500_000));
        let recorded = Recorded {
            effective: &then,
            file_text: None,
        };
        assert!(in_effect_now(&server(100_000), recorded).is_none());
    }
}
