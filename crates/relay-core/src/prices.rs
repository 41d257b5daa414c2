//! `[prices]`: what LLM tokens cost, per model. Shared by `relay trace`, the status page and the
//! living summary comment so all compute and show a cost the same way.

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

/// What some LLM calls cost, as far as `[prices]` knows: calls of a model without a price make
/// the sum incomplete, never free.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    pub usd: f64,
    /// Some calls were of a model `[prices]` has no entry for.
    pub unpriced: bool,
}

impl Cost {
    /// Adds calls of `model`: `tokens_in` includes the `cached` ones.
    pub fn add(&mut self, prices: &Prices, model: &str, tokens_in: u64, cached: u64, out: u64) {
        match prices.get(model) {
            Some(price) => self.usd += price.cost(tokens_in, cached, out),
            None => self.unpriced = true,
        }
    }

    /// `$0.12`, `$0.12 + unpriced` when some model has no price, `no price` when none has.
    pub fn describe(&self) -> String {
        match (self.usd > 0.0, self.unpriced) {
            (_, false) => usd(self.usd),
            (true, true) => format!("{} + unpriced", usd(self.usd)),
            (false, true) => "no price".into(),
        }
    }
}

/// A dollar amount: cents, or four decimals under a cent.
pub fn usd(cost: f64) -> String {
    if cost < 0.01 && cost > 0.0 {
        format!("${cost:.4}")
    } else {
        format!("${cost:.2}")
    }
}

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

    #[test]
    fn a_sum_with_an_unknown_model_says_so() {
        let prices = Prices::from([(
            "m".to_owned(),
            ModelPrice {
                input: 1.0,
                output: 2.0,
                cached_input: None,
            },
        )]);
        let mut cost = Cost::default();
        cost.add(&prices, "m", 1_000_000, 0, 500_000);
        assert_eq!(cost.describe(), "$2.00");
        cost.add(&prices, "other", 10, 0, 10);
        assert_eq!(cost.describe(), "$2.00 + unpriced");
        let mut none = Cost::default();
        none.add(&prices, "other", 10, 0, 10);
        assert_eq!(none.describe(), "no price");
        assert_eq!(usd(0.0042), "$0.0042");
    }
}
