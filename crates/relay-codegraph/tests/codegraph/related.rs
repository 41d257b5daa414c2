//! One code graph across related repositories: an app and the SDK (Go) or library (Python) it
//! imports, each indexed as its own snapshot and linked at query time by `ops::execute_set`.
//!
//! The same checks run on the memory store and on Postgres; `related_incremental.rs` checks that
//! incremental updates of either side answer like a full index of both.

use std::path::{Path, PathBuf};

use relay_codegraph::index::{IndexOptions, index_repository};
use relay_codegraph::ops::{
    CodegraphArgs, GraphScope, GraphSet, RelatedGraph, execute, execute_set,
};
use relay_codegraph::store::GraphStore;
use relay_codegraph::store::memory::MemoryStore;
use relay_codegraph::store::postgres::PostgresStore;
use sqlx::PgPool;

pub(crate) const APP_REPO: &str = "github/acme/app";
pub(crate) const SDK_REPO: &str = "github/acme/sdk";
pub(crate) const SDK_LABEL: &str = "acme/sdk";
pub(crate) const LIB_REPO: &str = "github/acme/lib";
pub(crate) const LIB_LABEL: &str = "acme/lib";

pub(crate) fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/related")
        .join(rel)
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
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

/// Rewrites `rel` under `root`, replacing `from` (which must occur) by `to`.
pub(crate) fn edit(root: &Path, rel: &str, from: &str, to: &str) {
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{rel} does not contain {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
}

/// The Go pair in a temporary directory: `app/` and `sdk/`. With `fork`, the SDK declares the
/// module `example.com/sdk-fork` and the app's `go.mod` replaces `example.com/sdk` with it.
pub(crate) fn go_pair(fork: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture("go/app"), &dir.path().join("app"));
    copy_dir(&fixture("go/sdk"), &dir.path().join("sdk"));
    if fork {
        edit(
            &dir.path().join("sdk"),
            "go.mod",
            "module example.com/sdk",
            "module example.com/sdk-fork",
        );
        std::fs::write(
            dir.path().join("app/go.mod"),
            "module example.com/app\n\ngo 1.22\n\nrequire example.com/sdk v1.0.0\n\n\
             replace example.com/sdk => example.com/sdk-fork v1.2.0\n",
        )
        .expect("write go.mod");
    }
    dir
}

pub(crate) async fn load(store: &dyn GraphStore, repo: &str, commit: &str, root: &Path) {
    let graph = index_repository(root, &IndexOptions::default())
        .expect("index")
        .graph;
    store
        .replace_graph(repo, commit, &graph)
        .await
        .expect("store graph");
}

pub(crate) fn set(related_repo: &str, label: &str) -> GraphSet {
    GraphSet {
        primary: GraphScope::latest(APP_REPO),
        related: vec![RelatedGraph {
            label: label.to_owned(),
            scope: GraphScope::latest(related_repo),
        }],
    }
}

pub(crate) fn args(operation: &str, qname: &str) -> CodegraphArgs {
    CodegraphArgs {
        operation: operation.to_owned(),
        qname: Some(qname.to_owned()),
        ..CodegraphArgs::default()
    }
}

#[track_caller]
fn assert_has(text: &str, wanted: &[&str]) {
    for w in wanted {
        assert!(text.contains(w), "expected {w:?} in:\n{text}");
    }
}

