use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn write(text: &str) -> tempfile::NamedTempFile {
    use std::io::Write;
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file
}

const EXAMPLE: &str = r#"
[server]
listen = "127.0.0.1:8080"
[database]
url = "postgres://postgres@127.0.0.1:5432/relay"
[[trackers]]
name = "github"
provider = "github"
base_url = "https://api.github.com"
token = "ghp_secret"
webhook_secret = "hook-secret-0123456"
bot_username = "relay-bot"
trigger_labels = ["relay"]
[[trackers]]
name = "gitlab"
provider = "gitlab"
base_url = "https://gitlab.example.com"
token = "glpat-secret"
webhook_secret = "gl-secret-0123456789"
bot_username = "relay"
[worker]
concurrency = 4
"#;

#[test]
fn defaults_alone_are_valid() {
    let loaded = load_with(None, &[]).unwrap();
    assert_eq!(loaded.settings.server.listen.to_string(), "127.0.0.1:8080");
    assert_eq!(loaded.settings.worker.concurrency, 4);
    assert_eq!(loaded.settings.retention.delivery_payload_days, 14);
    assert_eq!(loaded.settings.retention.snapshots_per_repository, 3);
    assert_eq!(loaded.settings.server.max_connections, 1024);
    assert_eq!(loaded.settings.server.header_read_timeout_ms, 10_000);
    assert!(loaded.settings.trackers.is_empty());
    // The admin endpoints are off the public listener unless the operator says otherwise.
    assert_eq!(
        loaded.settings.server.admin_listen,
        Some("127.0.0.1:9090".parse().unwrap())
    );
    for off in ["off", ""] {
        let loaded = load_with(None, &env(&[("RELAY__SERVER__ADMIN_LISTEN", off)])).unwrap();
        assert_eq!(loaded.settings.server.admin_listen, None, "{off:?}");
    }
}

#[test]
fn the_documented_shape_loads() {
    let file = write(EXAMPLE);
    let loaded = load_with(Some(file.path()), &[]).unwrap();
    assert_eq!(loaded.settings.trackers.len(), 2);
    assert_eq!(
        loaded.settings.trackers[1].provider,
        relay_core::Provider::GitLab
    );
    assert_eq!(loaded.settings.trackers[0].trigger_labels, vec!["relay"]);
}

#[test]
fn environment_overrides_every_layer() {
    let file = write(EXAMPLE);
    let loaded = load_with(
        Some(file.path()),
        &env(&[
            ("RELAY__SERVER__LISTEN", "0.0.0.0:9000"),
            ("RELAY__WORKER__CONCURRENCY", "9"),
            ("RELAY__TRACKERS__GITHUB__TOKEN", "12345"),
            ("RELAY__TRACKERS__1__BOT_USERNAME", "other-bot"),
            ("DATABASE_URL", "postgres://u:pw@db:5432/x"),
        ]),
    )
    .unwrap();
    let settings = loaded.settings;
    assert_eq!(settings.server.listen.to_string(), "0.0.0.0:9000");
    assert_eq!(settings.worker.concurrency, 9);
    use secrecy::ExposeSecret;
    // A numeric-looking token stays a string.
    assert_eq!(settings.trackers[0].token.expose_secret(), "12345");
    assert_eq!(settings.trackers[1].bot_username, "other-bot");
    assert_eq!(
        settings.database.url.expose_secret(),
        "postgres://u:pw@db:5432/x"
    );
}

