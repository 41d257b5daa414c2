//! Which structured-output mode an endpoint takes, learned from its refusals.
//!
//! Servers differ in what they accept: OpenAI and recent vLLM, Ollama and llama.cpp take
//! `response_format: json_schema`; llama-cpp-python's server (and older llama.cpp) answer it with
//! a 500 or 422 (`response_format.type: Input should be 'text' or 'json_object'`); some accept
//! neither but do forced tool calls. Structured output starts at the mode remembered for the
//! endpoint (the chat URL and model), falls back in [`OutputMode::ORDER`] when the server refuses
//! one ([`super::LlmError::UnsupportedOutput`]), and remembers the mode that was not refused for
//! the life of the process, so only the first call per endpoint pays for the refusals.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use super::types::OutputMode;

/// Most endpoints remembered (a process talks to a handful; the bound keeps a misconfigured
/// loop from growing the map).
const MAX_REMEMBERED: usize = 256;

static MODES: LazyLock<Mutex<HashMap<String, OutputMode>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

fn key(endpoint: &str, model: &str) -> String {
    format!("{endpoint}#{model}")
}

/// The mode to start with for `endpoint` and `model`: the one remembered, else JSON schema.
pub fn starting_mode(endpoint: Option<&str>, model: &str) -> OutputMode {
    let Some(endpoint) = endpoint else {
        return OutputMode::JsonSchema;
    };
    MODES
        .lock()
        .map(|modes| modes.get(&key(endpoint, model)).copied())
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Remembers that `endpoint` and `model` take `mode` (called after a refusal moved past the
/// modes before it). A mode never moves back to an earlier one.
pub fn remember(endpoint: Option<&str>, model: &str, mode: OutputMode) {
    let Some(endpoint) = endpoint else {
        return;
    };
    if let Ok(mut modes) = MODES.lock() {
        if modes.len() >= MAX_REMEMBERED && !modes.contains_key(&key(endpoint, model)) {
            return;
        }
        let entry = modes.entry(key(endpoint, model)).or_default();
        *entry = (*entry).max(mode);
    }
}

/// What is remembered for `endpoint` and `model`, if anything (tests, `relay llm ping`).
pub fn remembered(endpoint: &str, model: &str) -> Option<OutputMode> {
    MODES
        .lock()
        .ok()
        .and_then(|modes| modes.get(&key(endpoint, model)).copied())
}
