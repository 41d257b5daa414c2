//! Bounds: per-call output caps ([`ToolLimits`]) and per-job totals ([`JobBudget`]). What a job
//! has explored is recorded by the agent (`relay_agent::thorough::state::TraversalState`).

use serde::{Deserialize, Serialize};

use crate::error::ToolError;
use crate::output::group_thousands;

/// Per-call caps and per-job totals. Every field has a default; [`ToolLimits::unbounded`] turns
/// the output caps off (used by the benchmark).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolLimits {
    /// `grep`: matching lines shown per call (the total is still counted).
    pub grep_max_matches: usize,
    /// `grep`: characters kept per shown line.
    pub grep_max_line_chars: usize,
    /// `grep`: largest accepted `context` value.
    pub grep_max_context: usize,
    /// `read`: lines shown when `limit` is not given.
    pub read_default_lines: usize,
    /// `read`: largest accepted `limit`.
    pub read_max_lines: usize,
    /// `read`: characters kept per line.
    pub read_max_line_chars: usize,
    /// `read`: files larger than this are not counted to the end (only sliced).
    pub read_count_lines_max_bytes: u64,
    /// `read`/`tree`: directory entries listed.
    pub listing_max_entries: usize,
    /// `glob`: paths shown per call.
    pub glob_max_results: usize,
    /// `tree`: depth when not given.
    pub tree_default_depth: usize,
    /// `tree`: largest accepted depth.
    pub tree_max_depth: usize,
    /// `tree`: entries shown before the rest is summarised.
    pub tree_max_entries: usize,
    /// Hard cap on the estimated tokens of one result; longer results are cut with a note.
    pub max_call_tokens: usize,
    /// Per job: how many `read` calls on files are allowed.
    pub job_max_files_read: usize,
    /// Per job: estimated tokens of tool output allowed in total.
    pub job_max_tokens: usize,
    /// Files walked at most when looking for the closest existing path.
    pub fuzzy_max_candidates: usize,
    /// Wall-clock limit of one call, in seconds: past it the call stops (grep returns what it
    /// found so far, marked partial; other tools fail with a "narrow it" message).
    pub call_timeout_secs: u64,
}

impl Default for ToolLimits {
    fn default() -> Self {
        Self {
            grep_max_matches: 50,
            grep_max_line_chars: 300,
            grep_max_context: 10,
            read_default_lines: 200,
            read_max_lines: 500,
            read_max_line_chars: 2_000,
            read_count_lines_max_bytes: 16 * 1024 * 1024,
            listing_max_entries: 200,
            glob_max_results: 100,
            tree_default_depth: 2,
            tree_max_depth: 6,
            tree_max_entries: 400,
            max_call_tokens: 12_000,
            job_max_files_read: 200,
            job_max_tokens: 400_000,
            fuzzy_max_candidates: 200_000,
            call_timeout_secs: 60,
        }
    }
}

impl ToolLimits {
    /// Limits with every output cap off: all matches and all paths are shown. For benchmarks and
    /// debugging only — never give this to an agent.
    pub fn unbounded() -> Self {
        Self {
            grep_max_matches: usize::MAX,
            grep_max_line_chars: usize::MAX,
            glob_max_results: usize::MAX,
            listing_max_entries: usize::MAX,
            tree_max_entries: usize::MAX,
            max_call_tokens: usize::MAX,
            job_max_files_read: usize::MAX,
            job_max_tokens: usize::MAX,
            ..Self::default()
        }
    }
}

/// Running totals for one job, checked before and charged after every call.
#[derive(Debug, Clone, Default)]
pub struct JobBudget {
    /// `read` calls on files so far.
    pub files_read: usize,
    /// Estimated tokens returned so far.
    pub tokens_returned: usize,
    /// Tool calls so far.
    pub calls: usize,
}

impl JobBudget {
    /// Fails when the job has used up its token budget, or (for file reads) its file budget.
    pub fn check(&self, limits: &ToolLimits, reads_file: bool) -> Result<(), ToolError> {
        if self.tokens_returned >= limits.job_max_tokens {
            return Err(ToolError::BudgetExhausted(format!(
                "this job already received ~{} tokens of tool output (limit {}); answer with what you have",
                group_thousands(self.tokens_returned),
                group_thousands(limits.job_max_tokens)
            )));
        }
        if reads_file && self.files_read >= limits.job_max_files_read {
            return Err(ToolError::BudgetExhausted(format!(
                "this job already read {} files (limit {}); use grep to target what you still need",
                group_thousands(self.files_read),
                group_thousands(limits.job_max_files_read)
            )));
        }
        Ok(())
    }

    /// Records one finished call.
    pub fn charge(&mut self, tokens: usize, file_read: bool) {
        self.calls += 1;
        self.tokens_returned = self.tokens_returned.saturating_add(tokens);
        if file_read {
            self.files_read += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_refuses_when_exhausted() {
        let limits = ToolLimits {
            job_max_tokens: 100,
            job_max_files_read: 2,
            ..ToolLimits::default()
        };
        let mut budget = JobBudget::default();
        budget.charge(10, true);
        budget.check(&limits, true).unwrap();
        budget.charge(10, true);
        let error = budget.check(&limits, true).unwrap_err();
        assert!(
            error.to_string().contains("read 2 files (limit 2)"),
            "{error}"
        );
        budget.check(&limits, false).unwrap();
        budget.charge(90, false);
        let error = budget.check(&limits, false).unwrap_err();
        assert!(error.to_string().contains("~110 tokens"), "{error}");
        assert_eq!(budget.calls, 3);
    }
}
