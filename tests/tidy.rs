//! Rules the build checks, so the docs cannot drift from the code (in the style of
//! rust-analyzer's `tidy` test): plain text checks over the repository's files, run by
//! `cargo test -p relay-tests --test tidy`.
//!
//! - every module is named in its crate's Layout doc (and in the Layout of a module that has one);
//! - every repository path, `relay` command and configuration key that README.md,
//!   ARCHITECTURE.md, AGENTS.md and each crate's README.md name exists, and none points outside
//!   the repository;
//! - every action type is in the planner's prompt;
//! - every key of the configuration's types is in `config/relay.toml`;
//! - no library crate depends on `anyhow` (AGENTS.md's error rule), except the job bodies of
//!   `relay-worker`, and no error is flattened into its text (`anyhow!("{e}")`);
//! - no production source file is longer than [`MAX_FILE_LINES`] unless [`LONG_FILES`] says why;
//! - no production source file outside relay-tools spells an explore tool's name as a string
//!   literal (`ToolName::X` instead), unless [`TOOL_NAME_LOOKALIKES`] says why;
//! - the deviation list, the evaluation's suites and the code graph's store defaults are said as
//!   the design audits and the code have them ([`tidy_design`]).

mod tidy_design;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The top-level docs whose names are checked (with every crate's README: [`docs`]).
const TOP_DOCS: [&str; 3] = ["README.md", "ARCHITECTURE.md", "AGENTS.md"];

/// The docs whose names are checked: [`TOP_DOCS`] and `crates/*/README.md`.
fn docs() -> Vec<String> {
    let mut out: Vec<String> = TOP_DOCS.iter().map(|d| (*d).to_owned()).collect();
    out.extend(files().into_iter().filter(|f| {
        f.strip_prefix("crates/")
            .and_then(|f| f.strip_suffix("/README.md"))
            .is_some_and(|krate| !krate.contains('/'))
    }));
    assert!(out.len() > TOP_DOCS.len(), "crate READMEs found: {out:?}");
    out
}

/// Directories the walk never enters.
const SKIPPED_DIRS: [&str; 3] = ["target", ".git", "node_modules"];

/// Most files one walk lists (the repository has a few thousand).
const MAX_FILES: usize = 50_000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_owned()
}

fn read(rel: &str) -> String {
    fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every file under the repository (relative, `/`-separated), bounded.
fn files() -> Vec<String> {
    let root = root();
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !SKIPPED_DIRS.contains(&name.as_str()) {
                    stack.push(path);
                }
            } else if let Ok(rel) = path.strip_prefix(&root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
                assert!(out.len() < MAX_FILES, "the walk is bounded");
            }
        }
    }
    out.sort();
    out
}

/// The `//!` lines of a Rust file.
fn inner_doc(text: &str) -> String {
    text.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules a file declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`), without the
/// `#[cfg(test)]` ones.
fn declared_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut test_only = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("#[cfg(test)]") {
            test_only = true;
            continue;
        }
        let rest = line
            .strip_prefix("pub(crate) mod ")
            .or_else(|| line.strip_prefix("pub(super) mod "))
            .or_else(|| line.strip_prefix("pub mod "))
            .or_else(|| line.strip_prefix("mod "));
        if let Some(name) = rest.and_then(|r| r.strip_suffix(';'))
            && !test_only
        {
            out.push(name.to_owned());
        }
        if !line.starts_with("#[") {
            test_only = false;
        }
    }
    out
}

/// Whether `doc` names `module`: `` `module` ``, `` [`module`] ``, `` `module/` ``,
/// `` `module::…` `` or `` [`mod@module`] ``.
fn names_module(doc: &str, module: &str) -> bool {
    ["`", "/`", "::", "(", "/"]
        .iter()
        .any(|after| doc.contains(&format!("`{module}{after}")))
        || doc.contains(&format!("mod@{module}`"))
}

