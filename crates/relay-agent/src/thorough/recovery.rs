//! The Traverser's retry contract, beyond the code tools' own ladders (design 003): a step that
//! timed out is retried once with a narrower scope, then skipped; a file the read cannot find
//! (after the tool's fuzzy match) is looked up in the code graph's index; a symbol the graph does
//! not know is looked for in the scope and the imports of what the query already read. Each is
//! one extra attempt at most (bounded), named in the step's attempt history and traced.

use std::collections::BTreeSet;

use relay_tools::ToolName;
use serde_json::Value;

use super::state::TraversalState;
use super::traverser::Step;

/// Lines a narrowed `read` shows.
pub const NARROW_READ_LINES: u64 = 100;
/// Candidates an index check or a scope expansion lists at most in the attempt history.
const SHOWN_CANDIDATES: usize = 5;

/// The step with a narrower scope, and what was narrowed; `None` when it cannot be narrower.
pub fn narrowed(step: &Step, state: &TraversalState) -> Option<(Step, String)> {
    let mut arguments = step.arguments.clone();
    let recent_dir = state.files.iter().next_back().and_then(|f| parent(f));
    let what = match step.tool.parse() {
        Ok(ToolName::Read) => {
            let limit = arguments["limit"].as_u64();
            if limit.is_some_and(|l| l <= NARROW_READ_LINES) {
                return None;
            }
            arguments["limit"] = Value::from(NARROW_READ_LINES);
            format!("limit {NARROW_READ_LINES} lines")
        }
        Ok(ToolName::Grep | ToolName::Glob) if arguments["path"].as_str().is_none() => {
            let dir = recent_dir?;
            arguments["path"] = Value::from(dir.clone());
            format!("path {dir}")
        }
        Ok(ToolName::Grep) if arguments["glob"].as_str().is_none() => {
            let last = state.files.iter().next_back()?;
            let ext = last.rsplit_once('.')?.1;
            arguments["glob"] = Value::from(format!("*.{ext}"));
            format!("glob *.{ext}")
        }
        Ok(ToolName::Tree) if arguments["depth"].as_u64().is_none_or(|d| d > 1) => {
            arguments["depth"] = Value::from(1);
            "depth 1".to_owned()
        }
        Ok(ToolName::Codegraph) => match arguments["operation"].as_str() {
            Some("callers" | "callees") if arguments["depth"].as_u64().is_some_and(|d| d > 1) => {
                arguments["depth"] = Value::from(1);
                "depth 1".to_owned()
            }
            Some("search" | "resolve") if arguments["file"].as_str().is_none() => {
                let dir = recent_dir?;
                arguments["file"] = Value::from(dir.clone());
                format!("file {dir}")
            }
            _ => return None,
        },
        _ => return None,
    };
    Some((
        Step {
            tool: step.tool.clone(),
            arguments,
        },
        what,
    ))
}

/// The path a failed `read` could not find (the tool's message is `PATH: not found…`).
pub fn missing_file(step: &Step, message: &str) -> Option<String> {
    if step.tool != ToolName::Read || !message.contains(": not found") {
        return None;
    }
    step.arguments["path"].as_str().map(str::to_owned)
}

/// The codegraph search that checks the index for a missing file: every symbol of files whose
/// path contains its name.
pub fn index_check(path: &str) -> Step {
    let name = path.rsplit('/').next().unwrap_or(path);
    Step {
        tool: ToolName::Codegraph.to_string(),
        arguments: serde_json::json!({"operation": "search", "name": "*", "file": name}),
    }
}

/// The indexed files of a search's output (`  qname (path:line)`) named like `missing`.
pub fn indexed_files(output: &str, missing: &str) -> Vec<String> {
    let name = missing.rsplit('/').next().unwrap_or(missing);
    let files: BTreeSet<String> = output
        .lines()
        .filter_map(located)
        .map(|(path, _)| path)
        .filter(|path| path.rsplit('/').next() == Some(name))
        .collect();
    files.into_iter().collect()
}

/// The qname a codegraph step could not find (`Symbol "X" not found in the code graph.`).
pub fn missing_symbol(step: &Step, message: &str) -> Option<String> {
    if step.tool != ToolName::Codegraph || !message.contains("not found in the code graph") {
        return None;
    }
    step.arguments["qname"].as_str().map(str::to_owned)
}

