//! The one definition of "is this login the bot": the gateway's engagement rules, the tracker
//! clients (which comment is ours), the intake SQL (has the bot posted in this thread) and
//! `relay tracker check` all ask [`BotAccount`].

/// The suffix GitHub gives an App's login: an App configured as `relay-app` comments as
/// `relay-app[bot]`. Humans cannot have brackets in their logins.
pub const APP_LOGIN_SUFFIX: &str = "[bot]";

/// The bot's account on one tracker, from `bot_username`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotAccount {
    /// `bot_username` without a leading `@`.
    username: String,
    /// A GitHub App: its only login is `slug[bot]`; a human whose login is the slug is not it.
    app: bool,
}

impl BotAccount {
    /// A bot that is a user account (a token's user): the name, or `name[bot]`.
    pub fn new(bot_username: &str) -> BotAccount {
        BotAccount {
            username: bot_username.trim_start_matches('@').to_owned(),
            app: false,
        }
    }

    /// A GitHub App whose slug is `slug` (`bot_username`): it comments as `slug[bot]` only, and
    /// the human who registered the login `slug` is someone else.
    pub fn github_app(slug: &str) -> BotAccount {
        BotAccount {
            username: slug.trim_start_matches('@').to_owned(),
            app: true,
        }
    }

    /// The configured name, without `@`.
    pub fn username(&self) -> &str {
        &self.username
    }

    /// Every login the bot's own comments may appear under, lowercase (logins are
    /// case-insensitive on GitHub and GitLab): the name itself and, unless it already is one, the
    /// GitHub App login `name[bot]`. A bot configured as `relay[bot]` is not the human `relay`.
    pub fn logins(&self) -> Vec<String> {
        let name = self.username.to_lowercase();
        if name.ends_with(APP_LOGIN_SUFFIX) {
            vec![name]
        } else if self.app {
            vec![format!("{name}{APP_LOGIN_SUFFIX}")]
        } else {
            let app = format!("{name}{APP_LOGIN_SUFFIX}");
            vec![name, app]
        }
    }

    /// Whether `login` is the bot (see [`BotAccount::logins`]).
    pub fn is(&self, login: &str) -> bool {
        let slug_only = self.app && !self.username.ends_with(APP_LOGIN_SUFFIX);
        (!slug_only && login.eq_ignore_ascii_case(&self.username))
            || login
                .strip_suffix(APP_LOGIN_SUFFIX)
                .is_some_and(|slug| slug.eq_ignore_ascii_case(&self.username))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(bot_username: &str, login: &str, expected: bool) {
        let bot = BotAccount::new(bot_username);
        assert_eq!(bot.is(login), expected, "{bot_username} vs {login}");
        let listed = bot.logins().contains(&login.to_lowercase());
        assert_eq!(listed, expected, "logins() of {bot_username} vs {login}");
    }

    #[test]
    fn bot_logins() {
        check("relay", "relay", true);
        check("@Relay", "relay", true);
        check("relay", "RELAY", true);
        check("relay", "relay[bot]", true);
        check("relay-app", "relay-app[bot]", true);
        check("relay[bot]", "relay[bot]", true);
        // A human named like the App's slug.
        check("relay[bot]", "relay", false);
        check("relay", "relay-fan", false);
        check("relay", "alice", false);
    }

    /// A GitHub App comments only as `slug[bot]`: the human `slug` is not the bot.
    #[test]
    fn an_apps_slug_is_not_its_login() {
        let app = BotAccount::github_app("relay");
        assert!(app.is("relay[bot]") && app.is("Relay[bot]"));
        assert!(!app.is("relay"), "the human named like the slug");
        assert_eq!(app.logins(), ["relay[bot]"]);
        let configured_with_suffix = BotAccount::github_app("relay[bot]");
        assert!(configured_with_suffix.is("relay[bot]") && !configured_with_suffix.is("relay"));
    }
}
