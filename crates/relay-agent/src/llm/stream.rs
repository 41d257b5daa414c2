//! Server-sent-event responses (`stream: true`), folded back into the body a non-streaming
//! request would have returned, so both go through the same response parser.
//!
//! Streaming is opt-in (`stream = true` in a provider's settings): some OpenAI-compatible servers
//! and proxies only stream, and long generations behind proxies with idle timeouts fare better
//! when bytes keep flowing. Callers still receive one complete [`super::ChatResponse`].

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::error::LlmError;
use super::http;

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines joined with newlines.
    pub data: String,
}

/// Splits an SSE body into events (comments and `id:`/`retry:` fields are ignored).
pub fn parse_sse(body: &str) -> Vec<SseEvent> {
    let mut events = Vec::new();
    let mut event = None;
    let mut data: Vec<&str> = Vec::new();
    for line in body.lines().chain(std::iter::once("")) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            if !data.is_empty() {
                events.push(SseEvent {
                    event: event.take(),
                    data: data.join("\n"),
                });
                data.clear();
            }
            event = None;
            continue;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => event = Some(value.to_owned()),
            "data" => data.push(value),
            _ => {}
        }
    }
    events
}

fn plain_json(body: &str) -> Option<Result<Value, LlmError>> {
    body.trim_start().starts_with('{').then(|| {
        serde_json::from_str(body).map_err(|error| {
            LlmError::InvalidResponse(format!("response body is not JSON ({error})"))
        })
    })
}

fn event_json(event: &SseEvent) -> Result<Value, LlmError> {
    serde_json::from_str(&event.data).map_err(|error| {
        LlmError::InvalidResponse(format!(
            "stream event is not JSON ({error}): {}",
            event.data
        ))
    })
}

/// Folds an OpenAI chat-completion chunk stream into a chat-completion body. A server that
/// ignored `stream: true` and answered with plain JSON is accepted too.
pub fn fold_openai(body: &str) -> Result<Value, LlmError> {
    if let Some(plain) = plain_json(body) {
        return plain;
    }
    let mut id = Value::Null;
    let mut model = Value::Null;
    let mut content: Option<String> = None;
    let mut refusal: Option<String> = None;
    let mut finish_reason = Value::Null;
    let mut usage = Value::Null;
    // Tool calls arrive as fragments keyed by `index`.
    let mut calls: BTreeMap<u64, (String, String, String)> = BTreeMap::new();
    let mut done = false;
    for event in parse_sse(body) {
        if event.data.trim() == "[DONE]" {
            done = true;
            break;
        }
        let chunk = event_json(&event)?;
        if chunk.get("error").is_some() {
            return Err(http::classify(500, &Default::default(), &event.data));
        }
        if id.is_null() {
            id = chunk["id"].clone();
            model = chunk["model"].clone();
        }
        if chunk.get("usage").is_some_and(|u| !u.is_null()) {
            usage = chunk["usage"].clone();
        }
        let Some(choice) = chunk["choices"]
            .as_array()
            .and_then(|choices| choices.first())
        else {
            continue;
        };
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str() {
            content.get_or_insert_with(String::new).push_str(text);
        }
        if let Some(text) = delta["refusal"].as_str() {
            refusal.get_or_insert_with(String::new).push_str(text);
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap_or(0);
            let entry = calls.entry(index).or_default();
            if let Some(call_id) = call["id"].as_str() {
                entry.0 = call_id.to_owned();
            }
            if let Some(name) = call["function"]["name"].as_str() {
                entry.1.push_str(name);
            }
            if let Some(arguments) = call["function"]["arguments"].as_str() {
                entry.2.push_str(arguments);
            }
        }
        if !choice["finish_reason"].is_null() {
            finish_reason = choice["finish_reason"].clone();
        }
    }
    if !done && finish_reason.is_null() {
        return Err(LlmError::InvalidResponse(
            "stream ended before the reply was complete".into(),
        ));
    }
    let mut message = json!({"role": "assistant", "content": content, "refusal": refusal});
    if !calls.is_empty() {
        message["tool_calls"] = calls
            .into_values()
            .map(|(call_id, name, arguments)| {
                json!({"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
    }
    Ok(json!({
        "id": id,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": usage,
    }))
}

/// Folds an Anthropic Messages event stream into a message body.
pub fn fold_anthropic(body: &str) -> Result<Value, LlmError> {
    if let Some(plain) = plain_json(body) {
        return plain;
    }
    let mut message: Option<Map<String, Value>> = None;
    let mut blocks: BTreeMap<u64, Value> = BTreeMap::new();
    let mut partial_json: BTreeMap<u64, String> = BTreeMap::new();
    let mut stopped = false;
    for event in parse_sse(body) {
        let data = event_json(&event)?;
        let index = data["index"].as_u64().unwrap_or(0);
        match data["type"].as_str().unwrap_or_default() {
            "message_start" => message = data["message"].as_object().cloned(),
            "content_block_start" => {
                blocks.insert(index, data["content_block"].clone());
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                let block = blocks
                    .entry(index)
                    .or_insert_with(|| json!({"type": "text", "text": ""}));
                match delta["type"].as_str().unwrap_or_default() {
                    "text_delta" => {
                        let text = block["text"].as_str().unwrap_or_default().to_owned();
                        block["text"] = json!(text + delta["text"].as_str().unwrap_or_default());
                    }
                    "input_json_delta" => partial_json
                        .entry(index)
                        .or_default()
                        .push_str(delta["partial_json"].as_str().unwrap_or_default()),
                    // Thinking and signature deltas are not used by the layer.
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(json_text) = partial_json.remove(&index)
                    && let Some(block) = blocks.get_mut(&index)
                {
                    let input = if json_text.trim().is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(&json_text).map_err(|error| {
                            LlmError::InvalidResponse(format!(
                                "tool input in stream is not JSON ({error})"
                            ))
                        })?
                    };
                    block["input"] = input;
                }
            }
            "message_delta" => {
                let message = message.get_or_insert_with(Map::new);
                if let Some(delta) = data["delta"].as_object() {
                    for (key, value) in delta {
                        message.insert(key.clone(), value.clone());
                    }
                }
                if let Some(usage) = data["usage"].as_object() {
                    let merged = message.entry("usage").or_insert_with(|| json!({}));
                    for (key, value) in usage {
                        merged[key] = value.clone();
                    }
                }
            }
            "message_stop" => stopped = true,
            "error" => return Err(http::classify(500, &Default::default(), &event.data)),
            _ => {}
        }
    }
    let mut message = message
        .ok_or_else(|| LlmError::InvalidResponse("stream has no message_start event".into()))?;
    if !stopped {
        return Err(LlmError::InvalidResponse(
            "stream ended before message_stop".into(),
        ));
    }
    message.insert(
        "content".to_owned(),
        Value::Array(blocks.into_values().collect()),
    );
    Ok(Value::Object(message))
}
