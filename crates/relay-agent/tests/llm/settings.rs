//! The `[llm]` section: overlay of role overrides on the default, key resolution, clear errors
//! and redaction.

use std::time::Duration;

use relay_agent::llm::{LlmSettings, OpenAiDialect, ProviderKind, Role};
use secrecy::ExposeSecret;

fn parse(text: &str) -> LlmSettings {
    toml::from_str(text).expect("settings parse")
}

fn env(name: &str) -> Option<String> {
    (name == "OPENAI_API_KEY").then(|| "sk-from-env".to_owned())
}

const EXAMPLE: &str = r#"
[default]
provider = "openai"
base_url = "https://api.openai.com/v1/"
model = "gpt-4o"
api_key_env = "OPENAI_API_KEY"
max_output_tokens = 4096
timeout_secs = 120
fallback_models = ["gpt-4o-mini"]

[explore]
model = "gpt-4o-mini"
fallback_models = []

[spec]
provider = "anthropic"
base_url = "https://api.anthropic.com"
model = "claude-sonnet-4-5"
api_key = "sk-ant-inline"
api_key_env = "ANTHROPIC_API_KEY"
"#;

#[test]
fn roles_overlay_the_default() {
    let settings = parse(EXAMPLE);
    let planner = settings.resolve_with_env(Role::Planner, env).unwrap();
    assert_eq!(planner.provider, ProviderKind::Openai);
    assert_eq!(planner.model, "gpt-4o");
    assert_eq!(planner.base_url, "https://api.openai.com/v1");
    assert_eq!(
        planner.api_key.as_ref().unwrap().expose_secret(),
        "sk-from-env"
    );
    assert_eq!(planner.fallback_models, ["gpt-4o-mini"]);
    assert_eq!(planner.timeout, Duration::from_secs(120));
    assert_eq!(planner.max_retries, 3);
    assert_eq!(planner.structured_retries, 2);
    assert_eq!(planner.dialect, OpenAiDialect::Openai);

    let explore = settings.resolve_with_env(Role::Explore, env).unwrap();
    assert_eq!(explore.model, "gpt-4o-mini");
    assert!(explore.fallback_models.is_empty());
    assert_eq!(explore.max_output_tokens, 4096);
}

#[test]
fn errors_name_the_key_to_fix() {
    let settings = parse(EXAMPLE);
    let error = settings.resolve_with_env(Role::Spec, env).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid llm configuration: llm.spec: set either api_key or api_key_env, not both"
    );

    let error = parse("[default]\nprovider = \"openai\"\n")
        .resolve_with_env(Role::Planner, env)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid llm configuration: llm.planner.model is required (set it in [llm.planner] or [llm.default])"
    );

    let missing_env =
        parse("[default]\nprovider = \"openai\"\nmodel = \"m\"\napi_key_env = \"NOPE\"\n");
    assert_eq!(
        missing_env
            .resolve_with_env(Role::Explore, env)
            .unwrap_err()
            .to_string(),
        "invalid llm configuration: environment variable NOPE named by llm.default.api_key_env is not set"
    );

    let bad_url = parse(
        "[default]\nprovider = \"openai\"\nmodel = \"m\"\n[planner]\nbase_url = \"localhost:11434\"\n",
    );
    let message = bad_url
        .resolve_with_env(Role::Planner, env)
        .unwrap_err()
        .to_string();
    assert!(message.contains("llm.planner.base_url"), "{message}");

    let anthropic_without_key = parse("[default]\nprovider = \"anthropic\"\nmodel = \"claude\"\n");
    assert!(
        anthropic_without_key
            .resolve_with_env(Role::Spec, env)
            .unwrap_err()
            .to_string()
            .contains("llm.spec.api_key is required")
    );

    let zero = parse("[default]\nprovider = \"openai\"\nmodel = \"m\"\ntimeout_secs = 0\n");
    assert!(
        zero.resolve_with_env(Role::Spec, env)
            .unwrap_err()
            .to_string()
            .contains("llm.default.timeout_secs must be positive")
    );
}

#[test]
fn unknown_keys_are_rejected() {
    let error = toml::from_str::<LlmSettings>("[default]\nmodle = \"gpt-4o\"\n").unwrap_err();
    assert!(
        error.to_string().contains("unknown field `modle`"),
        "{error}"
    );
}

#[test]
fn local_servers_need_no_key() {
    let settings = parse(
        "[default]\nprovider = \"openai\"\nbase_url = \"http://localhost:11434/v1\"\nmodel = \"qwen2.5\"\ndialect = \"compatible\"\n",
    );
    let config = settings.resolve_with_env(Role::Explore, env).unwrap();
    assert!(config.api_key.is_none());
    assert_eq!(config.dialect, OpenAiDialect::Compatible);
}

#[test]
fn debug_output_redacts_secrets() {
    let settings = parse(
        "[default]\nprovider = \"openai\"\nmodel = \"m\"\napi_key = \"sk-very-secret\"\nbase_url = \"https://user:pw-secret@proxy.example/v1?key=q-secret\"\n",
    );
    let config = settings.resolve_with_env(Role::Planner, env).unwrap();
    for text in [format!("{settings:?}"), format!("{config:?}")] {
        assert!(!text.contains("sk-very-secret"), "{text}");
        assert!(!text.contains("pw-secret"), "{text}");
        assert!(!text.contains("q-secret"), "{text}");
        assert!(text.contains("[redacted]"), "{text}");
    }
}

#[test]
fn roles_parse_from_their_names() {
    assert_eq!("explore".parse::<Role>().unwrap(), Role::Explore);
    assert!(
        "reviewer"
            .parse::<Role>()
            .unwrap_err()
            .contains("expected planner, explore or spec")
    );
}
