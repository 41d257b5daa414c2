//! Tests of the ContextBuilder, the Planner and the spec writer; the LLM is the scripted server
//! over real HTTP, the explore and validate seams are recording fakes.

mod context;
mod planner;
mod spec;
mod support;
