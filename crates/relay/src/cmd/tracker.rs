//! `relay tracker check NAME [--issue PROJECT#N]`: proves a configured tracker's credentials work
//! before the first webhook does: who the token (or GitHub App) acts as, whether that is the
//! configured `bot_username`, and that the issue can be read. Never prints a secret.

use std::path::Path;

use anyhow::{Context as _, bail};
use clap::Subcommand;
use relay_tracker::{IssueRef, TrackerError};

#[derive(Debug, Subcommand)]
pub enum TrackerCommand {
    /// Check a tracker's credentials: print the bot identity, whether it matches
    /// `bot_username`, and (with --issue) that the issue can be read; exit non-zero with the
    /// classified error otherwise.
    Check {
        /// The tracker's configured name (`[[trackers]] name`).
        name: String,
        /// An issue to read: `owner/repo#12` (GitHub) or `group/project#12` / `42#12` (GitLab).
        #[arg(long, value_name = "PROJECT#N")]
        issue: Option<String>,
    },
}

pub async fn run(config: Option<&Path>, command: TrackerCommand) -> anyhow::Result<()> {
    let loaded = crate::settings::load(config)?;
    let TrackerCommand::Check { name, issue } = command;
    let Some(settings) = loaded
        .settings
        .trackers
        .iter()
        .find(|t| t.name.as_str() == name)
    else {
        let known: Vec<&str> = loaded
            .settings
            .trackers
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        bail!("no tracker named {name:?} is configured (configured: {known:?})");
    };
    let issue = issue.as_deref().map(parse_issue).transpose()?;
    let client = relay_tracker::build(settings).map_err(classified)?;
    let auth = match settings.app_id {
        Some(app_id) => format!("GitHub App {app_id}"),
        None => "token".to_owned(),
    };
    println!(
        "tracker {name}: {} at {} ({auth})",
        settings.provider, settings.base_url
    );

    let me = client.whoami().await.map_err(classified)?;
    match &me.app_slug {
        Some(slug) => println!(
            "authenticated as GitHub App {slug} (comments appear as {})",
            me.login
        ),
        None => println!("authenticated as {}", me.login),
    }
    if !settings.is_bot(&me.login) {
        bail!(
            "bot_username {:?} does not match {:?}: Relay would not recognise its own comments \
             (and could answer itself); set bot_username = {:?}",
            settings.bot(),
            me.login,
            me.app_slug.as_deref().unwrap_or(&me.login)
        );
    }
    println!("bot_username {:?} matches", settings.bot());

    if let Some(issue) = issue {
        let label = format!("{}#{}", issue.project_path, issue.number);
        let got = client
            .get_issue(&issue)
            .await
            .map_err(classified)
            .with_context(|| format!("cannot read issue {label}"))?;
        let thread = client
            .list_thread(&issue)
            .await
            .map_err(classified)
            .with_context(|| format!("cannot read the thread of {label}"))?;
        println!(
            "can read {label}: {:?} ({}), {} comments",
            got.title,
            got.state,
            thread.len()
        );
    }
    Ok(())
}

/// The error with its kind and whether retrying could help, for scripts and people.
fn classified(error: TrackerError) -> anyhow::Error {
    let retry = if error.is_retryable() {
        "retryable"
    } else {
        "permanent"
    };
    anyhow::anyhow!("{error} [{}, {retry}]", error.kind())
}

/// `owner/repo#12`, `group/sub/project#3` or `42#3` (a GitLab project id).
fn parse_issue(raw: &str) -> anyhow::Result<IssueRef> {
    let Some((project, number)) = raw.rsplit_once('#') else {
        bail!("--issue {raw:?}: expected PROJECT#N, e.g. octo-org/hello#12");
    };
    let number: i64 = number
        .parse()
        .ok()
        .filter(|n| *n > 0)
        .with_context(|| format!("--issue {raw:?}: {number:?} is not an issue number"))?;
    if project.is_empty() {
        bail!("--issue {raw:?}: the project is missing");
    }
    let numeric = project.bytes().all(|b| b.is_ascii_digit());
    Ok(IssueRef {
        project_id: if numeric {
            project.to_owned()
        } else {
            String::new()
        },
        project_path: project.to_owned(),
        number,
        installation_id: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_arguments() {
        let i = parse_issue("octo/hello#12").unwrap();
        assert_eq!(
            (i.project_path.as_str(), i.project_id.as_str(), i.number),
            ("octo/hello", "", 12)
        );
        assert_eq!(parse_issue("42#3").unwrap().project_id, "42");
        for bad in ["octo/hello", "#3", "octo/hello#x", "octo/hello#0"] {
            assert!(parse_issue(bad).is_err(), "{bad}");
        }
    }
}
