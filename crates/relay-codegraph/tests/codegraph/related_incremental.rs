//! Related repositories stay independent snapshots: after incremental updates of either side
//! (`Indexer::update` + `GraphStore::apply_delta`, as the worker's reindex does), the
//! cross-repository answers and the exports equal those of a full index of both.

use std::path::PathBuf;

use relay_codegraph::index::{IndexOptions, Indexer, index_repository};
use relay_codegraph::ops::{CodegraphArgs, execute_set};
use relay_codegraph::store::memory::MemoryStore;
use relay_codegraph::store::postgres::PostgresStore;
use relay_codegraph::store::{GraphStore, Snapshot};
use sqlx::PgPool;

use crate::related::{
    APP_REPO, LIB_LABEL, LIB_REPO, SDK_LABEL, SDK_REPO, args, copy_dir, edit, fixture, go_pair, set,
};

/// One side of the pair, indexed incrementally into `store`.
struct Side {
    repo: &'static str,
    root: PathBuf,
    indexer: Indexer,
    commit: u32,
}

impl Side {
    async fn new(store: &dyn GraphStore, repo: &'static str, root: PathBuf) -> Side {
        let indexer = Indexer::full(&root).expect("full index");
        store
            .replace_graph(repo, "c0", &indexer.graph())
            .await
            .expect("store");
        Side {
            repo,
            root,
            indexer,
            commit: 0,
        }
    }

    /// Re-indexes the changed files and moves the stored snapshot to the next commit.
    async fn update(&mut self, store: &dyn GraphStore, changed: &[&str]) {
        let paths: Vec<PathBuf> = changed.iter().map(|c| self.root.join(c)).collect();
        let delta = self.indexer.update(&paths).expect("update");
        let from = format!("c{}", self.commit);
        self.commit += 1;
        let to = format!("c{}", self.commit);
        store
            .apply_delta(self.repo, &from, &to, &delta)
            .await
            .expect("apply delta");
    }

    fn commit(&self) -> String {
        format!("c{}", self.commit)
    }
}

/// Indexes both sides from scratch into a fresh memory store, at the same commits.
async fn full_of_both(app: &Side, other: &Side) -> MemoryStore {
    let store = MemoryStore::new();
    for side in [app, other] {
        let graph = index_repository(&side.root, &IndexOptions::default())
            .expect("full index")
            .graph;
        store
            .replace_graph(side.repo, &side.commit(), &graph)
            .await
            .expect("store");
    }
    store
}

/// The cross-repository answers and the exports of `store` equal those of a full index of both.
async fn assert_equals_full(
    store: &dyn GraphStore,
    app: &Side,
    other: &Side,
    label: &str,
    queries: &[CodegraphArgs],
    what: &str,
) {
    let full = full_of_both(app, other).await;
    let set = set(other.repo, label);
    for query in queries {
        let incremental = execute_set(Some(store), &set, query).await;
        let expected = execute_set(Some(&full), &set, query).await;
        assert_eq!(incremental, expected, "{what}: {query:?}");
    }
    for side in [app, other] {
        let snapshot = Snapshot::new(side.repo, side.commit());
        assert_eq!(
            store.export(&snapshot).await.expect("export"),
            full.export(&snapshot).await.expect("export"),
            "{what}: export of {}",
            side.repo
        );
    }
}

fn go_queries() -> Vec<CodegraphArgs> {
    let mut queries = vec![
        args("callees", "example.com/app/service.Fetch"),
        args("callers", "acme/sdk:example.com/sdk/client.NewClient"),
        args("callers", "acme/sdk:example.com/sdk/client.New"),
        args("callers", "acme/sdk:example.com/sdk/client.Client.Close"),
        args("implementations", "acme/sdk:example.com/sdk/client.Doer"),
        args("implementations", "example.com/app/service.Fetcher"),
        args("implementations", "example.com/app/service.Local"),
        args("usages", "acme/sdk:example.com/sdk/client.Client"),
    ];
    queries.push(CodegraphArgs {
        operation: "search".to_owned(),
        name: Some("*".to_owned()),
        ..CodegraphArgs::default()
    });
    queries
}

