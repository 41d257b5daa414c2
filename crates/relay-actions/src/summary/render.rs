//! The living summary's Markdown: open questions by severity, findings with their citations as
//! links to the commit and their status, the spec's state, and what Relay spent.

use std::fmt::Write as _;

use relay_store::browse::RoleSpend;
use relay_store::findings::{FindingRow, SourceStatus};
use relay_store::gaps::GapRow;
use relay_store::specs::SpecRow;

/// Longest line of model-written text (a question, a finding) the summary shows.
const MAX_TEXT_CHARS: usize = 300;

/// Everything the summary shows about one issue.
#[derive(Debug, Clone)]
pub struct SummaryInput<'a> {
    /// The issue's web URL (`…/issues/7` or `…/-/issues/7`): citation links are built from it.
    pub issue_url: &'a str,
    pub gaps: &'a [GapRow],
    pub findings: &'a [FindingRow],
    pub spec: Option<&'a SpecRow>,
    pub spend: &'a [RoleSpend],
}

const SEVERITIES: [&str; 4] = ["blocking", "high", "medium", "low"];

/// The summary's content (without its marker).
pub fn render(input: &SummaryInput<'_>) -> String {
    let mut out = String::from("### Relay summary\n\n**Open questions**\n");
    let open: Vec<&GapRow> = input.gaps.iter().filter(|g| g.is_open()).collect();
    if open.is_empty() {
        out.push_str("- none\n");
    }
    for severity in SEVERITIES {
        for gap in open.iter().filter(|g| g.severity == severity) {
            let _ = writeln!(
                out,
                "- **{severity}** (gap {}, for the {}): {}",
                gap.number,
                gap.respondent,
                inline(&gap.question)
            );
        }
    }
    out.push_str("\n**Findings**\n");
    if input.findings.is_empty() {
        out.push_str("- none\n");
    }
    let blob = blob_base(input.issue_url);
    for finding in input.findings {
        let flag = if finding.stale { " — **stale**" } else { "" };
        let _ = writeln!(out, "- **{}.** {}{flag}", finding.number, inline(&finding.synthesis));
        for source in &finding.sources {
            let place = if source.start_line == source.end_line {
                format!("{}:{}", source.path, source.start_line)
            } else {
                format!("{}:{}-{}", source.path, source.start_line, source.end_line)
            };
            let short = &source.commit_sha[..source.commit_sha.len().min(12)];
            let cited = match &blob {
                Some(blob) => format!("[`{}`]({})", inline(&place), blob.link(source)),
                None => format!("`{}`", inline(&place)),
            };
            let status = match source.status {
                SourceStatus::Verified => format!("verified at `{short}`"),
                SourceStatus::Stale => format!("stale: no longer matches; last verified at `{short}`"),
            };
            let moved = source.moved_from.as_ref().map_or(String::new(), |m| {
                format!(" (moved from `{}:{}`)", inline(&m.path), m.start_line)
            });
            let _ = writeln!(out, "  - {cited}: {status}{moved}");
        }
    }
    out.push_str("\n**Spec**: ");
    match input.spec {
        Some(spec) => {
            let _ = writeln!(out, "version {}, {}", spec.version, spec.status);
        }
        None => out.push_str("not written yet\n"),
    }
    let sources: Vec<_> = input.findings.iter().flat_map(|f| &f.sources).collect();
    let verified = sources
        .iter()
        .filter(|s| s.status == SourceStatus::Verified)
        .count();
    let spent = if input.spend.is_empty() {
        "no LLM calls yet".to_owned()
    } else {
        input
            .spend
            .iter()
            .map(|r| {
                format!(
                    "{} {} tokens ({} calls)",
                    r.role,
                    r.prompt_tokens + r.completion_tokens,
                    r.calls
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = write!(
        out,
        "\n---\n<sub>Relay spent on this issue: {spent}. Citations verified: {verified} of {}.</sub>",
        sources.len()
    );
    out
}

/// Model-written text on one line: no newlines, no mentions (a summary pings nobody), no hidden
/// markers, bounded.
fn inline(text: &str) -> String {
    let one_line = crate::summary::neutralise(&collapse(text));
    if one_line.chars().count() > MAX_TEXT_CHARS {
        let cut: String = one_line.chars().take(MAX_TEXT_CHARS).collect();
        format!("{cut}…")
    } else {
        one_line
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Where file links at a commit start, derived from the issue's URL.
struct BlobBase {
    project: String,
    gitlab: bool,
}

impl BlobBase {
    fn link(&self, source: &relay_store::findings::SourceRow) -> String {
        let path: String = source
            .path
            .chars()
            .map(|c| match c {
                ' ' => "%20".to_owned(),
                '(' => "%28".to_owned(),
                ')' => "%29".to_owned(),
                '#' => "%23".to_owned(),
                '?' => "%3F".to_owned(),
                c => c.to_string(),
            })
            .collect();
        if self.gitlab {
            format!(
                "{}/-/blob/{}/{path}#L{}-{}",
                self.project, source.commit_sha, source.start_line, source.end_line
            )
        } else {
            format!(
                "{}/blob/{}/{path}#L{}-L{}",
                self.project, source.commit_sha, source.start_line, source.end_line
            )
        }
    }
}

fn blob_base(issue_url: &str) -> Option<BlobBase> {
    if !(issue_url.starts_with("https://") || issue_url.starts_with("http://")) {
        return None;
    }
    if let Some((project, _)) = issue_url.rsplit_once("/-/issues/") {
        return Some(BlobBase {
            project: project.to_owned(),
            gitlab: true,
        });
    }
    issue_url.rsplit_once("/issues/").map(|(project, _)| BlobBase {
        project: project.to_owned(),
        gitlab: false,
    })
}
