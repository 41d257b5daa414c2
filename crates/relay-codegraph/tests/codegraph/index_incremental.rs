//! Incremental re-indexing equals a full re-index after a series of edits, and the deltas
//! applied to the previous graph reproduce the new one.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use relay_codegraph::index::{GraphDelta, IndexOptions, Indexer, index_repository, sort_graph};
use relay_codegraph::model::Graph;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn apply(graph: &Graph, delta: &GraphDelta) -> Graph {
    let files: BTreeSet<&str> = delta.files.iter().map(String::as_str).collect();
    let mut out = Graph {
        symbols: graph
            .symbols
            .iter()
            .filter(|s| !files.contains(s.file.as_str()))
            .cloned()
            .collect(),
        edges: graph
            .edges
            .iter()
            .filter(|e| !files.contains(e.file.as_str()))
            .cloned()
            .collect(),
    };
    out.symbols.extend(delta.symbols.iter().cloned());
    out.edges.extend(delta.edges.iter().cloned());
    sort_graph(&mut out);
    out
}

/// Asserts two graphs are equal, showing only the differences.
#[track_caller]
fn assert_same(actual: &Graph, expected: &Graph, what: &str) {
    if actual == expected {
        return;
    }
    let missing_symbols: Vec<_> = expected
        .symbols
        .iter()
        .filter(|s| !actual.symbols.contains(s))
        .collect();
    let extra_symbols: Vec<_> = actual
        .symbols
        .iter()
        .filter(|s| !expected.symbols.contains(s))
        .collect();
    let missing_edges: Vec<_> = expected
        .edges
        .iter()
        .filter(|e| !actual.edges.contains(e))
        .collect();
    let extra_edges: Vec<_> = actual
        .edges
        .iter()
        .filter(|e| !expected.edges.contains(e))
        .collect();
    panic!(
        "{what} differs from a full index:\n missing symbols {missing_symbols:#?}\n extra symbols {extra_symbols:#?}\n missing edges {missing_edges:#?}\n extra edges {extra_edges:#?}"
    );
}

fn step(indexer: &mut Indexer, root: &Path, changed: &[&str]) -> GraphDelta {
    let before = indexer.graph();
    let paths: Vec<PathBuf> = changed.iter().map(|c| root.join(c)).collect();
    let delta = indexer.update(&paths).expect("update");
    let full = index_repository(root, &IndexOptions::default()).expect("full index");
    let mut full_stats = full.stats;
    full_stats.duration = indexer.stats().duration;
    assert_eq!(
        indexer.stats(),
        &full_stats,
        "stats after editing {changed:?}"
    );
    let full = full.graph;
    assert_same(
        &indexer.graph(),
        &full,
        &format!("incremental graph after editing {changed:?}"),
    );
    assert_same(
        &apply(&before, &delta),
        &full,
        &format!("delta applied after editing {changed:?}"),
    );
    assert_eq!(indexer.stats().symbols, full.symbols.len());
    assert_eq!(indexer.stats().edges, full.edges.len());
    delta
}