/// The Go checks, on a store holding the pair (`sdk_module`: the SDK's module path).
async fn check_go(store: &dyn GraphStore, sdk_module: &str) {
    let set = set(SDK_REPO, SDK_LABEL);
    let run = |a: CodegraphArgs| {
        let set = set.clone();
        async move { execute_set(Some(store), &set, &a).await }
    };
    let sdk = format!("{sdk_module}/client");

    // The app calls into the SDK: callees are labelled with the SDK's repository.
    let text = run(args("callees", "example.com/app/service.Fetch")).await;
    assert_has(
        &text,
        &[
            &format!("qname: acme/sdk:{sdk}.NewClient"),
            "file: acme/sdk:client/client.go:15",
            &format!("qname: acme/sdk:{sdk}.Client.Do"),
            "file: acme/sdk:client/client.go:20",
            "call site: service/service.go:21",
        ],
    );
    assert!(!text.contains("not indexed"), "{text}");

    // Callers of an SDK function: the app's call sites, with the app's bare paths.
    for call in [
        CodegraphArgs {
            repo: Some(SDK_LABEL.to_owned()),
            ..args("callers", &format!("{sdk}.NewClient"))
        },
        args("callers", &format!("acme/sdk:{sdk}.NewClient")),
        args("callers", &format!("{sdk}.NewClient")),
    ] {
        let text = run(call).await;
        assert_has(
            &text,
            &[
                &format!("Callers of acme/sdk:{sdk}.NewClient"),
                "qname: example.com/app/service.Fetch",
                "file: service/service.go:20",
                "call site: service/service.go:21",
            ],
        );
    }

    // An app type implements an SDK interface, and an SDK type an app interface.
    let text = run(args("implementations", &format!("acme/sdk:{sdk}.Doer"))).await;
    assert_has(
        &text,
        &[
            &format!("qname: acme/sdk:{sdk}.Client"),
            "qname: example.com/app/service.Local",
            "file: service/service.go:12",
            "method: example.com/app/service.Local.Do (service/service.go:15)",
        ],
    );
    let text = run(args("implementations", "example.com/app/service.Fetcher")).await;
    assert_has(
        &text,
        &[
            "qname: example.com/app/service.Local",
            &format!("qname: acme/sdk:{sdk}.Client"),
            "file: acme/sdk:client/client.go:10",
            &format!("method: acme/sdk:{sdk}.Client.Do (acme/sdk:client/client.go:20)"),
        ],
    );
    let text = run(args("implementations", "example.com/app/service.Local")).await;
    assert_has(
        &text,
        &[
            "qname: example.com/app/service.Fetcher",
            &format!("qname: acme/sdk:{sdk}.Doer"),
        ],
    );

    // Usages of an SDK type: the SDK's own, then the app's.
    let text = run(args("usages", &format!("acme/sdk:{sdk}.Client"))).await;
    assert_has(
        &text,
        &[
            &format!("acme/sdk:client/client.go:15  in acme/sdk:{sdk}.NewClient (function) [uses]"),
            "service/service.go:21  in example.com/app/service.Fetch (function) [uses]",
        ],
    );

    // A call through the SDK with the app's own type.
    let text = run(args("callers", &format!("{sdk}.Run"))).await;
    assert_has(&text, &["qname: example.com/app/service.Offline"]);

    // Search: the primary first, then the related repositories, labelled.
    let text = run(CodegraphArgs {
        operation: "search".to_owned(),
        name: Some("NewClient".to_owned()),
        ..CodegraphArgs::default()
    })
    .await;
    assert_has(
        &text,
        &[&format!(
            "acme/sdk:{sdk}.NewClient (acme/sdk:client/client.go:15)"
        )],
    );
    let text = run(CodegraphArgs {
        operation: "search".to_owned(),
        name: Some("Fetch".to_owned()),
        repo: Some(SDK_LABEL.to_owned()),
        ..CodegraphArgs::default()
    })
    .await;
    assert!(text.starts_with("No symbols found"), "{text}");
    let text = run(CodegraphArgs {
        operation: "search".to_owned(),
        name: Some("Do".to_owned()),
        kind: Some("method".to_owned()),
        repo: Some("acme/app".to_owned()),
        ..CodegraphArgs::default()
    })
    .await;
    assert_has(
        &text,
        &["example.com/app/service.Local.Do (service/service.go:15)"],
    );
    assert!(!text.contains("acme/sdk:"), "{text}");

    // A qname the graph it names does not have: suggestions from that graph, labelled.
    let text = run(args("callers", &format!("acme/sdk:{sdk}.NewClien"))).await;
    assert_has(
        &text,
        &[
            &format!("Symbol \"acme/sdk:{sdk}.NewClien\" not found"),
            &format!("  acme/sdk:{sdk}.NewClient\n"),
        ],
    );

    // A repository that is not related.
    let text = run(CodegraphArgs {
        repo: Some("acme/secret".to_owned()),
        ..args("callers", &format!("{sdk}.NewClient"))
    })
    .await;
    assert_eq!(
        text,
        "FAILED: repository \"acme/secret\" is not related to this issue; related repositories: acme/sdk"
    );

    // Without related repositories the app's graph answers alone, as before.
    let text = execute(
        Some(store),
        &GraphScope::latest(APP_REPO),
        &args("callees", "example.com/app/service.Fetch"),
    )
    .await;
    assert_has(
        &text,
        &[&format!("qname: {sdk}.NewClient"), "(not indexed)"],
    );
    assert!(!text.contains("acme/sdk:"), "{text}");
}

