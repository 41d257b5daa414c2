//! One git process whose answer is read under bounds: at most so many bytes of stdout (then the
//! process is killed and the answer is marked cut), a timeout, and a stop check polled while it
//! runs (the agent tool's deadline and cancellation). Synchronous: the history tool runs on a
//! blocking thread, and `relay tool` has no async runtime.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::HistoryError;
use crate::git::{CLEARED_ENV, ISOLATED_ENV};

/// Bytes of git's stderr kept for an error message; past them the pipe is closed (git then fails
/// writing more, and its error is already in hand), so git never blocks on a full pipe.
const MAX_STDERR_BYTES: usize = 4 * 1024;

/// How often the stop check is polled while git runs.
const POLL: Duration = Duration::from_millis(25);

/// Configuration every history command runs with, on top of the isolated environment, whatever
/// the repository's own config says (a user's checkout for `relay explore`): no hooks, no
/// file-system monitor, no signature checks (they start gpg), no ignore-revisions file. External
/// diffs and text conversions are refused on the command line.
const HISTORY_CONFIG: [(&str, &str); 4] = [
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("log.showSignature", "false"),
    ("blame.ignoreRevsFile", ""),
];

/// What git printed, at most the asked number of bytes.
#[derive(Debug)]
pub(super) struct Bounded {
    pub stdout: Vec<u8>,
    /// The output was longer than the bound: `stdout` is its beginning and git was stopped.
    pub cut: bool,
}

/// The limits of one run.
pub(super) struct RunLimits<'a> {
    pub max_bytes: usize,
    pub timeout: Duration,
    /// Polled while git runs; `true` stops it ([`HistoryError::Stopped`]).
    pub stop: &'a dyn Fn() -> bool,
}

/// Runs `binary args` in `cwd` under `limits`.
pub(super) fn run_bounded(
    binary: &Path,
    cwd: &Path,
    args: &[OsString],
    limits: &RunLimits<'_>,
) -> Result<Bounded, HistoryError> {
    let mut command = Command::new(binary);
    command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .envs(ISOLATED_ENV)
        .env("GIT_CONFIG_COUNT", HISTORY_CONFIG.len().to_string());
    for name in CLEARED_ENV {
        command.env_remove(name);
    }
    for (index, (key, value)) in HISTORY_CONFIG.iter().enumerate() {
        command
            .env(format!("GIT_CONFIG_KEY_{index}"), key)
            .env(format!("GIT_CONFIG_VALUE_{index}"), value);
    }
    let mut child = command
        .spawn()
        .map_err(|error| HistoryError::Git(format!("cannot run git: {error}")))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(HistoryError::Git("git's output pipes are missing".into()));
    };
    let max_bytes = limits.max_bytes;
    let (done, finished) = mpsc::channel();
    let out = std::thread::spawn(move || {
        let read = read_capped(stdout, max_bytes);
        let _ = done.send(());
        read
    });
    let err = std::thread::spawn(move || read_capped(stderr, MAX_STDERR_BYTES).0);
    let deadline = Instant::now() + limits.timeout;
    let halted = loop {
        match finished.recv_timeout(POLL) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break None,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if (limits.stop)() {
                    break Some(HistoryError::Stopped);
                }
                if Instant::now() >= deadline {
                    break Some(HistoryError::Timeout {
                        seconds: limits.timeout.as_secs(),
                    });
                }
            }
        }
    };
    if halted.is_some() {
        let _ = child.kill();
    }
    let (stdout, cut) = out.join().unwrap_or_default();
    if cut {
        // The rest is not wanted: git is stopped rather than left writing into a closed pipe.
        let _ = child.kill();
    }
    let status = child.wait();
    let stderr = err.join().unwrap_or_default();
    if let Some(error) = halted {
        return Err(error);
    }
    if cut {
        return Ok(Bounded { stdout, cut });
    }
    match status {
        Ok(status) if status.success() => Ok(Bounded { stdout, cut }),
        Ok(_) => Err(HistoryError::Git(
            String::from_utf8_lossy(&stderr).into_owned(),
        )),
        Err(error) => Err(HistoryError::Git(format!("cannot wait for git: {error}"))),
    }
}

/// Reads `source` to its end, or until more than `max_bytes` came (`true`: what is kept is the
/// first `max_bytes`, and reading stopped there).
fn read_capped(mut source: impl Read, max_bytes: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match source.read(&mut chunk) {
            Ok(0) => return (kept, false),
            Ok(n) => {
                let room = max_bytes - kept.len();
                if n > room {
                    kept.extend_from_slice(&chunk[..room]);
                    return (kept, true);
                }
                kept.extend_from_slice(&chunk[..n]);
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return (kept, false),
        }
    }
}
