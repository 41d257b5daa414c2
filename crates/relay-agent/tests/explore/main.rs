//! Tests of the ExploreAgent and the toolbox against the scripted LLM server over real HTTP, on
//! temporary checkouts (and the Postgres graph store in one test).

mod citations;
mod codegraph;
mod eval;
mod happy;
mod hints;
mod history;
mod learning;
mod limits;
mod masking;
mod related;
mod robustness;
mod support;
mod trace;
