//! The search engine behind `grep`: a parallel, `.gitignore`-aware walk (`ignore`) and
//! `grep-searcher` on each regular file. Binary files (a NUL byte) are skipped entirely; files are
//! opened with `O_NOFOLLOW | O_NONBLOCK`.
//!
//! Memory does not grow with the repository: matches are counted in every file, but lines are
//! kept only for the files that can still be shown. Results are shown in path order, so the kept
//! set is the first files by path whose kept matches reach the shown cap; a file that sorts after
//! them is counted and dropped (see `Kept`). Kept lines are cut before decoding, and the
//! searcher's line buffer is capped at [`MAX_LINE_BUFFER_BYTES`] (a file with a longer line is
//! counted in [`SearchOutcome::long_line_files`], not searched). The walk and the per-line sink
//! poll the call's [`CallControl`]: a cancelled call stops, a call past its deadline returns what
//! it counted so far, marked [`SearchOutcome::stopped`] (the counts are then lower bounds).

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

use globset::{GlobBuilder, GlobMatcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::WalkState;

use crate::control::{CallControl, Stop};
use crate::error::ToolError;
use crate::output::{cut_line, group_thousands, line_text};
use crate::sandbox::{Resolved, Sandbox};

/// One concrete search: what the retry ladder varies between attempts.
#[derive(Debug, Clone)]
pub struct SearchQuery {
    /// The pattern as given to the matcher.
    pub pattern: String,
    /// Literal instead of regex.
    pub literal: bool,
    /// Case-insensitive.
    pub case_insensitive: bool,
    /// Where to search (file or directory inside the sandbox).
    pub start: Resolved,
    /// Optional glob filter.
    pub glob: Option<String>,
    /// Context lines before and after.
    pub context: usize,
}

/// Largest line buffer of the searcher: a file with a longer line is not searched (it would
/// otherwise be held whole in memory, several times over while the buffer grows).
pub const MAX_LINE_BUFFER_BYTES: usize = 2 * 1024 * 1024;

/// The hits of one search: the first files by path (enough to fill the shown cap), and counts
/// over every file searched.
#[derive(Debug, Clone, Default)]
pub struct SearchOutcome {
    /// The first files with matches by path, sorted, with their kept lines: together they hold
    /// at least the shown cap of matching lines (or all of them).
    pub files: Vec<FileHits>,
    /// Matching lines in all files searched.
    pub total_matches: usize,
    /// Files with at least one match.
    pub matched_files: usize,
    /// Binary files skipped.
    pub binary_files: usize,
    /// Files not searched because a line is longer than [`MAX_LINE_BUFFER_BYTES`].
    pub long_line_files: usize,
    /// Set when the search stopped early (its deadline): the counts are lower bounds.
    pub stopped: Option<Stop>,
}

/// Caps of one search.
#[derive(Debug, Clone, Copy)]
pub struct SearchLimits {
    /// Matching lines shown: at most this many are kept per file, and files are kept (first by
    /// path) until their kept matches reach it.
    pub keep_matches: usize,
    /// Characters kept per line.
    pub max_line_chars: usize,
}

/// The hits in one file.
#[derive(Debug, Clone)]
pub struct FileHits {
    /// Path relative to the repository root.
    pub path: String,
    /// Matching lines in this file (all of them, not only the kept ones).
    pub match_count: usize,
    /// Kept lines (matches and context), in file order.
    pub lines: Vec<HitLine>,
}

/// One kept line.
#[derive(Debug, Clone)]
pub struct HitLine {
    /// 1-based line number.
    pub number: u64,
    /// Text (already cut to the line limit).
    pub text: String,
    /// Match or context.
    pub kind: LineKind,
    /// A gap in the context precedes this line.
    pub break_before: bool,
}

/// Whether a kept line matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// A matching line.
    Match,
    /// Context before a match.
    Before,
    /// Context after a match.
    After,
}

impl SearchOutcome {
    /// Number of files with matches.
    pub fn total_files(&self) -> usize {
        self.matched_files
    }
}

