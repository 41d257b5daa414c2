//! What `relay explore` and `relay analyze` tests share: the binary run with a key in its
//! environment, a one-file Go checkout, and a configuration whose `[llm.default]` points nowhere
//! useful (so the tests prove the flags override it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The environment variable the tests' `--api-key-env` names, and its value.
pub const KEY_ENV: &str = "RELAY_TEST_LLM_KEY";
pub const KEY: &str = "sk-from-env";

/// Runs `relay --config CONFIG ARGS…` without `DATABASE_URL`, with [`KEY_ENV`] set.
pub async fn relay(args: Vec<String>, config: PathBuf) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_relay"))
            .arg("--config")
            .arg(config)
            .args(args)
            .env_remove("DATABASE_URL")
            .env("RUST_LOG", "error")
            .env(KEY_ENV, KEY)
            .output()
            .expect("relay runs")
    })
    .await
    .unwrap()
}

/// `app.go`: `Run` (lines 4-6) calls `start` (lines 8-10).
pub fn checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("go.mod"), "module example.com/app\n").unwrap();
    std::fs::write(
        dir.path().join("app.go"),
        "package app\n\n// Run starts the app.\nfunc Run() error {\n\treturn start()\n}\n\nfunc start() error {\n\treturn nil\n}\n",
    )
    .unwrap();
    dir
}

/// `[llm.default]` unreachable, `[llm.explore]` naming `explore-model`.
pub fn config(dir: &Path) -> PathBuf {
    let path = dir.join("relay.toml");
    std::fs::write(
        &path,
        "[llm.default]\nprovider = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"default-model\"\napi_key = \"sk-config\"\nmax_retries = 0\n\n[llm.explore]\nmodel = \"explore-model\"\n",
    )
    .unwrap();
    path
}

/// `COMMAND --repo REPO --base-url URL --api-key-env KEY_ENV EXTRA… QUESTION`.
pub fn args(
    command: &str,
    repo: &Path,
    base_url: &str,
    extra: &[&str],
    question: &str,
) -> Vec<String> {
    let mut args: Vec<String> = vec![
        command.into(),
        "--repo".into(),
        repo.display().to_string(),
        "--base-url".into(),
        base_url.into(),
        "--api-key-env".into(),
        KEY_ENV.into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    args.push(question.into());
    args
}
