//! The scripted server itself: scripts from JSON files, both protocols, recorded requests and a
//! loud failure when the script runs out.

use relay_agent::llm::scripted::{Protocol, ScriptedLlm};
use relay_agent::llm::{ChatRequest, ErrorKind, Message};

use crate::support::client_for;

const SCRIPT: &str = r#"[
  {"type": "error", "status": 429, "retry_after_ms": 1},
  {"type": "tool_calls", "calls": [{"id": "call_1", "name": "read", "arguments": {"path": "a.rs"}}]},
  {"type": "json", "value": {"ok": true}},
  {"type": "text", "text": "bye", "usage": {"prompt_tokens": 3, "completion_tokens": 1}}
]"#;

#[tokio::test]
async fn replays_a_script_from_a_json_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(&path, SCRIPT).unwrap();
    let server = ScriptedLlm::start_from_file(&path).await;
    let client = client_for("openai", &server.base_url(), "gpt-4o");
    let request = ChatRequest::new(vec![Message::user("go")]);

    let first = client.complete(&request).await.unwrap();
    assert_eq!(first.message.tool_calls[0].id, "call_1");
    assert_eq!(first.message.tool_calls[0].arguments, r#"{"path":"a.rs"}"#);
    assert_eq!(
        client.complete(&request).await.unwrap().text(),
        r#"{"ok":true}"#
    );
    let last = client.complete(&request).await.unwrap();
    assert_eq!(
        (
            last.text(),
            last.usage.prompt_tokens,
            last.usage.completion_tokens
        ),
        ("bye", 3, 1)
    );
    assert_eq!(server.remaining(), 0);

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(
        requests
            .iter()
            .all(|request| request.protocol == Protocol::OpenAi)
    );
    assert_eq!(requests[0].body["model"], "gpt-4o");
    assert_eq!(requests[0].body["messages"][0]["content"], "go");

    let error = client.complete(&request).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidRequest);
    assert!(
        error
            .to_string()
            .contains("no reply scripted for request #5"),
        "{error}"
    );
}

#[tokio::test]
async fn speaks_anthropic_on_v1_messages() {
    let server = ScriptedLlm::start(serde_json::from_str(SCRIPT).unwrap()).await;
    let client = client_for("anthropic", &server.base_url(), "claude-haiku-4-5");
    let request = ChatRequest::new(vec![Message::user("go")]);
    let first = client.complete(&request).await.unwrap();
    assert_eq!(first.message.tool_calls[0].name, "read");
    assert!(first.id.starts_with("msg_scripted_"));
    let requests = server.requests();
    assert_eq!(requests[1].protocol, Protocol::Anthropic);
    assert_eq!(requests[1].path_and_query, "/v1/messages");
    assert_eq!(requests[1].headers["x-api-key"], "sk-test-secret");
    assert_eq!(requests[1].body["max_tokens"], 1024);
}
