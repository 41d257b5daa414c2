//! Thorough mode's bounds: one named constant and one counter each, so every limit is enforced in
//! one place and a hit names the bound that stopped the work.

/// Tokens of one `tree` step's output.
pub const STEP_TREE_TOKENS: u64 = 2_000;
/// Tokens of one file slice.
pub const STEP_FILE_SLICE_TOKENS: u64 = 4_000;
/// Matches of one grep step.
pub const STEP_GREP_MATCHES: usize = 50;
/// Symbols of one code-graph step.
pub const STEP_SYMBOLS: usize = 100;

/// Distinct files read per query.
pub const QUERY_FILES: usize = 10;
/// Code tokens per query (all tool output together).
pub const QUERY_CODE_TOKENS: u64 = 25_000;
/// Depth of a traversal (call chain hops) per query.
pub const QUERY_DEPTH: usize = 10;
/// LLM calls per query; past it the remaining stages are skipped and integration runs.
pub const QUERY_LLM_CALLS: u32 = 10;
/// Agent hops (stage transitions and tool steps) per query.
pub const QUERY_AGENT_HOPS: u32 = 21;
/// Tokens of the context carried from stage to stage (question, intent, goals, explored state,
/// verified claims) at most; past it the oldest claims are left out of the prompt (seed 003's
/// session-context bound).
pub const SESSION_CONTEXT_TOKENS: usize = 10_000;
/// Wall-clock time of one tool step (the seed's timeout strategy: a step that hangs is a failed
/// step the Critic sees, not a stalled query). The tools' own `call_timeout_secs` still applies
/// inside it; the query's remaining wall-clock time shortens it.
pub const STEP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Which bound was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BoundHit {
    #[error("the query read its {QUERY_FILES} files")]
    Files,
    #[error("the query's {QUERY_CODE_TOKENS} code tokens are spent")]
    CodeTokens,
    #[error("the traversal reached depth {QUERY_DEPTH}")]
    Depth,
    #[error("the query made its {QUERY_LLM_CALLS} LLM calls")]
    LlmCalls,
    #[error("the query made its {QUERY_AGENT_HOPS} agent hops")]
    AgentHops,
    /// The job's token budget: not a counter of the query's own. The job's LLM client charges
    /// every call of every explore against one shared `TokenBudget` and refuses the next call
    /// once it is spent; a stage refused that way ends the query with this bound.
    #[error("the job's token budget is spent")]
    JobTokens,
    #[error("the query's wall-clock limit passed")]
    WallTime,
}

/// The per-query counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryBudget {
    files: Vec<String>,
    code_tokens: u64,
    depth: usize,
    llm_calls: u32,
    agent_hops: u32,
    /// The query's wall-clock limit (none: unlimited), checked before every tool step.
    deadline: Option<tokio::time::Instant>,
    /// One tool step's time (none: [`STEP_TIMEOUT`]).
    step_timeout: Option<std::time::Duration>,
    /// The time of a timed-out step's narrower retry (none: the step's time).
    retry_timeout: Option<std::time::Duration>,
}

impl QueryBudget {
    /// A fresh budget.
    pub fn new() -> QueryBudget {
        QueryBudget::default()
    }

    /// The same budget, with the query's wall-clock limit at `deadline`.
    pub fn with_deadline(mut self, deadline: tokio::time::Instant) -> QueryBudget {
        self.deadline = Some(deadline);
        self
    }

    /// The same budget, with another time per tool step than [`STEP_TIMEOUT`].
    pub fn with_step_timeout(mut self, timeout: std::time::Duration) -> QueryBudget {
        self.step_timeout = Some(timeout);
        self
    }

    /// The same budget, with another time for a timed-out step's narrower retry.
    pub fn with_retry_timeout(mut self, timeout: std::time::Duration) -> QueryBudget {
        self.retry_timeout = Some(timeout);
        self
    }

    /// The time a narrower retry may take: [`QueryBudget::step_time`] unless set apart.
    pub fn retry_time(&self) -> Result<std::time::Duration, BoundHit> {
        let step = self.step_time()?;
        Ok(match self.retry_timeout {
            None => step,
            Some(retry) => self.left().map_or(retry, |left| retry.min(left)),
        })
    }

    fn left(&self) -> Option<std::time::Duration> {
        self.deadline
            .map(|d| d.saturating_duration_since(tokio::time::Instant::now()))
    }

