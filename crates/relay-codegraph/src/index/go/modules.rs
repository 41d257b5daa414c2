//! The Go modules of a repository (from its `go.mod` files) and the import path of a directory.

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

/// The Go modules of a repository: `(module directory, module path)`, deepest directory first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GoModules {
    modules: Vec<(String, String)>,
}

impl GoModules {
    pub(crate) fn new(mut modules: Vec<(String, String)>) -> GoModules {
        modules.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        GoModules { modules }
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