async fn load_go(store: &dyn GraphStore, fork: bool) {
    let dir = go_pair(fork);
    load(store, APP_REPO, "a1", &dir.path().join("app")).await;
    load(store, SDK_REPO, "s1", &dir.path().join("sdk")).await;
}

/// The Python checks, on a store holding the app and the library.
async fn check_python(store: &dyn GraphStore) {
    let set = set(LIB_REPO, LIB_LABEL);
    let run = |a: CodegraphArgs| {
        let set = set.clone();
        async move { execute_set(Some(store), &set, &a).await }
    };
    let text = run(args("callees", "app.main.run")).await;
    assert_has(
        &text,
        &[
            "qname: acme/lib:acmelib.client.connect",
            "file: acme/lib:acmelib/client.py:18",
            "qname: acme/lib:acmelib.client.Client.fetch",
            "call site: app/main.py:16",
        ],
    );
    let text = run(args("callers", "acme/lib:acmelib.client.connect")).await;
    assert_has(&text, &["qname: app.main.run", "call site: app/main.py:16"]);
    let text = run(args("implementations", "acme/lib:acmelib.client.Handler")).await;
    assert_has(&text, &["qname: app.main.MyHandler", "file: app/main.py:6"]);
    let text = run(args("implementations", "app.main.MyHandler")).await;
    assert_has(
        &text,
        &[
            "qname: acme/lib:acmelib.client.Handler",
            "file: acme/lib:acmelib/client.py:11",
        ],
    );
    let text = run(args("usages", "acme/lib:acmelib.client.Client")).await;
    assert_has(
        &text,
        &["app/main.py:14  in app.main.run (function) [calls]"],
    );

    // A name the library's package re-exports (`from acmelib import connect`).
    let text = run(args("callees", "app.short.quick")).await;
    assert_has(
        &text,
        &[
            "qname: acme/lib:acmelib.client.connect",
            "file: acme/lib:acmelib/client.py:18",
        ],
    );
    let text = run(args("callers", "acme/lib:acmelib.client.connect")).await;
    assert_has(
        &text,
        &[
            "qname: app.main.run",
            "qname: app.short.quick",
            "call site: app/short.py:7",
        ],
    );
    let text = run(args("usages", "acme/lib:acmelib.client.connect")).await;
    assert_has(
        &text,
        &["app/short.py:7  in app.short.quick (function) [calls]"],
    );
}

async fn load_python(store: &dyn GraphStore) {
    load(store, APP_REPO, "a1", &fixture("python/app")).await;
    load(store, LIB_REPO, "l1", &fixture("python/lib")).await;
}

#[tokio::test]
async fn go_pair_links_on_the_memory_store() {
    let store = MemoryStore::new();
    load_go(&store, false).await;
    check_go(&store, "example.com/sdk").await;
}

#[tokio::test]
async fn go_replace_links_to_the_fork_on_the_memory_store() {
    let store = MemoryStore::new();
    load_go(&store, true).await;
    check_go(&store, "example.com/sdk-fork").await;
}

