//! Re-verification on every push: once the checkout is at a pushed commit, every
//! source of every live finding, and every code place an open gap's evidence cites, of the
//! project's issues is checked there.
//!
//! Watermarked: the project keeps the commit its sources are verified through
//! (`relay_store::reverify::watermark`). One `git diff -M` from it says which files changed. A
//! push that touches none of the project's cited files, with no source pending, is one read of the
//! watermark and one write moving it: no source is read or written. Otherwise one statement reads
//! the sources to check (those in changed files, and the pending ones: new since the last push,
//! stale, or verified at a commit the watermark does not reach), one `git diff -M` per other
//! distinct commit they were verified at says where renamed files went, only sources in changed
//! files are read and searched, and one transaction writes every outcome and the watermark. A
//! source whose file did not change stays verified (at the new watermark) without being read or
//! written.
//!
//! - the cited text still stands at the cited lines → verified at the new commit;
//! - it moved (lines inserted above, the block moved, the file renamed) → re-anchored: new path and
//!   lines at the new commit, the old position kept as `moved_from`;
//! - it is gone or changed → stale, kept with its last good commit.
//!
//! Matching uses the stored quote, else the cited lines' text at the commit they were verified at
//! (read once from git and stored as the source's anchor), whitespace-normalised.

pub mod anchor;
pub mod publish;

use relay_core::IssueId;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use anyhow::Context as _;
use relay_repo::{PathChange, PathChanges, RepoManager, RepoSpec};
use relay_store::PgPool;
use relay_store::findings::{Position, SourceStatus};
use relay_store::reverify::{Advance, CitedSource, SourceCheck, SourceOwner};
use relay_tools::citation::collapse_whitespace;
use relay_tools::sandbox::Sandbox;

use anchor::{Expected, Span, lines_of, locate};

/// Distinct "last verified at" commits diffed per push; sources verified at older, rarer commits
/// beyond this wait for a later push (each diff is one git process).
pub const MAX_BASE_COMMITS: usize = 64;

/// Which project and commit to re-verify at.
#[derive(Debug, Clone, Copy)]
pub struct PushTarget<'a> {
    pub tracker: &'a str,
    pub project_id: &'a str,
    /// `owner/name`: other issues cite this project as a related repository under it.
    pub project_path: &'a str,
    /// The commit the checkout now stands at (full SHA).
    pub commit: &'a str,
}

/// What a push's re-verification found.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Reverification {
    /// No cited file changed since the watermark and no source was pending: the watermark moved
    /// to the pushed commit and nothing else was read or written (every count below is 0).
    pub untouched: bool,
    /// Sources the push loaded: those in files changed since the watermark, and the pending ones
    /// (the rest stay verified, at the new watermark, without being read).
    pub sources: usize,
    /// Sources whose file changed, so they were read and searched.
    pub read: usize,
    pub verified: usize,
    pub reanchored: usize,
    pub stale: usize,
    /// Stale sources found again.
    pub restored: usize,
    /// Per issue whose citations changed status or place.
    pub issues: Vec<IssueChange>,
}

/// An issue whose citations a push changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IssueChange {
    pub issue_id: IssueId,
    /// Findings that were not stale before this push and are now.
    pub newly_stale: Vec<i32>,
    /// Gaps whose evidence was not stale before this push and is now.
    pub newly_stale_gaps: Vec<i32>,
}