#[test]
fn every_module_is_named_in_its_layout_doc() {
    let mut missing = Vec::new();
    for file in files() {
        if !(file.starts_with("crates/") && file.contains("/src/") && file.ends_with(".rs")) {
            continue;
        }
        let text = read(&file);
        let doc = inner_doc(&text);
        let crate_root = file.ends_with("/src/lib.rs") || file.ends_with("/src/main.rs");
        if !crate_root && !doc.contains("Layout") {
            continue;
        }
        for module in declared_modules(&text) {
            if !names_module(&doc, &module) {
                missing.push(format!("{file}: `{module}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "modules missing from their Layout doc (name each with a few words):\n{}",
        missing.join("\n")
    );
}

/// Every `` `code` `` span of a Markdown text (outside fenced blocks).
fn code_spans(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(code), Some(_)) = (parts.next(), parts.next()) {
            out.push(code.trim());
        }
    }
    out
}

/// The top-level directories of the repository a doc's path may start with.
fn repo_dirs(files: &[String]) -> BTreeSet<String> {
    files
        .iter()
        .filter_map(|f| f.split_once('/').map(|(dir, _)| dir.to_owned()))
        .collect()
}

#[test]
fn every_path_the_docs_name_exists_in_the_repository() {
    let files = files();
    let dirs: BTreeSet<String> = files
        .iter()
        .flat_map(|f| {
            let parts: Vec<&str> = f.split('/').collect();
            (1..parts.len())
                .map(|n| parts[..n].join("/"))
                .collect::<Vec<_>>()
        })
        .collect();
    let top = repo_dirs(&files);
    let exists = |path: &str| {
        let path = path.trim_end_matches('/');
        files.iter().any(|f| f == path) || dirs.contains(path)
    };
    let ends_like = |path: &str| {
        let path = path.trim_end_matches('/');
        files
            .iter()
            .chain(dirs.iter())
            .any(|f| f.ends_with(&format!("/{path}")))
    };
    let mut stale = Vec::new();
    for doc in docs() {
        // A crate's README names paths from its crate's directory (`tests/…`, `src/…`) too.
        let crate_dir = doc
            .strip_suffix("README.md")
            .filter(|dir| !dir.is_empty())
            .map(str::to_owned);
        let in_crate = |code: &str| {
            crate_dir
                .as_ref()
                .is_some_and(|dir| exists(&format!("{dir}{code}")))
        };
        for code in code_spans(&read(&doc)) {
            if code.starts_with("../") || code.contains(" ../") {
                stale.push(format!("{doc}: `{code}` points outside the repository"));
                continue;
            }
            if code.contains(char::is_whitespace)
                || code.contains(['*', '{', '<', '$', '='])
                || !code.contains('/')
                || code.contains("://")
            {
                continue;
            }
            let first = code.split('/').next().unwrap_or_default();
            if in_crate(code) {
                continue;
            }
            if top.contains(first) {
                // A path from the repository's root (or, in a crate's README, a source file
                // named from inside the crate: `eval/containers.rs`).
                let inside = crate_dir.is_some() && code.ends_with(".rs") && ends_like(code);
                if !exists(code) && !inside {
                    stale.push(format!("{doc}: `{code}`"));
                }
            } else if code.ends_with(".rs") && !ends_like(code) {
                // A source file named from inside its crate (`orchestrator/cycle.rs`).
                stale.push(format!("{doc}: `{code}`"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "paths named in the docs that do not exist:\n{}",
        stale.join("\n")
    );
}

/// The subcommands of `relay` (the variants of `enum Command` in `main.rs`, in kebab case).
fn relay_commands() -> BTreeSet<String> {
    let main = read("crates/relay/src/main.rs");
    let start = main
        .find("enum Command {")
        .expect("main.rs has enum Command");
    let body = &main[start..];
    let body = &body[..body.find("\n}").expect("enum Command ends")];
    body.lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
        .map(|l| {
            let name: String = l.chars().take_while(|c| c.is_alphanumeric()).collect();
            kebab(&name)
        })
        .collect()
}

fn kebab(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[test]
fn every_command_the_docs_name_exists() {
    let commands = relay_commands();
    assert!(
        commands.contains("serve") && commands.contains("index"),
        "{commands:?}"
    );
    let mut unknown = Vec::new();
    for doc in docs() {
        for code in code_spans(&read(&doc)) {
            let Some(rest) = code.strip_prefix("relay ") else {
                continue;
            };
            let word = rest.split_whitespace().next().unwrap_or_default();
            if word.starts_with('-') || word.is_empty() || word.contains(['<', '*']) {
                continue;
            }
            if !commands.contains(word) {
                unknown.push(format!("{doc}: `{code}`"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "commands named in the docs that `relay` does not have ({commands:?}):\n{}",
        unknown.join("\n")
    );
}

/// `config/relay.toml`'s tables and, per table, its keys (commented-out ones included: the file
/// documents every key, set or not).
fn relay_toml() -> BTreeMap<String, BTreeSet<String>> {
    let mut tables: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current = String::new();
    tables.insert(current.clone(), BTreeSet::new());
    for line in read("config/relay.toml").lines() {
        let line = line.trim().trim_start_matches('#').trim();
        if let Some(table) = line
            .strip_prefix("[[")
            .and_then(|l| l.split_once("]]"))
            .or_else(|| line.strip_prefix('[').and_then(|l| l.split_once(']')))
            .map(|(t, _)| t)
            && table.starts_with(|c: char| c.is_ascii_lowercase())
            && table
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_.-\"".contains(c))
        {
            current = table.to_owned();
            tables.entry(current.clone()).or_default();
            continue;
        }
        if let Some((key, _)) = line.split_once('=') {
            let key = key.trim();
            if !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                tables
                    .entry(current.clone())
                    .or_default()
                    .insert(key.to_owned());
            }
        }
    }
    tables
}

/// The sections of a repository's `.relay.toml` (the fields of `RepoConfigFile`).
fn repo_config_sections() -> BTreeSet<String> {
    struct_fields(
        &read("crates/relay-core/src/repo_config/file.rs"),
        "RepoConfigFile",
    )
    .into_iter()
    .map(|(name, _)| name)
    .collect()
}

#[test]
fn every_config_key_the_docs_name_exists() {
    let tables = relay_toml();
    let sections = repo_config_sections();
    let top: BTreeSet<&str> = tables
        .keys()
        .filter_map(|t| t.split('.').next())
        .filter(|t| !t.is_empty())
        .collect();
    let mut unknown = Vec::new();
    for doc in docs() {
        for code in code_spans(&read(&doc)) {
            if let Some(table) = code
                .strip_prefix("[[")
                .and_then(|c| c.strip_suffix("]]"))
                .or_else(|| code.strip_prefix('[').and_then(|c| c.strip_suffix(']')))
            {
                let plain = table
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_' || c == '.');
                // `[workspace.dependencies]` is Cargo's; `[bot]` is GitHub's login suffix;
                // `[inferred]` is how the codegraph tool labels an inferred edge.
                let known = tables.contains_key(table)
                    || tables.keys().any(|t| t.starts_with(&format!("{table}.")))
                    || sections.contains(table)
                    || ["workspace.dependencies", "bot", "inferred"].contains(&table)
                    || table.contains('<');
                if plain && !table.is_empty() && !known {
                    unknown.push(format!("{doc}: `{code}`"));
                }
                continue;
            }
            let Some((head, _)) = code.split_once('.') else {
                continue;
            };
            let dotted = code
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.');
            if !dotted || !top.contains(head) {
                continue;
            }
            if !config_path_exists(&tables, code) {
                unknown.push(format!("{doc}: `{code}`"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "configuration keys named in the docs that config/relay.toml does not have:\n{}",
        unknown.join("\n")
    );
}

/// Whether `a.b.c` is a table or a key of `config/relay.toml`. A segment that names an entry
/// (`trackers.<name>`, `llm.<role>`) may stand for any entry of its table.
fn config_path_exists(tables: &BTreeMap<String, BTreeSet<String>>, path: &str) -> bool {
    if tables.contains_key(path) {
        return true;
    }
    let parts: Vec<&str> = path.split('.').collect();
    let (key, table_parts) = parts.split_last().expect("a dotted path");
    let table = table_parts.join(".");
    if tables.get(&table).is_some_and(|keys| keys.contains(*key)) {
        return true;
    }
    // An entry name in the middle: `trackers.github.token`, `llm.planner.api_key`.
    let [head, _entry, rest @ ..] = parts.as_slice() else {
        return false;
    };
    let any_entry = |t: &String| t == head || t.starts_with(&format!("{head}."));
    match rest {
        [key] => tables
            .iter()
            .filter(|(t, _)| any_entry(t))
            .any(|(_, keys)| keys.contains(*key)),
        _ => false,
    }
}

/// The named fields of `pub struct name { .. }` in `text`: `(serde name, type)`.
fn struct_fields(text: &str, name: &str) -> Vec<(String, String)> {
    let Some(start) = text.find(&format!("pub struct {name} {{")) else {
        return Vec::new();
    };
    let body = &text[start..];
    let body = &body[body.find('{').expect("a brace") + 1..];
    let end = body.find("\n}").unwrap_or(body.len());
    let mut fields = Vec::new();
    let mut rename: Option<String> = None;
    let mut skipped = false;
    for line in body[..end].lines() {
        let line = line.trim();
        if line.starts_with("#[serde(") {
            if let Some(at) = line.find("rename = \"") {
                let rest = &line[at + 10..];
                rename = rest.split('"').next().map(str::to_owned);
            }
            skipped |= line.contains("skip") || line.contains("flatten");
            continue;
        }
        if let Some(field) = line.strip_prefix("pub ")
            && let Some((field, ty)) = field.split_once(':')
            && field
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            if !skipped {
                let field = rename.take().unwrap_or_else(|| field.to_owned());
                fields.push((field, ty.trim().trim_end_matches(',').to_owned()));
            }
            rename = None;
            skipped = false;
        }
    }
    fields
}

/// Every struct deserialized with `deny_unknown_fields` in the crates (not `.relay.toml`'s,
/// not test code): `name -> (file, its text)`.
fn strict_structs() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for file in files() {
        if !(file.starts_with("crates/") && file.contains("/src/") && file.ends_with(".rs"))
            || file.contains("/repo_config/")
        {
            continue;
        }
        let text = read(&file);
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = line.trim().strip_prefix("pub struct ") else {
                continue;
            };
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
            let attrs = lines[..i]
                .iter()
                .rev()
                .take_while(|l| {
                    let l = l.trim();
                    l.starts_with("#[") || l.starts_with("///") || l.starts_with("//")
                })
                .copied()
                .collect::<Vec<_>>()
                .join("\n");
            if attrs.contains("deny_unknown_fields") && attrs.contains("Deserialize") {
                out.insert(name, text.clone());
            }
        }
    }
    out
}

#[test]
fn every_config_key_in_the_code_is_in_relay_toml() {
    let tables = relay_toml();
    let documented: BTreeSet<&str> = tables
        .iter()
        .flat_map(|(table, keys)| {
            keys.iter()
                .map(String::as_str)
                .chain(table.split('.').filter(|s| !s.is_empty()))
        })
        .collect();
    let structs = strict_structs();
    // The configuration's types: `Settings` and every strict struct its fields reach.
    let mut queue = vec!["Settings".to_owned()];
    let mut seen = BTreeSet::new();
    let mut missing = Vec::new();
    while let Some(name) = queue.pop() {
        if !seen.insert(name.clone()) || seen.len() > 200 {
            continue;
        }
        let Some(text) = structs.get(&name) else {
            continue;
        };
        for (field, ty) in struct_fields(text, &name) {
            if !documented.contains(field.as_str()) {
                missing.push(format!("{name}.{field}"));
            }
            for word in ty.split(|c: char| !c.is_alphanumeric()) {
                if structs.contains_key(word) {
                    queue.push(word.to_owned());
                }
            }
        }
    }
    assert!(
        seen.len() > 10,
        "the configuration's types were found: {seen:?}"
    );
    assert!(
        missing.is_empty(),
        "configuration keys missing from config/relay.toml (document each, commented out when it \
         has no default):\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_action_type_is_in_the_planner_prompt() {
    let action = read("crates/relay-core/src/action.rs");
    let start = action
        .find("pub fn kind(&self) -> &'static str {")
        .expect("Action::kind");
    let body = &action[start..];
    let body = &body[..body.find("\n    }\n").expect("kind ends")];
    let kinds: Vec<&str> = body
        .lines()
        .filter_map(|l| {
            l.split_once("=> \"")
                .map(|(_, k)| k.trim_end_matches(['"', ',']))
        })
        .collect();
    assert!(kinds.len() >= 6, "{kinds:?}");
    let prompt = read("crates/relay-agent/src/planner/prompt.md");
    let missing: Vec<&&str> = kinds
        .iter()
        .filter(|k| !prompt.contains(&format!("`{k}")))
        .collect();
    assert!(
        missing.is_empty(),
        "action types the planner's prompt never names: {missing:?}"
    );
}

#[test]
fn errors_are_wrapped_not_flattened() {
    let mut flattened = Vec::new();
    for file in files() {
        if !(file.starts_with("crates/") && file.contains("/src/") && file.ends_with(".rs")) {
            continue;
        }
        for (n, line) in read(&file).lines().enumerate() {
            // `anyhow!("{e}")`: the error's text alone, its cause chain dropped.
            let Some(at) = line.find("anyhow!(\"{") else {
                continue;
            };
            let rest = &line[at + 10..];
            let Some(end) = rest.find("}\")") else {
                continue;
            };
            let name = &rest[..end];
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '#')
            {
                flattened.push(format!("{file}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        flattened.is_empty(),
        "errors flattened into text (use `.context(..)` or `anyhow::Error::new`):\n{}",
        flattened.join("\n")
    );
}

#[test]
fn library_crates_keep_anyhow_out() {
    let mut offenders = Vec::new();
    for file in files() {
        let Some(krate) = file
            .strip_prefix("crates/")
            .and_then(|f| f.strip_suffix("/Cargo.toml"))
        else {
            continue;
        };
        // The binary, and the worker whose job bodies report `anyhow` errors.
        if ["relay", "relay-worker"].contains(&krate) {
            continue;
        }
        let manifest = read(&file);
        let dependencies = manifest
            .split("\n[")
            .find(|s| s.starts_with("dependencies]"))
            .unwrap_or_default();
        if dependencies
            .lines()
            .any(|l| l.trim_start().starts_with("anyhow"))
        {
            offenders.push(krate.to_owned());
        }
    }
    assert!(
        offenders.is_empty(),
        "library crates with anyhow in [dependencies] (AGENTS.md: thiserror errors): {offenders:?}"
    );
}

/// Longest production source file (lines before its `#[cfg(test)] mod tests`): past it a file
/// holds more than one job (AGENTS.md: split past ~400 lines; this is the hard stop).
const MAX_FILE_LINES: usize = 800;

/// Production files allowed past [`MAX_FILE_LINES`], each with why and until when. Remove a row
/// when its file is split; a new row needs a reason a reviewer accepts.
const LONG_FILES: [(&str, &str); 4] = [
    (
        "crates/relay-codegraph/src/index/python/body.rs",
        "one `impl PyBuilder` over every statement and expression; to become body/{stmt,expr,call,assign,order}.rs of free functions (issue 43 §0, not yet done)",
    ),
    (
        "crates/relay-codegraph/src/index/python/eval.rs",
        "the Python expression evaluator, one dispatch over every expression kind; issue 43 §0 splits it with the body",
    ),
    (
        "crates/relay-codegraph/src/index/go/facts/body.rs",
        "Go body facts as one `impl BodyBuilder`; to become facts/ modules of free functions over `&mut BodyCtx` (issue 43 §0, not yet done)",
    ),
    (
        "crates/relay-codegraph/src/index/go/flow.rs",
        "Go value flow, one fixpoint over every statement kind; issue 43 §0 splits it with the body facts",
    ),
];

/// A production file's length: its lines before a trailing `#[cfg(test)] mod tests`.
fn production_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod tests"))
        .unwrap_or(lines.len())
}

#[test]
fn no_production_file_is_too_long() {
    let mut long = Vec::new();
    let mut listed_fits = Vec::new();
    for file in files() {
        let production = file.starts_with("crates/")
            && file.contains("/src/")
            && file.ends_with(".rs")
            && !file.ends_with("/tests.rs")
            && !file.contains("/tests/");
        if !production {
            continue;
        }
        let lines = production_lines(&read(&file));
        let listed = LONG_FILES.iter().any(|(f, _)| *f == file);
        if lines > MAX_FILE_LINES && !listed {
            long.push(format!("{file}: {lines} lines"));
        }
        if lines <= MAX_FILE_LINES && listed {
            listed_fits.push(format!("{file}: {lines} lines"));
        }
    }
    for (file, _) in LONG_FILES {
        assert!(
            root().join(file).exists(),
            "{file} is listed in LONG_FILES but does not exist: remove its row"
        );
    }
    assert!(
        long.is_empty(),
        "production files over {MAX_FILE_LINES} lines (split them, or list one in LONG_FILES with why):\n{}",
        long.join("\n")
    );
    assert!(
        listed_fits.is_empty(),
        "files in LONG_FILES that now fit (remove their rows):\n{}",
        listed_fits.join("\n")
    );
}

/// Production files outside relay-tools that may spell a tool's name for another meaning:
/// `(file or folder prefix, name, why)`. A row that no longer matches anything fails.
const TOOL_NAME_LOOKALIKES: [(&str, &str, &str); 4] = [
    (
        "crates/relay-codegraph/src/ops/mod.rs",
        "codegraph",
        "the code graph's own `TOOL_NAME`: relay-codegraph does not depend on relay-tools, and relay-agent's toolbox test checks it equals `ToolName::Codegraph`",
    ),
    (
        "crates/relay-tracker/src/",
        "read",
        "GitHub's permission level (`contents: read`), not a tool",
    ),
    (
        "crates/relay/src/cmd/serve.rs",
        "codegraph",
        "the degraded component the status page names",
    ),
    (
        "crates/relay/src/cmd/codegraph/checkout.rs",
        "codegraph",
        "the code graph's cache directory",
    ),
];

/// The explore tools' names: the one list `tool_names! { Variant => "name", … }` in relay-tools.
fn tool_names() -> Vec<String> {
    let text = read("crates/relay-tools/src/name.rs");
    let start = text.find("\ntool_names! {").expect("the tool_names! list");
    let body = &text[start..];
    let body = &body[..body.find("\n}\n").expect("the list ends")];
    let names: Vec<String> = body
        .lines()
        .filter_map(|l| {
            l.split_once("=> \"")
                .map(|(_, name)| name.trim_end_matches(['"', ',']).to_owned())
        })
        .collect();
    assert!(names.len() >= 4, "tool names read from name.rs: {names:?}");
    names
}

/// The tool names `line` spells as string literals, except as a JSON key (`"glob": …`,
/// `arguments["glob"]`): a key names a field (grep's `glob` argument), not a tool.
fn tool_name_literals<'a>(line: &str, names: &'a [String]) -> Vec<&'a str> {
    let mut found = Vec::new();
    for name in names {
        let quoted = format!("\"{name}\"");
        for (at, _) in line.match_indices(&quoted) {
            let before = line[..at].chars().next_back();
            let after = line[at + quoted.len()..].chars().next();
            let indexed = before == Some('[') && after == Some(']');
            if !indexed && after != Some(':') {
                found.push(name.as_str());
            }
        }
    }
    found
}

#[test]
fn no_tool_name_literal_outside_relay_tools() {
    let names = tool_names();
    assert!(names.len() >= 5, "{names:?}");
    let mut literals = Vec::new();
    let mut used_rows = BTreeSet::new();
    for file in files() {
        // Production code: crate sources outside relay-tools, without test files and modules.
        let production = file.starts_with("crates/")
            && !file.starts_with("crates/relay-tools/")
            && file.contains("/src/")
            && file.ends_with(".rs")
            && !file.ends_with("tests.rs")
            && !file.contains("/tests/");
        if !production {
            continue;
        }
        let text = read(&file);
        let lines: Vec<&str> = text.lines().collect();
        for (n, line) in lines[..production_lines(&text)].iter().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for name in tool_name_literals(line, &names) {
                let row = TOOL_NAME_LOOKALIKES
                    .iter()
                    .position(|(prefix, allowed, _)| file.starts_with(prefix) && *allowed == name);
                match row {
                    Some(row) => {
                        used_rows.insert(row);
                    }
                    None => literals.push(format!("{file}:{}: {}", n + 1, line.trim())),
                }
            }
        }
    }
    assert!(
        literals.is_empty(),
        "tool names spelled as string literals (use relay_tools::ToolName, or list a lookalike in TOOL_NAME_LOOKALIKES with why):\n{}",
        literals.join("\n")
    );
    let stale: Vec<&str> = (0..TOOL_NAME_LOOKALIKES.len())
        .filter(|row| !used_rows.contains(row))
        .map(|row| TOOL_NAME_LOOKALIKES[row].0)
        .collect();
    assert!(
        stale.is_empty(),
        "rows of TOOL_NAME_LOOKALIKES that match nothing (remove them): {stale:?}"
    );
}

/// The explorer's prompt names every tool it may be offered: a tool added to `ToolName` without a
/// line there would be offered to a model that was never told what it is for.
#[test]
fn the_explore_prompt_names_every_tool() {
    let prompt = read("crates/relay-agent/src/explore/prompt.md");
    let missing: Vec<String> = tool_names()
        .into_iter()
        .filter(|name| !prompt.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "tools the explore prompt does not name: {missing:?}"
    );
}