/// Rewrites `rel` under `root`, replacing `from` (which must occur) by `to`.
fn edit(root: &Path, rel: &str, from: &str, to: &str) {
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{rel} does not contain {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
}

fn has_edge(indexer: &Indexer, from: &str, to: &str) -> bool {
    indexer
        .graph()
        .edges
        .iter()
        .any(|e| e.from == from && e.to.as_deref() == Some(to))
}

/// Edits that keep a Go file's declarations (bodies, comments, line shifts, parameter names)
/// re-resolve only that file; edits to declarations fall back to the import closure. Every step
/// still equals a full index.
#[test]
fn go_edits_that_keep_declarations_resolve_only_the_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    copy_dir(&fixtures.join("go"), &root.join("go"));
    let mut indexer = Indexer::full(root).expect("full");
    let planner = "go/internal/brain/planner.go";
    let store = "go/internal/store/store.go";
    let main = "go/cmd/app/main.go";

    // 1. Body-only edit that shifts every later declaration (types with `implements` edges
    //    included) and a doc comment change.
    edit(
        root,
        planner,
        "func NewBasic() *Basic {\n",
        "func NewBasic() *Basic {\n\t// one\n\t// two\n\t// three\n",
    );
    edit(
        root,
        planner,
        "// Plan saves one step.",
        "// Plan saves a step.",
    );
    let delta = step(&mut indexer, root, &[planner]);
    assert_eq!(delta.resolved, 1, "a body-only edit re-resolves one file");
    assert_eq!(delta.files, vec![planner.to_owned()]);

    // 2. A body gains a call into another package, and a parameter is renamed (signature text
    //    changes, types do not).
    edit(
        root,
        planner,
        "\tb.store.Save(ctx)\n",
        "\tb.store.Save(ctx)\n\tstore.Default.Count()\n",
    );
    edit(
        root,
        planner,
        "func helper(s string) error {",
        "func helper(text string) error {",
    );
    let delta = step(&mut indexer, root, &[planner]);
    assert_eq!(delta.resolved, 1);
    assert!(has_edge(
        &indexer,
        "example.com/app/internal/brain.Basic.Plan",
        "example.com/app/internal/store.Store.Count"
    ));

    // 3. Lines inserted before the package clause and the types of the package's home file;
    //    two files changed at once, both keeping their declarations.
    edit(root, store, "package store\n", "\n\n\npackage store\n");
    edit(
        root,
        main,
        "\tp.Plan(\"direct\")\n",
        "\tp.Plan(\"direct\")\n\tp.Name()\n",
    );
    let delta = step(&mut indexer, root, &[store, main]);
    assert_eq!(delta.resolved, 2);

    // 4. A parameter added changes no lookup (edges depend on names and result types, not on
    //    parameters): the patched tables re-resolve only the file.
    edit(
        root,
        store,
        "func (s *Store) Save(x string) error {",
        "func (s *Store) Save(x string, n int) error {",
    );
    let delta = step(&mut indexer, root, &[store]);
    assert_eq!(
        delta.resolved, 1,
        "a parameter added re-resolves only the file"
    );

    // 5. A new method makes `Value` implement `Named`: new `implements` and `dynamic` edges.
    edit(
        root,
        planner,
        "func (v Value) Plan(ctx string) error { return nil }\n",
        "func (v Value) Plan(ctx string) error { return nil }\n\nfunc (v Value) Name() string { return \"v\" }\n",
    );
    step(&mut indexer, root, &[planner]);
    assert!(has_edge(
        &indexer,
        "example.com/app/internal/brain.Value",
        "example.com/app/internal/brain.Named"
    ));

    // 6. Renaming an exported function used elsewhere leaves its callers unresolved.
    assert!(has_edge(
        &indexer,
        "example.com/app/cmd/app.main",
        "example.com/app/internal/brain.NewBasic"
    ));
    edit(
        root,
        planner,
        "func NewBasic() *Basic {",
        "func MakeBasic() *Basic {",
    );
    let delta = step(&mut indexer, root, &[planner]);
    assert!(delta.files.contains(&main.to_owned()));
    assert!(
        !indexer
            .graph()
            .edges
            .iter()
            .any(|e| e.to.as_deref() == Some("example.com/app/internal/brain.NewBasic"))
    );

    // 7. A package-level var initializer changes the var's type (the tables evaluate it).
    edit(
        root,
        store,
        "var Default = &Store{}",
        "var Default = MaxItems",
    );
    let delta = step(&mut indexer, root, &[store]);
    assert!(
        delta.resolved > 1,
        "a var's type change must reach dependents"
    );
    assert!(!has_edge(
        &indexer,
        "example.com/app/internal/brain.Basic.Plan",
        "example.com/app/internal/store.Store.Count"
    ));

    // 8. After the fallbacks rebuilt the tables, body-only edits are fast again.
    edit(
        root,
        store,
        "\treturn nil\n}",
        "\t// saved\n\treturn nil\n}",
    );
    let delta = step(&mut indexer, root, &[store]);
    assert_eq!(delta.resolved, 1);
}

