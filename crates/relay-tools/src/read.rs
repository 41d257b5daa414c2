//! The `read` tool: a slice of a file with line numbers, or a directory listing.
//!
//! Files are streamed in 64 KiB chunks; only the requested window is kept (each line cut to
//! `read_max_line_chars`), so a large file is never held in memory. Lines are counted to the end
//! only for files up to `read_count_lines_max_bytes`. A NUL byte in the scanned part marks the file
//! as binary and the read is refused.

use std::io::{BufRead, BufReader, Read};

use schemars::JsonSchema;
use serde::Deserialize;

use crate::closest::{closest_paths, unambiguous};
use crate::error::ToolError;
use crate::name::ToolName;
use crate::output::{cut_line, group_thousands, line_text, plural};
use crate::sandbox::{EntryKind, Resolved};
use crate::tool::{Tool, ToolContext, parse_arguments, schema_of};

/// Arguments of the `read` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// File or directory, relative to the repository root.
    pub path: String,
    /// First line to show (1-based). Default 1.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub offset: Option<usize>,
    /// Number of lines to show. Default 200, at most 500.
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<usize>,
}

/// The `read` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadTool;

const DESCRIPTION: &str = "Read a file in the repository with line numbers, 200 lines at a time by \
default (`limit` up to 500; `offset` is the first line, 1-based). Lines longer than 2,000 characters \
are cut. A directory path returns its listing. Binary files are refused. If the path does not exist, \
the closest existing paths are suggested, and the best one is read when it is unambiguous.";

const CHUNK_BYTES: usize = 64 * 1024;

