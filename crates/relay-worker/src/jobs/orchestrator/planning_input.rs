//! What a cycle plans from: the issue's rows as the store holds them with the pending events
//! ([`PlanningInput`]), the thread's notes ([`Note`]), and the ContextBuilder's input built from
//! both ([`build`]).

use relay_agent::context::{
    ClosedGapView, FindingView, IssueContext, LearningView, OpenGapView, SpecView, ThreadNoteView,
    TriggerView,
};
use relay_core::Citation;
use relay_core::action::{CloseReason, LearningKind, Respondent, Severity};
use relay_store::PgConnection;
use relay_store::findings::FindingRow;
use relay_store::gaps::GapRow;
use relay_store::issues::{IssueEventRow, IssueRow, NoteRow};
use relay_store::learnings::LearningRow;
use relay_store::specs::SpecRow;
use relay_tracker::{AuthorRole, ThreadNote};

use super::pending::AnsweredCommand;
use relay_core::IssueId;

/// Everything the planner's context and the validator's are made of, as the store returns it:
/// the issue's state (`relay_store::issue_state`), the learnings it may see and the pending
/// events the cycle answers.
#[derive(Debug, Clone)]
pub struct PlanningInput {
    pub issue: IssueRow,
    pub gaps: Vec<GapRow>,
    pub findings: Vec<FindingRow>,
    pub learnings: Vec<LearningRow>,
    pub spec: Option<SpecRow>,
    pub events: Vec<IssueEventRow>,
}

/// One thread note with what is known of its author.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub note_id: String,
    pub discussion_id: Option<String>,
    pub author: String,
    pub author_role: Option<AuthorRole>,
    pub by_bot: bool,
    pub body: String,
    /// A GitLab internal note: members only; what the context draws from it stays in the issue.
    pub internal: bool,
    pub created_at: chrono::DateTime<chrono::Utc>,
}

impl From<&ThreadNote> for Note {
    fn from(note: &ThreadNote) -> Self {
        Note {
            note_id: note.note.note_id.clone(),
            discussion_id: note.note.discussion_id.clone(),
            author: note.note.author.clone(),
            author_role: note.author_role,
            by_bot: note.by_bot,
            body: note.note.body.clone(),
            internal: note.note.internal,
            created_at: note.note.created_at,
        }
    }
}

impl Note {
    /// A cached note (`issue_notes`): the bot is recognised by its logins.
    pub fn cached(row: &NoteRow, bot: &relay_core::BotAccount) -> Self {
        Note {
            note_id: row.note_id.clone(),
            discussion_id: row.discussion_id.clone(),
            author: row.author.clone(),
            author_role: None,
            by_bot: bot.is(&row.author),
            body: row.body.clone(),
            internal: row.internal,
            created_at: row.created_at,
        }
    }
}

/// Loads the issue's state with `events`, the pending events the job read (one connection, no
/// transaction needed: the planner reads a consistent-enough view, and the Validator re-checks
/// everything before a write).
pub async fn load(
    conn: &mut PgConnection,
    issue_id: IssueId,
    events: &[IssueEventRow],
) -> anyhow::Result<Option<PlanningInput>> {
    let Some(relay_store::issue_state::IssueState {
        issue,
        gaps,
        findings,
        spec,
        ..
    }) = relay_store::issue_state::load(conn, issue_id).await?
    else {
        return Ok(None);
    };
    // Only what may cross issues: never a confidential issue's learnings, nor those drawn from
    // an internal note, unless they came from this issue.
    let learnings = relay_store::learnings::for_issue_context(
        conn,
        &issue.tracker,
        &issue.project_id,
        issue_id,
    )
    .await?;
    Ok(Some(PlanningInput {
        issue,
        gaps,
        findings,
        learnings,
        spec,
        events: events.to_vec(),
    }))
}