/// The `resolve` of a missing qname's last part (`queue.Enqueue`, `pkg/queue.Enqueue` →
/// `Enqueue`).
pub fn resolve_short_name(qname: &str) -> Step {
    let short = qname.rsplit(['.', '/', ':']).next().unwrap_or(qname);
    Step {
        tool: ToolName::Codegraph.to_string(),
        arguments: serde_json::json!({"operation": "resolve", "name": short}),
    }
}

/// A qname and its file, from a `resolve` line (`  qname (kind, path:line)`).
fn candidates(output: &str) -> Vec<(String, String)> {
    output
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let (qname, rest) = line.split_once(" (")?;
            let (path, _) = located(&format!("  x ({}", rest.rsplit(", ").next()?))?;
            Some((qname.to_owned(), path))
        })
        .collect()
}

/// `(path, line)` from `  qname (path:line)`.
fn located(line: &str) -> Option<(String, u32)> {
    let inner = line.trim().rsplit_once(" (")?.1.strip_suffix(')')?;
    let (path, number) = inner.rsplit_once(':')?;
    Some((path.to_owned(), number.parse().ok()?))
}

/// The candidate to retry with and why, chosen by scope then imports: the only candidate; else
/// the only one in a directory the query already read; else the only one whose package an
/// already-read file imports. `Err` lists what was found when none stands out.
pub fn in_scope(output: &str, state: &TraversalState) -> Result<(String, String), String> {
    let found = candidates(output);
    let list = || {
        let shown: Vec<&str> = found
            .iter()
            .take(SHOWN_CANDIDATES)
            .map(|(q, _)| q.as_str())
            .collect();
        if shown.is_empty() {
            "no candidates".to_owned()
        } else {
            format!("candidates {}", shown.join(", "))
        }
    };
    if let [(qname, _)] = found.as_slice() {
        return Ok((qname.clone(), "the only candidate".into()));
    }
    let dirs: BTreeSet<String> = state.files.iter().filter_map(|f| parent(f)).collect();
    let scoped: Vec<&(String, String)> = found
        .iter()
        .filter(|(_, path)| parent(path).is_some_and(|d| dirs.contains(&d)))
        .collect();
    if let [(qname, _)] = scoped.as_slice() {
        return Ok((qname.clone(), "in the scope already read".into()));
    }
    let imports = imported(state);
    let imported: Vec<&(String, String)> = found
        .iter()
        .filter(|(_, path)| {
            parent(path).is_some_and(|dir| {
                imports.iter().any(|i| {
                    dir == *i || dir.ends_with(&format!("/{i}")) || i.ends_with(&format!("/{dir}"))
                })
            })
        })
        .collect();
    if let [(qname, _)] = imported.as_slice() {
        return Ok((qname.clone(), "imported by a file already read".into()));
    }
    Err(list())
}

/// The packages the snippets already read import: Go `import "a/b"` paths and Python
/// `import a.b` / `from a.b import` modules as `a/b`.
fn imported(state: &TraversalState) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for snippet in state.snippets.iter() {
        let mut in_block = false;
        for line in snippet.text.lines() {
            // Read output lines are `  NN\ttext`.
            let text = line.split_once('\t').map_or(line, |(_, t)| t).trim();
            if text.starts_with("import (") {
                in_block = true;
                continue;
            }
            if in_block && text.starts_with(')') {
                in_block = false;
                continue;
            }
            let go = in_block || text.starts_with("import \"") || text.starts_with("import ");
            if go && let Some(path) = text.split('"').nth(1) {
                out.insert(path.to_owned());
                continue;
            }
            let python = text
                .strip_prefix("from ")
                .and_then(|rest| rest.split_whitespace().next())
                .or_else(|| {
                    text.strip_prefix("import ")
                        .and_then(|rest| rest.split([',', ' ']).next())
                });
            if let Some(module) = python.filter(|m| !m.is_empty() && !m.starts_with('"')) {
                out.insert(module.trim_start_matches('.').replace('.', "/"));
            }
        }
    }
    out
}

/// The directory of a repository path (`""` stands for the root and is not a scope).
fn parent(path: &str) -> Option<String> {
    path.rsplit_once('/').map(|(dir, _)| dir.to_owned())
}

/// The step with `qname` replaced.
pub fn with_qname(step: &Step, qname: &str) -> Step {
    let mut arguments = step.arguments.clone();
    arguments["qname"] = Value::from(qname);
    Step {
        tool: step.tool.clone(),
        arguments,
    }
}

