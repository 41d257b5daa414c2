//! The Action contract: what the planner may ask Relay to do, as one batch `{"actions": [...]}`.
//!
//! One set of types serves three purposes so they cannot drift: the JSON schema the planner is
//! given (`schemars::schema_for!(ActionBatch)`), parsing the planner's reply (serde), and what the
//! validator and executor act on. No action can name another issue, project, URL or user: where a
//! write goes is decided by the job, never by the model.
//!
//! Field docs are part of the schema the model reads: keep them short and imperative.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::citation::Citation;

/// Most actions in one batch.
pub const MAX_ACTIONS_PER_BATCH: usize = 10;
/// The longest comment body a tracker takes, in characters (GitHub's hard limit).
pub const TRACKER_COMMENT_CHARS: usize = 65_536;
/// Room for what Relay adds around the planner's text before it is posted: the hidden idempotency
/// marker (under 120 characters) and, on GitHub, a reply's quote of the comment it answers (at
/// most 3 lines of 200 characters and the link line: under 1,100).
pub const COMMENT_OVERHEAD_CHARS: usize = 1_536;
/// Longest comment the planner may write, in characters: with the marker and the quote added it
/// still fits [`TRACKER_COMMENT_CHARS`].
pub const MAX_COMMENT_CHARS: usize = TRACKER_COMMENT_CHARS - COMMENT_OVERHEAD_CHARS;
/// Most findings kept per issue; adding past it drops the oldest.
pub const MAX_FINDINGS_PER_ISSUE: usize = 20;
/// Most gaps one `update_gaps` may add: a planner asking more at once is listing, not asking
/// what changes the plan (the validator refuses the action).
pub const MAX_GAPS_PER_ACTION: usize = 5;
/// Most open gaps an issue may have after a batch: past it the planner must close (answered,
/// inferred, not relevant) before it asks more (the validator refuses the adding action).
pub const MAX_OPEN_GAPS_PER_ISSUE: usize = 20;

/// One planner decision: the actions to take, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionBatch {
    /// The actions, in the order they apply (at most 10).
    pub actions: Vec<Action>,
}

/// One action, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Action {
    /// Post a comment on this issue (a new thread, or a reply in one of its threads).
    PostComment(PostComment),
    /// Ask new questions (gaps) and close answered or settled ones.
    UpdateGaps(UpdateGaps),
    /// Record findings verified in the code, with citations; remove stale ones.
    UpdateFindings(UpdateFindings),
    /// Propose durable facts about this repository or its domain.
    UpdateLearnings(UpdateLearnings),
    /// A human asked to proceed and no blocking gap is open: write the implementation spec.
    ReadyForSpecGeneration(ReadyForSpecGeneration),
    /// A human approved or rejected the posted spec.
    SetSpecStatus(SetSpecStatus),
}

impl Action {
    /// The `type` tag, for error messages and traces.
    pub fn kind(&self) -> &'static str {
        match self {
            Action::PostComment(_) => "post_comment",
            Action::UpdateGaps(_) => "update_gaps",
            Action::UpdateFindings(_) => "update_findings",
            Action::UpdateLearnings(_) => "update_learnings",
            Action::ReadyForSpecGeneration(_) => "ready_for_spec_generation",
            Action::SetSpecStatus(_) => "set_spec_status",
        }
    }
}

/// `post_comment`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PostComment {
    /// Markdown body, 1 to 64,000 characters.
    pub content: String,
    /// Reply in this thread of this issue: the id of a note or discussion shown in the thread.
    /// Omitted: the answer goes where the conversation is (on GitLab, the discussion of the note
    /// that triggered this cycle; a new top-level comment when the issue itself did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
}

/// `update_gaps`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateGaps {
    /// New open questions (at most 5 per action and 20 open per issue; one already asked, open
    /// or closed, is refused).
    #[serde(default)]
    pub add: Vec<NewGap>,
    /// Gaps to close.
    #[serde(default)]
    pub close: Vec<CloseGap>,
}

/// A question whose answer changes the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewGap {
    /// The question, self-contained.
    pub question: String,
    /// How much the plan depends on the answer.
    pub severity: Severity,
    /// Who should answer.
    pub respondent: Respondent,
    /// Why it is asked: what the code or thread shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
}

/// How much the plan depends on a gap's answer.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// No spec can be written before it is answered.
    Blocking,
    High,
    Medium,
    Low,
}

impl Severity {
    pub const ALL: [Severity; 4] = [
        Severity::Blocking,
        Severity::High,
        Severity::Medium,
        Severity::Low,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Blocking => "blocking",
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
        }
    }

    pub fn parse(s: &str) -> Option<Severity> {
        Severity::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// Who should answer a gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Respondent {
    Reporter,
    Assignee,
}

impl Respondent {
    pub fn as_str(self) -> &'static str {
        match self {
            Respondent::Reporter => "reporter",
            Respondent::Assignee => "assignee",
        }
    }

    pub fn parse(s: &str) -> Option<Respondent> {
        [Respondent::Reporter, Respondent::Assignee]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

/// Close one gap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseGap {
    /// The gap's short id as shown: `"3"`, `"gap 3"` or `"#3"`.
    pub gap: String,
    /// Why it is closed.
    pub reason: CloseReason,
    /// `answered`: the human's answer, verbatim: at least one whole sentence of the note
    /// `note_id`. `inferred`: the assumption and its rationale. `not_relevant`: why.
    pub note: String,
    /// `answered` only: the id of the pending note that answers (the id after "Note").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note_id: Option<String>,
}