/// Re-checks the project's cited sources at `target.commit`, whose snapshot is at `root`.
pub async fn reverify_project(
    pool: &PgPool,
    repos: &RepoManager,
    spec: &RepoSpec,
    target: PushTarget<'_>,
    root: &Path,
) -> anyhow::Result<Reverification> {
    let scope = relay_store::reverify::Scope {
        tracker: target.tracker,
        project_id: target.project_id,
        project_path: target.project_path,
    };
    let mut conn = pool.acquire().await.context("no database connection")?;
    let through = relay_store::reverify::watermark(&mut conn, target.tracker, target.project_id)
        .await
        .context("failed to read the project's re-verification watermark")?;
    // The files changed since every source under the watermark was verified (`None`: the
    // project has no watermark yet, or git cannot diff from it: those sources wait).
    let since = match through.as_deref() {
        None => None,
        Some(through) if through == target.commit => Some(PathChanges::default()),
        Some(through) => match repos.path_changes(spec, through, target.commit).await {
            Ok(changes) => Some(changes),
            Err(error) => {
                tracing::warn!(error.message = %error, repo.commit = %through, "cannot diff against the re-verification watermark");
                None
            }
        },
    };
    let mut changed_paths: Vec<String> = since
        .as_ref()
        .map(|changes| changes.changes.keys().cloned().collect())
        .unwrap_or_default();
    changed_paths.sort_unstable();
    if let (Some(through), Some(_)) = (through.as_deref(), since.as_ref())
        && relay_store::reverify::advance_if_untouched(
            &mut conn,
            scope,
            through,
            target.commit,
            &changed_paths,
        )
        .await
        .context("failed to move the re-verification watermark")?
    {
        return Ok(Reverification {
            untouched: true,
            ..Reverification::default()
        });
    }
    let sources = relay_store::reverify::sources_to_check(&mut conn, scope, &changed_paths)
        .await
        .context("failed to load the project's cited sources")?;
    drop(conn);
    // The watermark moves to the pushed commit when every source under it was checked against
    // it: the diff from it worked (or there was none yet).
    let advance = (through.is_none() || since.is_some()).then_some(Advance {
        tracker: target.tracker,
        project_id: target.project_id,
        from: through.as_deref(),
        to: target.commit,
    });
    let mut outcome = Reverification {
        sources: sources.len(),
        ..Reverification::default()
    };
    if sources.is_empty() {
        let mut conn = pool.acquire().await.context("no database connection")?;
        relay_store::reverify::record_push(&mut conn, &[], advance)
            .await
            .context("failed to record the re-verification")?;
        return Ok(outcome);
    }
    let mut bases: HashMap<&str, Option<PathChanges>> = HashMap::new();
    if let (Some(through), Some(since)) = (through.as_deref(), since)
        && through != target.commit
    {
        bases.insert(through, Some(since));
    }
    for source in &sources {
        let base = source.commit_sha.as_str();
        if base == target.commit || bases.contains_key(base) || bases.len() >= MAX_BASE_COMMITS {
            continue;
        }
        let changes = match repos.path_changes(spec, base, target.commit).await {
            Ok(changes) => Some(changes),
            Err(error) => {
                // An unknown commit (history rewritten, or never fetched): its sources wait.
                tracing::warn!(error.message = %error, repo.commit = %base, "cannot diff against a cited commit");
                None
            }
        };
        bases.insert(base, changes);
    }
    let sandbox = Sandbox::new(root).context("failed to sandbox the checkout")?;
    let mut files = Files {
        repos,
        spec,
        sandbox: &sandbox,
        new: HashMap::new(),
        old: HashMap::new(),
    };
    files.prefetch_anchors(&sources, &bases).await;
    let mut checks = Vec::new();
    // Owners (a finding, or a gap's evidence) by kind and id.
    let mut stale_before: HashSet<(SourceOwner, i64)> = HashSet::new();
    let mut stale_after: HashSet<(SourceOwner, i64)> = HashSet::new();
    let mut changed: BTreeSet<IssueId> = BTreeSet::new();
    let mut numbers: HashMap<(SourceOwner, i64), (IssueId, i32)> = HashMap::new();
    for source in &sources {
        let owner = (source.owner(), source.owner_id);
        numbers.insert(owner, (source.issue_id, source.owner_number));
        if source.status() == SourceStatus::Stale {
            stale_before.insert(owner);
        }
        let Some(Some(changes)) = bases.get(source.commit_sha.as_str()) else {
            if source.status() == SourceStatus::Stale {
                stale_after.insert(owner);
            }
            continue;
        };
        let mut check = check_source(
            source,
            changes.get(&source.path),
            target.commit,
            &mut files,
            &mut outcome,
        )
        .await;
        check.through_watermark = advance.is_some()
            && check.status == SourceStatus::Verified
            && check.commit_sha == target.commit;
        if check.status == SourceStatus::Stale {
            stale_after.insert(owner);
        }
        if check.status != source.status()
            || check.path != source.path
            || check.start_line != source.start_line
            || check.end_line != source.end_line
        {
            changed.insert(source.issue_id);
        }
        if let Some(label) = &source.label {
            // Another issue cites this project as a related repository: written back as placed.
            check.path = format!("{label}:{}", check.path);
            if let Some(moved) = &mut check.moved_from {
                moved.path = format!("{label}:{}", moved.path);
            }
        }
        checks.push(check);
    }
    {
        let mut conn = pool.acquire().await.context("no database connection")?;
        relay_store::reverify::record_push(&mut conn, &checks, advance)
            .await
            .context("failed to record the re-verification")?;
    }
    let mut newly: BTreeMap<(IssueId, SourceOwner), Vec<i32>> = BTreeMap::new();
    for owner in stale_after.difference(&stale_before) {
        if let Some((issue, number)) = numbers.get(owner) {
            newly.entry((*issue, owner.0)).or_default().push(*number);
        }
    }
    let mut newly_of = |issue_id: IssueId, owner: SourceOwner| {
        let mut numbers = newly.remove(&(issue_id, owner)).unwrap_or_default();
        numbers.sort_unstable();
        numbers
    };
    outcome.issues = changed
        .into_iter()
        .map(|issue_id| IssueChange {
            issue_id,
            newly_stale: newly_of(issue_id, SourceOwner::Finding),
            newly_stale_gaps: newly_of(issue_id, SourceOwner::Gap),
        })
        .collect();
    Ok(outcome)
}

