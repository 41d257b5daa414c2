//! Commands in a mention (`@relay-bot status`), parsed deterministically — never by a model.
//!
//! A note is a command when, trimmed, it is one line that starts with the bot's mention as a
//! whole word, followed by a command word and its arguments:
//!
//! | note | command |
//! |---|---|
//! | `@relay-bot help` | [`Command::Help`] |
//! | `@relay-bot status` | [`Command::Status`] |
//! | `@relay-bot refresh` | [`Command::Refresh`] |
//! | `@relay-bot stop` / `resume` | [`Command::Stop`] / [`Command::Resume`] |
//! | `@relay-bot forget 12` (or `#12`) | [`Command::Forget`] |
//! | `@relay-bot budget 200k` / `budget $2.50` | [`Command::Budget`] |
//!
//! A single unknown word (`@relay-bot sttaus`) is [`Parsed::Unknown`] (answered with the help);
//! a known word with wrong arguments is [`Parsed::Invalid`] (the usage); anything else — a
//! question, several lines, a mention inside a sentence — is [`Parsed::NotACommand`] and goes to
//! the planner as before. The syntax starts with `@`, so on GitLab it can never be a quick action
//! (those start with `/`).

use std::fmt;

/// Longest line considered as a command.
const MAX_COMMAND_CHARS: usize = 200;
/// Largest budget raise one command may give, in tokens.
pub const MAX_BUDGET_RAISE_TOKENS: u64 = 100_000_000;
/// Largest budget raise one command may give, in US dollars.
pub const MAX_BUDGET_RAISE_USD: f64 = 10_000.0;

/// A command Relay answers itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Help,
    Status,
    Refresh,
    Stop,
    Resume,
    /// Forget learning `id` of this repository.
    Forget(i64),
    /// Raise this cap once by this much.
    Budget(BudgetAmount),
}

/// A budget raise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BudgetAmount {
    Tokens(u64),
    Usd(f64),
}

impl fmt::Display for BudgetAmount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BudgetAmount::Tokens(tokens) => write!(f, "{tokens} tokens"),
            BudgetAmount::Usd(usd) => write!(f, "${usd:.2}"),
        }
    }
}

impl Command {
    /// The command's word.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Help => "help",
            Command::Status => "status",
            Command::Refresh => "refresh",
            Command::Stop => "stop",
            Command::Resume => "resume",
            Command::Forget(_) => "forget",
            Command::Budget(_) => "budget",
        }
    }
}

/// What a note is.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    Command(Command),
    /// One word that names no command.
    Unknown {
        word: String,
    },
    /// A command word with arguments it does not take.
    Invalid {
        command: &'static str,
        usage: String,
    },
    NotACommand,
}

/// Parses `body` (a note) written to `bot` (its username, with or without `@` or `[bot]`).
pub fn parse(body: &str, bot: &str) -> Parsed {
    let bot = bot.trim_start_matches('@');
    let bot = bot.strip_suffix("[bot]").unwrap_or(bot);
    let text = body.trim();
    if bot.is_empty() || text.contains('\n') || text.chars().count() > MAX_COMMAND_CHARS {
        return Parsed::NotACommand;
    }
    let Some(rest) = text.strip_prefix('@') else {
        return Parsed::NotACommand;
    };
    let Some(head) = rest.get(..bot.len()) else {
        return Parsed::NotACommand;
    };
    let after = &rest[bot.len()..];
    if !head.eq_ignore_ascii_case(bot) {
        return Parsed::NotACommand;
    }
    // `@relay-bot[bot]` and `@relay-bot:` are the same mention; anything else glued to the
    // name makes it another name.
    let after = after.strip_prefix("[bot]").unwrap_or(after);
    let after = after.strip_prefix([':', ',']).unwrap_or(after);
    if !(after.is_empty() || after.starts_with(char::is_whitespace)) {
        return Parsed::NotACommand;
    }
    let words: Vec<&str> = after.split_whitespace().collect();
    let Some((first, args)) = words.split_first() else {
        return Parsed::NotACommand;
    };
    let word = first.trim_end_matches(['.', '!']).to_ascii_lowercase();
    let bare = |command: Command| {
        if args.is_empty() {
            Parsed::Command(command)
        } else {
            // "@bot stop the retries from looping" is a sentence, not `stop`.
            Parsed::NotACommand
        }
    };
    match word.as_str() {
        "help" => bare(Command::Help),
        "status" => bare(Command::Status),
        "refresh" => bare(Command::Refresh),
        "stop" => bare(Command::Stop),
        "resume" => bare(Command::Resume),
        "forget" => match args {
            [id] => match parse_learning_id(id) {
                Some(id) => Parsed::Command(Command::Forget(id)),
                None => invalid("forget", "forget <learning id>, e.g. `forget 12`"),
            },
            _ => invalid("forget", "forget <learning id>, e.g. `forget 12`"),
        },
        "budget" => match args {
            [amount] => match parse_amount(amount) {
                Some(amount) => Parsed::Command(Command::Budget(amount)),
                None => invalid("budget", BUDGET_USAGE),
            },
            _ => invalid("budget", BUDGET_USAGE),
        },
        _ if args.is_empty()
            && !word.is_empty()
            && word.chars().all(|c| c.is_ascii_alphabetic() || c == '-') =>
        {
            Parsed::Unknown { word }
        }
        _ => Parsed::NotACommand,
    }
}

