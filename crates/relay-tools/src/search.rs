//! The search engine behind `grep`: a parallel, `.gitignore`-aware walk (`ignore`) and
//! `grep-searcher` on each regular file. Binary files (a NUL byte) are skipped entirely; files are
//! opened with `O_NOFOLLOW | O_NONBLOCK`. Hits are collected per file and sorted by path.

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

use crate::error::ToolError;
use crate::output::{cut_line, group_thousands, line_text};
use crate::sandbox::{Resolved, Sandbox};
use crate::walk::walker;

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

/// All hits of one search, files sorted by path.
#[derive(Debug, Clone, Default)]
pub struct SearchOutcome {
    /// Files with at least one match, sorted by path.
    pub files: Vec<FileHits>,
    /// Matching lines in all files.
    pub total_matches: usize,
    /// Binary files skipped.
    pub binary_files: usize,
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
        self.files.len()
    }
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

/// Runs one search. At most `keep_per_file` matching lines (plus context) are kept per file; all
/// matches are counted. Lines are cut to `max_line_chars`.
pub fn search(
    sandbox: &Sandbox,
    query: &SearchQuery,
    keep_per_file: usize,
    max_line_chars: usize,
) -> Result<SearchOutcome, ToolError> {
    let matcher = build_matcher(query)?;
    let glob = query.glob.as_deref().map(build_glob).transpose()?;
    let mut searcher_builder = SearcherBuilder::new();
    searcher_builder
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .before_context(query.context)
        .after_context(query.context);
    let results: Mutex<SearchOutcome> = Mutex::new(SearchOutcome::default());
    let root = sandbox.root();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(12);
    let mut builder = walker(root, &query.start.abs);
    builder.threads(threads);
    builder.build_parallel().run(|| {
        let matcher = matcher.clone();
        let mut searcher = searcher_builder.build();
        let glob = glob.clone();
        let results = &results;
        Box::new(move |entry| {
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
            let mut collector = Collector::new(keep_per_file, max_line_chars);
            if search_one(&mut searcher, &matcher, entry.path(), &mut collector).is_err() {
                return WalkState::Continue;
            }
            let mut results = results
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            if collector.binary {
                results.binary_files += 1;
            } else if collector.count > 0 {
                results.total_matches += collector.count;
                results.files.push(FileHits {
                    path: rel,
                    match_count: collector.count,
                    lines: collector.lines,
                });
            }
            WalkState::Continue
        })
    });
    let mut outcome = results
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    outcome
        .files
        .sort_unstable_by(|left, right| left.path.cmp(&right.path));
    Ok(outcome)
}

/// Searches one file, opened without following symlinks and without blocking on FIFOs.
fn search_one(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    path: &Path,
    collector: &mut Collector,
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
struct Collector {
    keep: usize,
    max_line_chars: usize,
    count: usize,
    lines: Vec<HitLine>,
    pending_break: bool,
    binary: bool,
}

impl Collector {
    fn new(keep: usize, max_line_chars: usize) -> Self {
        Self {
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

impl Sink for Collector {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, hit: &SinkMatch<'_>) -> Result<bool, Self::Error> {
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