#[test]
fn errors_name_the_key() {
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
    let cases: &[Case<'_>] = &[
        (
            EXAMPLE,
            &[("RELAY__WORKER__CONCURRENCY", "many")],
            "worker.concurrency",
        ),
        (
            EXAMPLE,
            &[("RELAY__SERVER__LISTEN", "not an address")],
            "server.listen",
        ),
        (
            EXAMPLE,
            &[("RELAY__TRACKERS__NOPE__TOKEN", "x")],
            "trackers.nope.token",
        ),
        (
            EXAMPLE,
            &[("RELAY__TRACKERS__0__WEBHOOK_SECRET", "")],
            "trackers[0].webhook_secret",
        ),
        // Guessable: shorter than 16 characters.
        (
            EXAMPLE,
            &[("RELAY__TRACKERS__1__WEBHOOK_SECRET", "gl-secret")],
            "trackers[1].webhook_secret",
        ),
        (
            EXAMPLE,
            &[("RELAY__TRACKERS__1__NAME", "github")],
            "trackers[1].name",
        ),
        (
            EXAMPLE,
            &[("RELAY__TRACKERS__0__PROVIDER", "jira")],
            "trackers[0].provider",
        ),
        (
            EXAMPLE,
            &[("RELAY__WORKER__CONCURRENCY", "0")],
            "worker.concurrency",
        ),
        (EXAMPLE, &[("RELAY__SERVER__UNKNOWN_KEY", "1")], "server"),
        // Guessable: shorter than 32 characters.
        (
            EXAMPLE,
            &[("RELAY__API__TOKEN", "0123456789abcdef0123456789abcde")],
            "api.token",
        ),
        (
            EXAMPLE,
            &[("RELAY__SERVER__ADMIN_LISTEN", "127.0.0.1:8080")],
            "server.admin_listen",
        ),
        (
            EXAMPLE,
            &[("RELAY__SERVER__TRUSTED_PROXIES", "[\"10.0.0.0/33\"]")],
            "server.trusted_proxies",
        ),
        (EXAMPLE, &[("DATABASE_URL", "mysql:/nope")], "database.url"),
    ];
    for (text, vars, key) in cases {
        let file = write(text);
        let error = match load_with(Some(file.path()), &env(vars)) {
            Ok(_) => panic!("{vars:?} should fail"),
            Err(e) => e.to_string(),
        };
        assert!(error.contains(&format!("`{key}`")), "{vars:?}: {error}");
    }
    let missing = write("[[trackers]]\nname = \"github\"\nprovider = \"github\"\n");
    let error = load_with(Some(missing.path()), &[])
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("trackers[0]") && error.contains("base_url"),
        "{error}"
    );
}

#[test]
fn a_short_api_token_is_refused_without_showing_it() {
    let file = write(EXAMPLE);
    let error = load_with(Some(file.path()), &env(&[("RELAY__API__TOKEN", "hunter2")]))
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("at least 32 characters"), "{error}");
    assert!(!error.contains("hunter2"), "{error}");
    let long = "a".repeat(32);
    let loaded = load_with(Some(file.path()), &env(&[("RELAY__API__TOKEN", &long)])).unwrap();
    assert!(loaded.settings.api.token.is_some());
}