/// The files whose lines are kept while the search runs: the first ones by path, just enough to
/// fill the shown cap. Bounded by `keep_matches + 1` files of at most `keep_matches` matching
/// lines each (plus context), whatever the repository holds.
#[derive(Debug, Default)]
struct Kept {
    keep_matches: usize,
    files: BTreeMap<String, FileHits>,
    /// Matching lines kept, over `files`.
    kept_matches: usize,
}

impl Kept {
    fn insert(&mut self, file: FileHits) {
        let kept = kept_matches(&file);
        if let Some((last, _)) = self.files.last_key_value()
            && self.kept_matches >= self.keep_matches
            && file.path > *last
        {
            // Sorts after files that already fill the cap: never shown.
            return;
        }
        self.kept_matches += kept;
        self.files.insert(file.path.clone(), file);
        // Drop the last files while the ones before them still fill the cap.
        while let Some((_, last)) = self.files.last_key_value() {
            let last_kept = kept_matches(last);
            if self.kept_matches - last_kept < self.keep_matches {
                break;
            }
            self.kept_matches -= last_kept;
            self.files.pop_last();
        }
    }
}

fn kept_matches(file: &FileHits) -> usize {
    file.lines
        .iter()
        .filter(|line| line.kind == LineKind::Match)
        .count()
}

/// Builds the matcher for a query.
pub fn build_matcher(query: &SearchQuery) -> Result<RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .case_insensitive(query.case_insensitive)
        .fixed_strings(query.literal)
        .line_terminator(Some(b'\n'))
        .build(&query.pattern)
        .map_err(|error| ToolError::InvalidPattern(error.to_string()))
}

/// Compiles the `glob` filter: names without `/` match the file name, others the whole path.
fn build_glob(glob: &str) -> Result<(GlobMatcher, bool), ToolError> {
    let whole_path = glob.contains('/');
    let pattern = glob.trim_start_matches("./");
    let matcher = GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|error| ToolError::InvalidPattern(format!("glob `{glob}`: {error}")))?
        .compile_matcher();
    Ok((matcher, whole_path))
}

/// Running totals of a search, shared by the walk's threads.
#[derive(Debug, Default)]
struct Totals {
    kept: Kept,
    total_matches: usize,
    matched_files: usize,
    binary_files: usize,
    long_line_files: usize,
}

/// Runs one search (see the module docs for what is kept). Fails with [`ToolError::Cancelled`]
/// when `control` is cancelled; past its deadline it returns the partial outcome.
pub fn search(
    sandbox: &Sandbox,
    query: &SearchQuery,
    limits: SearchLimits,
    control: &CallControl,
) -> Result<SearchOutcome, ToolError> {
    let SearchLimits {
        keep_matches,
        max_line_chars,
    } = limits;
    let matcher = build_matcher(query)?;
    let glob = query.glob.as_deref().map(build_glob).transpose()?;
    let mut searcher_builder = SearcherBuilder::new();
    searcher_builder
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .before_context(query.context)
        .after_context(query.context)
        .heap_limit(Some(MAX_LINE_BUFFER_BYTES));
    let results: Mutex<Totals> = Mutex::new(Totals {
        kept: Kept {
            keep_matches,
            ..Kept::default()
        },
        ..Totals::default()
    });
    let root = sandbox.root();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(12);
    let mut builder = sandbox.walker(&query.start.abs);
    builder.threads(threads);
    builder.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = searcher_builder.build();
        let glob = glob.clone();
        let results = &results;
        Box::new(move |entry| {
            if control.stop().is_some() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry
                .file_type()
                .is_some_and(|file_type| file_type.is_file())
            {
                return WalkState::Continue;
            }
            let rel = relative(root, entry.path());
            if let Some((glob, whole_path)) = &glob {
                let subject = if *whole_path {
                    rel.as_str()
                } else {
                    rel.rsplit('/').next().unwrap_or(&rel)
                };
                // An explicitly named file (the walk root) is searched even if the glob excludes it.
                if entry.depth() > 0 && !glob.is_match(subject) {
                    return WalkState::Continue;
                }
            }
            let mut collector = Collector::new(keep_matches, max_line_chars, control);
            let searched = search_one(&mut searcher, &matcher, entry.path(), &mut collector);
            let mut results = results
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if let Err(error) = searched {
                // The searcher's only allocation error is a line over the buffer cap.
                if error.kind() == std::io::ErrorKind::OutOfMemory
                    || error.to_string().contains("allocation limit")
                {
                    results.long_line_files += 1;
                }
                return WalkState::Continue;
            }
            if collector.binary {
                results.binary_files += 1;
            } else if collector.count > 0 {
                results.total_matches += collector.count;
                results.matched_files += 1;
                results.kept.insert(FileHits {
                    path: rel,
                    match_count: collector.count,
                    lines: collector.lines,
                });
            }
            WalkState::Continue
        })
    });
    let totals = results
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let stopped = control.stop();
    if stopped == Some(Stop::Cancelled) {
        return Err(ToolError::Cancelled);
    }
    Ok(SearchOutcome {
        files: totals.kept.files.into_values().collect(),
        total_matches: totals.total_matches,
        matched_files: totals.matched_files,
        binary_files: totals.binary_files,
        long_line_files: totals.long_line_files,
        stopped,
    })
}

