//! The living summary's Markdown: open questions by severity, findings with their citations as
//! links to the commit and their status, the spec's state, and what Relay spent.

use std::fmt::Write as _;

use relay_core::prices::{Cost, Prices};
use relay_core::tracker::web::{self, FileAt};
use relay_store::findings::{FindingRow, SourceRow, SourceStatus};
use relay_store::gaps::{GapEvidence, GapRow, GapSources};
use relay_store::specs::SpecRow;
use relay_store::status::RoleModelSpend;

/// Longest line of model-written text (a question, a finding) the summary shows.
const MAX_TEXT_CHARS: usize = 300;

/// Everything the summary shows about one issue.
#[derive(Debug, Clone)]
pub struct SummaryInput<'a> {
    /// The issue's web URL (`…/issues/7` or `…/-/issues/7`): citation links are built from it.
    pub issue_url: &'a str,
    pub gaps: &'a [GapRow],
    /// The code places the gaps' evidence cites, by gap number.
    pub gap_evidence: &'a [GapEvidence],
    pub findings: &'a [FindingRow],
    /// Numbers of the gaps and findings drawn with a GitLab internal note in context: the
    /// summary is a public comment, so it leaves them out and only says how many.
    pub internal_gaps: &'a [i32],
    pub internal_findings: &'a [i32],
    pub spec: Option<&'a SpecRow>,
    /// Tokens per role and model.
    pub spend: &'a [RoleModelSpend],
    /// `[prices]`: the footer shows a cost when it knows a model.
    pub prices: &'a Prices,
}

const SEVERITIES: [&str; 4] = ["blocking", "high", "medium", "low"];

