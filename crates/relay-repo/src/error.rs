//! The crate error type. Messages never contain credentials: git's stderr is redacted before it is
//! stored, and repositories are named by host and path only.

/// Errors from checkout management. Each variant is a decision the caller can act on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The repository spec or settings are unusable (bad URL, path, commit id).
    #[error("invalid repository spec: {0}")]
    InvalidSpec(String),
    /// The tracker refused the credentials (HTTP 401/403, missing or expired token).
    #[error("authentication failed for {repo}: {message}")]
    Auth {
        /// Repository display name (host/path, no credentials).
        repo: String,
        /// Redacted git message.
        message: String,
    },
    /// The repository does not exist (or the token cannot see it).
    #[error("repository {repo} not found: {message}")]
    RepoNotFound {
        /// Repository display name.
        repo: String,
        /// Redacted git message.
        message: String,
    },
    /// The remote could not be reached.
    #[error("network error for {repo}: {message}")]
    Network {
        /// Repository display name.
        repo: String,
        /// Redacted git message.
        message: String,
    },
    /// The requested commit is not in the repository, even after fetching.
    #[error("commit {commit} not found in {repo}")]
    CommitNotFound {
        /// Repository display name.
        repo: String,
        /// The requested commit.
        commit: String,
    },
    /// A git command took longer than the configured timeout and was killed.
    #[error("git {operation} for {repo} timed out after {seconds} s")]
    Timeout {
        /// Repository display name.
        repo: String,
        /// The git subcommand.
        operation: String,
        /// The timeout.
        seconds: u64,
    },
    /// Any other git failure.
    #[error("git {operation} failed for {repo}: {message}")]
    Git {
        /// Repository display name.
        repo: String,
        /// The git subcommand.
        operation: String,
        /// Redacted git message.
        message: String,
    },
    /// A file-system operation in the data directory failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Attaches context to I/O errors.
pub(crate) trait IoContext<T> {
    fn io_context(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn io_context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Io {
            context: context(),
            source,
        })
    }
}
