//! Thorough mode against the scripted LLM server over real HTTP, on a temporary
//! checkout: the pipeline's mechanics — what each stage was sent, what each reply causes, routing
//! (replan, clarify once, stuck), goal updates in order, every query bound, the evidence chain —
//! and a contract test that fails if any line of the final answer lacks a verified citation.

mod bounds;
mod dispatch;
mod memory;
mod pipeline;
mod record;
mod recovery;
mod routing;
mod support;
