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
}

impl BotAccount {
    pub fn new(bot_username: &str) -> BotAccount {
        BotAccount {
            username: bot_username.trim_start_matches('@').to_owned(),
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
        } else {
            let app = format!("{name}{APP_LOGIN_SUFFIX}");
            vec![name, app]
        }
    }

    /// Whether `login` is the bot (see [`BotAccount::logins`]).
    pub fn is(&self, login: &str) -> bool {
        login.eq_ignore_ascii_case(&self.username)
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
}
