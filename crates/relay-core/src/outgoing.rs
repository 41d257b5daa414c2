//! Text Relay sends to a tracker, made inert.
//!
//! - [`neutralize_quick_actions`]: GitLab runs a quick action (`/close`, `/move …`) found at the
//!   start of any line of a note posted through its API, outside a fenced code block. The GitLab
//!   client passes every note body through this function, so nothing Relay posts (a model echoing
//!   planted text included) can act on the tracker.
//! - [`register_secret`] / [`scrub_secrets`]: every configured secret (tracker tokens, webhook
//!   secrets, the API token, LLM keys, the database password) is registered once at start-up;
//!   the outbox scrubs each body before it is stored, whichever tracker it is for.

use std::borrow::Cow;
use std::sync::RwLock;

use secrecy::{ExposeSecret, SecretString};

/// Put before the `/` of a line that would otherwise be a quick action. Markdown renders `\/` as
/// `/`, so the note reads as written; GitLab's parser no longer sees a command.
const SLASH_ESCAPE: &str = "\\";
/// What a secret found in an outgoing body becomes.
pub const REDACTED: &str = "[REDACTED]";
/// Secrets shorter than this are not scanned for: replacing every `abc` in a comment would
/// mangle it while protecting nothing (a real credential is longer). Such a value is refused at
/// registration, and the registration says so.
pub const MIN_SCANNED_SECRET_CHARS: usize = 8;

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

/// A secret registered for the outgoing scan, with what it is (for the trace, never the value).
struct Registered {
    label: String,
    value: SecretString,
}

/// Every configured secret of this process. Process-wide on purpose: every tracker write passes
/// through the outbox, wherever it was composed, and no caller can forget to pass the list.
static SECRETS: RwLock<Vec<Registered>> = RwLock::new(Vec::new());

/// Whether [`register_secret`] took the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registration {
    Added,
    AlreadyKnown,
    /// Empty or shorter than [`MIN_SCANNED_SECRET_CHARS`]: not scanned for.
    TooShort,
}

/// Adds a secret to the outgoing scan. `label` says what it is (`trackers.gitlab.token`) and is
/// what a redaction is traced with.
pub fn register_secret(label: &str, value: &SecretString) -> Registration {
    let chars = value.expose_secret().chars().count();
    if chars < MIN_SCANNED_SECRET_CHARS {
        return Registration::TooShort;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    if secrets
        .iter()
        .any(|s| s.value.expose_secret() == value.expose_secret())
    {
        return Registration::AlreadyKnown;
    }
    secrets.push(Registered {
        label: label.to_owned(),
        value: value.clone(),
    });
    Registration::Added
}

/// Adds a secret that rotates (a GitHub App installation token, minted about hourly) to the
/// outgoing scan: it replaces the value registered under the same `label`, so the scan holds one
/// value per label however often it rotates.
pub fn register_rotating_secret(label: &str, value: &SecretString) -> Registration {
    if value.expose_secret().chars().count() < MIN_SCANNED_SECRET_CHARS {
        return Registration::TooShort;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    if secrets
        .iter()
        .any(|s| s.value.expose_secret() == value.expose_secret())
    {
        return Registration::AlreadyKnown;
    }
    secrets.retain(|s| s.label != label);
    secrets.push(Registered {
        label: label.to_owned(),
        value: value.clone(),
    });
    Registration::Added
}

/// An outgoing body after the secret scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scrubbed<'a> {
    pub body: Cow<'a, str>,
    /// Labels of the secrets that were found and replaced by [`REDACTED`].
    pub redacted: Vec<String>,
}

/// Replaces every registered secret found in `body` by [`REDACTED`].
pub fn scrub_secrets(body: &str) -> Scrubbed<'_> {
    let secrets = SECRETS.read().unwrap_or_else(|e| e.into_inner());
    let mut out = Cow::Borrowed(body);
    let mut redacted = Vec::new();
    // Longest first: a secret that contains another is replaced whole.
    let mut order: Vec<&Registered> = secrets.iter().collect();
    order.sort_by_key(|s| std::cmp::Reverse(s.value.expose_secret().len()));
    for secret in order {
        let value = secret.value.expose_secret();
        if out.contains(value) {
            out = Cow::Owned(out.replace(value, REDACTED));
            redacted.push(secret.label.clone());
        }
    }
    Scrubbed {
        body: out,
        redacted,
    }
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

    #[test]
    fn a_rotating_secret_replaces_its_predecessor() {
        let first = SecretString::from("ghs_rotating_secret_one_0001".to_owned());
        let second = SecretString::from("ghs_rotating_secret_two_0002".to_owned());
        assert_eq!(
            register_rotating_secret("github.installation.1.r.token", &first),
            Registration::Added
        );
        assert_eq!(
            register_rotating_secret("github.installation.1.r.token", &second),
            Registration::Added
        );
        let scrubbed = scrub_secrets("a ghs_rotating_secret_two_0002 b");
        assert_eq!(scrubbed.body, "a [REDACTED] b");
        let held = SECRETS
            .read()
            .unwrap()
            .iter()
            .filter(|s| s.label == "github.installation.1.r.token")
            .count();
        assert_eq!(held, 1, "one value per label");
    }

    #[test]
    fn registered_secrets_are_scrubbed_and_labelled() {
        let token = SecretString::from("glpat-outgoing-scan-0001".to_owned());
        assert_eq!(
            register_secret("trackers.test.token", &token),
            Registration::Added
        );
        assert_eq!(register_secret("again", &token), Registration::AlreadyKnown);
        assert_eq!(
            register_secret("short", &SecretString::from("abc".to_owned())),
            Registration::TooShort
        );
        let scrubbed = scrub_secrets("the token is glpat-outgoing-scan-0001, ok");
        assert_eq!(scrubbed.body, "the token is [REDACTED], ok");
        assert_eq!(scrubbed.redacted, ["trackers.test.token"]);
        let clean = scrub_secrets("nothing here abc");
        assert!(matches!(clean.body, Cow::Borrowed(_)));
        assert!(clean.redacted.is_empty());
    }
}
