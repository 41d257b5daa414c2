//! Errors of the executor. Validation problems are not errors: they are a
//! [`crate::ValidationReport`] for the planner.

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Postgres failed; the batch transaction is rolled back as a whole.
    #[error("store: {0}")]
    Store(#[from] relay_store::Error),
    /// The state changed between validation and execution (e.g. another run closed the gap):
    /// the whole batch is rolled back and should be validated again.
    #[error("state changed since validation: {0}")]
    Conflict(String),
    /// The job's lease passed to another worker: this worker must not apply the batch (the
    /// transaction is rolled back; the new holder redoes the work).
    #[error("the job's lease was lost; the batch was not applied")]
    LeaseLost,
}