/// Why a gap was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseReason {
    /// A human answered it.
    Answered,
    /// The code (or the thread) settles it; the note states the assumption.
    Inferred,
    /// It no longer matters.
    NotRelevant,
}

impl CloseReason {
    pub fn as_str(self) -> &'static str {
        match self {
            CloseReason::Answered => "answered",
            CloseReason::Inferred => "inferred",
            CloseReason::NotRelevant => "not_relevant",
        }
    }

    pub fn parse(s: &str) -> Option<CloseReason> {
        [
            CloseReason::Answered,
            CloseReason::Inferred,
            CloseReason::NotRelevant,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// The issue-scoped short number of a gap, parsed from `"3"`, `"gap 3"`, `"Gap #3"` or `"#3"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GapNumber(pub i32);

impl GapNumber {
    pub fn parse(input: &str) -> Option<GapNumber> {
        let trimmed = input.trim();
        let lower = trimmed.to_ascii_lowercase();
        let rest = lower.strip_prefix("gap").unwrap_or(&lower).trim_start();
        let digits = rest.strip_prefix('#').unwrap_or(rest).trim();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse::<i32>().ok().filter(|n| *n > 0).map(GapNumber)
    }
}

impl fmt::Display for GapNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// `update_findings`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateFindings {
    /// New findings (at most 20 are kept per issue; the oldest are dropped; one with the same
    /// synthesis and sources as a live finding is refused).
    #[serde(default)]
    pub add: Vec<NewFinding>,
    /// Short ids of findings to remove, as shown in the context.
    #[serde(default)]
    pub remove: Vec<i32>,
}

/// A fact verified in the code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NewFinding {
    /// What was found, in one or two sentences.
    pub synthesis: String,
    /// Where it was seen: at least one citation of the explored commit.
    pub sources: Vec<Citation>,
}

/// `update_learnings`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateLearnings {
    /// Durable facts worth remembering for every issue of this repository.
    #[serde(default)]
    pub propose: Vec<ProposedLearning>,
}

/// One proposed learning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProposedLearning {
    /// `domain` (the product and its words) or `code` (how the code base works).
    pub kind: LearningKind,
    /// The fact, one sentence.
    pub content: String,
}

/// What a learning is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LearningKind {
    Domain,
    Code,
}

impl LearningKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LearningKind::Domain => "domain",
            LearningKind::Code => "code",
        }
    }

    pub fn parse(s: &str) -> Option<LearningKind> {
        [LearningKind::Domain, LearningKind::Code]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

/// `ready_for_spec_generation`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadyForSpecGeneration {
    /// The human words that said to proceed, verbatim: at least one whole sentence of the
    /// note `proceed_note_id`.
    pub proceed_signal: String,
    /// The id of the pending note that said to proceed (the id after "Note").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proceed_note_id: Option<String>,
    /// What the spec must cover, in a few sentences.
    pub context_summary: String,
    /// Short ids of the closed gaps the spec rests on.
    #[serde(default)]
    pub closed_gaps: Vec<String>,
    /// Short ids of the findings the spec rests on.
    #[serde(default)]
    pub finding_ids: Vec<i32>,
}

/// `set_spec_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetSpecStatus {
    /// The human's verdict on the current spec.
    pub status: SpecVerdict,
    /// Their verdict, verbatim: at least one whole sentence of the note `note_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The id of the pending note that gives the verdict (the id after "Note").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note_id: Option<String>,
}

/// A human's verdict on a posted spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SpecVerdict {
    Approved,
    Rejected,
}

impl SpecVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            SpecVerdict::Approved => "approved",
            SpecVerdict::Rejected => "rejected",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gap_numbers() {
        for (input, want) in [
            ("3", Some(3)),
            ("gap 3", Some(3)),
            ("Gap #12", Some(12)),
            ("#3", Some(3)),
            (" 7 ", Some(7)),
            ("0", None),
            ("gap", None),
            ("3a", None),
            ("-1", None),
            ("99999999999", None),
        ] {
            assert_eq!(GapNumber::parse(input).map(|g| g.0), want, "{input:?}");
        }
    }

    #[test]
    fn batch_round_trips_through_the_tagged_json() {
        let json = serde_json::json!({"actions": [
            {"type": "post_comment", "content": "hi"},
            {"type": "update_gaps", "add": [{"question": "q?", "severity": "blocking", "respondent": "reporter"}],
             "close": [{"gap": "gap 1", "reason": "answered", "note": "yes"}]},
            {"type": "update_findings", "add": [{"synthesis": "s", "sources": [{"path": "a.go", "start_line": 1, "end_line": 2}]}]},
            {"type": "set_spec_status", "status": "approved"}
        ]});
        let batch: ActionBatch = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(batch.actions.len(), 4);
        assert_eq!(batch.actions[1].kind(), "update_gaps");
        assert_eq!(
            serde_json::to_value(&batch).unwrap()["actions"][0],
            json["actions"][0]
        );
    }

    #[test]
    fn unknown_fields_and_targets_are_refused() {
        // A model cannot smuggle a target: there is no field for one.
        let json = serde_json::json!({"actions": [
            {"type": "post_comment", "content": "hi", "issue": 2}
        ]});
        assert!(serde_json::from_value::<ActionBatch>(json).is_err());
    }

    #[test]
    fn schema_names_every_action_type() {
        let schema = serde_json::to_string(&schemars::schema_for!(ActionBatch)).unwrap();
        for kind in [
            "post_comment",
            "update_gaps",
            "update_findings",
            "update_learnings",
            "ready_for_spec_generation",
            "set_spec_status",
        ] {
            assert!(schema.contains(kind), "{kind}");
        }
    }
}
