//! The fake GitLab's quick actions: like GitLab, a note created or edited through the API runs
//! every command its extractor finds. The extractor is a port of GitLab's own, not Relay's idea of
//! it, so a test can see where Relay's escaping and GitLab's parser disagree. Tests assert on
//! [`super::FakeGitLab::quick_actions`] and the issue's state that nothing Relay posts ever runs
//! one.
//!
//! Provenance: `Gitlab::QuickActions::Extractor#commands_regex` and `#extract_commands` /
//! `#perform_regex` of `lib/gitlab/quick_actions/extractor.rb` (MIT), in three releases read from
//! the public code index, one [`Extractor`] variant each (commits and paths in
//! `tests/fixtures/README.md`); the command names from `issuable_actions.rb`, `issue_actions.rb`
//! and `issue_and_merge_request_actions.rb` of gitlabhq/gitlabhq. Each release makes one
//! left-to-right pass (`gsub`) over the note with every `\r` deleted; the alternatives, tried in
//! order at each position, are blocks (a code fence, inline code, an HTML block
//! `^<tag>\n … \n</tag>$`, a `>>>` quote block), consumed whole, and last a command: `/` in the
//! first column, a known name (any case), then a space and an argument to the line's end, or the
//! line's end. A command inside what the pass takes for a block is skipped, and one after a
//! block the pass closed early runs. (The newest releases first pick paragraphs with a Markdown
//! pipeline, then apply the same command pattern to their raw lines: `/` in the first column is
//! needed there too. That pipeline is not ported.)
//!
//! Translation notes: Ruby's `m` flag is Rust's `s` (a dot matches a newline) and Ruby's `^`/`$`
//! are always line anchors (Rust's `m`); `x` and `i` are the same; Ruby's `\s` is ASCII, written
//! out; a space in a class is escaped (Rust's `x` ignores it there, Ruby's does not); the quote
//! block's group, a second `(?<html>)` in Ruby, is `quote` (Rust refuses duplicate names).
//! Both engines report the leftmost match and prefer alternatives and lazy/greedy repeats in the
//! same order (no back-references or look-around here), so the matches are the same.

use std::sync::LazyLock;

use regex::Regex;

use super::gitlab::{FakeQuickAction, State};

/// Which release of GitLab's extractor to run. The fake runs [`Extractor::InlineCode`]; the search
/// test in `relay-tracker` checks Relay's escaping against all three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extractor {
    /// Code fences (` ^``` … \n```$ `, an info string allowed), HTML blocks and `>>>` quotes; a
    /// command line ends at the newline (nickbrandt/GitLab @ 3f6daa05, a mirror of
    /// gitlab-org/gitlab).
    Blocks,
    /// Adds inline code: a backtick anywhere to the next one (`` `\n*.+?\n*` ``), and a fence
    /// needs a newline right after its backticks (` ^```\n `); blank lines after a command are
    /// part of it (mehulagg/gitlab @ 76631f3d). The one whose pass runs the commands in the three
    /// bodies of issue #33 §2, as reported.
    InlineCode,
    /// Inline code anchored to lines (`` ^.*`\n*.+?\n*`$ ``) before HTML and quotes
    /// (gitlabhq/gitlabhq @ 18f78289).
    AnchoredInlineCode,
}

impl Extractor {
    pub const ALL: [Extractor; 3] = [
        Extractor::Blocks,
        Extractor::InlineCode,
        Extractor::AnchoredInlineCode,
    ];

    /// `commands_regex` of this release for `names` (each a literal, joined like
    /// `Regexp.union`).
    pub fn regex(self, names: &[&str]) -> Regex {
        let union = names
            .iter()
            .map(|n| regex::escape(n))
            .collect::<Vec<_>>()
            .join("|");
        let (code, inline, end) = match self {
            Extractor::Blocks => (r"^``` .+? \n```$", None, r"(?:\n|$)"),
            Extractor::InlineCode => (
                r"^```\n .+? \n```$",
                Some(r"`\n* .+? \n*`"),
                r"(?:[\t\n\x0B\x0C\r\ ]*\n|$)",
            ),
            Extractor::AnchoredInlineCode => (
                r"^``` .+? \n```$",
                Some(r"^.*`\n* .+? \n*`$"),
                r"(?:[\t\n\x0B\x0C\r\ ]*\n|$)",
            ),
        };
        let inline = inline
            .map(|i| format!("(?P<inline_code> {i} ) |"))
            .unwrap_or_default();
        let pattern = format!(
            r"(?msix)
                (?P<code> {code} )
              | {inline}
                (?P<html> ^<[^>]+?>\n .+? \n</[^>]+?>$ )
              | (?P<quote> ^>>> .+? \n>>>$ )
              | (?: ^/ (?P<cmd>{union}) (?: [\ ] (?P<arg>[^\n]*) )? {end} )"
        );
        Regex::new(&pattern).expect("the ported extractor pattern compiles")
    }

