//! Text Relay sends to a tracker, made inert.
//!
//! - [`neutralize_quick_actions`]: GitLab runs a quick action (`/close`, `/move …`) found at the
//!   start of a line of a note posted through its API, unless its extractor takes the line to be
//!   inside a block. The GitLab client passes every note body through this function (its one
//!   door for note bodies), so nothing Relay posts (a model echoing planted text included) can
//!   act on the tracker.
//!
//! The other half, no configured secret in what Relay sends, is [`crate::secrets`]: the outbox
//! scrubs each body with [`crate::secrets::scrub_secrets`] before it is stored.

use std::borrow::Cow;

/// Put before the `/` of a line that would otherwise be a quick action. Markdown renders `\/` as
/// `/`, so the note reads as written; GitLab's parser no longer sees a command.
const SLASH_ESCAPE: &str = "\\";

/// `body` with no line GitLab could read as a quick action: every line whose first non-blank
/// character is `/` gets a backslash before that `/`, wherever it stands (fenced code, HTML
/// blocks and `>>>` quotes included). Borrowed when nothing needed changing.
///
/// No block is exempt on purpose. GitLab finds commands with its own left-to-right pass (code
/// fences, inline code spanning lines, HTML blocks and `>>>` quotes, then `^/command`; newer
/// releases first pick paragraphs with a Markdown pipeline), and where it thinks a block starts
/// or ends differs from where a reader (or a local guess) does: `<details>` + a fence, a fence
/// after a fence, a `>>>` quote around a fence all end a "block" early and run the command after
/// it. Both extractors need the `/` in the first column of a raw line (after GitLab deletes every
/// `\r`), so a line whose first non-blank character is not `/` cannot be a command in either.
/// The cost is a backslash shown before `/usr/bin/…` in a code block.
pub fn neutralize_quick_actions(body: &str) -> Cow<'_, str> {
    if !body.split('\n').any(starts_with_slash) {
        return Cow::Borrowed(body);
    }
    let mut out = String::with_capacity(body.len() + 16);
    for (index, line) in body.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
        }
        if starts_with_slash(line) {
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

/// Whether the first non-blank character of `line` is `/` (`\r` and Unicode spaces are blank:
/// GitLab deletes every `\r` before it looks).
fn starts_with_slash(line: &str) -> bool {
    line.trim_start().starts_with('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a line of `body` still starts with `/` once GitLab deleted every `\r`: the
    /// column-one `/` both of GitLab's extractors need. (The faithful port of the extractor lives
    /// with the local GitLab, `relay_tracker::fake`, and checks these bodies too.)
    fn slash_in_column_one(body: &str) -> bool {
        body.replace('\r', "")
            .split('\n')
            .any(|l| l.starts_with('/'))
    }

    #[test]
    fn every_line_starting_with_a_slash_is_escaped() {
        let body = "I will do it.\n/close\n  /confidential\n\t/move other/project\nnot /label here";
        let out = neutralize_quick_actions(body);
        assert_eq!(
            out,
            "I will do it.\n\\/close\n  \\/confidential\n\t\\/move other/project\nnot /label here"
        );
        assert!(!slash_in_column_one(&out), "{out}");
    }

    #[test]
    fn fenced_code_is_escaped_too() {
        // No block is exempt: where GitLab's extractor thinks a block ends is not where a reader
        // does, so a fence protects nothing. The cost is a backslash shown in the code.
        let body = "Run:\n```sh\n/usr/bin/env true\n```\n/close";
        assert_eq!(
            neutralize_quick_actions(body),
            "Run:\n```sh\n\\/usr/bin/env true\n```\n\\/close"
        );
        for (body, want) in [
            ("```\n/close", "```\n\\/close"),
            ("~~~\n/close\n~~~", "~~~\n\\/close\n~~~"),
            ("<pre>\n/close\n</pre>", "<pre>\n\\/close\n</pre>"),
            (">>>\n/close\n>>>", ">>>\n\\/close\n>>>"),
        ] {
            assert_eq!(neutralize_quick_actions(body), want, "{body:?}");
        }
    }

    /// The three bodies of issue #33 §2: GitLab ran the command in each, and Relay's old
    /// fence-aware escaping passed all three unchanged (it took the command line to be fenced).
    #[test]
    fn the_bodies_gitlab_ran_a_command_in_are_escaped() {
        for (body, want) in [
            (
                "<details>\n```\n</details>\n/move attacker/loot\n```",
                "<details>\n```\n</details>\n\\/move attacker/loot\n```",
            ),
            (
                "```\n```\n```\n/confidential\n```",
                "```\n```\n```\n\\/confidential\n```",
            ),
            (">>>\n```\n>>>\n/close\n```", ">>>\n```\n>>>\n\\/close\n```"),
        ] {
            let out = neutralize_quick_actions(body);
            assert_eq!(out, want, "{body:?}");
            assert!(!slash_in_column_one(&out), "{out:?}");
        }
    }

    #[test]
    fn crlf_bodies_and_harmless_text_are_unchanged_or_escaped() {
        assert!(matches!(
            neutralize_quick_actions("plain text\nno commands"),
            Cow::Borrowed(_)
        ));
        let crlf = "hi\r\n/close\r\n";
        assert_eq!(neutralize_quick_actions(crlf), "hi\r\n\\/close\r\n");
        // GitLab deletes every `\r` first: a line that starts with one is a command after it.
        let cr_first = "hi\n\r/close\n\r\r  /move a/b";
        let out = neutralize_quick_actions(cr_first);
        assert_eq!(out, "hi\n\r\\/close\n\r\r  \\/move a/b");
        assert!(!slash_in_column_one(&out), "{out:?}");
    }
}