impl Tool for ReadTool {
    fn tool_name(&self) -> ToolName {
        ToolName::Read
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn parameters_schema(&self) -> serde_json::Value {
        schema_of::<ReadArgs>()
    }

    fn reads_files(&self) -> bool {
        true
    }

    fn call(
        &self,
        context: &ToolContext,
        arguments: serde_json::Value,
    ) -> Result<String, ToolError> {
        let arguments: ReadArgs = parse_arguments(arguments)?;
        let limits = context.limits();
        let limit = arguments.limit.unwrap_or(limits.read_default_lines);
        if limit == 0 || limit > limits.read_max_lines {
            return Err(ToolError::InvalidArguments(format!(
                "`limit` must be between 1 and {}",
                limits.read_max_lines
            )));
        }
        let offset = arguments.offset.unwrap_or(1).max(1);
        let (resolved, note) = resolve_with_fallback(context, context.local(&arguments.path))?;
        let body = match resolved.kind {
            EntryKind::Dir => list_directory(context, &resolved)?,
            EntryKind::File => read_file(context, &resolved, offset, limit)?,
        };
        Ok(match note {
            Some(note) => format!("{note}\n{body}"),
            None => body,
        })
    }
}

/// Resolves the path; when it does not exist, falls back to the unambiguous closest match.
fn resolve_with_fallback(
    context: &ToolContext,
    path: &str,
) -> Result<(Resolved, Option<String>), ToolError> {
    let sandbox = context.sandbox();
    match sandbox.resolve(path) {
        Ok(resolved) => Ok((resolved, None)),
        Err(ToolError::NotFound { path: shown, .. }) => {
            let candidates = closest_paths(context, path);
            if let Some(best) = unambiguous(&candidates) {
                let resolved = sandbox.resolve(best.path.trim_end_matches('/'))?;
                let others: Vec<&str> =
                    candidates.iter().skip(1).map(|c| c.path.as_str()).collect();
                let mut note = format!(
                    "Attempts: tried {}: not found; tried closest existing path {}: found",
                    context.place(&shown),
                    context.place(&best.path)
                );
                if !others.is_empty() {
                    let others: Vec<String> =
                        others.iter().map(|other| context.place(other)).collect();
                    note.push_str(&format!(" (other candidates: {})", others.join(", ")));
                }
                Ok((resolved, Some(note)))
            } else {
                Err(ToolError::NotFound {
                    path: shown,
                    suggestions: candidates.into_iter().map(|c| c.path).collect(),
                })
            }
        }
        Err(other) => Err(other),
    }
}

fn read_file(
    context: &ToolContext,
    resolved: &Resolved,
    offset: usize,
    limit: usize,
) -> Result<String, ToolError> {
    let limits = context.limits();
    let (file, metadata) = context.sandbox().open_file(resolved)?;
    let count_to_end = metadata.len() <= limits.read_count_lines_max_bytes;
    let slice = read_slice(
        file,
        offset,
        limit,
        limits.read_max_line_chars,
        count_to_end,
    )
    .map_err(|error| match error {
        SliceError::Binary => ToolError::BinaryFile {
            path: resolved.rel.clone(),
        },
        SliceError::Io(error) => {
            ToolError::Io(format!("{}: {error}", context.place(&resolved.rel)))
        }
    })?;
    let path = &context.place(&resolved.rel);
    if slice.lines.is_empty() {
        return Ok(match slice.total_lines {
            Some(0) => format!("{path} (empty file)"),
            Some(total) => format!(
                "{path}: offset {offset} is past the end of the file ({})",
                plural(total, "line", "lines")
            ),
            None => format!("{path}: offset {offset} is past the end of the file"),
        });
    }
    let last = offset + slice.lines.len() - 1;
    let mut out = match slice.total_lines {
        Some(total) => format!(
            "{path} (lines {offset}-{last} of {})\n",
            group_thousands(total)
        ),
        None => format!(
            "{path} (lines {offset}-{last}; {} bytes, not counted to the end)\n",
            group_thousands(usize::try_from(metadata.len()).unwrap_or(usize::MAX))
        ),
    };
    let width = last.to_string().len().max(4);
    for (index, line) in slice.lines.iter().enumerate() {
        out.push_str(&format!("{:>width$}\t{line}\n", offset + index));
    }
    match slice.total_lines {
        Some(total) if total > last => {
            let rest = total - last;
            out.push_str(&format!(
                "… {} more {} — continue with offset={}\n",
                group_thousands(rest),
                if rest == 1 { "line" } else { "lines" },
                last + 1
            ));
        }
        None if slice.more_after => out.push_str(&format!(
            "… more lines — continue with offset={}\n",
            last + 1
        )),
        _ => {}
    }
    Ok(out)
}

fn list_directory(context: &ToolContext, resolved: &Resolved) -> Result<String, ToolError> {
    let max_entries = context.limits().listing_max_entries;
    let mut entries: Vec<String> = context
        .sandbox()
        .walker(&resolved.abs)
        .max_depth(Some(1))
        .build()
        .flatten()
        .filter(|entry| entry.depth() == 1)
        .filter_map(|entry| {
            let file_type = entry.file_type()?;
            let name = entry.file_name().to_string_lossy().into_owned();
            Some(if file_type.is_dir() {
                format!("{name}/")
            } else if file_type.is_symlink() {
                format!("{name}@")
            } else {
                name
            })
        })
        .collect();
    entries.sort();
    let shown = if resolved.rel.is_empty() {
        context.place(".")
    } else {
        context.place(&resolved.rel)
    };
    let mut out = format!(
        "{shown}/ (directory, {})\n",
        plural(entries.len(), "entry", "entries")
    );
    for entry in entries.iter().take(max_entries) {
        out.push_str(&format!("  {entry}\n"));
    }
    if entries.len() > max_entries {
        out.push_str(&format!(
            "… {} more — use glob or tree to narrow\n",
            group_thousands(entries.len() - max_entries)
        ));
    }
    Ok(out)
}

/// The kept window of a file.
#[derive(Debug, Default)]
struct Slice {
    /// Lines `offset..offset + limit` (cut, without terminators).
    lines: Vec<String>,
    /// Total lines, when counted to the end.
    total_lines: Option<usize>,
    /// Data follows the window (known even when not counting to the end).
    more_after: bool,
}

#[derive(Debug)]
enum SliceError {
    Binary,
    Io(std::io::Error),
}

/// Streams `reader`, keeping lines `offset..offset + limit` (1-based), each cut to `max_chars`.
fn read_slice(
    reader: impl Read,
    offset: usize,
    limit: usize,
    max_chars: usize,
    count_to_end: bool,
) -> Result<Slice, SliceError> {
    let byte_cap = max_chars.saturating_mul(4).saturating_add(4);
    let end = offset.saturating_add(limit);
    let mut reader = BufReader::with_capacity(CHUNK_BYTES, reader);
    let mut slice = Slice::default();
    let mut line_number = 1usize;
    let mut current: Vec<u8> = Vec::new();
    let mut dropped_bytes = 0usize;
    let mut partial = false;
    loop {
        let chunk = reader.fill_buf().map_err(SliceError::Io)?;
        if chunk.is_empty() {
            break;
        }
        if line_number >= end && !count_to_end {
            slice.more_after = true;
            break;
        }
        if chunk.contains(&0) {
            return Err(SliceError::Binary);
        }
        let consumed = chunk.len();
        let mut rest = chunk;
        while !rest.is_empty() {
            let (segment, newline) = match rest.iter().position(|&byte| byte == b'\n') {
                Some(index) => (&rest[..index], true),
                None => (rest, false),
            };
            rest = if newline {
                &rest[segment.len() + 1..]
            } else {
                &[]
            };
            let in_window = line_number >= offset && line_number < end;
            if in_window {
                let room = byte_cap.saturating_sub(current.len());
                current.extend_from_slice(&segment[..segment.len().min(room)]);
                dropped_bytes += segment.len().saturating_sub(room);
            }
            partial = !newline;
            if newline {
                if in_window {
                    slice
                        .lines
                        .push(render_line(&current, dropped_bytes, max_chars));
                }
                current.clear();
                dropped_bytes = 0;
                line_number += 1;
            }
        }
        reader.consume(consumed);
    }
    if partial {
        if line_number >= offset && line_number < end {
            slice
                .lines
                .push(render_line(&current, dropped_bytes, max_chars));
        }
        line_number += 1;
    }
    if count_to_end {
        slice.total_lines = Some(line_number - 1);
    }
    Ok(slice)
}

fn render_line(bytes: &[u8], dropped_bytes: usize, max_chars: usize) -> String {
    let text = line_text(bytes);
    if dropped_bytes == 0 {
        return cut_line(&text, max_chars);
    }
    let kept: String = text.chars().take(max_chars).collect();
    let rest = bytes.len() - kept.len() + dropped_bytes;
    format!("{kept}… [line cut, ~{} more bytes]", group_thousands(rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str, offset: usize, limit: usize, count: bool) -> Slice {
        read_slice(text.as_bytes(), offset, limit, 10, count).unwrap()
    }

    #[test]
    fn windows() {
        let s = slice("a\nb\nc\nd", 2, 2, true);
        assert_eq!(s.lines, ["b", "c"]);
        assert_eq!(s.total_lines, Some(4));
        let s = slice("a\nb\nc\n", 3, 5, true);
        assert_eq!(s.lines, ["c"]);
        assert_eq!(s.total_lines, Some(3));
        let s = slice("", 1, 5, true);
        assert!(s.lines.is_empty());
        assert_eq!(s.total_lines, Some(0));
        let s = slice("x\r\ny\n", 1, 5, true);
        assert_eq!(s.lines, ["x", "y"]);
    }

    #[test]
    fn long_lines_are_cut() {
        let long = "é".repeat(50);
        let s = slice(&format!("{long}\nshort\n"), 1, 5, true);
        assert_eq!(
            s.lines[0],
            format!("{}… [line cut, ~80 more bytes]", "é".repeat(10))
        );
        let s = slice(&"é".repeat(15), 1, 5, true);
        assert_eq!(
            s.lines[0],
            format!("{}… [line cut, 5 more chars]", "é".repeat(10))
        );
        let huge = "x".repeat(500);
        let s = slice(&format!("{huge}\n"), 1, 5, true);
        assert_eq!(
            s.lines[0],
            format!("{}… [line cut, ~490 more bytes]", "x".repeat(10))
        );
    }

    #[test]
    fn binary_is_refused() {
        assert!(matches!(
            read_slice(&b"ab\0cd"[..], 1, 5, 10, true),
            Err(SliceError::Binary)
        ));
    }
}