    /// The commands this release finds in `body` for the issue commands GitLab knows.
    pub fn extract(self, body: &str) -> Vec<ExtractedCommand> {
        static REGEXES: LazyLock<[Regex; 3]> =
            LazyLock::new(|| Extractor::ALL.map(|version| version.regex(ISSUE_COMMAND_NAMES)));
        let index = Extractor::ALL
            .iter()
            .position(|v| *v == self)
            .unwrap_or_default();
        extract_with(&REGEXES[index], body)
    }
}

/// The quick-action names (and aliases) GitLab knows on an issue, in its definition order.
/// Substitutions (`/shrug`) are found like commands; noop commands (`/cc`) are not names.
pub const ISSUE_COMMAND_NAMES: &[&str] = &[
    // issuable_actions.rb
    "close",
    "reopen",
    "title",
    "label",
    "labels",
    "unlabel",
    "remove_label",
    "relabel",
    "todo",
    "done",
    "subscribe",
    "unsubscribe",
    "react",
    "award",
    "shrug",
    "tableflip",
    "severity",
    "confidential",
    // issue_actions.rb
    "due",
    "remove_due_date",
    "board_move",
    "duplicate",
    "clone",
    "move",
    "create_merge_request",
    "zoom",
    "remove_zoom",
    "add_email",
    "remove_email",
    "convert_to_ticket",
    "promote_to_incident",
    "add_contacts",
    "remove_contacts",
    "timeline",
    // issue_and_merge_request_actions.rb
    "assign",
    "unassign",
    "milestone",
    "remove_milestone",
    "copy_metadata",
    "estimate",
    "estimate_time",
    "spend",
    "spent",
    "spend_time",
    "remove_estimate",
    "remove_time_estimate",
    "remove_time_spent",
    "lock",
    "unlock",
];

/// One command GitLab's extractor found: the name lowercased, the argument as captured (GitLab
/// passes it on unstripped; `None` without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtractedCommand {
    pub command: String,
    pub argument: Option<String>,
}

/// `extract_commands` with `regex` (from [`Extractor::regex`]): every command of `body`, in
/// order.
pub fn extract_with(regex: &Regex, body: &str) -> Vec<ExtractedCommand> {
    let content = body.replace('\r', "");
    regex
        .captures_iter(&content)
        .filter_map(|m| {
            let command = m.name("cmd")?.as_str().to_lowercase();
            let argument = m
                .name("arg")
                .map(|a| a.as_str().to_owned())
                .filter(|a| !a.trim().is_empty());
            Some(ExtractedCommand { command, argument })
        })
        .collect()
}

/// The commands GitLab would run for a note `body` on an issue (the release the fake runs).
pub fn extract(body: &str) -> Vec<ExtractedCommand> {
    Extractor::InlineCode.extract(body)
}