#[tokio::test]
async fn python_pair_links_on_the_memory_store() {
    let store = MemoryStore::new();
    load_python(&store).await;
    check_python(&store).await;
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn pairs_link_on_postgres(pool: PgPool) {
    let store = PostgresStore::new(pool);
    load_go(&store, false).await;
    check_go(&store, "example.com/sdk").await;
    load_go(&store, true).await;
    check_go(&store, "example.com/sdk-fork").await;
    load_python(&store).await;
    check_python(&store).await;
}

/// An import of a module that no related repository provides stays external, and a qname that
/// only looks like a related one is not resolved there.
#[tokio::test]
async fn a_repository_that_is_not_related_is_not_searched() {
    let store = MemoryStore::new();
    load_go(&store, false).await;
    let unrelated = GraphSet {
        primary: GraphScope::latest(APP_REPO),
        related: Vec::new(),
    };
    let text = execute_set(
        Some(&store),
        &unrelated,
        &CodegraphArgs {
            repo: Some(SDK_LABEL.to_owned()),
            ..args("callers", "example.com/sdk/client.NewClient")
        },
    )
    .await;
    assert_eq!(
        text,
        "FAILED: repository \"acme/sdk\" is not related to this issue; this issue has no related repositories"
    );
    let text = execute_set(
        Some(&store),
        &unrelated,
        &args("callees", "example.com/app/service.Fetch"),
    )
    .await;
    assert!(!text.contains("acme/sdk:"), "{text}");
    // The refusal echoes a bounded part of what the model sent.
    let text = execute_set(
        Some(&store),
        &set(SDK_REPO, SDK_LABEL),
        &CodegraphArgs {
            repo: Some("x".repeat(100_000)),
            ..args("callers", "example.com/sdk/client.NewClient")
        },
    )
    .await;
    assert!(text.starts_with("FAILED: repository \"xxx"), "{text}");
    assert!(text.len() < 400, "{}", text.len());
}

/// Output stays bounded across repositories: 60 app functions calling one SDK function list 50.
#[tokio::test]
async fn cross_repository_output_is_bounded() {
    let dir = go_pair(false);
    let mut body = String::from("package many\n\nimport \"example.com/sdk/client\"\n");
    for i in 0..60 {
        body.push_str(&format!(
            "\nfunc Call{i}() {{\n\tclient.NewClient(\"x\")\n}}\n"
        ));
    }
    std::fs::create_dir_all(dir.path().join("app/many")).expect("mkdir");
    std::fs::write(dir.path().join("app/many/many.go"), body).expect("write");
    let store = MemoryStore::new();
    load(&store, APP_REPO, "a1", &dir.path().join("app")).await;
    load(&store, SDK_REPO, "s1", &dir.path().join("sdk")).await;
    let set = set(SDK_REPO, SDK_LABEL);
    let text = execute_set(
        Some(&store),
        &set,
        &args("callers", "acme/sdk:example.com/sdk/client.NewClient"),
    )
    .await;
    assert!(text.contains("- 61 results:"), "{text}");
    assert!(
        text.contains("Showing the first 50 of 61 results"),
        "{text}"
    );
    assert_eq!(text.matches("    qname: ").count(), 50, "{text}");
    let text = execute_set(
        Some(&store),
        &set,
        &CodegraphArgs {
            operation: "usages".to_owned(),
            ..args("usages", "acme/sdk:example.com/sdk/client.NewClient")
        },
    )
    .await;
    assert!(text.contains("- 61 results:"), "{text}");
    let text = execute_set(
        Some(&store),
        &set,
        &CodegraphArgs {
            operation: "search".to_owned(),
            name: Some("*".to_owned()),
            ..CodegraphArgs::default()
        },
    )
    .await;
    assert!(text.contains("Showing 10 of"), "{text}");
}

/// What a checkout offers for linking, and what it depends on (the worker's suggestions).
#[test]
fn link_names_and_suggested_dependencies_come_from_the_manifests() {
    use relay_codegraph::related::{GoReplace, ReplaceTarget, link_names, suggested_dependencies};

    let sdk = link_names(&fixture("go/sdk"));
    assert_eq!(sdk.go_module.as_deref(), Some("example.com/sdk"));
    assert!(sdk.go_replaces.is_empty() && sdk.python_packages.is_empty());

    let dir = go_pair(true);
    std::fs::write(
        dir.path().join("app/go.mod"),
        "module example.com/app\n\nrequire (\n\texample.com/sdk v1.0.0 // indirect\n\tgolang.org/x/sync v0.1.0\n)\n\n\
         replace (\n\texample.com/sdk => example.com/sdk-fork v1.2.0\n\texample.com/proto v1.0.0 => ../proto\n)\n",
    )
    .expect("go.mod");
    let app = link_names(&dir.path().join("app"));
    assert_eq!(app.go_module.as_deref(), Some("example.com/app"));
    assert_eq!(
        app.go_replaces,
        vec![
            GoReplace {
                module: "example.com/sdk".to_owned(),
                target: ReplaceTarget::Module {
                    path: "example.com/sdk-fork".to_owned(),
                    version: Some("v1.2.0".to_owned()),
                },
            },
            GoReplace {
                module: "example.com/proto".to_owned(),
                target: ReplaceTarget::Local {
                    dir: "../proto".to_owned(),
                },
            },
        ]
    );
    assert_eq!(
        suggested_dependencies(&dir.path().join("app")),
        [
            "example.com/proto",
            "example.com/sdk",
            "example.com/sdk-fork",
            "golang.org/x/sync"
        ]
    );

    let lib = link_names(&fixture("python/lib"));
    assert_eq!(lib.go_module, None);
    assert_eq!(lib.python_packages, ["acme_lib", "acmelib"]);
    assert_eq!(
        suggested_dependencies(&fixture("python/app")),
        [
            "acme-lib",
            "click",
            "https://github.com/acme/lib.git",
            "requests"
        ]
    );
}

/// The agent learns the related repositories from the tool description and the `repo` argument
/// from the schema; JSON arguments go through the same path.
#[tokio::test]
async fn the_tool_names_the_related_repositories() {
    use relay_codegraph::ops::{
        TOOL_DESCRIPTION, execute_set_json, tool_definition, tool_description,
    };

    let pair = set(SDK_REPO, SDK_LABEL);
    let description = tool_description(&pair);
    assert!(description.starts_with(TOOL_DESCRIPTION.as_str()));
    assert!(
        description.contains("Related repositories: acme/sdk."),
        "{description}"
    );
    assert_eq!(
        tool_description(&GraphSet::single(GraphScope::latest(APP_REPO))),
        *TOOL_DESCRIPTION
    );
    let (_, _, schema) = tool_definition();
    assert_eq!(
        schema["properties"]["repo"]["type"],
        serde_json::json!(["string", "null"])
    );

    let store = MemoryStore::new();
    load_go(&store, false).await;
    let text = execute_set_json(
        Some(&store),
        &pair,
        &serde_json::json!({"operation": "callers", "qname": "example.com/sdk/client.NewClient", "repo": "acme/sdk"}),
    )
    .await;
    assert!(
        text.contains("qname: example.com/app/service.Fetch"),
        "{text}"
    );
    let text = execute_set_json(Some(&store), &pair, &serde_json::json!({"operation": 3})).await;
    assert!(
        text.starts_with("Invalid arguments for codegraph"),
        "{text}"
    );
}

/// A related repository that is not indexed (yet) is left out, unless `repo` names it.
#[tokio::test]
async fn a_related_repository_that_is_not_indexed_is_left_out() {
    let dir = go_pair(false);
    let store = MemoryStore::new();
    load(&store, APP_REPO, "a1", &dir.path().join("app")).await;
    let pair = set(SDK_REPO, SDK_LABEL);
    let text = execute_set(
        Some(&store),
        &pair,
        &args("callees", "example.com/app/service.Fetch"),
    )
    .await;
    assert_has(
        &text,
        &["qname: example.com/sdk/client.NewClient", "(not indexed)"],
    );
    let text = execute_set(
        Some(&store),
        &pair,
        &CodegraphArgs {
            operation: "search".to_owned(),
            name: Some("NewClient".to_owned()),
            repo: Some(SDK_LABEL.to_owned()),
            ..CodegraphArgs::default()
        },
    )
    .await;
    assert!(
        text.starts_with("No code graph has been indexed for repository github/acme/sdk."),
        "{text}"
    );
}

/// A library in a `src/` layout declares `src.acmelib.…`; the app imports `acmelib.…`.
#[tokio::test]
async fn a_python_library_in_a_src_layout_links() {
    let dir = tempfile::tempdir().expect("tempdir");
    let lib = dir.path().join("lib");
    copy_dir(&fixture("python/lib/acmelib"), &lib.join("src/acmelib"));
    std::fs::copy(
        fixture("python/lib/pyproject.toml"),
        lib.join("pyproject.toml"),
    )
    .expect("copy");
    let store = MemoryStore::new();
    load(&store, APP_REPO, "a1", &fixture("python/app")).await;
    load(&store, LIB_REPO, "l1", &lib).await;
    let pair = set(LIB_REPO, LIB_LABEL);
    let run = |a: CodegraphArgs| {
        let pair = pair.clone();
        let store = &store;
        async move { execute_set(Some(store), &pair, &a).await }
    };
    for caller in ["app.main.run", "app.short.quick"] {
        let text = run(args("callees", caller)).await;
        assert_has(
            &text,
            &[
                "qname: acme/lib:src.acmelib.client.connect",
                "file: acme/lib:src/acmelib/client.py:18",
            ],
        );
    }
    let text = run(args("callers", "acme/lib:src.acmelib.client.connect")).await;
    assert_has(&text, &["qname: app.main.run", "qname: app.short.quick"]);
    let text = run(args(
        "implementations",
        "acme/lib:src.acmelib.client.Handler",
    ))
    .await;
    assert_has(&text, &["qname: app.main.MyHandler"]);
    let text = run(args("implementations", "app.main.MyHandler")).await;
    assert_has(&text, &["qname: acme/lib:src.acmelib.client.Handler"]);
    assert_eq!(
        relay_codegraph::related::link_names(&lib).python_packages,
        ["acme_lib", "acmelib"]
    );
}