/// Searches one file, opened without following symlinks and without blocking on FIFOs.
fn search_one(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    path: &Path,
    collector: &mut Collector<'_>,
) -> std::io::Result<()> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Ok(());
    }
    searcher.search_file(matcher, &file, collector)
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let text = rel.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        text.into_owned()
    } else {
        text.replace(std::path::MAIN_SEPARATOR, "/")
    }
}

/// Collects the hits of one file.
struct Collector<'c> {
    control: &'c CallControl,
    keep: usize,
    max_line_chars: usize,
    count: usize,
    lines: Vec<HitLine>,
    pending_break: bool,
    binary: bool,
}

impl<'c> Collector<'c> {
    fn new(keep: usize, max_line_chars: usize, control: &'c CallControl) -> Self {
        Self {
            control,
            keep,
            max_line_chars,
            count: 0,
            lines: Vec::new(),
            pending_break: false,
            binary: false,
        }
    }

    fn push(&mut self, number: Option<u64>, bytes: &[u8], kind: LineKind) {
        // Bound memory before decoding: a minified line can be megabytes long.
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let limit = self.max_line_chars.saturating_mul(4).saturating_add(4);
        let text = if bytes.len() > limit {
            let decoded = line_text(&bytes[..limit]);
            let kept: String = decoded.chars().take(self.max_line_chars).collect();
            let rest = bytes.len().saturating_sub(kept.len());
            format!("{kept}… [line cut, ~{} more bytes]", group_thousands(rest))
        } else {
            cut_line(&line_text(bytes), self.max_line_chars)
        };
        self.lines.push(HitLine {
            number: number.unwrap_or(0),
            text,
            kind,
            break_before: std::mem::take(&mut self.pending_break),
        });
    }
}

impl Sink for Collector<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, hit: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        // A file with millions of matching lines must not outlive a cancelled call.
        if self.control.stop().is_some() {
            return Ok(false);
        }
        self.count += 1;
        if self.count <= self.keep {
            self.push(hit.line_number(), hit.bytes(), LineKind::Match);
        }
        Ok(true)
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        let keep = match context.kind() {
            SinkContextKind::Before => self.count < self.keep,
            SinkContextKind::After | SinkContextKind::Other => self.count <= self.keep,
        };
        if keep {
            let kind = if matches!(context.kind(), SinkContextKind::Before) {
                LineKind::Before
            } else {
                LineKind::After
            };
            self.push(context.line_number(), context.bytes(), kind);
        }
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, Self::Error> {
        self.pending_break = !self.lines.is_empty();
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        self.lines.clear();
        self.count = 0;
        Ok(false)
    }
}
