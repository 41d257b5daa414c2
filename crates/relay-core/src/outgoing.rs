//! Text Relay sends to a tracker, made inert.
//!
//! - [`neutralize_quick_actions`]: GitLab runs a quick action (`/close`, `/move …`) found at the
//!   start of any line of a note posted through its API, outside a fenced code block. The GitLab
//!   client passes every note body through this function, so nothing Relay posts (a model echoing
//!   planted text included) can act on the tracker.
//!
//! The other half, no configured secret in what Relay sends, is [`crate::secrets`]: the outbox
//! scrubs each body with [`crate::secrets::scrub_secrets`] before it is stored.

use std::borrow::Cow;

/// Put before the `/` of a line that would otherwise be a quick action. Markdown renders `\/` as
/// `/`, so the note reads as written; GitLab's parser no longer sees a command.
const SLASH_ESCAPE: &str = "\\";

/// GitLab's fence for its quick-action extractor: three backticks at the start of a line,
/// closed by a line that is exactly three backticks. (GitLab does not treat `~~~` or indented
/// code as code there, so neither do we: lines in them are neutralised too.)
const FENCE: &str = "```";

/// `body` with every line that GitLab could read as a quick action made inert: outside fenced
/// code blocks, a line whose first non-blank character is `/` gets a backslash before the `/`.
/// Fenced code is left as it is. Borrowed when nothing needed changing.
pub fn neutralize_quick_actions(body: &str) -> Cow<'_, str> {
    let lines: Vec<&str> = body.split('\n').collect();
    let fenced = fenced_lines(&lines);
    let needs = lines
        .iter()
        .zip(&fenced)
        .any(|(line, in_fence)| !in_fence && starts_with_slash(line));
    if !needs {
        return Cow::Borrowed(body);
    }
    let mut out = String::with_capacity(body.len() + 16);
    for (index, (line, in_fence)) in lines.iter().zip(&fenced).enumerate() {
        if index > 0 {
            out.push('\n');
        }
        if !in_fence && starts_with_slash(line) {
            let indent = line.len() - line.trim_start().len();
            out.push_str(&line[..indent]);
            out.push_str(SLASH_ESCAPE);
            out.push_str(&line[indent..]);
        } else {
            out.push_str(line);
        }
    }
    Cow::Owned(out)
}

/// The quick actions GitLab would run for `body`: `(command, argument)` of every line outside a
/// closed fence whose first non-blank character is `/` followed by a command name. Used by the
/// local GitLab server in tests (which executes them) and to check neutralised text.
pub fn quick_actions(body: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = body.split('\n').collect();
    let fenced = fenced_lines(&lines);
    lines
        .iter()
        .zip(&fenced)
        .filter(|(_, in_fence)| !**in_fence)
        .filter_map(|(line, _)| {
            let rest = line.trim_start().strip_prefix('/')?;
            let command: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if command.is_empty() {
                return None;
            }
            let argument = rest[command.len()..].trim().trim_end_matches('\r').trim();
            Some((command.to_ascii_lowercase(), argument.to_owned()))
        })
        .collect()
}

fn starts_with_slash(line: &str) -> bool {
    line.trim_start().starts_with('/')
}

/// For each line, whether it lies in a closed ``` block (its fence lines included).
fn fenced_lines(lines: &[&str]) -> Vec<bool> {
    let mut fenced = vec![false; lines.len()];
    let mut index = 0;
    while index < lines.len() {
        if lines[index].starts_with(FENCE)
            && let Some(close) =
                (index + 1..lines.len()).find(|&j| lines[j].trim_end_matches('\r') == FENCE)
        {
            for flag in &mut fenced[index..=close] {
                *flag = true;
            }
            index = close + 1;
            continue;
        }
        index += 1;
    }
    fenced
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_starting_with_a_slash_are_escaped_outside_fences() {
        let body = "I will do it.\n/close\n  /confidential\n\t/move other/project\nnot /label here";
        let out = neutralize_quick_actions(body);
        assert_eq!(
            out,
            "I will do it.\n\\/close\n  \\/confidential\n\t\\/move other/project\nnot /label here"
        );
        assert!(quick_actions(&out).is_empty(), "{out}");
        assert_eq!(
            quick_actions(body)
                .iter()
                .map(|(c, _)| c.as_str())
                .collect::<Vec<_>>(),
            ["close", "confidential", "move"]
        );
    }

    #[test]
    fn closed_backtick_fences_are_left_as_they_are() {
        let body = "Run:\n```sh\n/usr/bin/env true\n```\n/close";
        assert_eq!(
            neutralize_quick_actions(body),
            "Run:\n```sh\n/usr/bin/env true\n```\n\\/close"
        );
        // GitLab only skips closed ``` blocks: an unclosed fence or ~~~ protects nothing.
        let unclosed = "```\n/close";
        assert_eq!(neutralize_quick_actions(unclosed), "```\n\\/close");
        let tilde = "~~~\n/close\n~~~";
        assert_eq!(neutralize_quick_actions(tilde), "~~~\n\\/close\n~~~");
        // A closing fence must be exactly ``` on its line.
        let not_closed = "```\n/close\n``` trailing";
        assert!(quick_actions(&neutralize_quick_actions(not_closed)).is_empty());
    }

    #[test]
    fn crlf_bodies_and_harmless_text_are_unchanged_or_escaped() {
        assert!(matches!(
            neutralize_quick_actions("plain text\nno commands"),
            Cow::Borrowed(_)
        ));
        let crlf = "hi\r\n/close\r\n";
        assert_eq!(neutralize_quick_actions(crlf), "hi\r\n\\/close\r\n");
        assert!(quick_actions(&neutralize_quick_actions(crlf)).is_empty());
    }
}
