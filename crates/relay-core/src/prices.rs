//! `[prices]`: what LLM tokens cost, per model. Shared by `relay trace` and the status page so
//! both compute a call's cost the same way.

use std::collections::BTreeMap;

use serde::Deserialize;

/// Tokens per price unit.
const TOKENS_PER_PRICE_UNIT: f64 = 1_000_000.0;

/// `[prices.<model>]`: USD per million tokens. A model without an entry has an unknown cost.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    /// Uncached input tokens.
    pub input: f64,
    pub output: f64,
    /// Cached input tokens (default: the input price).
    #[serde(default)]
    pub cached_input: Option<f64>,
}

impl ModelPrice {
    /// USD of one call: `tokens_in` includes the `cached` ones, which are priced apart.
    pub fn cost(&self, tokens_in: u64, cached: u64, tokens_out: u64) -> f64 {
        let uncached = tokens_in.saturating_sub(cached) as f64;
        (uncached * self.input
            + cached as f64 * self.cached_input.unwrap_or(self.input)
            + tokens_out as f64 * self.output)
            / TOKENS_PER_PRICE_UNIT
    }
}

/// `[prices]`: per model name.
pub type Prices = BTreeMap<String, ModelPrice>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_tokens_are_priced_apart() {
        let price = ModelPrice {
            input: 2.0,
            output: 8.0,
            cached_input: Some(0.5),
        };
        // 900k uncached × 2 + 100k cached × 0.5 + 500k out × 8, per million.
        let cost = price.cost(1_000_000, 100_000, 500_000);
        assert!((cost - (1.8 + 0.05 + 4.0)).abs() < 1e-9, "{cost}");
    }
}
