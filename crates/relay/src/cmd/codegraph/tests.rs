//! `relay codegraph` against a real checkout: indexing, the JSON cache of a clean git checkout,
//! text and JSON output, and the Postgres backend reusing a stored snapshot.

use std::path::Path;
use std::process::Command;

use super::checkout::{CliRequest, OutputFormat, run_cli};
use relay_codegraph::ops::CodegraphArgs;
use relay_codegraph::store::{CodegraphSettings, StoreBackend};
use sqlx::PgPool;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "go.mod", "module example.com/app\n\ngo 1.22\n");
    write(
        dir.path(),
        "greet/greet.go",
        "package greet\n\n// Hello greets.\nfunc Hello(name string) string {\n\treturn prefix() + name\n}\n\nfunc prefix() string { return \"hi \" }\n",
    );
    write(
        dir.path(),
        "main.go",
        "package main\n\nimport \"example.com/app/greet\"\n\nfunc main() {\n\tprintln(greet.Hello(\"x\"))\n}\n",
    );
    dir
}

fn git(root: &Path, args: &[&str]) {
    let status = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn request(repo: &Path, format: OutputFormat, args: serde_json::Value) -> CliRequest {
    CliRequest {
        repo: repo.to_owned(),
        format,
        args: serde_json::from_value::<CodegraphArgs>(args).unwrap(),
        cache_dir: None,
    }
}

fn cached(repo: &Path, cache: &Path, format: OutputFormat, args: serde_json::Value) -> CliRequest {
    CliRequest {
        cache_dir: Some(cache.to_owned()),
        ..request(repo, format, args)
    }
}

#[tokio::test]
async fn memory_backend_indexes_and_caches_a_clean_checkout() {
    let cache_root = tempfile::tempdir().unwrap();
    let cache = cache_root.path().join("codegraph");
    let repo = checkout();
    let settings = CodegraphSettings::default();

    // Not a git repository: indexed, never cached.
    let out = run_cli(
        &cached(
            repo.path(),
            &cache,
            OutputFormat::Text,
            serde_json::json!({"operation": "search", "name": "hello"}),
        ),
        &settings,
        None,
    )
    .await
    .unwrap();
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.starts_with(
            "Found 1 symbol matching \"hello\":\n\n  example.com/app/greet.Hello (greet/greet.go:4)"
        ),
        "{}",
        out.text
    );
    assert!(!cache.exists(), "a checkout outside git is not cached");

    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "init"]);
    let out = run_cli(
        &cached(repo.path(), &cache, OutputFormat::Json, serde_json::json!({"operation": "callers", "qname": "example.com/app/greet.prefix", "depth": 2})),
        &settings,
        None,
    )
    .await
    .unwrap();
    let value: serde_json::Value = serde_json::from_str(&out.text).unwrap();
    assert_eq!(value["result"], "calls", "{}", out.text);
    assert_eq!(
        value["results"][0]["qname"], "example.com/app/greet.Hello",
        "{}",
        out.text
    );
    let entries: Vec<_> = std::fs::read_dir(&cache).unwrap().collect();
    assert_eq!(entries.len(), 1, "a clean checkout is cached");

    // The next run on the clean checkout reads the cache instead of indexing: prove it with a marker.
    let cache_file = entries[0].as_ref().unwrap().path();
    let mut graph: relay_codegraph::model::Graph =
        serde_json::from_slice(&std::fs::read(&cache_file).unwrap()).unwrap();
    let mut marker = graph.symbols[0].clone();
    marker.qname = "example.com/app/greet.CacheMarker".into();
    marker.name = "CacheMarker".into();
    graph.symbols.push(marker);
    std::fs::write(&cache_file, serde_json::to_vec(&graph).unwrap()).unwrap();
    let out = run_cli(
        &cached(
            repo.path(),
            &cache,
            OutputFormat::Text,
            serde_json::json!({"operation": "search", "name": "cachemarker"}),
        ),
        &settings,
        None,
    )
    .await
    .unwrap();
    assert!(out.text.starts_with("Found 1 symbol"), "{}", out.text);

    // A dirty checkout is re-indexed (the new function is found).
    write(
        repo.path(),
        "greet/bye.go",
        "package greet\n\nfunc Bye() {}\n",
    );
    let out = run_cli(
        &cached(
            repo.path(),
            &cache,
            OutputFormat::Text,
            serde_json::json!({"operation": "search", "name": "bye"}),
        ),
        &settings,
        None,
    )
    .await
    .unwrap();
    assert!(
        out.text.contains("example.com/app/greet.Bye"),
        "{}",
        out.text
    );

    let out = run_cli(
        &cached(
            repo.path(),
            &cache,
            OutputFormat::Text,
            serde_json::json!({"operation": "callers"}),
        ),
        &settings,
        None,
    )
    .await
    .unwrap();
    assert!(out.is_error);
    assert!(out.text.starts_with("qname parameter required for callers"));

    let missing = run_cli(
        &cached(
            &repo.path().join("nope"),
            &cache,
            OutputFormat::Text,
            serde_json::json!({"operation": "search", "name": "x"}),
        ),
        &settings,
        None,
    )
    .await
    .unwrap_err();
    assert!(
        missing.to_string().contains("is not accessible"),
        "{missing}"
    );
}

#[sqlx::test(migrator = "relay_store::MIGRATOR")]
async fn postgres_backend_stores_the_checkout(pool: PgPool) {
    let repo = checkout();
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "init"]);
    let settings = CodegraphSettings {
        backend: StoreBackend::Postgres,
        ..CodegraphSettings::default()
    };
    let args = serde_json::json!({"operation": "callees", "qname": "example.com/app/greet.Hello"});
    let first = run_cli(
        &request(repo.path(), OutputFormat::Text, args.clone()),
        &settings,
        Some(pool.clone()),
    )
    .await
    .unwrap();
    assert!(
        first
            .text
            .starts_with("Callees of example.com/app/greet.Hello (depth 1) - 1 result:"),
        "{}",
        first.text
    );
    let second = run_cli(
        &request(repo.path(), OutputFormat::Text, args),
        &settings,
        Some(pool.clone()),
    )
    .await
    .unwrap();
    assert_eq!(first, second);
    let snapshots: i64 = sqlx::query_scalar("SELECT count(*) FROM codegraph_snapshots")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(snapshots, 1);

    let no_pool = run_cli(
        &request(
            repo.path(),
            OutputFormat::Text,
            serde_json::json!({"operation": "search", "name": "x"}),
        ),
        &settings,
        None,
    )
    .await
    .unwrap_err();
    assert!(
        no_pool
            .to_string()
            .contains("needs a database connection pool"),
        "{no_pool}"
    );
}
