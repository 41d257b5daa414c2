//! The fake GitLab's quick actions: like GitLab, a note created through the API runs every
//! `/command` found at the start of a line outside a fenced code block. Tests assert on [`super::FakeGitLab::quick_actions`] and the
//! issue's state that nothing Relay posts ever runs one.

use super::gitlab::{FakeQuickAction, State};

/// Runs the quick actions of `body` on the issue and records them. (GitLab also drops the command
/// lines from the stored note; the fake keeps the note as posted, so tests see what was sent.)
pub(crate) fn execute(s: &mut State, project: i64, iid: i64, user: &str, body: &str) {
    let commands = relay_core::outgoing::quick_actions(body);
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
                "unlabel" => issue.labels.clear(),
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
