//! `relay reconcile [--dry-run] [--since DURATION]`: one reconciliation pass now, printing what it
//! found per project and what it recorded (or, with `--dry-run`, would record). The same pass the
//! worker runs every `[reconcile] interval_secs`, under the same lock.

use std::path::Path;

use anyhow::bail;
use clap::Args;
use relay_core::engage::Decision;
use relay_worker::reconcile::{PassOptions, PassReport};

#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// Decide and print, record nothing, move no watermark.
    #[arg(long)]
    pub dry_run: bool,
    /// Look back this far for every project instead of from its watermark (`90s`, `15m`, `6h`,
    /// `2d`).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub since: Option<chrono::Duration>,
}

pub async fn run(config: Option<&Path>, args: ReconcileArgs) -> anyhow::Result<()> {
    let loaded = super::load(config)?;
    let settings = loaded.settings;
    if settings.trackers.is_empty() {
        bail!("no [[trackers]] configured: nothing to reconcile");
    }
    let pool = super::connect(&settings.database).await?;
    let reconciler = super::serve::reconciler(&settings, pool.clone())?;
    let report = reconciler
        .pass(PassOptions {
            dry_run: args.dry_run,
            since: args.since,
        })
        .await?;
    pool.close().await;
    print!("{}", render(&report, args.dry_run));
    if report.locked_out {
        bail!("another process is running a reconcile pass; try again shortly");
    }
    Ok(())
}

fn render(report: &PassReport, dry_run: bool) -> String {
    let mut out = String::new();
    for project in &report.projects {
        let status = match &project.error {
            Some(error) => format!("FAILED: {error}"),
            None => format!("{} event(s)", project.events.len()),
        };
        out.push_str(&format!(
            "{}:{} since {}: {status}\n",
            project.tracker,
            project.project_path,
            project
                .since
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ));
        for event in &project.events {
            let decision = match event.decision {
                Decision::Engage(kind) => format!("engage ({kind})"),
                Decision::Ignore(reason) => format!("ignore ({reason})"),
            };
            let what = match (dry_run, event.recorded, event.decision) {
                (true, _, Decision::Engage(_)) => "would enqueue".to_owned(),
                (true, _, Decision::Ignore(_)) => "would record".to_owned(),
                (false, None, _) => "already recorded".to_owned(),
                (false, Some(Some(job)), _) => format!("enqueued job {job}"),
                (false, Some(None), _) => "recorded".to_owned(),
            };
            out.push_str(&format!(
                "  #{} {} by {}: {decision}, {what}\n",
                event.issue_number, event.event_key, event.actor
            ));
        }
    }
    let failed = report.projects.iter().filter(|p| p.error.is_some()).count();
    out.push_str(&format!(
        "{} project(s), {failed} failed{}\n",
        report.projects.len(),
        if dry_run {
            " (dry run: nothing recorded)"
        } else {
            ""
        }
    ));
    out
}

/// `90s`, `15m`, `6h`, `2d` (a bare number is seconds).
fn parse_duration(raw: &str) -> Result<chrono::Duration, String> {
    let raw = raw.trim();
    let split = raw.find(|c: char| !c.is_ascii_digit()).unwrap_or(raw.len());
    let (digits, unit) = raw.split_at(split);
    let n: i64 = digits
        .parse()
        .map_err(|_| format!("{raw:?} is not a duration such as 90s, 15m, 6h or 2d"))?;
    let secs = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("unknown unit {unit:?}: use s, m, h or d")),
    };
    n.checked_mul(secs)
        .and_then(chrono::Duration::try_seconds)
        .ok_or_else(|| format!("{raw:?} is too long"))
}

#[cfg(test)]
mod tests {
    use super::parse_duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90"), Ok(chrono::Duration::seconds(90)));
        assert_eq!(parse_duration("15m"), Ok(chrono::Duration::minutes(15)));
        assert_eq!(parse_duration("6h"), Ok(chrono::Duration::hours(6)));
        assert_eq!(parse_duration("2d"), Ok(chrono::Duration::days(2)));
        assert!(parse_duration("2w").is_err());
        assert!(parse_duration("h").is_err());
    }
}
