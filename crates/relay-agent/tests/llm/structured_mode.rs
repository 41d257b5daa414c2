//! Structured output degrades instead of failing: a server that refuses `json_schema` (the error
//! bodies of llama.cpp, llama-cpp-python, vLLM and Ollama, in their documented shapes) is asked
//! again with `json_object` and the schema in the prompt, then with one forced tool call; the
//! reply is validated against the same schema either way, the mode is remembered per endpoint
//! and named in the trace.

use std::sync::Arc;

use relay_agent::llm::scripted::{ScriptedLlm, ScriptedReply};
use relay_agent::llm::{ChatRequest, LlmError, Message, OutputMode, structured_mode};
use relay_agent::trace::{MemoryTraceSink, TraceKind, Tracer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::support::client_with;

#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Answer {
    verdict: String,
    confidence: u32,
}

fn request() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("Judge the claim."),
        Message::user("The sky is green."),
    ])
}

const COMPATIBLE: &str = r#"dialect = "compatible""#;

/// llama.cpp's server before JSON-schema support: a 500 with its OpenAI-style envelope.
fn llama_cpp_500() -> ScriptedReply {
    ScriptedReply::raw(
        500,
        json!({"error": {"code": 500, "type": "server_error",
            "message": "response_format type must be one of \"text\" or \"json_object\", but got: json_schema"}}),
    )
}

/// llama-cpp-python's server: the pydantic error its route handler returns as a 500.
fn llama_cpp_python_500() -> ScriptedReply {
    ScriptedReply::raw(
        500,
        json!({"error": {"message": "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema', input_type=str]",
            "type": "internal_server_error", "param": null, "code": null}}),
    )
}

/// The same refusal as FastAPI's own 422 validation error.
fn fastapi_422() -> ScriptedReply {
    ScriptedReply::raw(
        422,
        json!({"detail": [{"type": "literal_error", "loc": ["body", "response_format", "type"],
            "msg": "Input should be 'text' or 'json_object'", "input": "json_schema",
            "ctx": {"expected": "'text' or 'json_object'"}}]}),
    )
}

/// vLLM: a top-level error object (`{"object": "error", …}`), 400.
fn vllm_400() -> ScriptedReply {
    ScriptedReply::raw(
        400,
        json!({"object": "error", "type": "BadRequestError", "param": null, "code": 400,
            "message": "guided_json is not supported by the guided decoding backend for this model"}),
    )
}

/// Ollama's OpenAI-compatible layer: `{"error": {"message", "type": "invalid_request_error"}}`.
fn ollama_400() -> ScriptedReply {
    ScriptedReply::raw(
        400,
        json!({"error": {"message": "invalid response_format: json_schema is not supported",
            "type": "invalid_request_error", "param": null, "code": null}}),
    )
}

/// Ollama's native envelope: the error as a plain string.
fn ollama_string_400() -> ScriptedReply {
    ScriptedReply::raw(
        400,
        json!({"error": "json: cannot unmarshal response_format into Go value"}),
    )
}

fn answer() -> ScriptedReply {
    ScriptedReply::json(json!({"verdict": "false", "confidence": 9}))
}

fn system_text(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn each_refusal_of_json_schema_falls_back_to_json_object() {
    for (name, refusal) in [
        ("llama.cpp 500", llama_cpp_500()),
        ("llama-cpp-python 500", llama_cpp_python_500()),
        ("llama-cpp-python 422", fastapi_422()),
        ("vLLM 400", vllm_400()),
        ("Ollama 400", ollama_400()),
        ("Ollama string 400", ollama_string_400()),
    ] {
        let server = ScriptedLlm::start(vec![refusal, answer()]).await;
        let client = client_with("openai", &server.base_url(), "local", COMPATIBLE);
        let structured = client
            .complete_structured::<Answer>(request())
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(structured.value.confidence, 9, "{name}");
        assert_eq!(structured.mode, OutputMode::JsonObject, "{name}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{name}: one refusal, no retries of it");
        assert_eq!(
            requests[0].body["response_format"]["type"], "json_schema",
            "{name}"
        );
        let second = &requests[1].body;
        assert_eq!(
            second["response_format"],
            json!({"type": "json_object"}),
            "{name}"
        );
        assert!(
            system_text(second).contains("\"confidence\""),
            "{name}: the schema is in the prompt"
        );
    }
}

#[tokio::test]
async fn a_server_refusing_both_response_formats_gets_one_forced_tool_call() {
    let server = ScriptedLlm::start(vec![
        llama_cpp_python_500(),
        ScriptedReply::raw(
            400,
            json!({"error": {"code": 400, "type": "invalid_request_error",
                "message": "response_format json_object is not supported with this model"}}),
        ),
        ScriptedReply::tool_calls(vec![(
            "Answer",
            json!({"verdict": "false", "confidence": 7}),
        )]),
    ])
    .await;
    let client = client_with("openai", &server.base_url(), "local", COMPATIBLE);
    let structured = client
        .complete_structured::<Answer>(request())
        .await
        .unwrap();
    assert_eq!(
        structured.value,
        Answer {
            verdict: "false".into(),
            confidence: 7
        }
    );
    assert_eq!(structured.mode, OutputMode::ToolCall);
    let third = &server.requests()[2].body;
    assert!(third.get("response_format").is_none());
    assert_eq!(third["tools"][0]["function"]["name"], "Answer");
    assert_eq!(
        third["tools"][0]["function"]["parameters"]["properties"]["confidence"]["type"],
        "integer"
    );
    assert_eq!(
        third["tool_choice"],
        json!({"type": "function", "function": {"name": "Answer"}})
    );
}

#[tokio::test]
async fn a_tool_call_reply_is_validated_against_the_same_schema() {
    let server = ScriptedLlm::start(vec![
        vllm_400(),
        ScriptedReply::raw(
            400,
            json!({"object": "error", "type": "BadRequestError", "code": 400,
                "message": "response_format json_object: guided decoding is not available"}),
        ),
        ScriptedReply::tool_calls(vec![("Answer", json!({"verdict": "false"}))]),
        ScriptedReply::tool_calls(vec![(
            "Answer",
            json!({"verdict": "false", "confidence": 3}),
        )]),
    ])
    .await;
    let client = client_with("openai", &server.base_url(), "local", COMPATIBLE);
    let structured = client
        .complete_structured::<Answer>(request())
        .await
        .unwrap();
    assert_eq!(structured.value.confidence, 3);
    assert_eq!(
        structured.attempts, 2,
        "the invalid call was corrected once"
    );
    let fourth = &server.requests()[3].body;
    let last = fourth["messages"].as_array().unwrap().last().unwrap();
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("does not match the required JSON schema")
    );
}