#[test]
fn incremental_equals_full_after_edits() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    copy_dir(&fixtures.join("go"), &root.join("go"));
    copy_dir(&fixtures.join("python"), &root.join("py"));
    let mut indexer = Indexer::full(root).expect("full");
    let base = indexer.graph();
    assert!(!base.symbols.is_empty());

    // 1. Rename a method: callers elsewhere must become unresolved, implements edges change.
    let store = root.join("go/internal/store/store.go");
    let text = std::fs::read_to_string(&store).expect("read");
    std::fs::write(
        &store,
        text.replace("func (s *Store) Plan(", "func (s *Store) Draft("),
    )
    .expect("write");
    step(&mut indexer, root, &["go/internal/store/store.go"]);
    let g = indexer.graph();
    assert!(
        !g.edges
            .iter()
            .any(|e| e.to.as_deref() == Some("example.com/app/internal/store.Store.Plan"))
    );

    // 2. Add a file that calls into another package.
    std::fs::write(
        root.join("go/cmd/app/extra.go"),
        "package main\n\nimport \"example.com/app/internal/store\"\n\nfunc extra() { store.Default.Draft(\"x\") }\n",
    )
    .expect("write");
    step(&mut indexer, root, &["go/cmd/app/extra.go"]);
    assert!(
        indexer
            .graph()
            .edges
            .iter()
            .any(|e| e.from == "example.com/app/cmd/app.extra"
                && e.to.as_deref() == Some("example.com/app/internal/store.Store.Draft"))
    );

    // 3. A package that sees the interface but not the store (the store's value flows there from
    //    `main`); then Store gains `Name()`, so it implements Named and the call site gets a new
    //    dynamic edge without importing the store.
    std::fs::create_dir_all(root.join("go/cmd/other")).expect("mkdir");
    std::fs::write(
        root.join("go/cmd/other/other.go"),
        "package other\n\nimport \"example.com/app/internal/brain\"\n\nfunc name(n brain.Named) string { return n.Name() }\n\n// Name names it.\nfunc Name(n brain.Named) string { return name(n) }\n",
    )
    .expect("write");
    std::fs::write(
        root.join("go/cmd/app/feed.go"),
        "package main\n\nimport (\n\t\"example.com/app/cmd/other\"\n\t\"example.com/app/cmd/sizer\"\n\t\"example.com/app/internal/store\"\n)\n\nfunc feed() {\n\tother.Name(store.Default)\n\tsizer.Size(store.Default)\n}\n",
    )
    .expect("write");
    step(
        &mut indexer,
        root,
        &["go/cmd/other/other.go", "go/cmd/app/feed.go"],
    );
    let text = std::fs::read_to_string(&store).expect("read");
    std::fs::write(&store, format!("{text}\nfunc (s *Store) Name() string {{ return \"store\" }}\n\nfunc (s *Store) Plan(ctx string) error {{ return nil }}\n")).expect("write");
    step(&mut indexer, root, &["go/internal/store/store.go"]);
    assert!(
        indexer
            .graph()
            .edges
            .iter()
            .any(|e| e.from == "example.com/app/cmd/other.name"
                && e.to.as_deref() == Some("example.com/app/internal/store.Store.Name")
                && e.confidence == relay_codegraph::model::Confidence::Dynamic)
    );

    // 3b. Same through a package unrelated by imports: only the global `implements`/`dynamic`
    //     comparison can find the call site.
    std::fs::create_dir_all(root.join("go/internal/iface")).expect("mkdir");
    std::fs::create_dir_all(root.join("go/cmd/sizer")).expect("mkdir");
    std::fs::write(
        root.join("go/internal/iface/iface.go"),
        "package iface\n\ntype Sizer interface{ Size() int }\n",
    )
    .expect("write");
    std::fs::write(
        root.join("go/cmd/sizer/sizer.go"),
        "package sizer\n\nimport \"example.com/app/internal/iface\"\n\nfunc size(s iface.Sizer) int { return s.Size() }\n\n// Size sizes it.\nfunc Size(s iface.Sizer) int { return size(s) }\n",
    )
    .expect("write");
    step(
        &mut indexer,
        root,
        &["go/internal/iface/iface.go", "go/cmd/sizer/sizer.go"],
    );
    let text = std::fs::read_to_string(&store).expect("read");
    std::fs::write(
        &store,
        format!("{text}\nfunc (s *Store) Size() int {{ return 0 }}\n"),
    )
    .expect("write");
    step(&mut indexer, root, &["go/internal/store/store.go"]);
    assert!(
        indexer
            .graph()
            .edges
            .iter()
            .any(|e| e.from == "example.com/app/cmd/sizer.size"
                && e.to.as_deref() == Some("example.com/app/internal/store.Store.Size"))
    );

    // 4. Delete a Python module: its symbols vanish and importers' edges become unresolved.
    std::fs::remove_file(root.join("py/pkg/util.py")).expect("rm");
    step(&mut indexer, root, &["py/pkg/util.py"]);
    assert!(
        !indexer
            .graph()
            .symbols
            .iter()
            .any(|s| s.file == "py/pkg/util.py")
    );

    // 5. Re-add it with a changed function, and edit a class hierarchy.
    std::fs::write(root.join("py/pkg/util.py"), "MAX = 4\n\ndef helper():\n    return fetch()\n\ndef decorator(f):\n    return f\n\nasync def fetch():\n    pass\n").expect("write");
    let models = root.join("py/pkg/models.py");
    let text = std::fs::read_to_string(&models).expect("read");
    std::fs::write(
        &models,
        text.replace("class Model(Base):", "class Model(Repo):"),
    )
    .expect("write");
    step(&mut indexer, root, &["py/pkg/util.py", "py/pkg/models.py"]);

    // 6. Change a go.mod module path: every Go qname changes.
    std::fs::write(root.join("go/go.mod"), "module example.org/renamed\n").expect("write");
    step(&mut indexer, root, &["go/go.mod"]);
    assert!(
        indexer
            .graph()
            .symbols
            .iter()
            .any(|s| s.qname == "example.org/renamed/internal/brain.Basic")
    );

    // 7. A no-op update is an empty delta; non-source paths are ignored.
    let delta = indexer.update(&[root.join("README.md")]).expect("update");
    assert!(delta.is_empty());
}

