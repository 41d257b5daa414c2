//! Reading one source file defensively: a file the indexer cannot or should not parse is skipped
//! with a [`SkipReason`] and counted, never an error of the whole index.

use std::fs::OpenOptions;
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use serde::Serialize;

use super::budget::{ParseBudget, Permit, parse_cost};

/// Why a file that looks like source was not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Larger than [`super::IndexOptions::max_file_bytes`].
    TooLarge,
    /// Contains a NUL byte (a blob with a source file's name).
    Binary,
    /// Not valid UTF-8 (Go and Python source must be UTF-8).
    NotUtf8,
    /// Opening or reading it failed (permissions, I/O error), or the walk could not list it.
    Unreadable,
    /// A FIFO, socket, device or symlink named like a source file (never opened: a FIFO would
    /// block the reader).
    NotRegularFile,
}

impl SkipReason {
    /// The reason's name in [`super::IndexStats::skipped`] and the `relay index` summary.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::TooLarge => "too_large",
            SkipReason::Binary => "binary",
            SkipReason::NotUtf8 => "not_utf8",
            SkipReason::Unreadable => "unreadable",
            SkipReason::NotRegularFile => "not_regular_file",
        }
    }
}

/// What reading a source file gave.
#[derive(Debug)]
pub(crate) enum Source {
    /// The file's bytes (valid UTF-8, no NUL, at most the size cap).
    Text(Vec<u8>),
    /// The file exists but is not indexed.
    Skipped(SkipReason),
    /// The file no longer exists.
    Gone,
}

/// Reads `path` if it is a regular UTF-8 text file of at most `max_bytes`.
///
/// The file is checked before it is opened (a FIFO or symlink is never opened), opened without
/// following symlinks and without blocking (it may have been replaced since), checked again on
/// the open handle, and read up to one byte past the cap (it may be growing). The parse's share of
/// `budget` ([`super::budget::parse_cost`] of the file's size) is reserved before the file is
/// read, and handed back with the text for the caller to hold until the parse is done.
pub(crate) fn read_source<'b>(
    path: &Path,
    max_bytes: u64,
    budget: &'b ParseBudget,
) -> (Source, Option<Permit<'b>>) {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Source::Gone, None),
        Err(_) => return (Source::Skipped(SkipReason::Unreadable), None),
    };
    if !metadata.is_file() {
        return (Source::Skipped(SkipReason::NotRegularFile), None);
    }
    if metadata.len() > max_bytes {
        return (Source::Skipped(SkipReason::TooLarge), None);
    }
    let permit = budget.acquire(parse_cost(metadata.len()));
    match read_checked(path, max_bytes) {
        text @ Source::Text(_) => (text, Some(permit)),
        other => (other, None),
    }
}

/// [`read_source`] after its first checks: open without following symlinks, check the handle,
/// read up to one byte past the cap, classify.
fn read_checked(path: &Path, max_bytes: u64) -> Source {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Source::Gone,
        Err(_) => return Source::Skipped(SkipReason::Unreadable),
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Source::Skipped(SkipReason::NotRegularFile);
    }
    let mut bytes = Vec::new();
    if file
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .is_err()
    {
        return Source::Skipped(SkipReason::Unreadable);
    }
    classify(bytes, max_bytes)
}

/// Sorts bytes read from a file into text or a skip reason.
fn classify(bytes: Vec<u8>, max_bytes: u64) -> Source {
    if bytes.len() as u64 > max_bytes {
        Source::Skipped(SkipReason::TooLarge)
    } else if bytes.contains(&0) {
        Source::Skipped(SkipReason::Binary)
    } else if std::str::from_utf8(&bytes).is_err() {
        Source::Skipped(SkipReason::NotUtf8)
    } else {
        Source::Text(bytes)
    }
}

/// Reads a `go.mod` leniently: invalid UTF-8 is replaced (module paths are ASCII, so the
/// `module` line still parses) with a warning; an unreadable or oversized one is `None`.
pub(crate) fn read_go_mod(path: &Path, max_bytes: u64) -> Option<String> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > max_bytes {
        tracing::warn!(path = %path.display(), "go.mod skipped: not a regular file or too large");
        return None;
    }
    let mut bytes = Vec::new();
    let read = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .and_then(|file| file.take(max_bytes).read_to_end(&mut bytes));
    if let Err(e) = read {
        tracing::warn!(path = %path.display(), error.message = %e, "go.mod skipped: unreadable");
        return None;
    }
    match String::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(e) => {
            tracing::warn!(path = %path.display(), "go.mod is not UTF-8: read with replacement characters");
            Some(String::from_utf8_lossy(e.as_bytes()).into_owned())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(bytes: &[u8]) -> Option<SkipReason> {
        match classify(bytes.to_vec(), 16) {
            Source::Skipped(reason) => Some(reason),
            _ => None,
        }
    }

    #[test]
    fn bytes_are_classified() {
        assert_eq!(reason(b"x = 1\n"), None);
        assert_eq!(reason(b"x = \x00\n"), Some(SkipReason::Binary));
        assert_eq!(reason(b"caf\xe9\n"), Some(SkipReason::NotUtf8));
        assert_eq!(reason(&[b'a'; 17]), Some(SkipReason::TooLarge));
    }
}
