//! Python manifests: the packages a checkout provides and the dependencies it declares.
//!
//! `pyproject.toml` is read line by line for the few keys used here (a section header, a
//! `key = "string"` and a `key = [ ... ]` array of strings, possibly over several lines), so a
//! manifest that is not valid TOML still gives what it can.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// At most this many entries of a directory are looked at for packages or requirement files.
const MAX_DIR_ENTRIES: usize = 10_000;

/// `acme-lib` → `acme_lib`: how a distribution name is imported.
fn normalise(name: &str) -> String {
    name.trim().replace('-', "_")
}

/// Directories with an `__init__.py` directly under `root` and under `root/src`.
pub(super) fn package_dirs(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for dir in [root.to_path_buf(), root.join("src")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.take(MAX_DIR_ENTRIES).flatten() {
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_dir && !name.starts_with('.') && entry.path().join("__init__.py").is_file() {
                out.insert(name);
            }
        }
    }
    out
}

/// The `requirements*.txt` files at the root, sorted.
pub(super) fn requirements_files(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .take(MAX_DIR_ENTRIES)
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with("requirements") && name.ends_with(".txt")
        })
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// One `key = value` of a TOML file with the section it is in.
struct Entry {
    section: String,
    key: String,
    value: String,
}

/// The top-level `key = value` entries, arrays joined over their lines.
fn entries(text: &str) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    let mut section = String::new();
    let mut open: Option<Entry> = None;
    for raw in text.lines() {
        let line = strip_comment(raw).trim();
        if let Some(entry) = &mut open {
            entry.value.push(' ');
            entry.value.push_str(line);
            if array_closed(&entry.value) {
                out.extend(open.take());
            }
            continue;
        }
        if line.starts_with('[') && !line.contains('=') {
            section = line.trim_matches(['[', ']', ' ']).to_owned();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let entry = Entry {
            section: section.clone(),
            key: key.trim().trim_matches('"').to_owned(),
            value: value.trim().to_owned(),
        };
        if entry.value.starts_with('[') && !array_closed(&entry.value) {
            open = Some(entry);
        } else {
            out.push(entry);
        }
    }
    out
}

/// A line without its `# comment` (a `#` inside a string is kept).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Whether an array value's brackets balance (outside strings).
fn array_closed(value: &str) -> bool {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for c in value.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') => depth -= 1,
            _ => {}
        }
    }
    depth <= 0
}

/// The quoted strings of a value (`"a"`, `["a", 'b']`, `{ include = "c" }`).
fn strings(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut quote: Option<(char, String)> = None;
    for c in value.chars() {
        match &mut quote {
            Some((q, text)) if c == *q => {
                out.push(std::mem::take(text));
                quote = None;
            }
            Some((_, text)) => text.push(c),
            None if c == '"' || c == '\'' => quote = Some((c, String::new())),
            None => {}
        }
    }
    out
}

/// The packages `pyproject.toml` declares: `[project] name`, and the setuptools / Poetry
/// package lists (their top-level part).
pub(super) fn pyproject_packages(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in entries(text) {
        let top_level = |s: &str| normalise(s.split(['.', '/']).next().unwrap_or(s));
        match (entry.section.as_str(), entry.key.as_str()) {
            ("project", "name") | ("tool.poetry", "name") => {
                out.extend(strings(&entry.value).first().map(|s| normalise(s)));
            }
            ("tool.setuptools", "packages") => {
                out.extend(strings(&entry.value).iter().map(|s| top_level(s)));
            }
            ("tool.poetry", "packages") => {
                // `[{ include = "pkg" }, { include = "other", from = "src" }]`: the includes.
                let value = entry.value.replace(' ', "");
                for part in value.split("include=").skip(1) {
                    out.extend(strings(part).first().map(|s| top_level(s)));
                }
            }
            _ => {}
        }
    }
    out.retain(|p| !p.is_empty());
    out
}

/// The dependencies `pyproject.toml` declares, by name (or URL for a direct reference).
pub(super) fn pyproject_dependencies(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for entry in entries(text) {
        match (entry.section.as_str(), entry.key.as_str()) {
            ("project", "dependencies") => {
                out.extend(strings(&entry.value).iter().filter_map(|s| requirement(s)));
            }
            ("tool.poetry.dependencies", key) if key != "python" => {
                out.insert(key.to_owned());
            }
            _ => {}
        }
    }
    out
}

/// The requirements of a `requirements.txt`.
pub(super) fn requirements(text: &str) -> BTreeSet<String> {
    text.lines().filter_map(requirement).collect()
}

/// One requirement: a VCS or direct URL (`git+https://h/a/b.git@v1#egg=b`, `b @ git+…`) as the
/// repository URL, else the distribution name (`acme-lib>=1.0` → `acme-lib`).
fn requirement(line: &str) -> Option<String> {
    let line = line.split(" #").next().unwrap_or("").trim();
    if line.is_empty() || line.starts_with('#') || line.starts_with('-') {
        return None;
    }
    let url = match line.split_once(" @ ") {
        Some((_, url)) => Some(url.trim()),
        None => line.contains("://").then_some(line),
    };
    if let Some(url) = url {
        return repository_url(url);
    }
    let name: String = line
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    (!name.is_empty()).then_some(name)
}

/// `git+https://host/acme/lib.git@v1.0#egg=lib` → `https://host/acme/lib.git`.
fn repository_url(url: &str) -> Option<String> {
    let url = url.split('#').next().unwrap_or(url);
    let url = ["git+", "hg+", "svn+", "bzr+"]
        .iter()
        .find_map(|p| url.strip_prefix(p))
        .unwrap_or(url);
    let (scheme, rest) = url.split_once("://")?;
    // A `@ref` after the path, not the `user@` of the authority.
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let path = path.split('@').next().unwrap_or(path);
    Some(format!("{scheme}://{authority}/{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requirements_give_names_and_repository_urls() {
        let text = "# c\n-r base.txt\nacme-lib[extra]>=1.0 ; python_version > '3'\n\
                    git+ssh://git@github.com/acme/tool.git@v2#egg=tool\n\
                    proto @ git+https://gitlab.com/acme/proto.git\n";
        assert_eq!(
            requirements(text).into_iter().collect::<Vec<_>>(),
            [
                "acme-lib",
                "https://gitlab.com/acme/proto.git",
                "ssh://git@github.com/acme/tool.git"
            ]
        );
    }

    #[test]
    fn pyproject_names_packages_and_dependencies() {
        let text = "[project]\nname = \"acme-sdk\"\ndependencies = [\n  \"httpx>=0.2\", # http\n  'attrs',\n]\n\
                    [tool.setuptools]\npackages = [\"acme_sdk.core\", \"acme_extra\"]\n\
                    [tool.poetry.dependencies]\npython = \"^3.10\"\nrich = \"*\"\n";
        assert_eq!(
            pyproject_packages(text).into_iter().collect::<Vec<_>>(),
            ["acme_extra", "acme_sdk"]
        );
        assert_eq!(
            pyproject_dependencies(text).into_iter().collect::<Vec<_>>(),
            ["attrs", "httpx", "rich"]
        );
    }
}