/// Python edits that keep everything other modules read (comments, blank lines)
/// re-resolve only the module; other edits reach its importers. Every step equals a full index.
#[test]
fn python_edits_that_keep_exports_resolve_only_the_module() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    copy_dir(&fixtures.join("python"), &root.join("py"));
    let mut indexer = Indexer::full(root).expect("full");
    let util = "py/pkg/util.py";
    let service = "py/pkg/sub/service.py";

    // 1. Comments and blank lines shift every definition's lines.
    edit(
        root,
        util,
        "def helper():\n",
        "# a comment\n\n\ndef helper():\n",
    );
    let delta = step(&mut indexer, root, &[util]);
    assert_eq!(
        delta.resolved, 1,
        "a comment-only edit re-resolves one module"
    );
    assert_eq!(delta.files, vec![util.to_owned()]);

    // 2. Two modules at once, both comment-only.
    edit(root, util, "MAX = 3\n", "# limits\nMAX = 3\n");
    let text = std::fs::read_to_string(root.join(service)).expect("read");
    std::fs::write(root.join(service), format!("# header\n{text}")).expect("write");
    let delta = step(&mut indexer, root, &[util, service]);
    // The header shifts the lambda in `service.run`, and lambdas are named by position
    // (`<lambda@LINE:COL>`): a declaration changed, so every Python module is re-resolved.
    assert!(delta.resolved >= 2);

    // 3. A body gains a call (the expressions are renumbered, no binding changes): only the
    //    module is re-resolved, and the new call is there.
    edit(
        root,
        util,
        "    return helper()\n",
        "    return decorator(helper)\n",
    );
    let delta = step(&mut indexer, root, &[util]);
    // The new call passes `helper` to `decorator`, which returns its argument as it is: only
    // `decorator`'s parameter changes in the flow table, and no other module reads it.
    assert_eq!(
        delta.resolved, 1,
        "a new call in a body re-resolves one module"
    );
    assert!(has_edge(
        &indexer,
        "py.pkg.util.fetch",
        "py.pkg.util.decorator"
    ));

    // 3b. A module-level binding changes (importers may call through it). Values can flow
    //     from it into any module (arguments, returns, stores), so a changed binding
    //     re-resolves every Python module.
    edit(root, util, "counter = 0\n", "counter = helper\n");
    let delta = step(&mut indexer, root, &[util]);
    assert!(delta.resolved > 1);
    edit(root, util, "MAX = 3\n", "MAX = helper\n");
    let delta = step(&mut indexer, root, &[util]);
    assert!(
        delta.resolved > 1,
        "a changed binding must reach the importers that use it"
    );
    edit(root, util, "MAX = helper\n", "MAX = 3\n");
    step(&mut indexer, root, &[util]);

    // 3c. A method's `self.x = …` and a return annotation change.
    let models = "py/pkg/models.py";
    let text = std::fs::read_to_string(root.join(models)).expect("read");
    std::fs::write(
        root.join(models),
        format!("{text}\n\nclass Extra:\n    def __init__(self):\n        self.x = Extra()\n\n    def make(self) -> \"Extra\":\n        return self.x\n"),
    )
    .expect("write");
    let uses = "py/pkg/uses.py";
    std::fs::write(
        root.join(uses),
        "from .models import Extra\n\n\ndef use():\n    Extra().x.make()\n    Extra().make().make()\n",
    )
    .expect("write");
    step(&mut indexer, root, &[models, uses]);
    edit(
        root,
        models,
        "        self.x = Extra()\n",
        "        self.x = None\n",
    );
    let delta = step(&mut indexer, root, &[models]);
    assert!(
        delta.files.contains(&uses.to_owned()),
        "a changed self attribute must reach importers"
    );
    edit(
        root,
        models,
        "    def make(self) -> \"Extra\":",
        "    def make(self) -> int:",
    );
    let delta = step(&mut indexer, root, &[models]);
    assert!(
        delta.resolved > 1,
        "a changed return annotation must reach importers"
    );

    // 4. Renaming a function used elsewhere leaves its callers unresolved.
    let calls_helper = |indexer: &Indexer| {
        indexer
            .graph()
            .edges
            .iter()
            .any(|e| e.to.as_deref() == Some("py.pkg.util.helper") && e.file == service)
    };
    assert!(calls_helper(&indexer));
    edit(root, util, "def helper():", "def assist():");
    let delta = step(&mut indexer, root, &[util]);
    assert!(delta.files.contains(&service.to_owned()));
    assert!(!calls_helper(&indexer));
}

