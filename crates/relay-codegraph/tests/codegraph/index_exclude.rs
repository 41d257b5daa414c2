//! The repository's `exclude` globs (`.relay.toml`) keep files out of the code graph: a full
//! index and an incremental update neither parse them nor emit a symbol or an edge from them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use relay_codegraph::index::{IndexOptions, Indexer};
use relay_core::repo_config::ExcludeSet;

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

fn options(patterns: &[&str]) -> IndexOptions {
    IndexOptions {
        threads: 1,
        exclude: Arc::new(
            ExcludeSet::new(&patterns.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>()).unwrap(),
        ),
        ..IndexOptions::default()
    }
}

#[test]
fn excluded_files_give_no_symbol_and_no_edge() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "go.mod", "module example.com/app\n");
    write(
        root,
        "main.go",
        "package main\n\nimport \"example.com/app/gen\"\n\nfunc main() { gen.Run() }\n",
    );
    write(
        root,
        "gen/gen.go",
        "package gen\n\nfunc Run() { helper() }\n\nfunc helper() {}\n",
    );
    write(root, "tool.py", "def tool():\n    return 1\n");

    let everything = Indexer::full_with(root, options(&[])).unwrap().graph();
    assert!(everything.symbols.iter().any(|s| s.file == "gen/gen.go"));

    let mut indexer = Indexer::full_with(root, options(&["gen/", "*.py"])).unwrap();
    let graph = indexer.graph();
    let files = |graph: &relay_codegraph::model::Graph| -> Vec<String> {
        graph
            .symbols
            .iter()
            .map(|s| s.file.clone())
            .chain(graph.edges.iter().map(|e| e.file.clone()))
            .collect()
    };
    assert!(
        files(&graph).iter().all(|f| f == "main.go"),
        "{:?}",
        files(&graph)
    );
    // The call into the excluded package is not resolved to a symbol of it: the package is
    // outside the index, so the call is external.
    assert!(
        graph
            .edges
            .iter()
            .all(|e| !e.to.as_deref().unwrap_or("").contains("gen.Run") || e.external)
    );

    // An incremental update of an excluded file keeps it out.
    let changed = write(
        root,
        "gen/gen.go",
        "package gen\n\nfunc Run() {}\n\nfunc More() {}\n",
    );
    let delta = indexer.update(&[changed]).unwrap();
    assert!(
        delta.symbols.iter().all(|s| s.file != "gen/gen.go"),
        "{delta:?}"
    );
    assert!(indexer.graph().symbols.iter().all(|s| s.file == "main.go"));
}