const BUDGET_USAGE: &str = "budget <amount>: tokens (`budget 200000`, `budget 200k`, `budget 1.5m`) or dollars (`budget $2.50`)";

fn invalid(command: &'static str, usage: &str) -> Parsed {
    Parsed::Invalid {
        command,
        usage: usage.to_owned(),
    }
}

fn parse_learning_id(text: &str) -> Option<i64> {
    let digits = text.trim_start_matches('#');
    (!digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
        .filter(|id| *id > 0)
}

/// `200000`, `200k`, `1.5m`, `$2.50`, `2.50$`, `2.5usd`.
fn parse_amount(text: &str) -> Option<BudgetAmount> {
    let lower = text.to_ascii_lowercase();
    let dollars = lower
        .strip_prefix('$')
        .or_else(|| lower.strip_suffix('$'))
        .or_else(|| lower.strip_suffix("usd"));
    if let Some(number) = dollars {
        let usd: f64 = number.parse().ok()?;
        return (usd.is_finite() && usd > 0.0 && usd <= MAX_BUDGET_RAISE_USD)
            .then_some(BudgetAmount::Usd(usd));
    }
    let (number, scale) = if let Some(n) = lower.strip_suffix('k') {
        (n, 1_000.0)
    } else if let Some(n) = lower.strip_suffix('m') {
        (n, 1_000_000.0)
    } else {
        (lower.as_str(), 1.0)
    };
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    let tokens = number.parse::<f64>().ok()? * scale;
    (tokens.is_finite() && tokens >= 1.0 && tokens <= MAX_BUDGET_RAISE_TOKENS as f64)
        .then(|| BudgetAmount::Tokens(tokens.round() as u64))
}

/// The help text, for `bot` (as the tracker spells its mention).
pub fn help_text(bot: &str) -> String {
    let bot = bot.strip_suffix("[bot]").unwrap_or(bot);
    format!(
        "Commands (one per comment, on a line of its own):\n\n\
         - `@{bot} help`: this list\n\
         - `@{bot} status`: where this issue stands (the summary comment, refreshed now)\n\
         - `@{bot} refresh`: re-check the findings at the default branch's head and plan again\n\
         - `@{bot} stop`: stay silent on this issue until `@{bot} resume`\n\
         - `@{bot} resume`: answer on this issue again\n\
         - `@{bot} forget <id>`: never use learning <id> of this repository again\n\
         - `@{bot} budget <amount>`: raise this issue's cap once (maintainers), e.g. `200k` tokens or `$2`\n\n\
         Any other mention is read as a question about the issue."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check(body: &str, expected: Parsed) {
        assert_eq!(parse(body, "relay-bot"), expected, "{body:?}");
    }

    #[test]
    fn commands_are_one_line_starting_with_the_mention() {
        use Command::*;
        check("@relay-bot help", Parsed::Command(Help));
        check("  @Relay-Bot STATUS  ", Parsed::Command(Status));
        check("@relay-bot refresh.", Parsed::Command(Refresh));
        check("@relay-bot[bot] stop", Parsed::Command(Stop));
        check("@relay-bot: resume!", Parsed::Command(Resume));
        check("@relay-bot forget #12", Parsed::Command(Forget(12)));
        check(
            "@relay-bot budget 200k",
            Parsed::Command(Budget(BudgetAmount::Tokens(200_000))),
        );
        check(
            "@relay-bot budget 1.5m",
            Parsed::Command(Budget(BudgetAmount::Tokens(1_500_000))),
        );
        check(
            "@relay-bot budget $2.50",
            Parsed::Command(Budget(BudgetAmount::Usd(2.5))),
        );
        check(
            "@relay-bot budget 3usd",
            Parsed::Command(Budget(BudgetAmount::Usd(3.0))),
        );
    }

    #[test]
    fn questions_and_sentences_are_not_commands() {
        for body in [
            "@relay-bot can retries be configured?",
            "@relay-bot stop the retries from looping",
            "@relay-bot",
            "hey @relay-bot help",
            "@relay-bot help\nand also this",
            "@relay-bot2 help",
            "@relay-bot-dev help",
            "@relay-bot thoughts?",
            "/relay-bot help",
        ] {
            check(body, Parsed::NotACommand);
        }
    }

    #[test]
    fn unknown_words_and_bad_arguments_get_help() {
        check(
            "@relay-bot sttaus",
            Parsed::Unknown {
                word: "sttaus".into(),
            },
        );
        for body in [
            "@relay-bot forget",
            "@relay-bot forget twelve",
            "@relay-bot forget 0",
            "@relay-bot budget",
            "@relay-bot budget lots",
            "@relay-bot budget -5",
            "@relay-bot budget 999999999999",
            "@relay-bot budget $0",
        ] {
            assert!(
                matches!(parse(body, "relay-bot"), Parsed::Invalid { .. }),
                "{body}"
            );
        }
    }

    #[test]
    fn the_help_never_starts_a_line_with_a_slash() {
        let help = help_text("relay-bot[bot]");
        assert!(help.contains("`@relay-bot budget <amount>`"));
        assert!(help.lines().all(|l| !l.trim_start().starts_with('/')));
    }
}
