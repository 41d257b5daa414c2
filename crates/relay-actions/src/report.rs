//! Model-readable failure lines: `FAILED: <where> | <what> | permanent|retryable`.

use std::fmt;

/// Whether doing the same again later may succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    Permanent,
    Retryable,
}

impl Retry {
    pub fn as_str(self) -> &'static str {
        match self {
            Retry::Permanent => "permanent",
            Retry::Retryable => "retryable",
        }
    }
}

/// One failure line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Where: `update_gaps.close[0]`, `post_comment`, `actions`.
    pub location: String,
    /// What, terse.
    pub problem: String,
    pub retry: Retry,
}

impl Failure {
    pub fn permanent(location: impl Into<String>, problem: impl Into<String>) -> Failure {
        Failure {
            location: location.into(),
            problem: problem.into(),
            retry: Retry::Permanent,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "FAILED: {} | {} | {}",
            self.location,
            self.problem,
            self.retry.as_str()
        )
    }
}

/// Why a batch was refused: one line per problem, for the planner's next turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationReport {
    pub failures: Vec<Failure>,
}

impl fmt::Display for ValidationReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, failure) in self.failures.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{failure}")?;
        }
        Ok(())
    }
}