/// Declaration-changing Go edits (signatures, methods, interface method sets, result and field
/// types, embedding, declarations moved between files, duplicate declarations, deleted files,
/// var initializers reading a changed method): every step equals a full index.
#[test]
fn go_declaration_edits_equal_full_index() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    copy_dir(&fixtures.join("go"), &root.join("go"));
    let mut indexer = Indexer::full(root).expect("full");
    let planner = "go/internal/brain/planner.go";
    let extra = "go/internal/brain/extra.go";
    let dup = "go/internal/brain/dup.go";
    let store = "go/internal/store/store.go";
    let main = "go/cmd/app/main.go";

    // 1. A method gains a parameter: no name changes, `implements` of Store may change.
    edit(
        root,
        store,
        "func (s *Store) Plan(ctx string) error {",
        "func (s *Store) Plan(ctx string, n int) error {",
    );
    step(&mut indexer, root, &[store]);
    edit(
        root,
        store,
        "func (s *Store) Plan(ctx string, n int) error {",
        "func (s *Store) Plan(ctx string) error {",
    );
    step(&mut indexer, root, &[store]);

    // 2. A method added makes Value implement Named; then removed again.
    edit(
        root,
        planner,
        "func (v Value) Plan(ctx string) error { return nil }\n",
        "func (v Value) Plan(ctx string) error { return nil }\n\nfunc (v Value) Name() string { return \"v\" }\n",
    );
    step(&mut indexer, root, &[planner]);
    assert!(has_edge(
        &indexer,
        "example.com/app/internal/brain.Value",
        "example.com/app/internal/brain.Named"
    ));
    edit(
        root,
        planner,
        "\nfunc (v Value) Name() string { return \"v\" }\n",
        "",
    );
    step(&mut indexer, root, &[planner]);
    assert!(!has_edge(
        &indexer,
        "example.com/app/internal/brain.Value",
        "example.com/app/internal/brain.Named"
    ));

    // 3. An interface's method set changes (implements edges and dynamic edges vanish), then
    //    comes back; the embedding interface follows.
    edit(
        root,
        planner,
        "\tPlan(ctx string) error\n}",
        "\tDraft(ctx string) error\n}",
    );
    step(&mut indexer, root, &[planner]);
    edit(
        root,
        planner,
        "\tDraft(ctx string) error\n}",
        "\tPlan(ctx string) error\n}",
    );
    step(&mut indexer, root, &[planner]);

    // 4. A function's result type changes: callers' method calls resolve elsewhere.
    edit(
        root,
        planner,
        "func NewBasic() *Basic {\n\treturn &Basic{store: store.Default}\n}",
        "func NewBasic() *Wrapper {\n\treturn nil\n}",
    );
    step(&mut indexer, root, &[planner]);
    edit(
        root,
        planner,
        "func NewBasic() *Wrapper {\n\treturn nil\n}",
        "func NewBasic() *Basic {\n\treturn &Basic{store: store.Default}\n}",
    );
    step(&mut indexer, root, &[planner]);

    // 5. A field's type and an embedded field change.
    edit(root, planner, "\tStore *store.Store\n", "\tStore *Basic\n");
    step(&mut indexer, root, &[planner]);
    edit(
        root,
        planner,
        "\t*Basic\n\tLabel string",
        "\tValue\n\tLabel string",
    );
    step(&mut indexer, root, &[planner]);
    edit(
        root,
        planner,
        "\tValue\n\tLabel string",
        "\t*Basic\n\tLabel string",
    );
    step(&mut indexer, root, &[planner]);

    // 6. A declaration moves to a new file of the same package, then a duplicate declaration
    //    (as with build tags) in a file sorting first takes the symbol over; files deleted.
    edit(
        root,
        planner,
        "func helper(s string) error {\n\t_ = store.MaxItems\n\treturn nil\n}\n",
        "",
    );
    std::fs::write(
        root.join(extra),
        "package brain\n\nimport \"example.com/app/internal/store\"\n\nfunc helper(s string) error {\n\t_ = store.MaxItems\n\treturn nil\n}\n",
    )
    .expect("write");
    step(&mut indexer, root, &[planner, extra]);
    std::fs::write(
        root.join(dup),
        "package brain\n\nfunc helper(s string) error { return nil }\n\n// Count counts.\nfunc (b *Basic) Count() int { return 0 }\n",
    )
    .expect("write");
    step(&mut indexer, root, &[dup]);
    edit(
        root,
        extra,
        "func helper(s string) error {",
        "func helper(s string, n int) error {",
    );
    step(&mut indexer, root, &[extra]);
    std::fs::remove_file(root.join(dup)).expect("rm");
    step(&mut indexer, root, &[dup]);
    std::fs::remove_file(root.join(extra)).expect("rm");
    step(&mut indexer, root, &[extra]);

    // 7. A package-level var whose inferred type comes from a method's result, in another
    //    package; the result type changes.
    edit(
        root,
        main,
        "var initialized = setup()\n",
        "var initialized = setup()\n\nvar counted = store.Default.Count()\n\nvar planned = b.NewBasic().Plan\n",
    );
    step(&mut indexer, root, &[main]);
    edit(
        root,
        store,
        "func (s Store) Count() int {",
        "func (s Store) Count() *Store {",
    );
    edit(root, store, "{ return len(s.items) }", "{ return &s }");
    step(&mut indexer, root, &[store]);
    edit(
        root,
        main,
        "\ts.Count()\n",
        "\ts.Count()\n\tcounted.Save(\"x\")\n",
    );
    step(&mut indexer, root, &[main]);

    // 8. Types added and removed, a function renamed, and two packages edited at once.
    edit(
        root,
        store,
        "// MaxItems",
        "// Extra is new.\ntype Extra struct{ Store }\n\n// MaxItems",
    );
    edit(
        root,
        planner,
        "func NewBasic() *Basic {",
        "func MakeBasic() *Basic {",
    );
    step(&mut indexer, root, &[store, planner]);
    edit(
        root,
        store,
        "// Extra is new.\ntype Extra struct{ Store }\n\n",
        "",
    );
    step(&mut indexer, root, &[store]);

    // 9. Body-only edits are still fast afterwards.
    edit(
        root,
        store,
        "\treturn nil\n}",
        "\t// saved\n\treturn nil\n}",
    );
    let delta = step(&mut indexer, root, &[store]);
    assert_eq!(delta.resolved, 1);
}

/// Declaration-changing Python edits (bases added and removed, methods changed, star-import
/// exporters, new functions, parameters renamed): every step equals a full index.
#[test]
fn python_declaration_edits_equal_full_index() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    copy_dir(&fixtures.join("python"), &root.join("py"));
    let mut indexer = Indexer::full(root).expect("full");
    let util = "py/pkg/util.py";
    let models = "py/pkg/models.py";
    let service = "py/pkg/sub/service.py";

    // 1. A parameter renamed in a function whose scope nothing else reads: one module.
    edit(
        root,
        util,
        "def decorator(fn):\n    return fn",
        "def decorator(f):\n    return f",
    );
    let delta = step(&mut indexer, root, &[util]);
    assert_eq!(
        delta.resolved, 1,
        "a renamed parameter re-resolves one module"
    );
    // ... but a parameter that a `self.x = …` value reads reaches importers.
    edit(
        root,
        models,
        "    def __init__(self, name):\n        super().__init__()\n        self.name = name",
        "    def __init__(self, title):\n        super().__init__()\n        self.name = title",
    );
    step(&mut indexer, root, &[models]);

    // 2. A new function in a star-imported module, and one removed.
    edit(
        root,
        util,
        "def _private():",
        "def added():\n    return helper()\n\n\ndef _private():",
    );
    step(&mut indexer, root, &[util]);
    edit(
        root,
        service,
        "    helper()\n    u.helper()",
        "    added()\n    helper()\n    u.helper()",
    );
    step(&mut indexer, root, &[service]);
    edit(root, util, "def added():\n    return helper()\n\n\n", "");
    step(&mut indexer, root, &[util]);

    // 3. Bases added and removed; a class's methods change.
    edit(root, models, "class Repo:", "class Repo(Base):");
    step(&mut indexer, root, &[models]);
    edit(
        root,
        models,
        "    def validate(self):\n        pass\n",
        "    def check(self):\n        pass\n",
    );
    step(&mut indexer, root, &[models]);
    edit(
        root,
        models,
        "class Model(Base):",
        "class Model(Repo, Base):",
    );
    step(&mut indexer, root, &[models]);
    edit(root, models, "class Repo(Base):", "class Repo:");
    edit(root, models, "class Model(Repo, Base):", "class Model:");
    step(&mut indexer, root, &[models]);

    // 4. A module that star-imports another re-exports the changes.
    std::fs::write(root.join("py/pkg/reexport.py"), "from .util import *\n").expect("write");
    edit(
        root,
        service,
        "from ..util import *",
        "from ..reexport import *",
    );
    step(&mut indexer, root, &["py/pkg/reexport.py", service]);
    edit(root, util, "def helper():", "def helper_renamed():");
    step(&mut indexer, root, &[util]);
    std::fs::remove_file(root.join("py/pkg/reexport.py")).expect("rm");
    step(&mut indexer, root, &["py/pkg/reexport.py"]);
}

