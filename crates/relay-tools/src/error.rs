//! The tool error type. Its `Display` text is what the agent reads, so every message says what
//! went wrong and what to do next, and never reveals anything outside the repository.

/// Errors returned by tools. The message is shown to the agent verbatim.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolError {
    /// No tool with this name is registered.
    #[error("unknown tool `{name}`; available tools: {available}")]
    UnknownTool {
        /// The requested name.
        name: String,
        /// Comma-separated names of the registered tools.
        available: String,
    },
    /// The JSON arguments do not match the tool's schema.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The repository root itself is unusable (a caller error, not an agent error).
    #[error("{0}")]
    InvalidRepo(String),
    /// The path does not exist inside the repository.
    #[error("{path}: not found{}", suggestion_suffix(suggestions))]
    NotFound {
        /// The path as the agent supplied it.
        path: String,
        /// Closest existing paths, best first (at most 3).
        suggestions: Vec<String>,
    },
    /// The sandbox refused the path.
    #[error("refused `{path}`: {reason}")]
    Refused {
        /// The path as the agent supplied it (escaped).
        path: String,
        /// Why it was refused.
        reason: String,
    },
    /// The file looks binary (contains NUL bytes).
    #[error("{path}: binary file, not shown")]
    BinaryFile {
        /// Path relative to the repository root.
        path: String,
    },
    /// A regex or glob pattern does not compile.
    #[error("invalid pattern: {0}")]
    InvalidPattern(String),
    /// A per-job budget is used up.
    #[error("budget exhausted: {0}")]
    BudgetExhausted(String),
    /// The call ran past its deadline (`[tools] call_timeout_secs`).
    #[error(
        "the call took longer than {seconds}s and was stopped; narrow it (a path, a glob, a more specific pattern)"
    )]
    DeadlineExceeded {
        /// The deadline in seconds.
        seconds: u64,
    },
    /// The explore or job that made the call was cancelled.
    #[error("the call was cancelled")]
    Cancelled,
    /// The tool cannot answer here (`history` over a checkout that is not a git repository).
    #[error("{0}")]
    Unavailable(String),
    /// git could not read the history (its own message, without the repository's location).
    #[error("history: {0}")]
    History(String),
    /// An I/O error while reading inside the repository.
    #[error("i/o error: {0}")]
    Io(String),
}

impl ToolError {
    /// This error with the paths it names written as places of the related repository `label`
    /// (tools build errors with paths relative to their checkout; the registry places them).
    pub fn placed(self, label: Option<&str>) -> ToolError {
        let Some(label) = label else {
            return self;
        };
        let place = |path: String| crate::place::write_place(Some(label), &path);
        match self {
            Self::NotFound { path, suggestions } => Self::NotFound {
                path: place(path),
                suggestions: suggestions.into_iter().map(place).collect(),
            },
            Self::Refused { path, reason } => Self::Refused {
                path: place(path),
                reason,
            },
            Self::BinaryFile { path } => Self::BinaryFile { path: place(path) },
            other => other,
        }
    }
}

fn suggestion_suffix(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; closest existing paths: {}", suggestions.join(", "))
    }
}