/// The summary's content (without its marker).
pub fn render(input: &SummaryInput<'_>) -> String {
    let mut out = String::from("### Relay summary\n\n**Open questions**\n");
    let open: Vec<&GapRow> = input
        .gaps
        .iter()
        .filter(|g| g.is_open() && !input.internal_gaps.contains(&g.number))
        .collect();
    let withheld_gaps = input
        .gaps
        .iter()
        .filter(|g| g.is_open() && input.internal_gaps.contains(&g.number))
        .count();
    if open.is_empty() && withheld_gaps == 0 {
        out.push_str("- none\n");
    }
    for severity in SEVERITIES {
        for gap in open.iter().filter(|g| g.severity == severity) {
            let evidence = GapSources::of(input.gap_evidence, gap.number);
            let flag = if evidence.stale() {
                " — evidence **stale**"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "- **{severity}** (gap {}, for the {}): {}{flag}",
                gap.number,
                gap.respondent,
                inline(&gap.question)
            );
            for source in evidence.sources {
                let _ = writeln!(out, "  - evidence {}", source_line(input.issue_url, source));
            }
        }
    }
    withheld(&mut out, withheld_gaps, "question");
    out.push_str("\n**Findings**\n");
    let findings: Vec<&FindingRow> = input
        .findings
        .iter()
        .filter(|f| !input.internal_findings.contains(&f.number))
        .collect();
    let withheld_findings = input.findings.len() - findings.len();
    if input.findings.is_empty() {
        out.push_str("- none\n");
    }
    for finding in findings.iter().copied() {
        let flag = if finding.stale { " — **stale**" } else { "" };
        let _ = writeln!(
            out,
            "- **{}.** {}{flag}",
            finding.number,
            inline(&finding.synthesis)
        );
        for source in &finding.sources {
            let _ = writeln!(out, "  - {}", source_line(input.issue_url, source));
        }
    }
    withheld(&mut out, withheld_findings, "finding");
    out.push_str("\n**Spec**: ");
    match input.spec {
        Some(spec) => {
            let _ = writeln!(out, "version {}, {}", spec.version, spec.status);
        }
        None => out.push_str("not written yet\n"),
    }
    let open_numbers: Vec<i32> = open.iter().map(|g| g.number).collect();
    let sources: Vec<&SourceRow> = findings
        .iter()
        .flat_map(|f| &f.sources)
        .chain(
            input
                .gap_evidence
                .iter()
                .filter(|e| open_numbers.contains(&e.gap_number))
                .map(|e| &e.source),
        )
        .collect();
    let verified = sources
        .iter()
        .filter(|s| s.status == SourceStatus::Verified)
        .count();
    let mut roles: Vec<&str> = input.spend.iter().map(|s| s.role.as_str()).collect();
    roles.dedup();
    let mut cost = Cost::default();
    let spent = if roles.is_empty() {
        "no LLM calls yet".to_owned()
    } else {
        roles
            .iter()
            .map(|role| {
                let rows = input.spend.iter().filter(|s| s.role == *role);
                let (mut tokens, mut calls) = (0, 0);
                for row in rows {
                    tokens += row.prompt_tokens + row.completion_tokens;
                    calls += row.calls;
                    cost.add(
                        input.prices,
                        &row.model,
                        row.prompt_tokens.max(0) as u64,
                        row.cached_tokens.max(0) as u64,
                        row.completion_tokens.max(0) as u64,
                    );
                }
                format!("{role} {tokens} tokens ({calls} calls)")
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    // A cost only when `[prices]` knows some model: "no price" says nothing worth a line.
    let spent = if cost.usd > 0.0 {
        format!("{spent}, about {}", cost.describe())
    } else {
        spent
    };
    let _ = write!(
        out,
        "\n---\n<sub>Relay spent on this issue: {spent}. Citations verified: {verified} of {}.</sub>",
        sources.len()
    );
    out
}

/// The line saying how many items drawn from internal notes this public comment leaves out.
fn withheld(out: &mut String, count: usize, what: &str) {
    if count > 0 {
        let _ = writeln!(
            out,
            "- {count} {what}{} drawn from internal notes: not shown in this public comment",
            if count == 1 { "" } else { "s" }
        );
    }
}

/// One cited source: its place (a link at its commit when the tracker is known), its status, and
/// where it moved from.
fn source_line(issue_url: &str, source: &SourceRow) -> String {
    let place = if source.start_line == source.end_line {
        format!("{}:{}", source.path, source.start_line)
    } else {
        format!("{}:{}-{}", source.path, source.start_line, source.end_line)
    };
    let short = &source.commit_sha[..source.commit_sha.len().min(12)];
    let file = FileAt {
        path: &source.path,
        commit: &source.commit_sha,
        start_line: source.start_line,
        end_line: source.end_line,
    };
    // The issue's tracker goes by its URL's shape here: the summary is rendered from the store.
    let cited = match web::file_url(None, issue_url, &file) {
        Some(link) => format!("[`{}`]({link})", inline(&place)),
        None => format!("`{}`", inline(&place)),
    };
    let status = match source.status {
        SourceStatus::Verified => format!("verified at `{short}`"),
        SourceStatus::Stale => format!("stale: no longer matches; last verified at `{short}`"),
    };
    let moved = source.moved_from.as_ref().map_or(String::new(), |m| {
        format!(" (moved from `{}:{}`)", inline(&m.path), m.start_line)
    });
    format!("{cited}: {status}{moved}")
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

#[cfg(test)]
mod tests {
    use super::*;
    use relay_store::findings::{Position, SourceRow};

    fn gap(number: i32, severity: &str, question: &str, open: bool) -> GapRow {
        GapRow {
            id: i64::from(number),
            issue_id: relay_core::IssueId(1),
            number,
            question: question.into(),
            severity: severity.into(),
            respondent: "reporter".into(),
            evidence: None,
            status: if open { "open" } else { "closed" }.into(),
            close_reason: (!open).then(|| "answered".into()),
            close_note: None,
            opened_by_run: None,
            closed_by_run: None,
            created_at: chrono::Utc::now(),
            closed_at: None,
        }
    }

    fn finding(stale: bool) -> FindingRow {
        FindingRow {
            id: 1,
            issue_id: relay_core::IssueId(1),
            number: 3,
            synthesis: "Timeouts are fixed, ask @alice\n<!-- relay:write:x -->".into(),
            created_by_run: None,
            created_at: chrono::Utc::now(),
            sources: vec![SourceRow {
                path: "app/settings.py".into(),
                start_line: 9,
                end_line: 10,
                quote: None,
                commit_sha: "0123456789abcdef0123456789abcdef01234567".into(),
                status: if stale {
                    SourceStatus::Stale
                } else {
                    SourceStatus::Verified
                },
                moved_from: Some(Position {
                    path: "app/settings.py".into(),
                    start_line: 6,
                    end_line: 7,
                }),
            }],
            stale,
        }
    }

    #[test]
    fn questions_by_severity_findings_with_links_and_status() {
        let gaps = [
            gap(1, "low", "Which log level?", true),
            gap(2, "blocking", "CLI or server?", true),
            gap(3, "high", "Answered one", false),
        ];
        let findings = [finding(false)];
        let mut stale_evidence = finding(true).sources[0].clone();
        stale_evidence.path = "app/cli.py".into();
        let evidence = [
            GapEvidence {
                gap_number: 2,
                source: stale_evidence,
            },
            GapEvidence {
                gap_number: 3,
                source: finding(false).sources[0].clone(),
            },
        ];
        let spend = [
            RoleModelSpend {
                role: "planner".into(),
                model: "big".into(),
                calls: 1,
                prompt_tokens: 60,
                completion_tokens: 10,
                cached_tokens: 0,
            },
            RoleModelSpend {
                role: "planner".into(),
                model: "unpriced".into(),
                calls: 1,
                prompt_tokens: 40,
                completion_tokens: 10,
                cached_tokens: 0,
            },
        ];
        let prices = Prices::from([(
            "big".to_owned(),
            relay_core::prices::ModelPrice {
                input: 1_000.0,
                output: 2_000.0,
                cached_input: None,
            },
        )]);
        let body = render(&SummaryInput {
            issue_url: "https://github.com/octo/repo/issues/1",
            gaps: &gaps,
            gap_evidence: &evidence,
            findings: &findings,
            internal_gaps: &[],
            internal_findings: &[],
            spec: None,
            spend: &spend,
            prices: &prices,
        });
        let blocking = body.find("CLI or server?").unwrap();
        let low = body.find("Which log level?").unwrap();
        assert!(blocking < low, "{body}");
        assert!(!body.contains("Answered one"), "{body}");
        assert!(body.contains(
            "[`app/settings.py:9-10`](https://github.com/octo/repo/blob/0123456789abcdef0123456789abcdef01234567/app/settings.py#L9-L10): verified at `0123456789ab` (moved from `app/settings.py:6`)"
        ), "{body}");
        assert!(
            body.contains("@\u{2060}alice"),
            "mentions never ping: {body}"
        );
        assert!(!body.contains("<!-- relay:write:x"), "{body}");
        // 60 × $1,000 + 10 × $2,000 per million tokens = $0.08; the other model has no price.
        assert!(
            body.contains("planner 120 tokens (2 calls), about $0.08 + unpriced."),
            "{body}"
        );
        assert!(
            body.contains("CLI or server? — evidence **stale**\n  - evidence [`app/cli.py:9-10`]"),
            "{body}"
        );
        assert!(
            body.contains("Citations verified: 1 of 2."),
            "a closed gap's evidence is not counted: {body}"
        );

        let findings = [finding(true)];
        let body = render(&SummaryInput {
            issue_url: "https://gitlab.example.com/g/p/-/issues/1",
            gaps: &[],
            gap_evidence: &[],
            findings: &findings,
            internal_gaps: &[],
            internal_findings: &[],
            spec: None,
            spend: &[],
            prices: &Prices::new(),
        });
        assert!(body.contains("— **stale**"), "{body}");
        assert!(
            body.contains(
                "/g/p/-/blob/0123456789abcdef0123456789abcdef01234567/app/settings.py#L9-10"
            ),
            "{body}"
        );
        assert!(
            body.contains("stale: no longer matches; last verified at `0123456789ab`"),
            "{body}"
        );
        assert!(body.contains("Citations verified: 0 of 1."), "{body}");
    }

    #[test]
    fn what_was_drawn_from_internal_notes_stays_out_of_the_public_summary() {
        let gaps = [
            gap(1, "high", "Is the vault key rotated?", true),
            gap(2, "low", "Which log level?", true),
        ];
        let findings = [finding(false)];
        let body = render(&SummaryInput {
            issue_url: "https://gitlab.example.com/g/p/-/issues/1",
            gaps: &gaps,
            gap_evidence: &[],
            findings: &findings,
            internal_gaps: &[1],
            internal_findings: &[findings[0].number],
            spec: None,
            spend: &[],
            prices: &Prices::new(),
        });
        assert!(!body.contains("vault"), "{body}");
        assert!(!body.contains("Timeouts are fixed"), "{body}");
        assert!(body.contains("Which log level?"), "{body}");
        assert!(
            body.contains(
                "- 1 question drawn from internal notes: not shown in this public comment"
            ),
            "{body}"
        );
        assert!(
            body.contains(
                "- 1 finding drawn from internal notes: not shown in this public comment"
            ),
            "{body}"
        );
        assert!(body.contains("Citations verified: 0 of 0."), "{body}");
    }
}
