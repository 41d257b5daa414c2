//! The commits that touched a path or a line range, at one commit: `git log` (renames followed for
//! a file, `-L` for a range) and `git blame`, for the agents' read-only `history` tool.
//!
//! [`GitHistory`] names where the history is read (the repository's mirror, or a user's working
//! tree for the CLI), at which commit, and under which subdirectory the tool's sandbox root lies.
//! Every answer is bounded: bytes read from git ([`MAX_HISTORY_BYTES`]), commits counted
//! ([`MAX_COUNTED_COMMITS`]), lines blamed ([`MAX_BLAME_LINES`]), the call's time; every field is
//! cleaned (`parse`). What the caller passes is checked before git sees it: the commit is a hex
//! object id, a path never starts with `-` (and follows `--` anyway), pathspecs are literal.

mod parse;
mod run;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use parse::{MAX_AUTHOR_CHARS, MAX_SUBJECT_CHARS};

use crate::manager::{RepoManager, validate_commit};
use crate::snapshot::RepoPaths;
use crate::spec::RepoSpec;
use run::{RunLimits, run_bounded};

/// Bytes of one git answer read at most; past them git is stopped and the count says "at least".
pub const MAX_HISTORY_BYTES: usize = 256 * 1024;
/// Commits of a log counted at most (the count past it is "more than").
pub const MAX_COUNTED_COMMITS: usize = 1_000;
/// Lines one blame may cover.
pub const MAX_BLAME_LINES: u32 = 200;
/// Longest one history command may run when the caller's stop check never fires.
const HISTORY_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest finding a working tree's repository may take.
const WORKTREE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where and at which commit history is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitHistory {
    binary: PathBuf,
    git_dir: PathBuf,
    /// The commit the history ends at (full SHA).
    commit: String,
    /// The sandbox root's path inside the repository, `""` or ending in `/`.
    prefix: String,
    timeout: Duration,
}

/// Why a history could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryError {
    /// The request is refused before git runs (a path or range git must not see).
    #[error("{0}")]
    Refused(String),
    /// The caller's stop check fired (its deadline or cancellation).
    #[error("stopped")]
    Stopped,
    /// git ran longer than the history's own timeout.
    #[error("git took longer than {seconds}s")]
    Timeout {
        /// The timeout.
        seconds: u64,
    },
    /// git failed; its first error line, without the repository's location.
    #[error("{0}")]
    Git(String),
}

/// One commit as the history shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitSummary {
    /// Full SHA, lowercase.
    pub sha: String,
    /// The author date, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The author's name, one line, at most [`MAX_AUTHOR_CHARS`].
    pub author: String,
    /// The subject, one line, at most [`MAX_SUBJECT_CHARS`].
    pub subject: String,
}

/// How many commits touched what was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitCount {
    /// Exactly this many.
    Exact(usize),
    /// At least this many: counting stopped past [`MAX_COUNTED_COMMITS`], or at
    /// [`MAX_HISTORY_BYTES`] of git's answer.
    AtLeast(usize),
}

/// The newest commits that touched a path or range, and how many did in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitLog {
    /// Newest first, at most the number asked.
    pub commits: Vec<CommitSummary>,
    pub count: CommitCount,
}

/// Lines `start..=end` last changed by `commit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameRange {
    pub start: u32,
    pub end: u32,
    pub commit: CommitSummary,
}

/// A line range of a file, 1-based and inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRange {
    pub start: u32,
    pub end: u32,
}

/// What a path is: a file's history follows its renames, a directory's cannot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    File,
    Directory,
}

/// The path (relative to the sandbox root, `""` for the root) and what it is.
#[derive(Debug, Clone, Copy)]
pub struct HistoryPath<'a> {
    pub path: &'a str,
    pub kind: PathKind,
}

