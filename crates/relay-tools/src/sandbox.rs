//! Path confinement: every path a tool touches is resolved here first.
//!
//! The agent names paths relative to the checkout root. [`Sandbox::resolve`] turns such a path into
//! a canonical absolute path **inside** the root or refuses it. It never reveals anything about the
//! outside: refusals name only the path the agent supplied, never a symlink target, and a path whose
//! resolution would leave the root is refused before anything beyond the root is inspected further.
//!
//! Rules, in the order they are checked:
//! 1. NUL bytes and control characters are refused (they cannot name a real file in a checkout).
//! 2. Absolute paths are accepted only when they lie under the root (as given or canonical); they
//!    are then made relative.
//! 3. `.` components are dropped; `..` pops a component and is refused when it would climb above the
//!    root (lexically — before any symlink is looked at).
//! 4. The remaining components are walked one by one with `lstat`. A symlink (file or directory, at
//!    any depth) is canonicalised and must land inside the root; links pointing outside, dangling
//!    links and loops are refused with one and the same message.
//! 5. The final object must be a regular file or a directory: FIFOs, sockets and device files are
//!    refused.
//!
//! 6. A path inside Git's own directory (`.git`, as given or as it resolves) is refused: it is
//!    not the repository's code, and a plain checkout's `.git/config` may hold a credential
//!    (`relay explore` runs on one).
//!
//! 7. A path the repository's configuration excludes (`.relay.toml` `exclude`, as given lexically
//!    or as it resolves) is refused, as is every walk entry under one ([`Sandbox::walker`]):
//!    no tool shows what the team said to skip.
//!
//! Files are then opened with `O_NOFOLLOW | O_NONBLOCK` and re-checked with `fstat`
//! ([`Sandbox::open_file`]), so a file swapped for a FIFO or a symlink between the check and the
//! open is still refused, and opening never blocks.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use relay_core::repo_config::ExcludeSet;

use crate::error::ToolError;
use crate::walk::{SkipRecorder, walker_with};

/// The refusal for any symlink that does not resolve to something inside the root.
const OUTSIDE_LINK: &str = "symbolic link that does not resolve inside the repository (it points outside, dangles or loops)";

/// Most symlinks followed while resolving one path (mirrors the kernel's `MAXSYMLINKS`).
const MAX_LINK_HOPS: usize = 40;

/// A checkout root that tools are confined to.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// The root as given by the caller (used to strip absolute inputs).
    given_root: PathBuf,
    /// The canonical root; every resolved path starts with it.
    root: PathBuf,
    /// Paths the repository's configuration excludes (empty: none).
    excludes: Arc<ExcludeSet>,
}

/// What a resolved path points at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
}

/// A path that passed every sandbox check.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Canonical absolute path inside the root.
    pub abs: PathBuf,
    /// Path relative to the root with `/` separators; empty for the root itself.
    pub rel: String,
    /// File or directory.
    pub kind: EntryKind,
    /// Size in bytes (files only; 0 for directories).
    pub len: u64,
}

impl Sandbox {
    /// Creates a sandbox for `root`, which must be an existing directory.
    pub fn new(root: &Path) -> Result<Self, ToolError> {
        let canonical = root.canonicalize().map_err(|error| {
            ToolError::InvalidRepo(format!(
                "cannot open repository root {}: {error}",
                root.display()
            ))
        })?;
        if !canonical.is_dir() {
            return Err(ToolError::InvalidRepo(format!(
                "repository root {} is not a directory",
                root.display()
            )));
        }
        Ok(Self {
            given_root: root.to_path_buf(),
            root: canonical,
            excludes: Arc::default(),
        })
    }

    /// This sandbox refusing (and its walks skipping) the paths `excludes` matches.
    #[must_use]
    pub fn with_excludes(mut self, excludes: Arc<ExcludeSet>) -> Self {
        self.excludes = excludes;
        self
    }

