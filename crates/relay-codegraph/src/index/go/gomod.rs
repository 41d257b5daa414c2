//! The directives of a `go.mod` file that name other modules: `module`, `require` and
//! `replace` (single lines and parenthesised blocks). The indexer reads the replacements (an
//! import of a replaced module names the replacement's symbols); `crate::related` reads all of
//! them for linking repositories.

/// What a replaced module is replaced with.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReplaceTarget {
    /// Another module (`=> example.com/sdk-fork v1.2.0`).
    Module {
        path: String,
        version: Option<String>,
    },
    /// A directory (`=> ../sdk`): the module declared there keeps its import paths.
    Local { dir: String },
}

/// One `replace` directive: imports of `module` (and packages below it) use `target`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GoReplace {
    /// The replaced module path (a version on the left-hand side is dropped).
    pub module: String,
    pub target: ReplaceTarget,
}

/// The directives of one `go.mod`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GoMod {
    pub module: Option<String>,
    /// Required module paths, in file order.
    pub requires: Vec<String>,
    pub replaces: Vec<GoReplace>,
}

/// Which block a line belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    None,
    Require,
    Replace,
    /// Another block (`exclude (`, `retract (`, `tool (`): its lines are skipped.
    Other,
}

/// Parses the directives of a `go.mod` (tolerant: a malformed line is skipped).
pub(crate) fn parse(text: &str) -> GoMod {
    let mut out = GoMod::default();
    let mut block = Block::None;
    for raw in text.lines() {
        let line = raw.split("//").next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if block != Block::None {
            if line == ")" {
                block = Block::None;
                continue;
            }
            match block {
                Block::Require => out.requires.extend(first_word(line)),
                Block::Replace => out.replaces.extend(replace_line(line)),
                _ => {}
            }
            continue;
        }
        let (verb, rest) = line.split_once([' ', '\t']).unwrap_or((line, ""));
        let rest = rest.trim();
        let opens = rest == "(";
        match verb {
            "module" if out.module.is_none() => out.module = first_word(rest),
            "require" if opens => block = Block::Require,
            "require" => out.requires.extend(first_word(rest)),
            "replace" if opens => block = Block::Replace,
            "replace" => out.replaces.extend(replace_line(rest)),
            _ if opens => block = Block::Other,
            _ => {}
        }
    }
    out
}

fn unquote(word: &str) -> &str {
    word.trim_matches(|c| c == '"' || c == '`')
}

fn first_word(text: &str) -> Option<String> {
    text.split_whitespace()
        .next()
        .map(unquote)
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
}

/// `old [version] => new [version]`.
fn replace_line(text: &str) -> Option<GoReplace> {
    let (left, right) = text.split_once("=>")?;
    let module = first_word(left)?;
    let mut words = right.split_whitespace().map(unquote);
    let path = words.next().filter(|w| !w.is_empty())?.to_owned();
    let is_dir = path.starts_with("./")
        || path.starts_with("../")
        || path.starts_with('/')
        || path == "."
        || path == "..";
    let target = if is_dir {
        ReplaceTarget::Local { dir: path }
    } else {
        ReplaceTarget::Module {
            path,
            version: words.next().map(str::to_owned),
        }
    };
    Some(GoReplace { module, target })
}

/// The import path `import_path` resolves to under `replaces`: the replacement module's path
/// in place of the replaced prefix, or `None` when no module replacement applies (a directory
/// replacement keeps the import path).
pub(crate) fn replaced_path(replaces: &[GoReplace], import_path: &str) -> Option<String> {
    replaces.iter().find_map(|r| {
        let ReplaceTarget::Module { path, .. } = &r.target else {
            return None;
        };
        let rest = import_path.strip_prefix(r.module.as_str())?;
        (rest.is_empty() || rest.starts_with('/')).then(|| format!("{path}{rest}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_are_parsed_in_lines_and_blocks() {
        let text = "module \"example.com/app\" // the app\n\ngo 1.22\n\nrequire example.com/one v1.0.0\n\
                    require (\n\texample.com/two v0.1.0 // indirect\n)\nexclude (\n\texample.com/bad v1\n)\n\
                    replace example.com/one v1.0.0 => ../one\nreplace (\n\texample.com/two => example.com/fork v0.2.0\n)\n";
        let gomod = parse(text);
        assert_eq!(gomod.module.as_deref(), Some("example.com/app"));
        assert_eq!(gomod.requires, ["example.com/one", "example.com/two"]);
        assert_eq!(
            gomod.replaces,
            [
                GoReplace {
                    module: "example.com/one".into(),
                    target: ReplaceTarget::Local {
                        dir: "../one".into()
                    },
                },
                GoReplace {
                    module: "example.com/two".into(),
                    target: ReplaceTarget::Module {
                        path: "example.com/fork".into(),
                        version: Some("v0.2.0".into()),
                    },
                },
            ]
        );
        assert_eq!(
            replaced_path(&gomod.replaces, "example.com/two/pkg").as_deref(),
            Some("example.com/fork/pkg")
        );
        assert_eq!(
            replaced_path(&gomod.replaces, "example.com/two"),
            Some("example.com/fork".into())
        );
        assert_eq!(replaced_path(&gomod.replaces, "example.com/twofold"), None);
        assert_eq!(replaced_path(&gomod.replaces, "example.com/one/x"), None);
    }
}
