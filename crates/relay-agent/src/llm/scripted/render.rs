//! Rendering scripted replies and errors in each protocol's wire format.

use std::collections::BTreeMap;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{Protocol, ScriptedReply, ScriptedUsage};

pub(super) fn with_headers(
    status: u16,
    headers: &BTreeMap<String, String>,
    body: Value,
) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match body {
        // A string body is sent verbatim, e.g. a recorded SSE transcript.
        Value::String(text) => {
            (status, [("content-type", "text/event-stream")], text).into_response()
        }
        json_body => (status, axum::Json(json_body)).into_response(),
    };
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            axum::http::HeaderName::from_bytes(name.as_bytes()),
            axum::http::HeaderValue::from_str(value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

pub(super) fn render_error(
    protocol: Protocol,
    status: u16,
    message: Option<&str>,
    error_type: Option<&str>,
    code: Option<&str>,
    headers: &BTreeMap<String, String>,
) -> Response {
    let (anthropic_type, openai_type) = match status {
        400 => ("invalid_request_error", "invalid_request_error"),
        401 => ("authentication_error", "invalid_request_error"),
        403 => ("permission_error", "invalid_request_error"),
        404 => ("not_found_error", "invalid_request_error"),
        429 => ("rate_limit_error", "requests"),
        529 => ("overloaded_error", "server_error"),
        _ => ("api_error", "server_error"),
    };
    let message = message.unwrap_or("scripted error");
    let body = match protocol {
        Protocol::OpenAi => json!({"error": {
            "message": message,
            "type": error_type.unwrap_or(openai_type),
            "param": null,
            "code": code.or((status == 429).then_some("rate_limit_exceeded")),
        }}),
        Protocol::Anthropic => json!({
            "type": "error",
            "error": {"type": error_type.unwrap_or(anthropic_type), "message": message},
            "request_id": "req_scripted",
        }),
    };
    with_headers(status, headers, body)
}

pub(super) struct Render<'a> {
    pub(super) protocol: Protocol,
    pub(super) index: usize,
    pub(super) request: &'a Value,
}

impl Render<'_> {
    fn model(&self) -> Value {
        self.request
            .get("model")
            .cloned()
            .unwrap_or_else(|| json!("scripted"))
    }

    pub(super) fn success(&self, reply: ScriptedReply) -> Value {
        match self.protocol {
            Protocol::OpenAi => self.openai(reply),
            Protocol::Anthropic => self.anthropic(reply),
        }
    }

    fn openai(&self, reply: ScriptedReply) -> Value {
        let (content, refusal, tool_calls, finish, usage) = match reply {
            ScriptedReply::Text { text, usage } => (Some(text), None, Vec::new(), "stop", usage),
            ScriptedReply::Json { value, usage } => {
                (Some(value.to_string()), None, Vec::new(), "stop", usage)
            }
            ScriptedReply::Refusal { message } => (
                None,
                Some(message),
                Vec::new(),
                "stop",
                ScriptedUsage::default(),
            ),
            ScriptedReply::Truncated { text } => (
                Some(text),
                None,
                Vec::new(),
                "length",
                ScriptedUsage::default(),
            ),
            ScriptedReply::ToolCalls { calls, text, usage } => {
                let calls = calls
                    .into_iter()
                    .enumerate()
                    .map(|(position, call)| {
                        let arguments = match call.arguments {
                            Value::String(raw) => raw,
                            other => other.to_string(),
                        };
                        json!({
                            "id": call.id.unwrap_or_else(|| format!("call_scripted_{}_{position}", self.index)),
                            "type": "function",
                            "function": {"name": call.name, "arguments": arguments},
                        })
                    })
                    .collect();
                (text, None, calls, "tool_calls", usage)
            }
            ScriptedReply::Error { .. }
            | ScriptedReply::Raw { .. }
            | ScriptedReply::Delayed { .. } => {
                unreachable!("rendered elsewhere")
            }
        };
        let mut message = json!({"role": "assistant", "content": content, "refusal": refusal});
        if !tool_calls.is_empty() {
            message["tool_calls"] = Value::Array(tool_calls);
        }
        json!({
            "id": format!("chatcmpl-scripted-{}", self.index),
            "object": "chat.completion",
            "created": 0,
            "model": self.model(),
            "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
            },
        })
    }

    fn anthropic(&self, reply: ScriptedReply) -> Value {
        let forced_tool = self
            .request
            .pointer("/tool_choice/name")
            .filter(|_| self.request.pointer("/tool_choice/type") == Some(&json!("tool")))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let text_block = |text: String| json!({"type": "text", "text": text});
        let (content, stop, usage) = match reply {
            ScriptedReply::Text { text, usage } => (vec![text_block(text)], "end_turn", usage),
            ScriptedReply::Json { value, usage } => match forced_tool {
                Some(name) => (
                    vec![
                        json!({"type": "tool_use", "id": format!("toolu_scripted_{}", self.index), "name": name, "input": value}),
                    ],
                    "tool_use",
                    usage,
                ),
                None => (vec![text_block(value.to_string())], "end_turn", usage),
            },
            ScriptedReply::Refusal { message } => (
                vec![text_block(message)],
                "refusal",
                ScriptedUsage::default(),
            ),
            ScriptedReply::Truncated { text } => (
                vec![text_block(text)],
                "max_tokens",
                ScriptedUsage::default(),
            ),
            ScriptedReply::ToolCalls { calls, text, usage } => {
                let mut blocks: Vec<Value> = text.into_iter().map(text_block).collect();
                for (position, call) in calls.into_iter().enumerate() {
                    let input = match call.arguments {
                        Value::String(raw) => {
                            serde_json::from_str(&raw).unwrap_or_else(|_| json!({}))
                        }
                        other => other,
                    };
                    blocks.push(json!({
                        "type": "tool_use",
                        "id": call.id.unwrap_or_else(|| format!("toolu_scripted_{}_{position}", self.index)),
                        "name": call.name,
                        "input": input,
                    }));
                }
                (blocks, "tool_use", usage)
            }
            ScriptedReply::Error { .. }
            | ScriptedReply::Raw { .. }
            | ScriptedReply::Delayed { .. } => {
                unreachable!("rendered elsewhere")
            }
        };
        json!({
            "id": format!("msg_scripted_{}", self.index),
            "type": "message",
            "role": "assistant",
            "model": self.model(),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": null,
            "usage": {
                "input_tokens": usage.prompt_tokens.saturating_sub(usage.cached_tokens),
                "cache_read_input_tokens": usage.cached_tokens,
                "cache_creation_input_tokens": 0,
                "output_tokens": usage.completion_tokens,
            },
        })
    }
}