/// Value-flow edits (arguments, returns, container stores, decorators, lambdas) made in one
/// module change edges in another: every step equals a full index, and the edges move.
/// Go value flow across files: what reaches a call through an interface or a function value
/// changes with edits elsewhere (a body that passes another value, a field set to another
/// function, a new implementation flowing in); every step equals a full index, and the call
/// site's file is re-resolved though it did not change.
#[test]
fn go_value_flow_edits_equal_full_index() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    copy_dir(&fixtures.join("godispatch"), root);
    let feed = "shapes/feed.go";
    std::fs::write(
        root.join(feed),
        "package shapes\n\nfunc feed() {\n\tDescribe(&Circle{})\n\tj := &Job{run: step}\n\tj.Do()\n}\n",
    )
    .expect("write");
    let mut indexer = Indexer::full(root).expect("full");
    let pkg = "example.com/shapes/shapes";
    let reaches = |indexer: &Indexer, from: &str, to: &str| {
        indexer.graph().edges.iter().any(|e| {
            e.from == format!("{pkg}.{from}")
                && e.to.as_deref() == Some(format!("{pkg}.{to}").as_str())
                && e.confidence == relay_codegraph::model::Confidence::Dynamic
        })
    };
    assert!(reaches(&indexer, "Describe", "Circle.Name"));
    assert!(!reaches(&indexer, "Describe", "Square.Name"));

    // 1. A body-only edit passes a Square as well: `Describe`'s call reaches `Square.Name`.
    edit(
        root,
        feed,
        "\tDescribe(&Circle{})\n",
        "\tDescribe(&Circle{})\n\tDescribe(Square{})\n",
    );
    let delta = step(&mut indexer, root, &[feed]);
    assert!(reaches(&indexer, "Describe", "Square.Name"));
    assert!(
        delta.files.contains(&"shapes/shapes.go".to_owned()),
        "the call site's file is re-resolved: {:?}",
        delta.files
    );

    // 2. The field gets another function: `Job.Do` calls it instead.
    edit(
        root,
        feed,
        "\tj := &Job{run: step}\n",
        "\tj := &Job{run: other}\n",
    );
    std::fs::write(
        root.join("shapes/other.go"),
        "package shapes\n\nfunc other() error { return nil }\n",
    )
    .expect("write");
    step(&mut indexer, root, &[feed, "shapes/other.go"]);
    assert!(reaches(&indexer, "Job.Do", "other"));
    assert!(reaches(&indexer, "Job.Do", "step"), "Main still sets step");

    // 3. A new type that implements `Named` flows in from a new file.
    std::fs::write(
        root.join("shapes/oval.go"),
        "package shapes\n\ntype Oval struct{}\n\nfunc (Oval) Area() float64 { return 1 }\n\nfunc (Oval) Name() string { return \"oval\" }\n\nfunc ovals() string { return Describe(Oval{}) }\n",
    )
    .expect("write");
    step(&mut indexer, root, &["shapes/oval.go"]);
    assert!(reaches(&indexer, "Describe", "Oval.Name"));

    // 4. The values stop flowing: the edges go.
    std::fs::remove_file(root.join("shapes/oval.go")).expect("rm");
    edit(root, feed, "\tDescribe(Square{})\n", "");
    step(&mut indexer, root, &["shapes/oval.go", feed]);
    assert!(!reaches(&indexer, "Describe", "Oval.Name"));
    assert!(!reaches(&indexer, "Describe", "Square.Name"));
}