impl GitHistory {
    /// The history of a snapshot: the repository's mirror at the snapshot's `commit` (later
    /// commits the mirror has fetched are not shown).
    pub fn of_snapshot(
        repos: &RepoManager,
        spec: &RepoSpec,
        commit: &str,
    ) -> crate::Result<GitHistory> {
        validate_commit(commit)?;
        let paths = RepoPaths::new(repos.repo_dir(spec)?);
        Ok(GitHistory {
            binary: repos.settings().git_binary.clone(),
            git_dir: paths.mirror,
            commit: commit.to_ascii_lowercase(),
            prefix: String::new(),
            timeout: Duration::from_secs(repos.settings().local_timeout_secs)
                .clamp(Duration::from_secs(1), HISTORY_TIMEOUT),
        })
    }

    /// The history of the working tree at `root` (which may be a subdirectory of its
    /// repository), at `HEAD`; `None` when `root` is in no git repository, the repository has no
    /// commit, or git cannot be run. Uncommitted changes are not history.
    pub fn of_worktree(root: &Path) -> Option<GitHistory> {
        let binary = PathBuf::from("git");
        let mut args: Vec<OsString> = vec!["-C".into(), root.into()];
        args.extend(
            ["rev-parse", "--absolute-git-dir", "--show-prefix", "HEAD"].map(OsString::from),
        );
        let limits = RunLimits {
            max_bytes: 64 * 1024,
            timeout: WORKTREE_TIMEOUT,
            stop: &|| false,
        };
        let answer = run_bounded(&binary, root, &args, &limits).ok()?;
        let text = String::from_utf8(answer.stdout).ok()?;
        let mut lines = text.lines();
        let (git_dir, prefix, head) = (lines.next()?, lines.next()?, lines.next()?);
        if !parse::is_object_id(head) || prefix.starts_with('-') {
            return None;
        }
        Some(GitHistory {
            binary,
            git_dir: PathBuf::from(git_dir),
            commit: head.to_ascii_lowercase(),
            prefix: prefix.to_owned(),
            timeout: HISTORY_TIMEOUT,
        })
    }

    /// The commit the history ends at.
    pub fn commit(&self) -> &str {
        &self.commit
    }

    /// The newest `show` commits that touched `path` (or only `lines` of it), and their count.
    /// `stop` is polled while git runs.
    pub fn log(
        &self,
        path: HistoryPath<'_>,
        lines: Option<LineRange>,
        show: usize,
        stop: &dyn Fn() -> bool,
    ) -> Result<CommitLog, HistoryError> {
        let target = self.target(path.path)?;
        let mut args = self.common();
        args.extend(
            [
                "log",
                "-z",
                "--no-color",
                "--no-ext-diff",
                "--no-textconv",
                "--no-mailmap",
            ]
            .map(OsString::from),
        );
        args.push(format!("--format={}", parse::LOG_FORMAT).into());
        args.push(format!("--max-count={}", MAX_COUNTED_COMMITS + 1).into());
        match lines {
            Some(range) => {
                let range = checked(range)?;
                if path.kind == PathKind::Directory {
                    return Err(HistoryError::Refused(
                        "a line range needs a file, not a directory".into(),
                    ));
                }
                // `-L` takes its file from the same argument; `-s` leaves the diffs out.
                args.push(format!("-L{},{}:{target}", range.start, range.end).into());
                args.push("-s".into());
                args.extend(["--end-of-options".into(), self.commit.clone().into()]);
            }
            None => {
                if path.kind == PathKind::File {
                    args.push("--follow".into());
                }
                args.extend(["--end-of-options".into(), self.commit.clone().into()]);
                args.extend(["--".into(), target.into()]);
            }
        }
        let answer = self.run(&args, stop)?;
        let mut commits = parse::log_records(&answer.stdout, answer.cut);
        let count = if answer.cut || commits.len() > MAX_COUNTED_COMMITS {
            CommitCount::AtLeast(commits.len())
        } else {
            CommitCount::Exact(commits.len())
        };
        commits.truncate(show);
        Ok(CommitLog { commits, count })
    }