    /// The time the next tool step may take: [`STEP_TIMEOUT`] or what is left of the query's
    /// wall-clock time, whichever is shorter; refused once the query's time is up.
    pub fn step_time(&self) -> Result<std::time::Duration, BoundHit> {
        let step = self.step_timeout.unwrap_or(STEP_TIMEOUT);
        match self.deadline {
            None => Ok(step),
            Some(deadline) => {
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                if left.is_zero() {
                    Err(BoundHit::WallTime)
                } else {
                    Ok(step.min(left))
                }
            }
        }
    }

    /// Reading `path`: a file already read costs nothing more.
    pub fn read_file(&mut self, path: &str) -> Result<(), BoundHit> {
        if self.files.iter().any(|known| known == path) {
            return Ok(());
        }
        if self.files.len() >= QUERY_FILES {
            return Err(BoundHit::Files);
        }
        self.files.push(path.to_owned());
        Ok(())
    }

    /// `tokens` of tool output about to be kept; refused whole when they do not fit.
    pub fn spend_code_tokens(&mut self, tokens: u64) -> Result<(), BoundHit> {
        if self.code_tokens + tokens > QUERY_CODE_TOKENS {
            return Err(BoundHit::CodeTokens);
        }
        self.code_tokens += tokens;
        Ok(())
    }

    /// One hop deeper along a call chain.
    pub fn descend(&mut self) -> Result<(), BoundHit> {
        if self.depth >= QUERY_DEPTH {
            return Err(BoundHit::Depth);
        }
        self.depth += 1;
        Ok(())
    }

    /// Before an LLM call.
    pub fn llm_call(&mut self) -> Result<(), BoundHit> {
        if self.llm_calls >= QUERY_LLM_CALLS {
            return Err(BoundHit::LlmCalls);
        }
        self.llm_calls += 1;
        Ok(())
    }

    /// Counts LLM calls already made beyond the one [`QueryBudget::llm_call`] admitted (a
    /// structured reply that failed validation is asked again); they happened, so they count
    /// even past the cap, and the next [`QueryBudget::llm_call`] is refused.
    pub fn extra_llm_calls(&mut self, calls: u32) {
        self.llm_calls = self.llm_calls.saturating_add(calls);
    }

    /// LLM calls the query may still make.
    pub fn llm_calls_left(&self) -> u32 {
        QUERY_LLM_CALLS.saturating_sub(self.llm_calls)
    }

    /// Before a stage transition or a tool step.
    pub fn hop(&mut self) -> Result<(), BoundHit> {
        if self.agent_hops >= QUERY_AGENT_HOPS {
            return Err(BoundHit::AgentHops);
        }
        self.agent_hops += 1;
        Ok(())
    }

    pub fn llm_calls(&self) -> u32 {
        self.llm_calls
    }

    pub fn code_tokens(&self) -> u64 {
        self.code_tokens
    }

    pub fn agent_hops(&self) -> u32 {
        self.agent_hops
    }

    pub fn files_read(&self) -> usize {
        self.files.len()
    }

    pub fn depth(&self) -> usize {
        self.depth
    }
}

/// `items` cut to a per-step cap (e.g. [`STEP_GREP_MATCHES`]), with how many were left out.
pub fn cap_matches<T>(mut items: Vec<T>, cap: usize) -> (Vec<T>, usize) {
    let dropped = items.len().saturating_sub(cap);
    items.truncate(cap);
    (items, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_bound_is_enforced_by_its_own_counter() {
        let mut budget = QueryBudget::new();
        for i in 0..QUERY_FILES {
            budget.read_file(&format!("f{i}")).unwrap();
        }
        budget.read_file("f0").unwrap();
        assert_eq!(budget.read_file("new"), Err(BoundHit::Files));

        budget.spend_code_tokens(QUERY_CODE_TOKENS - 10).unwrap();
        assert_eq!(budget.spend_code_tokens(11), Err(BoundHit::CodeTokens));
        budget.spend_code_tokens(10).unwrap();

        for _ in 0..QUERY_DEPTH {
            budget.descend().unwrap();
        }
        assert_eq!(budget.descend(), Err(BoundHit::Depth));
        for _ in 0..QUERY_LLM_CALLS {
            budget.llm_call().unwrap();
        }
        assert_eq!(budget.llm_call(), Err(BoundHit::LlmCalls));
        for _ in 0..QUERY_AGENT_HOPS {
            budget.hop().unwrap();
        }
        assert_eq!(budget.hop(), Err(BoundHit::AgentHops));
    }

    #[test]
    fn step_caps_cut_and_count() {
        let (kept, dropped) = cap_matches((0..80).collect(), STEP_GREP_MATCHES);
        assert_eq!((kept.len(), dropped), (50, 30));
        let (kept, dropped) = cap_matches(vec![1, 2], STEP_SYMBOLS);
        assert_eq!((kept, dropped), (vec![1, 2], 0));
    }
}