    /// The excluded paths.
    pub fn excludes(&self) -> &Arc<ExcludeSet> {
        &self.excludes
    }

    /// A walker over `start` (inside the root) with the shared filters and the exclusions.
    pub fn walker(&self, start: &Path) -> ignore::WalkBuilder {
        walker_with(&self.root, start, None, self.excludes.clone())
    }

    /// [`Sandbox::walker`] that also records the skipped well-known directories.
    pub fn walker_recording(&self, start: &Path, recorder: SkipRecorder) -> ignore::WalkBuilder {
        walker_with(&self.root, start, Some(recorder), self.excludes.clone())
    }

    /// The canonical root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves an agent-supplied path to an existing file or directory inside the root.
    pub fn resolve(&self, input: &str) -> Result<Resolved, ToolError> {
        let components = self.lexical_components(input)?;
        let lexical = components
            .iter()
            .map(|c| c.to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        // Checked before touching the file system, so an excluded path's existence is not
        // revealed either.
        if is_git_dir(&lexical) {
            return Err(git_dir(input));
        }
        if self.excludes.is_excluded(&lexical, false) {
            return Err(excluded(input));
        }
        let mut current = self.root.clone();
        let mut hops = 0usize;
        for (index, component) in components.iter().enumerate() {
            let next = current.join(component);
            let metadata = match next.symlink_metadata() {
                Ok(metadata) => metadata,
                Err(error) if error.kind() == io::ErrorKind::NotFound => {
                    return Err(not_found(input));
                }
                // A file used as a directory.
                Err(error) if error.raw_os_error() == Some(libc::ENOTDIR) => {
                    return Err(not_found(input));
                }
                Err(error) => return Err(io_refusal(input, &error)),
            };
            if metadata.file_type().is_symlink() {
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return Err(ToolError::Refused {
                        path: display_input(input),
                        reason: "too many symbolic links".into(),
                    });
                }
                // Canonicalise the link itself; the result must stay inside the root. A dangling
                // link, a loop and a link leaving the root get the same message, so the refusal
                // reveals nothing about what exists outside.
                let target = next
                    .canonicalize()
                    .ok()
                    .filter(|target| target.starts_with(&self.root));
                let Some(target) = target else {
                    return Err(ToolError::Refused {
                        path: display_input(input),
                        reason: OUTSIDE_LINK.into(),
                    });
                };
                let is_last = index + 1 == components.len();
                if !is_last && !target.is_dir() {
                    return Err(not_found(input));
                }
                current = target;
            } else {
                let is_last = index + 1 == components.len();
                if !is_last && !metadata.is_dir() {
                    return Err(not_found(input));
                }
                current = next;
            }
        }
        let metadata = current
            .metadata()
            .map_err(|error| io_refusal(input, &error))?;
        let kind = classify(&metadata).ok_or_else(|| ToolError::Refused {
            path: display_input(input),
            reason: "not a regular file or directory (device, FIFO or socket)".into(),
        })?;
        let rel = self.relative(&current);
        if is_git_dir(&rel) {
            return Err(git_dir(input));
        }
        if self.excludes.is_excluded(&rel, kind == EntryKind::Dir) {
            return Err(excluded(input));
        }
        Ok(Resolved {
            len: if kind == EntryKind::File {
                metadata.len()
            } else {
                0
            },
            abs: current,
            rel,
            kind,
        })
    }

