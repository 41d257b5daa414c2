//! Whole-token detection of `@bot` mentions in Markdown.
//!
//! `@relay-bot` matches in "hey @relay-bot, look" and "@Relay-Bot?" but not in "@relay-bot2",
//! "x@relay-bot.io", "@relay-bot-dev" or "@relay-bot.example". Mentions inside fenced code blocks,
//! inline code and quoted lines (`> …`, usually a quote of someone else's comment) do not count.

/// Whether `text` mentions `@bot` as a whole token outside code and quotes.
pub fn mentions(text: &str, bot: &str) -> bool {
    let bot = bot.trim_start_matches('@');
    let bot = bot.strip_suffix("[bot]").unwrap_or(bot);
    if bot.is_empty() {
        return false;
    }
    let mut in_fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(fence) = in_fence {
            if trimmed.starts_with(fence) {
                in_fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = Some(&trimmed[..3]);
            continue;
        }
        if trimmed.starts_with('>') {
            continue;
        }
        if line_mentions(&strip_inline_code(line), bot) {
            return true;
        }
    }
    false
}

/// Removes `inline code` spans (backtick runs of equal length).
fn strip_inline_code(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let run = rest[start..].bytes().take_while(|&b| b == b'`').count();
        let fence = &rest[start..start + run];
        let after = &rest[start + run..];
        match after.find(fence) {
            Some(end) => rest = &after[end + run..],
            None => {
                // An unmatched backtick is literal text.
                out.push_str(fence);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

fn line_mentions(line: &str, bot: &str) -> bool {
    let lower = line.to_lowercase();
    let needle = format!("@{}", bot.to_lowercase());
    let mut from = 0;
    while let Some(found) = lower[from..].find(&needle) {
        let start = from + found;
        let end = start + needle.len();
        from = start + 1;
        let before = lower[..start].chars().next_back();
        if before.is_some_and(|c| is_name_char(c) || matches!(c, '.' | '@' | '/' | '+')) {
            continue;
        }
        let mut after = lower[end..].chars();
        match after.next() {
            None => return true,
            Some(c) if is_name_char(c) => continue,
            // "@bot.io" is another name; "@bot." ending a sentence is a mention.
            Some('.') if after.next().is_some_and(is_name_char) => continue,
            Some(_) => return true,
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::mentions;

    #[track_caller]
    fn check(text: &str, expected: bool) {
        assert_eq!(mentions(text, "relay-bot"), expected, "{text:?}");
    }

    #[test]
    fn whole_token_mentions() {
        check("@relay-bot", true);
        check("hey @relay-bot, please look", true);
        check("@Relay-Bot?", true);
        check("thanks @relay-bot.", true);
        check("(@relay-bot)", true);
        check("cc:@relay-bot", true);
        check("line one\n@relay-bot line two", true);
        check("@relay-bot2", false);
        check("@relay-bot-dev", false);
        check("@relay-bot_x", false);
        check("x@relay-bot.io", false);
        check("@relay-bot.example.com", false);
        check("mail me at me@relay-bot", false);
        check("see github.com/@relay-bot", false);
        check("relay-bot", false);
        check("@@relay-bot", false);
        check("", false);
    }

    #[test]
    fn code_and_quotes_do_not_count() {
        check("`@relay-bot`", false);
        check("run ``x @relay-bot y`` now", false);
        check("```\n@relay-bot\n```", false);
        check("~~~sh\n@relay-bot\n~~~\n", false);
        check("> @relay-bot said something", false);
        check("> quoted\n\n@relay-bot real", true);
        check("```\ncode\n```\n@relay-bot after", true);
        check("unmatched ` then @relay-bot", true);
    }

    #[test]
    fn app_bot_suffix_and_at_prefix() {
        assert!(mentions("@relay please", "relay[bot]"));
        assert!(mentions("@relay please", "@relay"));
    }
}
