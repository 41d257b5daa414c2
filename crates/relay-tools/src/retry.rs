//! Deterministic retries (no LLM involved).
//!
//! An empty `grep` walks a fixed ladder, each step building on the previous one:
//! 1. case-insensitive;
//! 2. broadened pattern: anchors and word boundaries dropped, identifiers split at camelCase and
//!    snake_case boundaries and rejoined with an optional `_`/`-` (so `getUserName` also finds
//!    `get_user_name` and `GetUsername`);
//! 3. the parent directory of the path filter.
//!
//! Steps that would not change anything are skipped, and at most [`MAX_RETRIES`] steps run per
//! call. The result starts with the attempt history (`tried X: 0 matches; tried Y: 3 matches`).
//! The "file not found" retry (closest existing paths) lives in [`crate::closest`].

use crate::error::ToolError;
use crate::grep::{GrepArgs, format_hits, is_root, resolve_start, summary_line};
use crate::output::plural;
use crate::sandbox::Sandbox;
use crate::search::{SearchLimits, SearchOutcome, SearchQuery, search};
use crate::tool::ToolContext;

/// Most retries per call.
pub const MAX_RETRIES: usize = 2;

/// Separator inserted between the words of a split identifier.
const WORD_SEPARATOR: &str = r"[_\-]?";

/// Runs `grep` with the retry ladder and formats the result.
pub fn grep_with_retries(context: &ToolContext, arguments: &GrepArgs) -> Result<String, ToolError> {
    let sandbox = context.sandbox();
    let limits = context.limits();
    if arguments.pattern.is_empty() {
        return Err(ToolError::InvalidArguments(
            "`pattern` must not be empty".into(),
        ));
    }
    let context_lines = arguments.context.unwrap_or(0);
    if context_lines > limits.grep_max_context {
        return Err(ToolError::InvalidArguments(format!(
            "`context` is at most {} lines",
            limits.grep_max_context
        )));
    }
    let path = arguments.path.as_deref().map(|path| context.local(path));
    let start = resolve_start(sandbox, path)
        .map_err(|error| crate::closest::with_suggestions(context, error))?;
    let base = SearchQuery {
        pattern: arguments.pattern.clone(),
        literal: arguments.literal,
        case_insensitive: arguments.case_insensitive,
        start,
        glob: arguments
            .glob
            .as_deref()
            .map(|glob| context.local(glob).to_owned())
            .filter(|glob| !glob.trim().is_empty()),
        context: context_lines,
    };
    let keep = limits.grep_max_matches;
    let search_limits = SearchLimits {
        keep_matches: keep,
        max_line_chars: limits.grep_max_line_chars,
    };
    let control = context.control();

    let mut outcome = search(sandbox, &base, search_limits, control)?;
    let mut history = vec![(describe(context, &base), outcome.total_matches)];
    if outcome.total_matches == 0 && outcome.stopped.is_none() {
        for step in plan(sandbox, &base)?.into_iter().take(MAX_RETRIES) {
            outcome = search(sandbox, &step, search_limits, control)?;
            history.push((describe(context, &step), outcome.total_matches));
            if outcome.total_matches > 0 {
                break;
            }
        }
    }
    // In a related repository every printed path is a place (`acme/sdk:pkg/x.go`).
    for file in &mut outcome.files {
        if context.label().is_some() {
            file.path = context.place(&file.path);
        }
    }
    Ok(render(&outcome, &history, keep, context_lines > 0))
}

/// The retry steps for an empty result, in order; each builds on the previous one.
pub fn plan(sandbox: &Sandbox, base: &SearchQuery) -> Result<Vec<SearchQuery>, ToolError> {
    let mut steps = Vec::new();
    let mut current = base.clone();
    if !current.case_insensitive {
        current.case_insensitive = true;
        steps.push(current.clone());
    }
    if let Some(broadened) = broaden(&current.pattern, current.literal) {
        current.pattern = broadened;
        current.literal = false;
        current.case_insensitive = true;
        steps.push(current.clone());
    }
    if !is_root(&current.start) {
        let parent = match current.start.rel.rsplit_once('/') {
            Some((parent, _)) => parent.to_string(),
            None => ".".to_string(),
        };
        current.start = sandbox.resolve(&parent)?;
        steps.push(current);
    }
    Ok(steps)
}