#[test]
fn python_value_flow_edits_equal_full_index() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let lib = "lib.py";
    let main = "main.py";
    let other = "other.py";
    std::fs::write(
        root.join(lib),
        "def a():\n    pass\n\n\ndef b():\n    pass\n\n\ndef apply(f):\n    f()\n\n\n\
         def make():\n    return a\n\n\nREG = {}\n\n\ndef register(name, fn):\n    REG[name] = fn\n\n\n\
         def dispatch(name):\n    REG[name]()\n\n\ndef first(fs):\n    fs[0]()\n\n\ndef dec(fn):\n    def wrapper():\n        return fn()\n\n    return wrapper\n",
    )
    .expect("write");
    std::fs::write(
        root.join(main),
        "from lib import apply, make, register, dec, a, b\n\napply(a)\nmake()()\nregister(\"x\", a)\n\n\n\
         @dec\ndef g():\n    pass\n\n\ng()\n",
    )
    .expect("write");
    std::fs::write(
        root.join(other),
        "from lib import apply, a\n\n\ndef use():\n    pass\n",
    )
    .expect("write");
    let mut indexer = Indexer::full(root).expect("full");
    assert!(has_edge(&indexer, "lib.apply", "lib.a"));
    assert!(has_edge(&indexer, "main", "lib.a"));
    assert!(has_edge(&indexer, "lib.dispatch", "lib.a"));
    assert!(has_edge(&indexer, "main", "lib.dec.wrapper"));
    assert!(has_edge(&indexer, "lib.dec.wrapper", "main.g"));

    // 1. An argument changes in the caller: the callee's call moves.
    edit(root, main, "apply(a)", "apply(b)");
    step(&mut indexer, root, &[main]);
    assert!(has_edge(&indexer, "lib.apply", "lib.b"));
    assert!(!has_edge(&indexer, "lib.apply", "lib.a"));

    // 2. A returned function changes in the callee: the caller's call of the result moves.
    edit(root, lib, "    return a\n", "    return b\n");
    step(&mut indexer, root, &[lib]);
    assert!(has_edge(&indexer, "main", "lib.b"));

    // 3. A stored value changes: the load in the other module follows.
    edit(root, main, "register(\"x\", a)", "register(\"x\", b)");
    step(&mut indexer, root, &[main]);
    assert!(has_edge(&indexer, "lib.dispatch", "lib.b"));
    assert!(!has_edge(&indexer, "lib.dispatch", "lib.a"));

    // 4. A third module passes another callback.
    edit(root, other, "    pass\n", "    apply(a)\n");
    step(&mut indexer, root, &[other]);
    assert!(has_edge(&indexer, "lib.apply", "lib.a"));
    assert!(has_edge(&indexer, "other.use", "lib.apply"));

    // 5. The decorator stops wrapping: `g()` reaches `g` itself.
    edit(
        root,
        lib,
        "    def wrapper():\n        return fn()\n\n    return wrapper\n",
        "    return fn\n",
    );
    step(&mut indexer, root, &[lib]);
    assert!(has_edge(&indexer, "main", "main.g"));
    assert!(!has_edge(&indexer, "main", "lib.dec.wrapper"));

    // 6. The decorator goes, then a lambda is passed.
    edit(root, main, "@dec\n", "");
    step(&mut indexer, root, &[main]);
    edit(root, main, "apply(b)", "apply(lambda: a())");
    step(&mut indexer, root, &[main]);
    assert!(has_edge(&indexer, "lib.apply", "main.<lambda@3:7>"));
    assert!(has_edge(&indexer, "main.<lambda@3:7>", "lib.a"));

    // 7. A container literal passed as an argument changes its items (same expressions).
    edit(
        root,
        other,
        "    apply(a)\n",
        "    apply(a)\n    first([a])\n",
    );
    edit(
        root,
        other,
        "from lib import apply, a\n",
        "from lib import apply, a, b, first\n",
    );
    step(&mut indexer, root, &[other]);
    assert!(has_edge(&indexer, "lib.first", "lib.a"));
    edit(root, other, "first([a])", "first([b])");
    step(&mut indexer, root, &[other]);
    assert!(has_edge(&indexer, "lib.first", "lib.b"));
    assert!(!has_edge(&indexer, "lib.first", "lib.a"));

    // 8. A body-only edit that passes no function value re-resolves one module.
    edit(
        root,
        other,
        "    first([b])\n",
        "    first([b])\n    len([])\n",
    );
    let delta = step(&mut indexer, root, &[other]);
    assert_eq!(delta.resolved, 1);
}

