/// Errors from the store, classified by what the caller should do about them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The database could not be reached in time (pool timeout, connection refused or reset).
    /// Callers answer "try again later" (HTTP 503) or retry.
    #[error("database unavailable")]
    Unavailable(#[source] sqlx::Error),
    /// The schema has not been migrated.
    #[error("database schema is not migrated; run `relay migrate`")]
    NotMigrated,
    #[error("failed to apply migrations")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    /// Stored JSON did not have the expected shape.
    #[error("stored value could not be decoded: {0}")]
    Decode(String),
    #[error("database error")]
    Database(#[source] sqlx::Error),
    /// A concurrent writer changed what this write depended on; retrying reads it again.
    #[error("write conflict: {0}")]
    Conflict(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Self {
        match error {
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => {
                Error::Unavailable(error)
            }
            sqlx::Error::Database(ref db)
                if db.code().is_some_and(|code| {
                    // Class 08: connection exception; 57P01-57P03: admin shutdown, crash, cannot connect now.
                    code.starts_with("08") || code.starts_with("57P")
                }) =>
            {
                Error::Unavailable(error)
            }
            other => Error::Database(other),
        }
    }
}

impl Error {
    /// Whether the failure is about reaching the database rather than about the request.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Unavailable(_))
    }
}

/// The SQLSTATE of a unique-constraint violation.
pub(crate) fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.code().as_deref() == Some("23505"))
}
