//! The deployment files are checked, not trusted: `docker-compose.yml` against the Compose
//! Specification's JSON Schema (`deploy/schema/compose-spec.json`, provenance in
//! `deploy/schema/README.md`), every `RELAY__…` variable it and the Dockerfile set against the
//! configuration keys, and the Dockerfile's toolchain against `rust-toolchain.toml`. Docker
//! cannot run where the tests run, so this is what stands between a typo and a deployment.

use std::collections::BTreeMap;

use serde_json::Value as Json;

const COMPOSE: &str = include_str!("../../../../docker-compose.yml");
const COMPOSE_SCHEMA: &str = include_str!("../../../../deploy/schema/compose-spec.json");
const DOCKERFILE: &str = include_str!("../../../../Dockerfile");
const TOOLCHAIN: &str = include_str!("../../../../rust-toolchain.toml");

/// The compose file as Compose reads it: YAML with its merge keys (`<<: *relay`) applied.
fn compose() -> Json {
    let mut yaml: serde_norway::Value = serde_norway::from_str(COMPOSE).expect("compose is YAML");
    yaml.apply_merge().expect("merge keys apply");
    serde_json::to_value(yaml).expect("compose is JSON-shaped")
}

/// `${NAME:-default}` → `default` (what Compose substitutes when NAME is unset).
fn interpolate(value: &str) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        let inner = &rest[start + 2..start + end];
        out.push_str(inner.split_once(":-").map_or("", |(_, default)| default));
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out
}

/// Every `environment` entry of every service, by service.
fn service_environments(compose: &Json) -> BTreeMap<String, Vec<(String, String)>> {
    let mut found = BTreeMap::new();
    for (name, service) in compose["services"].as_object().expect("services") {
        let vars = match &service["environment"] {
            Json::Object(map) => map
                .iter()
                .map(|(k, v)| {
                    let text = match v {
                        Json::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (k.clone(), interpolate(&text))
                })
                .collect(),
            Json::Array(items) => items
                .iter()
                .filter_map(|item| item.as_str()?.split_once('='))
                .map(|(k, v)| (k.to_owned(), interpolate(v)))
                .collect(),
            _ => Vec::new(),
        };
        found.insert(name.clone(), vars);
    }
    found
}

/// `ENV A=1 \ B=2` lines of the Dockerfile.
fn dockerfile_env() -> Vec<(String, String)> {
    let joined = DOCKERFILE.replace("\\\n", " ");
    joined
        .lines()
        .filter_map(|line| line.trim().strip_prefix("ENV "))
        .flat_map(|rest| rest.split_whitespace())
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

#[test]
fn compose_file_validates_against_the_compose_specification_schema() {
    let schema: Json = serde_json::from_str(COMPOSE_SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the Compose schema compiles");
    let document = compose();
    let errors: Vec<String> = validator
        .iter_errors(&document)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "docker-compose.yml: {errors:#?}");
    // The schema catches what Compose would refuse; it must refuse a real mistake too.
    let mut broken = document.clone();
    broken["services"]["relay"]["depends_on"]["arangodb"]["condition"] = "service_ready".into();
    assert!(!validator.is_valid(&broken));
    let mut broken = document;
    broken["services"]["arangodb"]["healthcheck"]["tset"] = "typo".into();
    assert!(!validator.is_valid(&broken));
}

#[test]
fn every_relay_variable_in_compose_and_the_dockerfile_names_a_configuration_key() {
    let mut sources: Vec<(String, Vec<(String, String)>)> = service_environments(&compose())
        .into_iter()
        .map(|(service, vars)| (format!("docker-compose.yml service {service}"), vars))
        .collect();
    sources.push(("Dockerfile".into(), dockerfile_env()));
    let mut checked = 0;
    for (source, vars) in sources {
        let relay_vars: Vec<(String, String)> = vars
            .into_iter()
            .filter(|(k, _)| k.starts_with("RELAY__"))
            .collect();
        for (name, value) in &relay_vars {
            // One at a time, so the error names the variable; the loader refuses unknown keys.
            let env = vec![(name.clone(), value.clone())];
            if let Err(error) = super::load_with(None, &env) {
                panic!("{source}: {name}={value} is not a valid configuration key: {error}");
            }
            checked += 1;
        }
        // And all together, as the container sees them.
        if let Err(error) = super::load_with(None, &relay_vars) {
            panic!("{source}: its RELAY__ variables together: {error}");
        }
    }
    assert!(checked >= 10, "only {checked} RELAY__ variables found");
    // A typo fails (what this test exists for).
    let typo = vec![(
        "RELAY__CODEGRAPH__ARANGODB__PASSWORT".to_owned(),
        "x".to_owned(),
    )];
    assert!(super::load_with(None, &typo).is_err());
}

#[test]
fn compose_runs_arangodb_healthy_before_relay_and_relay_uses_it() {
    let compose = compose();
    let services = &compose["services"];
    let arangodb = &services["arangodb"];
    assert!(
        arangodb.get("profiles").is_none(),
        "arangodb runs by default"
    );
    let check = arangodb["healthcheck"]["test"].to_string();
    assert!(
        check.contains("/_admin/server/availability"),
        "the healthcheck asks ArangoDB's availability endpoint: {check}"
    );
    for role in ["relay", "gateway", "worker"] {
        let service = &services[role];
        assert_eq!(
            service["depends_on"]["arangodb"]["condition"], "service_healthy",
            "{role}"
        );
        assert_eq!(
            service["depends_on"]["postgres"]["condition"], "service_healthy",
            "{role}"
        );
        assert_eq!(
            service["environment"]["RELAY__CODEGRAPH__BACKEND"], "arangodb",
            "{role}"
        );
    }
    // Outside compose nothing changes: the embedded default needs no ArangoDB.
    let loaded = super::load_with(None, &[]).unwrap();
    assert_eq!(
        loaded.settings.codegraph.backend,
        relay_codegraph::store::StoreBackend::Postgres
    );
}

#[test]
fn the_dockerfile_builds_with_the_pinned_toolchain() {
    let toolchain: toml::Value = toml::from_str(TOOLCHAIN).unwrap();
    let channel = toolchain["toolchain"]["channel"].as_str().unwrap();
    let from = DOCKERFILE
        .lines()
        .find_map(|line| line.strip_prefix("FROM rust:"))
        .expect("the build stage is FROM rust:<version>");
    let image_version = from.split(['-', ' ']).next().unwrap();
    // Exactly: `rust:1.95` would be whatever 1.95.x is newest when the image is built.
    assert_eq!(
        image_version, channel,
        "Dockerfile builds with rust:{image_version}, rust-toolchain.toml pins {channel}"
    );
}
