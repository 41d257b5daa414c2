//! What changed between two synced commits, with git's rename detection, and a file's text at a
//! commit. Used to re-check findings' citations after a push.

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

    /// The texts of `paths` at a synced `commit`, whatever their number read by two git
    /// processes (`cat-file --batch-check` for the sizes, then `--batch` for the blobs within
    /// [`MAX_FILE_AT_BYTES`]) instead of two per file. Every path is a key of the answer; `None`
    /// as with [`RepoManager::file_at`] (not a file there, too large), and for a path that cannot
    /// be named on one request line.
    pub async fn files_at(
        &self,
        spec: &RepoSpec,
        commit: &str,
        paths: &[String],
    ) -> Result<HashMap<String, Option<String>>> {
        validate_commit(commit)?;
        let mut texts: HashMap<String, Option<String>> =
            paths.iter().map(|path| (path.clone(), None)).collect();
        let mut asked: Vec<&str> = paths
            .iter()
            .map(String::as_str)
            .filter(|path| !path.contains(['\n', '\r']))
            .collect();
        asked.sort_unstable();
        asked.dedup();
        if asked.is_empty() {
            return Ok(texts);
        }
        let (git, dirs, _) = self.prepare(spec).await?;
        let request: String = asked
            .iter()
            .map(|path| format!("{commit}:{path}\n"))
            .collect();
        let mut check = vec![git_dir_arg(&dirs)];
        check.extend(args(["cat-file", "--batch-check"]));
        let sizes = git
            .run_with_input(&check, self.local(), request.into_bytes())
            .await?;
        let sizes = String::from_utf8_lossy(&sizes);
        let wanted: Vec<(&str, &str)> = asked
            .iter()
            .zip(sizes.lines())
            .filter_map(|(path, line)| {
                let (oid, kind, size) = blob_header(line)?;
                (kind == "blob" && size <= MAX_FILE_AT_BYTES).then_some((*path, oid))
            })
            .collect();
        if wanted.is_empty() {
            return Ok(texts);
        }
        let request: String = wanted.iter().map(|(_, oid)| format!("{oid}\n")).collect();
        let mut batch = vec![git_dir_arg(&dirs)];
        batch.extend(args(["cat-file", "--batch"]));
        let blobs = git
            .run_with_input(&batch, self.local(), request.into_bytes())
            .await?;
        let mut rest: &[u8] = &blobs;
        for (path, _) in wanted {
            // `<oid> blob <size>\n<content>\n` per object, in the order asked.
            let Some(end) = rest.iter().position(|b| *b == b'\n') else {
                break;
            };
            let header = String::from_utf8_lossy(&rest[..end]).into_owned();
            rest = &rest[end + 1..];
            let Some((_, _, size)) = blob_header(&header) else {
                // `<oid> missing`: nothing follows it.
                continue;
            };
            if rest.len() < size {
                break;
            }
            let content = String::from_utf8_lossy(&rest[..size]).into_owned();
            rest = rest.get(size + 1..).unwrap_or_default();
            texts.insert(path.to_owned(), Some(content));
        }
        Ok(texts)
    }

    /// The text of `path` at a synced `commit`; `None` when the path is not a file there or is
    /// larger than [`MAX_FILE_AT_BYTES`].
    pub async fn file_at(
        &self,
        spec: &RepoSpec,
        commit: &str,
        path: &str,
    ) -> Result<Option<String>> {
        let mut texts = self.files_at(spec, commit, &[path.to_owned()]).await?;
        Ok(texts.remove(path).flatten())
    }
}

/// `<oid> <type> <size>` as `cat-file --batch-check` prints it; `None` for any other line
/// (`<name> missing`, a name with spaces that merely looks like one).
fn blob_header(line: &str) -> Option<(&str, &str, usize)> {
    let mut parts = line.split(' ');
    let (oid, kind, size) = (parts.next()?, parts.next()?, parts.next()?);
    let is_oid = matches!(oid.len(), 40 | 64) && oid.bytes().all(|b| b.is_ascii_hexdigit());
    (is_oid && parts.next().is_none()).then_some(())?;
    Some((oid, kind, size.parse().ok()?))
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