#[tokio::test]
async fn a_server_refusing_every_mode_fails_after_three_requests() {
    let refuse = |what: &str| {
        ScriptedReply::raw(
            400,
            json!({"error": {"code": 400, "type": "invalid_request_error", "message": what}}),
        )
    };
    let server = ScriptedLlm::start(vec![
        refuse("response_format json_schema is not supported"),
        refuse("response_format json_object is not supported"),
        refuse("tools param requires --jinja flag"),
    ])
    .await;
    let client = client_with("openai", &server.base_url(), "local", COMPATIBLE);
    let error = client
        .complete_structured::<Answer>(request())
        .await
        .unwrap_err();
    assert!(
        matches!(error, LlmError::UnsupportedOutput { status: 400, .. }),
        "{error}"
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn the_mode_is_remembered_per_endpoint_and_named_in_the_trace() {
    let server = ScriptedLlm::start(vec![llama_cpp_500(), answer(), answer()]).await;
    let sink = MemoryTraceSink::new();
    let tracer = Tracer::new(sink.clone() as Arc<_>).for_agent("thorough");
    let client =
        client_with("openai", &server.base_url(), "local", COMPATIBLE).with_tracer(&tracer);
    client
        .complete_structured::<Answer>(request())
        .await
        .unwrap();
    let endpoint = format!("{}/chat/completions", server.base_url());
    assert_eq!(
        structured_mode::remembered(&endpoint, "local"),
        Some(OutputMode::JsonObject)
    );
    // A new client for the same endpoint (the next job) starts where the first one ended.
    let again = client_with("openai", &server.base_url(), "local", COMPATIBLE);
    let structured = again
        .complete_structured::<Answer>(request())
        .await
        .unwrap();
    assert_eq!(structured.mode, OutputMode::JsonObject);
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "no second refusal");
    assert_eq!(requests[2].body["response_format"]["type"], "json_object");
    // Another model on the same server is not assumed to be the same.
    assert_eq!(structured_mode::remembered(&endpoint, "other"), None);

    let events = sink.events();
    let modes: Vec<(String, Value)> = events
        .iter()
        .filter(|e| e.kind == TraceKind::LlmCall)
        .map(|e| {
            (
                e.payload["outcome"].as_str().unwrap().to_owned(),
                e.payload["structured_mode"].clone(),
            )
        })
        .collect();
    assert_eq!(
        modes,
        vec![
            ("unsupported_output".to_owned(), json!("json_schema")),
            ("ok".to_owned(), json!("json_object")),
        ]
    );
    let fallback = events
        .iter()
        .find(|e| e.kind == TraceKind::Decision)
        .expect("the fallback is traced");
    assert_eq!(fallback.payload["decision"], "structured_mode_fallback");
    assert_eq!(fallback.payload["refused"], "json_schema");
    assert_eq!(fallback.payload["next"], "json_object");
}

#[tokio::test]
async fn a_plain_server_error_is_still_retried_not_taken_for_a_refusal() {
    let server = ScriptedLlm::start(vec![
        ScriptedReply::raw(
            500,
            json!({"error": {"message": "out of memory", "type": "server_error"}}),
        ),
        answer(),
    ])
    .await;
    let client = client_with("openai", &server.base_url(), "local", COMPATIBLE);
    let structured = client
        .complete_structured::<Answer>(request())
        .await
        .unwrap();
    assert_eq!(structured.mode, OutputMode::JsonSchema);
    assert_eq!(
        server.requests()[1].body["response_format"]["type"],
        "json_schema"
    );
}