/// Runs the quick actions of `body` on the issue and records them. (GitLab also drops the command
/// lines from the stored note; the fake keeps the note as posted, so tests see what was sent.)
pub(crate) fn execute(s: &mut State, project: i64, iid: i64, user: &str, body: &str) {
    let commands: Vec<(String, String)> = extract(body)
        .into_iter()
        .map(|c| (c.command, c.argument.unwrap_or_default().trim().to_owned()))
        .collect();
    if let Some(issue) = s
        .issues
        .iter_mut()
        .find(|i| i.project == project && i.iid == iid)
    {
        for (command, argument) in &commands {
            match command.as_str() {
                "close" => issue.state = "closed".into(),
                "reopen" => issue.state = "opened".into(),
                "confidential" => issue.confidential = true,
                "title" if !argument.is_empty() => issue.title = argument.clone(),
                "label" | "labels" => issue.labels.extend(
                    argument
                        .split_whitespace()
                        .map(|l| l.trim_start_matches('~').to_owned()),
                ),
                "unlabel" | "remove_label" => issue.labels.clear(),
                "assign" => issue.assignees.extend(
                    argument
                        .split_whitespace()
                        .map(|u| u.trim_start_matches('@').to_owned()),
                ),
                "unassign" => issue.assignees.clear(),
                "move" if !argument.is_empty() => {
                    // GitLab copies the issue to the target project and closes this one.
                    issue.moved_to = Some(argument.clone());
                    issue.state = "closed".into();
                }
                _ => {}
            }
        }
    }
    s.quick_actions
        .extend(commands.iter().map(|(command, argument)| FakeQuickAction {
            project,
            issue: iid,
            command: command.clone(),
            argument: argument.clone(),
            user: user.to_owned(),
        }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(version: Extractor, body: &str) -> Vec<String> {
        version
            .extract(body)
            .into_iter()
            .map(|c| c.command)
            .collect()
    }

    #[test]
    fn a_command_is_a_known_name_in_the_first_column() {
        for v in Extractor::ALL {
            assert_eq!(names(v, "/close"), ["close"]);
            assert_eq!(names(v, "hi\n/CLOSE\nthere"), ["close"]);
            assert_eq!(names(v, "/close\n\n\n/reopen"), ["close", "reopen"]);
            assert_eq!(
                v.extract("/move group/project  \nx"),
                [ExtractedCommand {
                    command: "move".into(),
                    argument: Some("group/project  ".into())
                }]
            );
            // Not in the first column, not a known name, not followed by a space or the end.
            for body in [
                " /close",
                "\t/close",
                "x /close",
                "\\/close",
                "/closed",
                "/close\tnow",
                "/usr/bin/true",
            ] {
                assert_eq!(names(v, body), Vec::<String>::new(), "{v:?} {body:?}");
            }
            // `\r` is deleted first.
            assert_eq!(names(v, "hi\r\n\r/close\r\n"), ["close"]);
            assert_eq!(names(v, "/close   \n"), ["close"]);
        }
    }

    /// What each release's pass takes for a block: `true` where `/close` is hidden, per
    /// [`Extractor::ALL`] (`Blocks`, `InlineCode`, `AnchoredInlineCode`).
    #[test]
    fn blocks_the_pass_consumes_hide_commands() {
        for (body, hidden) in [
            ("```\n/close\n```", [true, true, true]),
            // `InlineCode` needs a newline right after the fence's backticks.
            ("```sh\n/close\n```", [true, false, true]),
            ("<details>\n/close\n</details>", [true, true, true]),
            (">>>\n/close\n>>>", [true, true, true]),
            ("a`\n/close\nb`", [false, true, true]),
            // Unclosed blocks hide nothing.
            ("```\n/close", [false, false, false]),
            (">>>\n/close", [false, false, false]),
            ("<p>\n/close", [false, false, false]),
            ("~~~\n/close\n~~~", [false, false, false]),
        ] {
            for (v, hidden) in Extractor::ALL.into_iter().zip(hidden) {
                let want: &[&str] = if hidden { &[] } else { &["close"] };
                assert_eq!(names(v, body), want, "{v:?} {body:?}");
            }
        }
    }

    /// The bodies of issue #33 §2: a reader sees the command inside a fence; the pass closes a
    /// block early and runs it. (`AnchoredInlineCode` takes each whole body for inline code.)
    #[test]
    fn the_pass_closes_blocks_where_a_reader_does_not() {
        for v in [Extractor::Blocks, Extractor::InlineCode] {
            assert_eq!(
                v.extract("<details>\n```\n</details>\n/move attacker/loot\n```"),
                [ExtractedCommand {
                    command: "move".into(),
                    argument: Some("attacker/loot".into())
                }],
                "{v:?}"
            );
            assert_eq!(
                names(v, "```\n```\n```\n/confidential\n```"),
                ["confidential"]
            );
            assert_eq!(names(v, ">>>\n```\n>>>\n/close\n```"), ["close"]);
        }
    }
}