/// Broadens a pattern: drops anchors and word boundaries and splits identifiers into words joined
/// by an optional `_`/`-`. The result is a regex meant to be matched case-insensitively. `None`
/// when broadening changes nothing.
pub fn broaden(pattern: &str, literal: bool) -> Option<String> {
    let broadened = if literal {
        broaden_literal(pattern)
    } else {
        broaden_regex(pattern)
    };
    let unchanged = if literal {
        regex::escape(pattern)
    } else {
        pattern.to_string()
    };
    (broadened != unchanged && !broadened.is_empty()).then_some(broadened)
}

fn broaden_literal(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut index = 0;
    while index < chars.len() {
        if is_word_char(chars[index]) {
            let end = word_run_end(&chars, index);
            out.push_str(&split_identifier(&chars[index..end]));
            index = end;
        } else {
            out.push_str(&regex::escape(&chars[index].to_string()));
            index += 1;
        }
    }
    out
}

fn broaden_regex(pattern: &str) -> String {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut index = 0;
    while index < chars.len() {
        let c = chars[index];
        let previous = index.checked_sub(1).map(|i| chars[i]);
        let next = chars.get(index + 1).copied();
        match c {
            '\\' => match next {
                Some('b' | 'B' | '<' | '>' | 'A' | 'z') => index += 2,
                Some('p' | 'P') if chars.get(index + 2) == Some(&'{') => {
                    let end = closing(&chars, index + 2, '}');
                    out.extend(&chars[index..end]);
                    index = end;
                }
                Some(escaped) => {
                    out.push(c);
                    out.push(escaped);
                    index += 2;
                }
                None => {
                    out.push(c);
                    index += 1;
                }
            },
            '[' => {
                let end = class_end(&chars, index);
                out.extend(&chars[index..end]);
                index = end;
            }
            '{' => {
                let end = closing(&chars, index, '}');
                out.extend(&chars[index..end]);
                index = end;
            }
            '(' if next == Some('?') => {
                // Group flags / non-capturing prefix: copy `(?...` up to `:` or `)`.
                let mut end = index + 2;
                while end < chars.len() && chars[end] != ':' && chars[end] != ')' {
                    end += 1;
                }
                let end = (end + 1).min(chars.len());
                out.extend(&chars[index..end]);
                index = end;
            }
            '^' if matches!(previous, None | Some('(' | '|')) => index += 1,
            '$' if matches!(next, None | Some(')' | '|')) => index += 1,
            c if is_word_char(c) => {
                let end = word_run_end(&chars, index);
                out.push_str(&split_identifier(&chars[index..end]));
                index = end;
            }
            _ => {
                out.push(c);
                index += 1;
            }
        }
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn word_run_end(chars: &[char], start: usize) -> usize {
    let mut end = start;
    while end < chars.len() && is_word_char(chars[end]) {
        end += 1;
    }
    end
}

/// Index just past the `close` matching the opener at `open` (or the end).
fn closing(chars: &[char], open: usize, close: char) -> usize {
    chars[open..]
        .iter()
        .position(|&c| c == close)
        .map_or(chars.len(), |offset| open + offset + 1)
}

/// Index just past the end of the character class starting at `open`.
fn class_end(chars: &[char], open: usize) -> usize {
    let mut index = open + 1;
    if chars.get(index) == Some(&'^') {
        index += 1;
    }
    if chars.get(index) == Some(&']') {
        index += 1;
    }
    let mut depth = 1;
    while index < chars.len() {
        match chars[index] {
            '\\' => index += 1,
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return index + 1;
                }
            }
            _ => {}
        }
        index += 1;
    }
    chars.len()
}

/// Splits an identifier into lower-case words at `_` and camelCase boundaries and joins them with
/// an optional separator; a single word is returned unchanged.
fn split_identifier(run: &[char]) -> String {
    let words = identifier_words(run);
    if words.len() < 2 {
        return run.iter().collect();
    }
    words.join(WORD_SEPARATOR)
}