async fn go_series(store: &dyn GraphStore) {
    let dir = go_pair(false);
    let mut app = Side::new(store, APP_REPO, dir.path().join("app")).await;
    let mut sdk = Side::new(store, SDK_REPO, dir.path().join("sdk")).await;
    let queries = go_queries();
    assert_equals_full(store, &app, &sdk, SDK_LABEL, &queries, "initial").await;

    // The SDK's interface grows a method: the app's Local no longer implements it.
    edit(
        &sdk.root,
        "client/client.go",
        "\tDo(req string) (string, error)\n}",
        "\tDo(req string) (string, error)\n\tClose() error\n}\n\n// Close releases the client.\nfunc (c *Client) Close() error {\n\treturn nil\n}",
    );
    sdk.update(store, &["client/client.go"]).await;
    assert_equals_full(store, &app, &sdk, SDK_LABEL, &queries, "sdk: Doer.Close").await;
    let text = execute_set(
        Some(store),
        &set(SDK_REPO, SDK_LABEL),
        &args("implementations", "acme/sdk:example.com/sdk/client.Doer"),
    )
    .await;
    assert!(!text.contains("example.com/app/service.Local"), "{text}");

    // The app catches up (a body-only edit, then a new method) and calls Close.
    edit(
        &app.root,
        "service/service.go",
        "\treturn c.Do(req)",
        "\tdefer c.Close()\n\treturn c.Do(req)",
    );
    app.update(store, &["service/service.go"]).await;
    assert_equals_full(store, &app, &sdk, SDK_LABEL, &queries, "app: calls Close").await;
    edit(
        &app.root,
        "service/service.go",
        "// Fetch calls",
        "// Close releases nothing.\nfunc (l Local) Close() error {\n\treturn nil\n}\n\n// Fetch calls",
    );
    app.update(store, &["service/service.go"]).await;
    assert_equals_full(store, &app, &sdk, SDK_LABEL, &queries, "app: Local.Close").await;
    let text = execute_set(
        Some(store),
        &set(SDK_REPO, SDK_LABEL),
        &args("implementations", "acme/sdk:example.com/sdk/client.Doer"),
    )
    .await;
    assert!(
        text.contains("qname: example.com/app/service.Local"),
        "{text}"
    );

    // The SDK renames its constructor: the app's call no longer reaches a symbol.
    edit(
        &sdk.root,
        "client/client.go",
        "func NewClient(",
        "func New(",
    );
    sdk.update(store, &["client/client.go"]).await;
    assert_equals_full(store, &app, &sdk, SDK_LABEL, &queries, "sdk: rename").await;

    // The app's go.mod replaces the SDK with a fork nobody indexed: the links go away.
    std::fs::write(
        app.root.join("go.mod"),
        "module example.com/app\n\nrequire example.com/sdk v1.0.0\n\nreplace example.com/sdk => example.com/other v1.0.0\n",
    )
    .expect("go.mod");
    app.update(store, &["go.mod"]).await;
    assert_equals_full(store, &app, &sdk, SDK_LABEL, &queries, "app: replace").await;
    let text = execute_set(
        Some(store),
        &set(SDK_REPO, SDK_LABEL),
        &args("callees", "example.com/app/service.Fetch"),
    )
    .await;
    assert!(
        text.contains("qname: example.com/other/client.Client.Do"),
        "{text}"
    );
    assert!(!text.contains("acme/sdk:"), "{text}");
}

async fn python_series(store: &dyn GraphStore) {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture("python/app"), &dir.path().join("app"));
    copy_dir(&fixture("python/lib"), &dir.path().join("lib"));
    let mut app = Side::new(store, APP_REPO, dir.path().join("app")).await;
    let mut lib = Side::new(store, LIB_REPO, dir.path().join("lib")).await;
    let queries = vec![
        args("callees", "app.main.run"),
        args("callers", "acme/lib:acmelib.client.connect"),
        args("callers", "acme/lib:acmelib.client.open"),
        args("implementations", "acme/lib:acmelib.client.Handler"),
        args("implementations", "app.main.MyHandler"),
        args("usages", "acme/lib:acmelib.client.Client"),
        args("callees", "app.short.quick"),
        args("usages", "acme/lib:acmelib.client.open"),
    ];
    assert_equals_full(store, &app, &lib, LIB_LABEL, &queries, "initial").await;
    edit(&lib.root, "acmelib/client.py", "def connect(", "def open(");
    lib.update(store, &["acmelib/client.py"]).await;
    assert_equals_full(store, &app, &lib, LIB_LABEL, &queries, "lib: rename").await;
    // The package re-exports the new name; the app's short import follows.
    edit(
        &lib.root,
        "acmelib/__init__.py",
        "Client, connect",
        "Client, open",
    );
    lib.update(store, &["acmelib/__init__.py"]).await;
    assert_equals_full(store, &app, &lib, LIB_LABEL, &queries, "lib: re-export").await;
    edit(
        &app.root,
        "app/short.py",
        "from acmelib import connect",
        "from acmelib import open as connect",
    );
    app.update(store, &["app/short.py"]).await;
    assert_equals_full(store, &app, &lib, LIB_LABEL, &queries, "app: short import").await;
    let text = execute_set(
        Some(store),
        &set(LIB_REPO, LIB_LABEL),
        &args("callees", "app.short.quick"),
    )
    .await;
    assert!(
        text.contains("qname: acme/lib:acmelib.client.open"),
        "{text}"
    );
    edit(
        &app.root,
        "app/main.py",
        "from acmelib.client import Client, Handler, connect",
        "from acmelib.client import Client, Handler, open as connect",
    );
    app.update(store, &["app/main.py"]).await;
    assert_equals_full(store, &app, &lib, LIB_LABEL, &queries, "app: import").await;
    let text = execute_set(
        Some(store),
        &set(LIB_REPO, LIB_LABEL),
        &args("callers", "acme/lib:acmelib.client.open"),
    )
    .await;
    assert!(text.contains("qname: app.main.run"), "{text}");
}

#[tokio::test]
async fn go_updates_of_either_side_equal_a_full_index_on_memory() {
    go_series(&MemoryStore::new()).await;
}

#[tokio::test]
async fn python_updates_of_either_side_equal_a_full_index_on_memory() {
    python_series(&MemoryStore::new()).await;
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn updates_of_either_side_equal_a_full_index_on_postgres(pool: PgPool) {
    let store = PostgresStore::new(pool);
    go_series(&store).await;
    python_series(&store).await;
}