/// The ContextBuilder's input. Rows with values outside the schema's CHECKs cannot exist; they
/// are skipped rather than trusted if they ever do.
pub fn build(state: &PlanningInput, thread: &[Note]) -> IssueContext {
    let issue = &state.issue;
    let mut open_gaps = Vec::new();
    let mut closed_gaps = Vec::new();
    for gap in &state.gaps {
        if gap.status == "open" {
            let (Some(severity), Some(respondent)) = (
                Severity::parse(&gap.severity),
                Respondent::parse(&gap.respondent),
            ) else {
                continue;
            };
            open_gaps.push(OpenGapView {
                number: gap.number,
                question: gap.question.clone(),
                severity,
                respondent,
                evidence: gap.evidence.clone(),
            });
        } else if let Some(reason) = gap.close_reason.as_deref().and_then(CloseReason::parse) {
            closed_gaps.push(ClosedGapView {
                number: gap.number,
                question: gap.question.clone(),
                reason,
                note: gap.close_note.clone().unwrap_or_default(),
            });
        }
    }
    IssueContext {
        title: issue.title.clone(),
        body: issue.body.clone(),
        labels: issue.labels.clone(),
        reporter: (!issue.author.is_empty()).then(|| issue.author.clone()),
        assignees: issue.assignees.clone(),
        open_gaps,
        closed_gaps,
        findings: state
            .findings
            .iter()
            .map(|f| FindingView {
                id: f.number,
                synthesis: f.synthesis.clone(),
                sources: f
                    .sources
                    .iter()
                    .map(|s| Citation {
                        path: s.path.clone(),
                        start_line: u32::try_from(s.start_line).unwrap_or(0),
                        end_line: u32::try_from(s.end_line).unwrap_or(0),
                        quote: s.quote.clone(),
                    })
                    .collect(),
                stale: f.stale,
            })
            .collect(),
        learnings: state
            .learnings
            .iter()
            .filter_map(|l| {
                Some(LearningView {
                    kind: LearningKind::parse(&l.kind)?,
                    content: l.content.clone(),
                    origin: match l.issue_id {
                        Some(id) if id == issue.id => Some("this issue".to_owned()),
                        Some(_) => Some("another issue of this repository".to_owned()),
                        None => None,
                    },
                })
            })
            .collect(),
        spec: state.spec.as_ref().map(|s| SpecView {
            version: s.version,
            status: s.status.clone(),
            body: s.body.clone(),
        }),
        thread: thread
            .iter()
            .map(|n| ThreadNoteView {
                note_id: n.note_id.clone(),
                discussion_id: n.discussion_id.clone(),
                author: n.author.clone(),
                author_role: n.author_role.map(role_name),
                by_bot: n.by_bot,
                body: n.body.clone(),
                internal: n.internal,
                created_at: Some(n.created_at),
            })
            .collect(),
        triggers: state
            .events
            .iter()
            .map(|e| TriggerView {
                kind: e.kind.clone(),
                actor: if e.actor.is_empty() {
                    "unknown".into()
                } else {
                    e.actor.clone()
                },
                note_id: e.note_id.clone(),
            })
            .collect(),
        // Filled by the cycle, which knows the job's per-event decisions and the outbox.
        context_only_actors: Vec::new(),
        failed_writes: Vec::new(),
        // Filled by the cycle from the job's repository configuration.
        guidance: Default::default(),
    }
}

/// Marks the triggers of commands Relay already answered (`@bot help`, …) as such, so the
/// planner never takes one for a question, an approval or an answer.
pub fn mark_answered_commands(
    input: &mut IssueContext,
    state: &PlanningInput,
    answered: &[AnsweredCommand],
) {
    // `build` makes one trigger per pending event, in order.
    for (event, trigger) in state.events.iter().zip(input.triggers.iter_mut()) {
        if let Some(command) = answered.iter().find(|c| c.event_id == event.id) {
            trigger.kind = format!(
                "command `{}` (Relay answered it already: not a question, approval or answer)",
                command.name
            );
        }
    }
}

/// Counts one prompt use of the first `shown` learnings (those the context showed; forgotten
/// ones are never loaded). A failure is a warning: counting never stops a cycle.
pub async fn count_shown_learnings(conn: &mut PgConnection, state: &PlanningInput, shown: usize) {
    let ids: Vec<i64> = state
        .learnings
        .iter()
        .filter(|l| LearningKind::parse(&l.kind).is_some())
        .take(shown)
        .map(|l| l.id)
        .collect();
    if let Err(error) = relay_store::learnings::mark_used(conn, &ids).await {
        tracing::warn!(error.message = %error, "failed to count the learnings' use");
    }
}

/// Where Relay answers (a status comment, or a comment without `reply_to`): a reply to the newest pending event's note when that note sits
/// in a thread discussion (GitLab), so the status lands where the asker looks (the planner would
/// reply there too); `None` (a new comment) otherwise. GitHub notes have no discussion, and an
/// issue comment there cannot be threaded, so GitHub keeps a plain comment.
pub fn status_reply_to(events: &[IssueEventRow], thread: &[Note]) -> Option<String> {
    let note_id = events.iter().rev().find_map(|e| e.note_id.as_deref())?;
    thread
        .iter()
        .find(|n| n.note_id == note_id && n.discussion_id.is_some())
        .map(|n| n.note_id.clone())
}