/// The `read` step redirected to `path` (offset and limit kept).
pub fn with_path(step: &Step, path: &str) -> Step {
    let mut arguments = step.arguments.clone();
    arguments["path"] = Value::from(path);
    Step {
        tool: step.tool.clone(),
        arguments,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thorough::state::Snippet;
    use serde_json::json;

    fn step(tool: &str, arguments: Value) -> Step {
        Step {
            tool: tool.into(),
            arguments,
        }
    }

    fn state_with(files: &[&str], snippet: &str) -> TraversalState {
        let mut state = TraversalState::default();
        for f in files {
            state.files.push((*f).to_owned());
        }
        state.snippets.push(Snippet {
            path: files.first().map_or("x.go", |f| f).to_owned(),
            start_line: 1,
            end_line: 3,
            text: snippet.to_owned(),
        });
        state
    }

    #[test]
    fn each_tool_narrows_once_and_then_cannot() {
        let state = state_with(&["queue/queue.go"], "");
        let cases = [
            (
                step("read", json!({"path": "a.go"})),
                Some("limit 100 lines"),
            ),
            (step("read", json!({"path": "a.go", "limit": 50})), None),
            (step("grep", json!({"pattern": "x"})), Some("path queue")),
            (
                step("grep", json!({"pattern": "x", "path": "queue"})),
                Some("glob *.go"),
            ),
            (step("tree", json!({})), Some("depth 1")),
            (
                step(
                    "codegraph",
                    json!({"operation": "callers", "qname": "a.B", "depth": 3}),
                ),
                Some("depth 1"),
            ),
            (
                step("codegraph", json!({"operation": "callers", "qname": "a.B"})),
                None,
            ),
            (
                step("codegraph", json!({"operation": "search", "name": "B"})),
                Some("file queue"),
            ),
        ];
        for (step, want) in cases {
            let got = narrowed(&step, &state);
            assert_eq!(got.as_ref().map(|(_, w)| w.as_str()), want, "{step:?}");
            if let Some((narrow, _)) = got {
                assert_ne!(narrow, step);
            }
        }
        assert!(
            narrowed(
                &step("grep", json!({"pattern": "x"})),
                &TraversalState::default()
            )
            .is_none(),
            "nothing read yet: no scope to narrow to"
        );
    }

    #[test]
    fn a_missing_symbol_is_found_by_scope_then_imports() {
        let resolve = "\"Enqueue\" may refer to 3 symbols:\n\n  \
            queue.Enqueue (function, queue/queue.go:4)\n  \
            legacy.Enqueue (function, legacy/queue.go:9)\n  \
            mail.Enqueue (function, mail/send.go:2)\n\nUse qname with callers.";
        let by_scope = state_with(&["legacy/x.go"], "");
        assert_eq!(
            in_scope(resolve, &by_scope).unwrap().0,
            "legacy.Enqueue".to_owned()
        );
        let by_import = state_with(
            &["gateway/webhook.go"],
            "   1\tpackage gateway\n   2\t\n   3\timport \"example.com/relay/queue\"\n",
        );
        assert_eq!(
            in_scope(resolve, &by_import),
            Ok((
                "queue.Enqueue".into(),
                "imported by a file already read".into()
            ))
        );
        let python = state_with(&["app/main.py"], "   1\tfrom mail import send\n");
        assert_eq!(in_scope(resolve, &python).unwrap().0, "mail.Enqueue");
        let nothing = state_with(&["cmd/main.go"], "");
        assert_eq!(
            in_scope(resolve, &nothing),
            Err("candidates queue.Enqueue, legacy.Enqueue, mail.Enqueue".into())
        );
        assert_eq!(
            resolve_short_name("example.com/relay/queue.Enqueue").arguments["name"],
            "Enqueue"
        );
    }

    #[test]
    fn the_index_check_keeps_files_with_the_missing_name() {
        let search = "Found 3 symbols matching \"*\" (file=queue.go):\n\n  \
            queue.Enqueue (internal/queue/queue.go:4)\n  \
            queue.insertJob (internal/queue/queue.go:8)\n  \
            other.X (internal/myqueue.go:1)\n";
        assert_eq!(
            indexed_files(search, "queue/queue.go"),
            ["internal/queue/queue.go"]
        );
        assert_eq!(index_check("queue/queue.go").arguments["file"], "queue.go");
        assert_eq!(
            missing_file(
                &step("read", json!({"path": "queue/queue.go"})),
                "queue/queue.go: not found"
            ),
            Some("queue/queue.go".into())
        );
    }
}