/// Values that travel through a module that neither defines nor calls them (a returned
/// function kept in a variable, a callback, a container, an instance attribute), edited where
/// they start and then removed: an update re-evaluates only the modules the edit reaches
/// (`python::flow_update`), and every step equals a full index.
#[test]
fn python_value_flow_through_a_third_module_equals_full_index() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let lib = "lib.py";
    let mid = "mid.py";
    let main = "main.py";
    std::fs::write(
        root.join(lib),
        "def a():\n    pass\n\n\ndef b():\n    pass\n\n\ndef make():\n    return a\n\n\n\
         def apply(f):\n    f()\n\n\nclass Box:\n    def __init__(self, fn):\n        self.fn = fn\n\n\
         \x20   def run(self):\n        self.fn()\n",
    )
    .expect("write");
    std::fs::write(
        root.join(mid),
        "from lib import make, apply, Box, a\n\nh = make()\nTABLE = [a]\nbox = Box(make())\n\n\n\
         def relay(f):\n    apply(f)\n",
    )
    .expect("write");
    std::fs::write(
        root.join(main),
        "from mid import h, TABLE, box, relay\nfrom lib import b\n\nh()\nTABLE[0]()\nbox.run()\nrelay(b)\n",
    )
    .expect("write");
    let mut indexer = Indexer::full(root).expect("full");
    assert!(has_edge(&indexer, "main", "lib.a"));
    assert!(has_edge(&indexer, "lib.Box.run", "lib.a"));
    assert!(has_edge(&indexer, "lib.apply", "lib.b"));

    // 1. The returned function changes where it is defined: the call in `main` (through
    //    `mid.h`) and the instance attribute (through `mid.box`) follow.
    edit(root, lib, "    return a\n", "    return b\n");
    step(&mut indexer, root, &[lib]);
    assert!(has_edge(&indexer, "main", "lib.b"));
    assert!(has_edge(&indexer, "lib.Box.run", "lib.b"));
    assert!(!has_edge(&indexer, "lib.Box.run", "lib.a"));

    // 2. The flow is removed: nothing is returned.
    edit(root, lib, "    return b\n", "    return None\n");
    step(&mut indexer, root, &[lib]);
    assert!(!has_edge(&indexer, "lib.Box.run", "lib.b"));

    // 3. The callback relayed by `mid` changes in `main`, then is removed.
    edit(root, main, "relay(b)\n", "relay(h)\nrelay(TABLE[0])\n");
    step(&mut indexer, root, &[main]);
    assert!(has_edge(&indexer, "lib.apply", "lib.a"));
    assert!(!has_edge(&indexer, "lib.apply", "lib.b"));
    edit(root, main, "relay(h)\nrelay(TABLE[0])\n", "");
    step(&mut indexer, root, &[main]);
    assert!(!has_edge(&indexer, "lib.apply", "lib.a"));

    // 4. The container's item changes in `mid`, then the container goes.
    edit(root, mid, "TABLE = [a]\n", "TABLE = [make]\n");
    step(&mut indexer, root, &[mid]);
    assert!(has_edge(&indexer, "main", "lib.make"));
    edit(root, mid, "TABLE = [make]\n", "TABLE = []\n");
    step(&mut indexer, root, &[mid]);
    assert!(!has_edge(&indexer, "main", "lib.make"));
}

/// The flows that follow statement order (issue #34): a module's last binding of an exported
/// name, star imports in order, an object's attribute replaced by a method call, a default left
/// out, `self` as the receivers' classes and `with`; each edit's delta and graph equal a full
/// index's.
#[test]
fn python_ordered_flow_edits_equal_full_index() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let (lib, other, main) = ("lib.py", "other.py", "main.py");
    std::fs::write(
        root.join(lib),
        "def a():\n    pass\n\n\ndef b():\n    pass\n\n\nHANDLER = a\nHANDLER = b\n\n\n\
         def run(cb=a):\n    cb()\n\n\nclass Box:\n    def __init__(self, fn):\n        self.fn = fn\n\n\
         \x20   def change(self, fn):\n        self.fn = fn\n\n\n\
         class Base:\n    def go(self):\n        self.hook()\n\n    def hook(self):\n        pass\n\n\n\
         class Ctx:\n    def __enter__(self):\n        return self\n\n    def __exit__(self, *exc):\n        pass\n\n\
         \x20   def work(self):\n        pass\n",
    )
    .expect("write");
    std::fs::write(root.join(other), "def b():\n    pass\n").expect("write");
    std::fs::write(
        root.join(main),
        "from lib import *\nfrom other import *\nfrom lib import HANDLER, run, Box, Base, Ctx, a\n\n\n\
         class Sub(Base):\n    def hook(self):\n        pass\n\n\n\
         def go():\n    HANDLER()\n    b()\n    run(b)\n    box = Box(a)\n    box.change(b)\n    box.fn()\n\
         \x20   Sub().go()\n    with Ctx() as c:\n        c.work()\n",
    )
    .expect("write");
    let mut indexer = Indexer::full(root).expect("full");
    assert!(has_edge(&indexer, "main.go", "lib.b"));
    assert!(has_edge(&indexer, "main.go", "other.b"));
    assert!(!has_edge(&indexer, "lib.run", "lib.a"));
    assert!(has_edge(&indexer, "lib.Base.go", "main.Sub.hook"));
    assert!(has_edge(&indexer, "main.go", "lib.Ctx.__exit__"));
    assert!(has_edge(&indexer, "main.go", "lib.Ctx.work"));

    edit(
        root,
        lib,
        "HANDLER = a\nHANDLER = b\n",
        "HANDLER = b\nHANDLER = a\n",
    );
    step(&mut indexer, root, &[lib]);
    edit(root, other, "def b():\n", "def z():\n");
    step(&mut indexer, root, &[other]);
    edit(root, main, "    run(b)\n", "    run(b)\n    run()\n");
    step(&mut indexer, root, &[main]);
    assert!(has_edge(&indexer, "lib.run", "lib.a"));
    edit(
        root,
        lib,
        "    def change(self, fn):\n        self.fn = fn\n",
        "    def change(self, fn):\n        if fn:\n            self.fn = fn\n",
    );
    step(&mut indexer, root, &[lib]);
    edit(
        root,
        main,
        "    Sub().go()\n",
        "    Sub().go()\n    Base().go()\n",
    );
    step(&mut indexer, root, &[main]);
    assert!(has_edge(&indexer, "lib.Base.go", "lib.Base.hook"));
    edit(root, lib, "        return self\n", "        return a\n");
    step(&mut indexer, root, &[lib]);
    assert!(!has_edge(&indexer, "main.go", "lib.Ctx.work"));
}