/// The lower-cased words of an identifier (`HTTPServerError_v2` → `http`, `server`, `error`, `v2`).
pub fn identifier_words(run: &[char]) -> Vec<String> {
    let mut words = Vec::new();
    for part in run.split(|&c| c == '_').filter(|part| !part.is_empty()) {
        let mut current = String::new();
        for (index, &c) in part.iter().enumerate() {
            let previous = index.checked_sub(1).map(|i| part[i]);
            let next = part.get(index + 1);
            let boundary = c.is_ascii_uppercase()
                && match previous {
                    Some(p) if p.is_ascii_lowercase() || p.is_ascii_digit() => true,
                    Some(p) if p.is_ascii_uppercase() => {
                        next.is_some_and(|n| n.is_ascii_lowercase())
                    }
                    _ => false,
                };
            if boundary && !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            current.push(c.to_ascii_lowercase());
        }
        if !current.is_empty() {
            words.push(current);
        }
    }
    words
}

fn describe(context: &ToolContext, query: &SearchQuery) -> String {
    let mut text = format!("/{}/", query.pattern);
    match (query.literal, query.case_insensitive) {
        (true, true) => text.push_str(" (literal, case-insensitive)"),
        (true, false) => text.push_str(" (literal)"),
        (false, true) => text.push_str(" (case-insensitive)"),
        (false, false) => {}
    }
    match (query.start.rel.is_empty(), context.label()) {
        (true, None) => text.push_str(" in the repository"),
        (true, Some(label)) => text.push_str(&format!(" in {label}")),
        (false, _) => text.push_str(&format!(" in {}", context.place(&query.start.rel))),
    }
    if let Some(glob) = &query.glob {
        text.push_str(&format!(" (files {glob})"));
    }
    text
}

fn render(
    outcome: &SearchOutcome,
    history: &[(String, usize)],
    keep: usize,
    with_context: bool,
) -> String {
    let mut out = String::new();
    if history.len() > 1 {
        let tried: Vec<String> = history
            .iter()
            .map(|(description, matches)| {
                format!(
                    "tried {description}: {}",
                    plural(*matches, "match", "matches")
                )
            })
            .collect();
        out.push_str(&format!("Attempts: {}\n", tried.join("; ")));
    }
    if outcome.total_matches == 0 {
        let mut line = String::from("No matches");
        if outcome.stopped.is_some() {
            line = String::from("No matches before the call's deadline stopped the search");
        }
        if history.len() == 1 {
            line.push_str(&format!(" for {}", history[0].0));
        }
        if outcome.binary_files > 0 {
            line.push_str(&format!(
                " ({} skipped)",
                plural(outcome.binary_files, "binary file", "binary files")
            ));
        }
        if outcome.long_line_files > 0 {
            line.push_str(&format!(
                " ({} with a line over {} MiB not searched)",
                plural(outcome.long_line_files, "file", "files"),
                crate::search::MAX_LINE_BUFFER_BYTES / (1024 * 1024)
            ));
        }
        out.push_str(&line);
        out.push('\n');
        return out;
    }
    let (hits, truncated) = format_hits(outcome, keep, with_context);
    out.push_str(&hits);
    out.push_str(&summary_line(outcome, keep, truncated));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadening() {
        assert_eq!(
            broaden(r"^fn\s+getUserName\b", false).unwrap(),
            r"fn\s+get[_\-]?user[_\-]?name"
        );
        assert_eq!(
            broaden("get_user_name", false).unwrap(),
            r"get[_\-]?user[_\-]?name"
        );
        assert_eq!(broaden("HTTPServer$", false).unwrap(), r"http[_\-]?server");
        assert_eq!(broaden("foo", false), None);
        assert_eq!(broaden("foo.bar", true), None);
        assert_eq!(broaden("a.fooBar(", true).unwrap(), r"a\.foo[_\-]?bar\(");
        // Classes, quantifiers, unicode classes and group flags are kept verbatim.
        assert_eq!(broaden(r"[A-Za-z_]{2,}\p{Lu}(?i:abc)", false), None);
        assert_eq!(
            broaden(r"(^|x)parseConfig", false).unwrap(),
            r"(|x)parse[_\-]?config"
        );
    }

    #[test]
    fn words() {
        let words = |s: &str| identifier_words(&s.chars().collect::<Vec<_>>());
        assert_eq!(
            words("HTTPServerError_v2"),
            ["http", "server", "error", "v2"]
        );
        assert_eq!(words("utf8Decode"), ["utf8", "decode"]);
        assert_eq!(words("__init__"), ["init"]);
    }
}