/// File texts read during one push, each at most once.
struct Files<'a> {
    repos: &'a RepoManager,
    spec: &'a RepoSpec,
    sandbox: &'a Sandbox,
    /// At the pushed commit, by path.
    new: HashMap<String, Option<String>>,
    /// At an older commit, by (commit, path).
    old: HashMap<(String, String), Option<String>>,
}

impl Files<'_> {
    fn at_push(&mut self, path: &str) -> Option<&str> {
        self.new
            .entry(path.to_owned())
            .or_insert_with(|| {
                relay_tools::citation::read_text(self.sandbox, path)
                    .ok()
                    .map(|(_, text)| text)
            })
            .as_deref()
    }

    /// Reads, one batch per base commit, the old text of every changed file a source without a
    /// stored anchor needs (two git processes per commit instead of two per file). A read that
    /// fails leaves those files to [`Files::at_commit`], one by one.
    async fn prefetch_anchors(
        &mut self,
        sources: &[CitedSource],
        bases: &HashMap<&str, Option<PathChanges>>,
    ) {
        let mut wanted: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for source in sources.iter().filter(|s| s.anchor_text.is_none()) {
            let changed = bases
                .get(source.commit_sha.as_str())
                .and_then(|changes| changes.as_ref())
                .and_then(|changes| changes.get(&source.path))
                .is_some_and(|change| !matches!(change, PathChange::Deleted));
            if changed {
                wanted
                    .entry(source.commit_sha.as_str())
                    .or_default()
                    .insert(source.path.as_str());
            }
        }
        for (commit, paths) in wanted {
            let paths: Vec<String> = paths.into_iter().map(str::to_owned).collect();
            match self.repos.files_at(self.spec, commit, &paths).await {
                Ok(texts) => {
                    for (path, text) in texts {
                        self.old.insert((commit.to_owned(), path), text);
                    }
                }
                Err(error) => {
                    tracing::debug!(error.message = %error, repo.commit = %commit, "batch read failed; reading files one by one");
                }
            }
        }
    }

    async fn at_commit(&mut self, commit: &str, path: &str) -> Option<&str> {
        let key = (commit.to_owned(), path.to_owned());
        if !self.old.contains_key(&key) {
            let text = self
                .repos
                .file_at(self.spec, commit, path)
                .await
                .ok()
                .flatten();
            self.old.insert(key.clone(), text);
        }
        self.old.get(&key).and_then(|text| text.as_deref())
    }
}

