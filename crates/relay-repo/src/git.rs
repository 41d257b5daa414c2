//! Running the `git` CLI: isolated from the machine's configuration, non-interactive, with a
//! timeout, credentials only in the environment, and errors classified and redacted.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use secrecy::ExposeSecret;
use tokio::process::Command;

use crate::error::{Error, Result};
use crate::spec::RepoSpec;

/// The environment every git process of this crate runs in: no system or user configuration, no
/// prompt of any kind, the C locale (messages are matched in English).
pub(crate) const ISOLATED_ENV: [(&str, &str); 7] = [
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_ASKPASS", ""),
    ("SSH_ASKPASS", ""),
    ("GCM_INTERACTIVE", "never"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("LC_ALL", "C"),
];

/// Variables of the caller's environment that would point git at another repository or index.
pub(crate) const CLEARED_ENV: [&str; 3] = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"];

/// A configured git invocation context for one repository.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    binary: PathBuf,
    /// Repository display name for errors.
    repo: String,
    /// Strings redacted from every message.
    secrets: Vec<String>,
    /// Extra configuration passed through the environment (key, value).
    config: Vec<(String, String)>,
}

/// Whether a command talks to the remote (longer timeout) or only to local files.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reach {
    Network(Duration),
    Local(Duration),
}

impl Git {
    pub(crate) fn new(binary: &Path, spec: &RepoSpec) -> Result<Self> {
        let mut config = vec![
            // No credential helper may answer (or prompt) for us.
            ("credential.helper".to_string(), String::new()),
            ("core.askPass".to_string(), String::new()),
            // Never run repository hooks or filters.
            ("core.hooksPath".to_string(), "/dev/null".to_string()),
            // Local clones (development) may use file:// URLs.
            ("protocol.file.allow".to_string(), "always".to_string()),
        ];
        if let Some((key, value)) = spec.auth_config()? {
            config.push((key, value.expose_secret().to_string()));
        }
        Ok(Self {
            binary: binary.to_path_buf(),
            repo: spec.display_name(),
            secrets: spec.secrets(),
            config,
        })
    }

    /// Runs `git <args>` in `cwd` and returns stdout (trimmed). `operation` names the command in
    /// errors.
    pub(crate) async fn run(
        &self,
        cwd: Option<&Path>,
        args: &[OsString],
        envs: &[(&str, OsString)],
        reach: Reach,
    ) -> Result<String> {
        Ok(self
            .run_raw(cwd, args, envs, reach)
            .await?
            .trim()
            .to_string())
    }

    /// [`Git::run`] without trimming stdout (file contents, where leading blank lines count).
    pub(crate) async fn run_raw(
        &self,
        cwd: Option<&Path>,
        args: &[OsString],
        envs: &[(&str, OsString)],
        reach: Reach,
    ) -> Result<String> {
        let stdout = self.run_io(cwd, args, envs, reach, None).await?;
        Ok(String::from_utf8_lossy(&stdout).into_owned())
    }

    /// Runs git with `input` on its stdin (a `cat-file --batch` request list) and returns its
    /// stdout as bytes (blobs are not always UTF-8, and their sizes are in bytes).
    pub(crate) async fn run_with_input(
        &self,
        args: &[OsString],
        reach: Reach,
        input: Vec<u8>,
    ) -> Result<Vec<u8>> {
        self.run_io(None, args, &[], reach, Some(input)).await
    }

    async fn run_io(
        &self,
        cwd: Option<&Path>,
        args: &[OsString],
        envs: &[(&str, OsString)],
        reach: Reach,
        input: Option<Vec<u8>>,
    ) -> Result<Vec<u8>> {
        let operation = args
            .iter()
            .map(|arg| arg.to_string_lossy())
            .find(|arg| !arg.starts_with('-') && !arg.contains('='))
            .map(|arg| arg.into_owned())
            .unwrap_or_else(|| "command".into());
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .envs(ISOLATED_ENV)
            .env("GIT_CONFIG_COUNT", self.config.len().to_string());
        for name in CLEARED_ENV {
            command.env_remove(name);
        }
        for (index, (key, value)) in self.config.iter().enumerate() {
            command
                .env(format!("GIT_CONFIG_KEY_{index}"), key)
                .env(format!("GIT_CONFIG_VALUE_{index}"), value);
        }
        for (key, value) in envs {
            command.env(key, value);
        }
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        let timeout = match reach {
            Reach::Network(timeout) | Reach::Local(timeout) => timeout,
        };
        let mut child = command.spawn().map_err(|error| Error::Git {
            repo: self.repo.clone(),
            operation: operation.clone(),
            message: format!("cannot run {}: {error}", self.binary.display()),
        })?;
        // Written from its own task while stdout is read: a request list larger than the pipe
        // buffer would otherwise deadlock against git's full stdout.
        let writer = match (input, child.stdin.take()) {
            (Some(input), Some(mut stdin)) => Some(tokio::spawn(async move {
                use tokio::io::AsyncWriteExt as _;
                let _ = stdin.write_all(&input).await;
                // Dropping stdin closes it: git sees the end of the list.
            })),
            _ => None,
        };
        let output = match tokio::time::timeout(timeout, child.wait_with_output()).await {
            Ok(result) => result.map_err(|error| Error::Git {
                repo: self.repo.clone(),
                operation: operation.clone(),
                message: error.to_string(),
            })?,
            Err(_) => {
                return Err(Error::Timeout {
                    repo: self.repo.clone(),
                    operation,
                    seconds: timeout.as_secs(),
                });
            }
        };
        if let Some(writer) = writer {
            let _ = writer.await;
        }
        if output.status.success() {
            return Ok(output.stdout);
        }
        let stderr = self.redact(&String::from_utf8_lossy(&output.stderr));
        Err(self.classify(operation, stderr, matches!(reach, Reach::Network(_))))
    }

    /// Removes secrets from text.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut text = text.to_string();
        for secret in &self.secrets {
            text = text.replace(secret.as_str(), "[redacted]");
        }
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect();
        let mut message = lines.join("; ");
        if message.len() > 1_000 {
            let mut cut = 1_000;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
            message.push('…');
        }
        message
    }

    fn classify(&self, operation: String, message: String, network: bool) -> Error {
        let lower = message.to_lowercase();
        let repo = self.repo.clone();
        let any = |needles: &[&str]| needles.iter().any(|needle| lower.contains(needle));
        if network {
            if any(&[
                "authentication failed",
                "could not read username",
                "could not read password",
                "terminal prompts disabled",
                "returned error: 401",
                "returned error: 403",
                "http 401",
                "http 403",
                "permission denied",
                "access denied",
                "invalid credentials",
            ]) {
                return Error::Auth { repo, message };
            }
            if any(&[
                "repository not found",
                "not found",
                "does not appear to be a git repository",
                "returned error: 404",
                "does not exist",
                "no such file or directory",
            ]) {
                return Error::RepoNotFound { repo, message };
            }
            if any(&[
                "could not resolve host",
                "failed to connect",
                "connection refused",
                "connection reset",
                "connection timed out",
                "operation timed out",
                "network is unreachable",
                "unable to access",
                "ssl",
                "tls",
                "empty reply",
                "rpc failed",
                "early eof",
            ]) {
                return Error::Network { repo, message };
            }
        }
        Error::Git {
            repo,
            operation,
            message,
        }
    }
}

/// Builds an argument vector from string-likes.
pub(crate) fn args<I, S>(items: I) -> Vec<OsString>
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    items.into_iter().map(Into::into).collect()
}
