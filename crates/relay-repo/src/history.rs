//! What changed between two synced commits, with git's rename detection, and a file's text at a
//! commit. Used to re-check findings' citations after a push (issue #25).

use std::collections::HashMap;

use crate::error::Result;
use crate::git::args;
use crate::manager::{RepoManager, git_dir_arg, validate_commit};
use crate::spec::RepoSpec;

/// Largest file [`RepoManager::file_at`] returns; larger blobs are not source a person cites.
pub const MAX_FILE_AT_BYTES: usize = 8 * 1024 * 1024;

/// How one path fared between two commits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathChange {
    /// Modified in place (or its type changed).
    Modified,
    /// Deleted, and git found no rename target.
    Deleted,
    /// Renamed (possibly with edits) to this path.
    Renamed(String),
}

/// The changes between two commits, keyed by the path at the older commit. A path absent from
/// the map is unchanged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathChanges {
    pub changes: HashMap<String, PathChange>,
}

impl PathChanges {
    /// How `path` (at the older commit) fared; `None`: unchanged.
    pub fn get(&self, path: &str) -> Option<&PathChange> {
        self.changes.get(path)
    }

    /// Parses `git diff -M --name-status -z` output: `STATUS\0path\0` or `RNNN\0old\0new\0`.
    pub fn parse(output: &str) -> PathChanges {
        let mut changes = HashMap::new();
        let mut fields = output.split('\0').filter(|f| !f.is_empty());
        while let Some(status) = fields.next() {
            let status = status.trim();
            let Some(path) = fields.next() else { break };
            match status.chars().next() {
                Some('R') => {
                    let Some(new) = fields.next() else { break };
                    changes.insert(path.to_owned(), PathChange::Renamed(new.to_owned()));
                }
                // A copy leaves the source where it was; the copy is a new path.
                Some('C') => {
                    fields.next();
                }
                Some('D') => {
                    changes.insert(path.to_owned(), PathChange::Deleted);
                }
                // Added paths did not exist at the older commit: no citation points at them.
                Some('A') => {}
                _ => {
                    changes.insert(path.to_owned(), PathChange::Modified);
                }
            }
        }
        PathChanges { changes }
    }
}

impl RepoManager {
    /// The paths that differ between two synced commits, with renames detected
    /// (`git diff -M --name-status`).
    pub async fn path_changes(&self, spec: &RepoSpec, from: &str, to: &str) -> Result<PathChanges> {
        validate_commit(from)?;
        validate_commit(to)?;
        let (git, paths, _) = self.prepare(spec).await?;
        let mut diff = vec![git_dir_arg(&paths)];
        diff.extend(args([
            "diff",
            "-M",
            "--name-status",
            "-z",
            "--end-of-options",
            from,
            to,
        ]));
        let output = git.run_raw(None, &diff, &[], self.local()).await?;
        Ok(PathChanges::parse(&output))
    }

    /// The text of `path` at a synced `commit`; `None` when the path is not a file there or is
    /// larger than [`MAX_FILE_AT_BYTES`].
    pub async fn file_at(
        &self,
        spec: &RepoSpec,
        commit: &str,
        path: &str,
    ) -> Result<Option<String>> {
        validate_commit(commit)?;
        let (git, paths, _) = self.prepare(spec).await?;
        let object = format!("{commit}:{path}");
        let mut size = vec![git_dir_arg(&paths)];
        size.extend(args([
            "cat-file",
            "-s",
            "--end-of-options",
            object.as_str(),
        ]));
        let Ok(bytes) = git.run(None, &size, &[], self.local()).await else {
            return Ok(None);
        };
        if bytes
            .parse::<usize>()
            .map_or(true, |n| n > MAX_FILE_AT_BYTES)
        {
            return Ok(None);
        }
        let mut show = vec![git_dir_arg(&paths)];
        show.extend(args([
            "cat-file",
            "blob",
            "--end-of-options",
            object.as_str(),
        ]));
        Ok(git.run_raw(None, &show, &[], self.local()).await.ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_status_output_is_parsed_with_renames() {
        let output = "M\0a.py\0R087\0old/b.py\0new/b.py\0D\0c.py\0A\0d.py\0C100\0e.py\0f.py\0";
        let changes = PathChanges::parse(output);
        assert_eq!(changes.get("a.py"), Some(&PathChange::Modified));
        assert_eq!(
            changes.get("old/b.py"),
            Some(&PathChange::Renamed("new/b.py".into()))
        );
        assert_eq!(changes.get("c.py"), Some(&PathChange::Deleted));
        assert_eq!(changes.get("d.py"), None);
        assert_eq!(changes.get("e.py"), None);
        assert_eq!(changes.get("f.py"), None);
    }
}