    /// Opens a resolved regular file for reading without following symlinks or blocking, and checks
    /// again (on the open descriptor) that it is a regular file.
    pub fn open_file(&self, resolved: &Resolved) -> Result<(File, Metadata), ToolError> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(&resolved.abs)
            .map_err(|error| io_refusal(&resolved.rel, &error))?;
        let metadata = file
            .metadata()
            .map_err(|error| io_refusal(&resolved.rel, &error))?;
        if !metadata.is_file() {
            return Err(ToolError::Refused {
                path: resolved.rel.clone(),
                reason: "not a regular file".into(),
            });
        }
        Ok((file, metadata))
    }

    /// The path of `abs` (which must be inside the root) relative to the root, `/`-separated.
    pub fn relative(&self, abs: &Path) -> String {
        let rel = abs.strip_prefix(&self.root).unwrap_or(abs);
        let mut out = String::new();
        for component in rel.components() {
            if let Component::Normal(part) = component {
                if !out.is_empty() {
                    out.push('/');
                }
                out.push_str(&part.to_string_lossy());
            }
        }
        out
    }

    /// Validates the input and reduces it to normal components below the root, without touching
    /// the file system.
    fn lexical_components(&self, input: &str) -> Result<Vec<PathBuf>, ToolError> {
        if input.bytes().any(|byte| byte == 0) {
            return Err(ToolError::Refused {
                path: display_input(input),
                reason: "path contains a NUL byte".into(),
            });
        }
        if input.chars().any(|c| c.is_control()) {
            return Err(ToolError::Refused {
                path: display_input(input),
                reason: "path contains control characters".into(),
            });
        }
        let trimmed = input.trim();
        let path = Path::new(trimmed);
        let relative: &Path = if path.is_absolute() {
            if let Ok(rest) = path.strip_prefix(&self.root) {
                rest
            } else if let Ok(rest) = path.strip_prefix(&self.given_root) {
                rest
            } else {
                return Err(ToolError::Refused {
                    path: display_input(input),
                    reason: "absolute path outside the repository; use a path relative to the repository root".into(),
                });
            }
        } else {
            path
        };
        let mut parts: Vec<PathBuf> = Vec::new();
        for component in relative.components() {
            match component {
                Component::CurDir => {}
                Component::Normal(part) => parts.push(PathBuf::from(part)),
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(ToolError::Refused {
                            path: display_input(input),
                            reason: "path escapes the repository root".into(),
                        });
                    }
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(ToolError::Refused {
                        path: display_input(input),
                        reason: "path escapes the repository root".into(),
                    });
                }
            }
        }
        Ok(parts)
    }
}

/// Classifies metadata (after following links) as file or directory; `None` for anything else.
pub fn classify(metadata: &Metadata) -> Option<EntryKind> {
    let file_type = metadata.file_type();
    if file_type.is_file() {
        Some(EntryKind::File)
    } else if file_type.is_dir() {
        Some(EntryKind::Dir)
    } else {
        None
    }
}

/// Renders an agent-supplied path for messages: control characters escaped, length bounded.
pub fn display_input(input: &str) -> String {
    let mut out: String = input
        .chars()
        .take(200)
        .flat_map(char::escape_debug)
        .collect();
    if input.chars().count() > 200 {
        out.push('…');
    }
    out
}

fn io_refusal(input: &str, error: &io::Error) -> ToolError {
    let reason = match error.raw_os_error() {
        Some(libc::ELOOP) => "symbolic link (not followed)".to_string(),
        Some(libc::EACCES) => "permission denied".to_string(),
        _ => format!("cannot be accessed ({})", error.kind()),
    };
    ToolError::Refused {
        path: display_input(input),
        reason,
    }
}

/// The refusal of a path the repository's configuration excludes.
/// Whether a root-relative, `/`-separated path is Git's directory or inside it.
fn is_git_dir(rel: &str) -> bool {
    rel.split('/').any(|component| component == ".git")
}

fn git_dir(input: &str) -> ToolError {
    ToolError::Refused {
        path: display_input(input),
        reason: "inside .git/ (Git's own data, not the repository's files)".into(),
    }
}

fn excluded(input: &str) -> ToolError {
    ToolError::Refused {
        path: display_input(input),
        reason: "excluded by the repository's configuration (.relay.toml `exclude`)".into(),
    }
}

fn not_found(input: &str) -> ToolError {
    ToolError::NotFound {
        path: display_input(input),
        suggestions: Vec::new(),
    }
}
