//! The Go modules of a repository (from its `go.mod` files) and the import path of a directory.

use super::gomod::{GoReplace, replaced_path};

/// The `module` directive of a `go.mod` file.
pub(crate) fn parse_module_line(text: &str) -> Option<String> {
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or("").trim();
        if let Some(rest) = line.strip_prefix("module") {
            if !rest.starts_with([' ', '\t', '"']) {
                continue;
            }
            let module = rest.trim().trim_matches('"').trim_matches('`').trim();
            if !module.is_empty() {
                return Some(module.to_owned());
            }
        }
    }
    None
}

/// The Go modules of a repository: `(module directory, module path)`, deepest directory first,
/// and each module directory's `replace` directives.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GoModules {
    modules: Vec<(String, String)>,
    replaces: Vec<(String, Vec<GoReplace>)>,
}

impl GoModules {
    pub(crate) fn new(mut modules: Vec<(String, String)>) -> GoModules {
        modules.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        GoModules {
            modules,
            replaces: Vec::new(),
        }
    }

    /// Adds the `replace` directives of each module directory's `go.mod`.
    pub(crate) fn with_replaces(
        mut self,
        mut replaces: Vec<(String, Vec<GoReplace>)>,
    ) -> GoModules {
        replaces.retain(|(_, r)| !r.is_empty());
        replaces.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        self.replaces = replaces;
        self
    }

    /// The import path that `import_path`, imported from repository directory `dir`, names
    /// after the `replace` directives of the module `dir` belongs to (`None`: unchanged).
    pub(crate) fn replaced_import(&self, dir: &str, import_path: &str) -> Option<String> {
        let module_dir = self
            .modules
            .iter()
            .map(|(mod_dir, _)| mod_dir)
            .find(|mod_dir| in_dir(dir, mod_dir))?;
        let (_, replaces) = self.replaces.iter().find(|(d, _)| d == module_dir)?;
        replaced_path(replaces, import_path)
    }

    /// The import path of the package in repository directory `dir` (`""` for the root), or
    /// `None` when the directory is outside every module and is the root itself.
    pub(crate) fn package_path(&self, dir: &str) -> Option<String> {
        // Vendored packages are imported by the path below `vendor/`.
        if let Some(pos) = vendor_split(dir) {
            return Some(dir[pos..].to_owned());
        }
        for (mod_dir, module) in &self.modules {
            let rest = if mod_dir.is_empty() {
                Some(dir)
            } else if dir == mod_dir {
                Some("")
            } else {
                dir.strip_prefix(mod_dir.as_str())
                    .and_then(|r| r.strip_prefix('/'))
            };
            if let Some(rest) = rest {
                // The standard library's module "std" has import paths without a prefix.
                if module == "std" {
                    return Some(if rest.is_empty() {
                        "std".to_owned()
                    } else {
                        rest.to_owned()
                    });
                }
                return Some(if rest.is_empty() {
                    module.clone()
                } else {
                    format!("{module}/{rest}")
                });
            }
        }
        if dir.is_empty() {
            None
        } else {
            Some(dir.to_owned())
        }
    }
}

/// Whether repository directory `dir` is `parent` or below it (`""` is the root).
fn in_dir(dir: &str, parent: &str) -> bool {
    parent.is_empty()
        || dir == parent
        || dir
            .strip_prefix(parent)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Byte offset just after the last `vendor/` directory component of `dir`, if any.
fn vendor_split(dir: &str) -> Option<usize> {
    let mut found = None;
    let mut offset = 0;
    for part in dir.split('/') {
        offset += part.len() + 1;
        if part == "vendor" && offset < dir.len() {
            found = Some(offset);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_paths_follow_the_deepest_module() {
        let mods = GoModules::new(vec![
            (String::new(), "example.com/app".into()),
            ("tools".into(), "example.com/tools".into()),
        ]);
        assert_eq!(
            mods.package_path("internal/brain").as_deref(),
            Some("example.com/app/internal/brain")
        );
        assert_eq!(mods.package_path("").as_deref(), Some("example.com/app"));
        assert_eq!(
            mods.package_path("tools/gen").as_deref(),
            Some("example.com/tools/gen")
        );
        assert_eq!(
            mods.package_path("toolsx").as_deref(),
            Some("example.com/app/toolsx")
        );
        assert_eq!(
            mods.package_path("vendor/golang.org/x/net").as_deref(),
            Some("golang.org/x/net")
        );
        let std = GoModules::new(vec![(String::new(), "std".into())]);
        assert_eq!(std.package_path("net/http").as_deref(), Some("net/http"));
        assert_eq!(GoModules::default().package_path(""), None);
    }

    #[test]
    fn module_lines_are_parsed() {
        assert_eq!(
            parse_module_line("// c\nmodule \"example.com/x\" // y\n").as_deref(),
            Some("example.com/x")
        );
        assert_eq!(parse_module_line("modules x"), None);
    }
}
