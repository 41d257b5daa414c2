//! Tests of the LLM layer against real local HTTP servers (the scripted server and recorded
//! fixtures) and fake providers under paused time.

mod fixtures_anthropic;
mod fixtures_openai;
mod golden;
mod ping;
mod retry;
mod schema;
mod scripted;
mod settings;
mod stream;
mod structured;
mod structured_mode;
mod support;
mod tools;
mod usage;