/// The role as shown to the model.
pub fn role_name(role: AuthorRole) -> String {
    match role {
        AuthorRole::Owner => "owner",
        AuthorRole::Member => "member",
        AuthorRole::Collaborator => "collaborator",
        AuthorRole::Contributor => "contributor",
        AuthorRole::None => "no role",
    }
    .to_owned()
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use relay_store::findings::SourceRow;

    use super::*;

    fn at() -> chrono::DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 2, 9, 0, 0).unwrap()
    }

    fn gap(number: i32, status: &str, reason: Option<&str>) -> GapRow {
        GapRow {
            id: i64::from(number),
            issue_id: IssueId(1),
            number,
            question: format!("q{number}?"),
            severity: "blocking".into(),
            respondent: "reporter".into(),
            evidence: None,
            status: status.into(),
            close_reason: reason.map(str::to_owned),
            close_note: reason.map(|_| "yes".to_owned()),
            opened_by_run: None,
            closed_by_run: None,
            created_at: at(),
            closed_at: None,
        }
    }

    #[test]
    fn store_rows_and_thread_become_the_context_input() {
        let state = PlanningInput {
            issue: IssueRow {
                id: IssueId(1),
                tracker: "github".into(),
                project_id: "42".into(),
                project_path: "acme/app".into(),
                number: 7,
                title: "t".into(),
                body: "b".into(),
                state: "open".into(),
                labels: vec!["bug".into()],
                author: "alice".into(),
                assignees: vec![],
                url: "https://example.test/7".into(),
                confidential: false,
                updated_at: at(),
                installation_id: None,
                project_visibility: None,
            },
            gaps: vec![gap(1, "closed", Some("answered")), gap(2, "open", None)],
            findings: vec![FindingRow {
                id: 1,
                issue_id: IssueId(1),
                number: 3,
                synthesis: "s".into(),
                created_by_run: None,
                created_at: at(),
                sources: vec![SourceRow {
                    path: "a.go".into(),
                    start_line: 1,
                    end_line: 2,
                    quote: None,
                    commit_sha: "abc".into(),
                    ..Default::default()
                }],
                stale: false,
            }],
            learnings: vec![],
            spec: None,
            events: vec![IssueEventRow {
                id: 9,
                actor_id: None,
                kind: "mention".into(),
                actor: "alice".into(),
                note_id: Some("5".into()),
                created_at: at(),
                trigger_labels: None,
            }],
        };
        let thread = vec![
            Note::cached(
                &NoteRow {
                    note_id: "5".into(),
                    discussion_id: None,
                    author: "Relay-Bot".into(),
                    body: "hello".into(),
                    internal: false,
                    created_at: at(),
                },
                &relay_core::BotAccount::new("relay-bot"),
            ),
            Note {
                note_id: "6".into(),
                discussion_id: None,
                author: "alice".into(),
                author_role: Some(AuthorRole::Member),
                by_bot: false,
                body: "hi".into(),
                internal: false,
                created_at: at(),
            },
        ];
        let context = build(&state, &thread);
        assert_eq!(context.reporter.as_deref(), Some("alice"));
        assert_eq!(context.open_gaps.len(), 1);
        assert_eq!(context.open_gaps[0].number, 2);
        assert_eq!(context.closed_gaps[0].reason, CloseReason::Answered);
        assert_eq!(context.findings[0].id, 3);
        assert_eq!(context.findings[0].sources[0].to_string(), "a.go:1-2");
        assert!(context.thread[0].by_bot);
        assert_eq!(context.thread[1].author_role.as_deref(), Some("member"));
        assert_eq!(context.triggers[0].note_id.as_deref(), Some("5"));
    }

    fn event(id: i64, note_id: Option<&str>) -> IssueEventRow {
        IssueEventRow {
            id,
            kind: "mention".into(),
            actor: "alice".into(),
            actor_id: None,
            note_id: note_id.map(str::to_owned),
            created_at: chrono::Utc::now(),
            trigger_labels: None,
        }
    }

    fn note(note_id: &str, discussion_id: Option<&str>) -> Note {
        Note {
            note_id: note_id.into(),
            discussion_id: discussion_id.map(str::to_owned),
            author: "alice".into(),
            author_role: None,
            by_bot: false,
            body: "@relay-bot hi".into(),
            internal: false,
            created_at: chrono::Utc::now(),
        }
    }

    #[test]
    fn the_status_replies_to_the_newest_triggering_note_in_its_discussion() {
        let thread = [note("1", Some("d1")), note("2", Some("d2"))];
        let events = [event(10, Some("1")), event(11, Some("2")), event(12, None)];
        assert_eq!(status_reply_to(&events, &thread).as_deref(), Some("2"));
        // GitHub: no discussions, a plain comment.
        let github = [note("1", None)];
        assert_eq!(status_reply_to(&events[..1], &github), None);
        // A note no longer in the thread (deleted): a plain comment.
        assert_eq!(status_reply_to(&[event(13, Some("9"))], &thread), None);
        // A label or assignment event names no note.
        assert_eq!(status_reply_to(&[event(14, None)], &thread), None);
    }
}