/// The ArangoDB password belongs in `password`: in the URL it would reach every HTTP error text,
/// the log and `/readyz`. Such a URL stops Relay at start-up, without repeating the password.
#[test]
fn an_arangodb_url_with_a_password_is_refused_without_showing_it() {
    let file = write(EXAMPLE);
    let error = load_with(
        Some(file.path()),
        &env(&[(
            "RELAY__CODEGRAPH__ARANGODB__URL",
            "http://root:Arango-Pw-7731@127.0.0.1:1",
        )]),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(error.contains("`codegraph.arangodb.url`"), "{error}");
    assert!(!error.contains("Arango-Pw-7731"), "{error}");
}

#[test]
fn the_listener_limits_load_from_the_environment() {
    let file = write(EXAMPLE);
    let loaded = load_with(
        Some(file.path()),
        &env(&[
            ("RELAY__SERVER__ADMIN_LISTEN", "127.0.0.1:9090"),
            (
                "RELAY__SERVER__TRUSTED_PROXIES",
                "[\"10.0.0.0/8\", \"::1\"]",
            ),
            ("RELAY__SERVER__MAX_CONNECTIONS_PER_CLIENT", "4"),
        ]),
    )
    .unwrap();
    let server = &loaded.settings.server;
    assert_eq!(server.admin_listen, Some("127.0.0.1:9090".parse().unwrap()));
    assert!(server.trusted_proxies.contains("10.1.2.3".parse().unwrap()));
    assert!(server.trusted_proxies.contains("::1".parse().unwrap()));
    assert!(
        !server
            .trusted_proxies
            .contains("192.0.2.1".parse().unwrap())
    );
    assert_eq!(server.max_connections_per_client, 4);
    assert_eq!(server.body_limit_bytes, 1024 * 1024);
}

#[test]
fn a_missing_file_and_bad_toml_are_reported() {
    let error = load_with(Some(Path::new("/nonexistent/relay.toml")), &[])
        .err()
        .unwrap();
    assert!(error.to_string().contains("/nonexistent/relay.toml"));
    let bad = write("[server\n");
    assert!(matches!(
        load_with(Some(bad.path()), &[]),
        Err(ConfigError::Syntax { .. })
    ));
}

#[test]
fn secrets_are_redacted_everywhere() {
    let file = write(EXAMPLE);
    let loaded = load_with(
        Some(file.path()),
        &env(&[("DATABASE_URL", "postgres://u:pw@db/x")]),
    )
    .unwrap();
    let printed = toml::to_string_pretty(&redacted(&loaded.document)).unwrap();
    for secret in [
        "ghp_secret",
        "hook-secret-0123456",
        "glpat-secret",
        "gl-secret-0123456789",
        "pw@",
    ] {
        assert!(!printed.contains(secret), "{secret} leaked:\n{printed}");
    }
    assert!(printed.contains("postgres://u:[REDACTED]@db/x"));
    let debug = format!("{:?}", loaded.settings);
    for secret in [
        "ghp_secret",
        "hook-secret-0123456",
        "glpat-secret",
        "gl-secret-0123456789",
        ":pw@",
    ] {
        assert!(!debug.contains(secret), "{secret} leaked in Debug: {debug}");
    }
}

#[test]
fn trackers_can_come_entirely_from_the_environment() {
    let loaded = load_with(
        None,
        &env(&[
            ("RELAY__TRACKERS__0__NAME", "github"),
            ("RELAY__TRACKERS__0__PROVIDER", "github"),
            ("RELAY__TRACKERS__0__BASE_URL", "https://api.github.com"),
            ("RELAY__TRACKERS__0__TOKEN", "t"),
            ("RELAY__TRACKERS__0__WEBHOOK_SECRET", "s-sixteen-chars!"),
            ("RELAY__TRACKERS__0__BOT_USERNAME", "relay-bot"),
            ("RELAY__TRACKERS__0__TRIGGER_LABELS", "[\"relay\"]"),
        ]),
    )
    .unwrap();
    assert_eq!(loaded.settings.trackers.len(), 1);
    assert_eq!(loaded.settings.trackers[0].trigger_labels, vec!["relay"]);
    // Skipping an index is an error that names the key.
    let error = load_with(None, &env(&[("RELAY__TRACKERS__3__NAME", "x")]))
        .err()
        .unwrap();
    assert!(error.to_string().contains("trackers.3.name"), "{error}");
}

#[test]
fn github_app_private_keys_are_redacted() {
    let file = write(
        r#"
[[trackers]]
name = "app"
provider = "github"
base_url = "https://api.github.com"
app_id = 42
private_key = "-----BEGIN RSA PRIVATE KEY-----app-key-material"
webhook_secret = "hook-secret-0123456"
bot_username = "relay-app"
"#,
    );
    let loaded = load_with(Some(file.path()), &[]).unwrap();
    let printed = toml::to_string_pretty(&redacted(&loaded.document)).unwrap();
    assert!(!printed.contains("app-key-material"), "{printed}");
    assert!(!format!("{:?}", loaded.settings).contains("app-key-material"));
    assert_eq!(loaded.settings.trackers[0].app_id, Some(42));
}

#[test]
fn every_configured_secret_is_listed_for_the_outgoing_scan() {
    let text = format!(
        "{EXAMPLE}\n[api]\ntoken = \"api-token-value-of-32-characters\"\n[llm.default]\nprovider = \"openai\"\n\
         base_url = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\napi_key = \"sk-llm-key-value\"\n"
    )
    .replace(
        "postgres://postgres@127.0.0.1:5432/relay",
        "postgres://postgres:db-password-1@127.0.0.1:5432/relay?password=db-password-2",
    );
    let file = write(&text);
    let loaded = load_with(Some(file.path()), &[]).unwrap();
    let secrets: Vec<(String, String)> = loaded
        .settings
        .secrets()
        .into_iter()
        .map(|(label, value)| (label, value.expose_secret().to_owned()))
        .collect();
    for (label, value) in [
        ("trackers.github.token", "ghp_secret"),
        ("trackers.github.webhook_secret", "hook-secret-0123456"),
        ("trackers.gitlab.token", "glpat-secret"),
        ("trackers.gitlab.webhook_secret", "gl-secret-0123456789"),
        ("api.token", "api-token-value-of-32-characters"),
        ("llm.planner.api_key", "sk-llm-key-value"),
        ("database.url", "db-password-1"),
        ("database.url", "db-password-2"),
    ] {
        assert!(
            secrets.iter().any(|(l, v)| l == label && v == value),
            "{label} missing from {:?}",
            secrets.iter().map(|(l, _)| l).collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_environment_switches_the_codegraph_backend() {
    use relay_codegraph::store::StoreBackend;
    let file = write("[codegraph]\nbackend = \"postgres\"\n");
    let loaded = load_with(
        Some(file.path()),
        &env(&[
            ("RELAY__CODEGRAPH__BACKEND", "arangodb"),
            ("RELAY__CODEGRAPH__ARANGODB__URL", "http://arangodb:8529"),
        ]),
    )
    .unwrap();
    assert_eq!(loaded.settings.codegraph.backend, StoreBackend::Arangodb);
    assert_eq!(
        loaded.settings.codegraph.arangodb.url,
        "http://arangodb:8529"
    );
}

/// The compose file's Relay environment (every service shares it) loads as backend `arangodb`
/// pointed at the compose `arangodb` service. Docker is not needed: the file is read as text, its
/// `${VAR:-default}`s take their defaults (`deploy_tests` checks the file as Compose reads it).
#[test]
fn the_compose_environment_puts_the_code_graph_in_arangodb() {
    use relay_codegraph::store::StoreBackend;
    let compose = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docker-compose.yml"
    ))
    .unwrap();
    let relay_env: Vec<(String, String)> = compose
        .lines()
        .filter_map(|line| {
            let (key, value) = line.trim().split_once(": ")?;
            key.starts_with("RELAY__").then(|| {
                let value = value.split(" #").next().unwrap_or_default().trim();
                let value = match value.strip_prefix("${") {
                    Some(interpolated) => interpolated
                        .trim_end_matches('}')
                        .split_once(":-")
                        .map(|(_, default)| default.to_owned())
                        .unwrap_or_default(),
                    None => value.to_owned(),
                };
                (key.to_owned(), value)
            })
        })
        .collect();
    let loaded = load_with(None, &relay_env).unwrap();
    assert_eq!(loaded.settings.codegraph.backend, StoreBackend::Arangodb);
    assert_eq!(
        loaded.settings.codegraph.arangodb.url,
        "http://arangodb:8529"
    );
    // That host is a service `docker compose up` runs (no profile).
    let service = compose
        .split("\n  arangodb:\n")
        .nth(1)
        .expect("an arangodb service");
    let service: String = service
        .lines()
        .take_while(|line| line.starts_with("    ") || line.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!service.contains("profiles:"), "{service}");
}