/// Renders a complete response body as the event stream the provider would have sent, with
/// texts and tool arguments split in two fragments so clients must reassemble them.
pub(super) fn to_sse(protocol: Protocol, body: &Value) -> String {
    let mut out = String::new();
    let mut emit = |event: Option<&str>, data: &Value| {
        if let Some(event) = event {
            out.push_str(&format!("event: {event}\n"));
        }
        out.push_str(&format!("data: {data}\n\n"));
    };
    match protocol {
        Protocol::OpenAi => {
            let choice = &body["choices"][0];
            let message = &choice["message"];
            let chunk = |delta: Value, finish: Value| {
                json!({
                    "id": body["id"], "object": "chat.completion.chunk", "model": body["model"],
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                })
            };
            emit(
                None,
                &chunk(json!({"role": "assistant", "content": null}), Value::Null),
            );
            for part in halves(message["content"].as_str().unwrap_or_default()) {
                emit(None, &chunk(json!({"content": part}), Value::Null));
            }
            if let Some(refusal) = message["refusal"].as_str() {
                emit(None, &chunk(json!({"refusal": refusal}), Value::Null));
            }
            for (index, call) in message["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let head = json!({"index": index, "id": call["id"], "type": "function",
                    "function": {"name": call["function"]["name"], "arguments": ""}});
                emit(None, &chunk(json!({"tool_calls": [head]}), Value::Null));
                for part in halves(call["function"]["arguments"].as_str().unwrap_or_default()) {
                    let fragment = json!({"index": index, "function": {"arguments": part}});
                    emit(None, &chunk(json!({"tool_calls": [fragment]}), Value::Null));
                }
            }
            emit(None, &chunk(json!({}), choice["finish_reason"].clone()));
            emit(
                None,
                &json!({"id": body["id"], "object": "chat.completion.chunk", "model": body["model"],
                "choices": [], "usage": body["usage"]}),
            );
            out.push_str("data: [DONE]\n\n");
        }
        Protocol::Anthropic => {
            let mut start = body.clone();
            start["content"] = json!([]);
            start["stop_reason"] = Value::Null;
            emit(
                Some("message_start"),
                &json!({"type": "message_start", "message": start}),
            );
            for (index, block) in body["content"].as_array().into_iter().flatten().enumerate() {
                let mut empty = block.clone();
                let deltas: Vec<Value> = if block["type"] == "tool_use" {
                    empty["input"] = json!({});
                    halves(&block["input"].to_string())
                        .into_iter()
                        .map(|part| json!({"type": "input_json_delta", "partial_json": part}))
                        .collect()
                } else {
                    empty["text"] = json!("");
                    halves(block["text"].as_str().unwrap_or_default())
                        .into_iter()
                        .map(|part| json!({"type": "text_delta", "text": part}))
                        .collect()
                };
                emit(
                    Some("content_block_start"),
                    &json!({"type": "content_block_start", "index": index, "content_block": empty}),
                );
                for delta in deltas {
                    emit(
                        Some("content_block_delta"),
                        &json!({"type": "content_block_delta", "index": index, "delta": delta}),
                    );
                }
                emit(
                    Some("content_block_stop"),
                    &json!({"type": "content_block_stop", "index": index}),
                );
            }
            emit(
                Some("message_delta"),
                &json!({"type": "message_delta",
                "delta": {"stop_reason": body["stop_reason"], "stop_sequence": null},
                "usage": {"output_tokens": body["usage"]["output_tokens"]}}),
            );
            emit(Some("message_stop"), &json!({"type": "message_stop"}));
        }
    }
    out
}

/// A text in two pieces (split on a character boundary).
fn halves(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let mut middle = text.len() / 2;
    while !text.is_char_boundary(middle) {
        middle += 1;
    }
    [&text[..middle], &text[middle..]]
        .into_iter()
        .filter(|part| !part.is_empty())
        .map(str::to_owned)
        .collect()
}