    /// The commit that last changed each line of `lines` of the file at `path`, consecutive lines
    /// of one commit grouped, in line order.
    pub fn blame(
        &self,
        path: &str,
        lines: LineRange,
        stop: &dyn Fn() -> bool,
    ) -> Result<Vec<BlameRange>, HistoryError> {
        let target = self.target(path)?;
        let range = checked(lines)?;
        let mut args = self.common();
        args.extend(["blame", "--porcelain", "--no-textconv"].map(OsString::from));
        args.push(format!("-L{},{}", range.start, range.end).into());
        // blame reads `--end-of-options` as the end of its revisions too (then takes the path for
        // one): the commit is a checked hex id, which no option starts with.
        args.extend([self.commit.clone().into(), "--".into(), target.into()]);
        let answer = self.run(&args, stop)?;
        Ok(parse::blame_ranges(&answer.stdout))
    }

    /// `--git-dir=…` and literal pathspecs (a `*` or `:(…)` in a file name means itself).
    fn common(&self) -> Vec<OsString> {
        let mut git_dir = OsString::from("--git-dir=");
        git_dir.push(&self.git_dir);
        vec![git_dir, "--literal-pathspecs".into()]
    }

    fn run(
        &self,
        args: &[OsString],
        stop: &dyn Fn() -> bool,
    ) -> Result<run::Bounded, HistoryError> {
        let limits = RunLimits {
            max_bytes: MAX_HISTORY_BYTES,
            timeout: self.timeout,
            stop,
        };
        run_bounded(&self.binary, &self.git_dir, args, &limits).map_err(|error| match error {
            HistoryError::Git(message) => HistoryError::Git(self.first_error_line(&message)),
            other => other,
        })
    }

    /// The repository path of `path` (relative to the sandbox root), refused when git could take
    /// it for an option or it could leave the repository.
    fn target(&self, path: &str) -> Result<String, HistoryError> {
        let refuse = |why: &str| Err(HistoryError::Refused(format!("path {why}")));
        if path.starts_with('-') {
            return refuse("may not start with `-`");
        }
        if path.starts_with('/') || path.split('/').any(|part| part == "..") {
            return refuse("must stay inside the repository");
        }
        if path.chars().any(char::is_control) {
            return refuse("may not hold control characters");
        }
        let joined = format!("{}{}", self.prefix, path.trim_end_matches('/'));
        let target = joined.trim_end_matches('/');
        Ok(if target.is_empty() {
            ".".to_owned()
        } else {
            target.to_owned()
        })
    }

    /// git's first `fatal:`/`error:` line (else its first line), without the repository's location
    /// (a server path means nothing to the reader).
    fn first_error_line(&self, stderr: &str) -> String {
        let line = stderr
            .lines()
            .find(|line| line.starts_with("fatal:") || line.starts_with("error:"))
            .or_else(|| stderr.lines().find(|line| !line.trim().is_empty()))
            .unwrap_or("git failed without a message");
        let line = line
            .trim_start_matches("fatal:")
            .trim_start_matches("error:")
            .replace(&*self.git_dir.to_string_lossy(), "<repository>");
        parse::clean(&line, 200)
    }
}

/// `range`, refused when it is empty, starts before line 1 or covers more than
/// [`MAX_BLAME_LINES`].
fn checked(range: LineRange) -> Result<LineRange, HistoryError> {
    if range.start == 0 || range.end < range.start {
        return Err(HistoryError::Refused(format!(
            "the line range {}-{} is empty (lines are 1-based, end ≥ start)",
            range.start, range.end
        )));
    }
    if range.end - range.start >= MAX_BLAME_LINES {
        return Err(HistoryError::Refused(format!(
            "a line range covers at most {MAX_BLAME_LINES} lines"
        )));
    }
    Ok(range)
}