async fn check_source(
    source: &CitedSource,
    change: Option<&PathChange>,
    commit: &str,
    files: &mut Files<'_>,
    outcome: &mut Reverification,
) -> SourceCheck {
    let was_stale = source.status() == SourceStatus::Stale;
    let at = Span {
        start: usize::try_from(source.start_line).unwrap_or(0),
        end: usize::try_from(source.end_line).unwrap_or(0),
    };
    let in_place = SourceCheck {
        owner: source.owner(),
        owner_id: source.owner_id,
        position: source.position,
        path: source.path.clone(),
        start_line: source.start_line,
        end_line: source.end_line,
        commit_sha: commit.to_owned(),
        status: SourceStatus::Verified,
        moved_from: None,
        anchor_text: None,
        through_watermark: false,
    };
    let stale = |anchor_text: Option<String>| SourceCheck {
        commit_sha: source.commit_sha.clone(),
        status: SourceStatus::Stale,
        anchor_text,
        ..in_place.clone()
    };
    let new_path = match change {
        // The file is as it was when the source was last verified.
        None => {
            outcome.verified += 1;
            outcome.restored += usize::from(was_stale);
            return in_place;
        }
        Some(PathChange::Deleted) => {
            outcome.stale += 1;
            return stale(None);
        }
        Some(PathChange::Modified) => source.path.clone(),
        Some(PathChange::Renamed(path)) => path.clone(),
    };
    outcome.read += 1;
    // What was cited: the stored anchor, else the lines at the commit they were verified at.
    let anchor = match &source.anchor_text {
        Some(anchor) => Some(anchor.clone()),
        None => files
            .at_commit(&source.commit_sha, &source.path)
            .await
            .and_then(|text| lines_of(text, at)),
    };
    let quote = source
        .quote
        .as_deref()
        .filter(|quote| !collapse_whitespace(quote).is_empty());
    let expected = match (quote, anchor.as_deref()) {
        (Some(quote), _) => Expected::Quote(quote),
        (None, Some(anchor)) => Expected::Lines(anchor),
        (None, None) => {
            outcome.stale += 1;
            return stale(None);
        }
    };
    let found = files
        .at_push(&new_path)
        .and_then(|content| locate(content, expected, at, anchor.as_deref()));
    let new_anchor = if source.anchor_text.is_none() {
        anchor.clone()
    } else {
        None
    };
    let new_path_for_anchor = new_path.clone();
    match found {
        Some(span) if span == at && new_path == source.path => {
            outcome.verified += 1;
            outcome.restored += usize::from(was_stale);
            SourceCheck {
                anchor_text: new_anchor,
                ..in_place
            }
        }
        Some(span) => {
            outcome.reanchored += 1;
            outcome.restored += usize::from(was_stale);
            SourceCheck {
                path: new_path,
                start_line: i32::try_from(span.start).unwrap_or(i32::MAX),
                end_line: i32::try_from(span.end).unwrap_or(i32::MAX),
                moved_from: Some(Position {
                    path: source.path.clone(),
                    start_line: source.start_line,
                    end_line: source.end_line,
                }),
                // The anchor follows the text: a later push compares against the new lines.
                anchor_text: files
                    .at_push(&new_path_for_anchor)
                    .and_then(|content| lines_of(content, span)),
                ..in_place
            }
        }
        None => {
            outcome.stale += 1;
            stale(new_anchor)
        }
    }
}
