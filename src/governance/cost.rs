//! Cost of model calls (SPEC §9.3): the provider's `usage.cost` when it sends one (OpenRouter
//! does with `usage: {include: true}`), else tokens × the model's price from config
//! (`[pricing."<model>"]`) or the small built-in table below, else unknown.
//!
//! Prompt tokens include cached ones (OpenAI's `prompt_tokens_details.cached_tokens` is a
//! part of `prompt_tokens`), so the cost is
//! `(prompt − cached) × input + cached × cached_input + completion × output`, per million
//! tokens, with `cached_input` defaulting to `input` when the price gives none.
//!
//! Built-in prices change: config always wins, and an entry is matched only by its exact
//! name, an OpenRouter-style `vendor/` prefix, or a dated snapshot suffix (`-2024-08-06`,
//! `-20250514`, `-latest`), never by a looser prefix, so a model we do not know gets no
//! made-up number.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::file::Price;
use crate::model::Usage;

/// Where a call's cost came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CostSource {
    /// `usage.cost` from the provider.
    Usage,
    /// Tokens × a configured or built-in price.
    Price,
    /// No cost and no price: not counted, not enforced.
    Unknown,
}

/// USD per million tokens: (name, input, cached input, output).
///
/// Each block gives the page the prices were read from and when; re-check before relying on
/// them and override with `[pricing."<model>"]` in config.toml.
const BUILTIN: &[(&str, f64, f64, f64)] = &[
    // OpenAI, https://openai.com/api/pricing/ (standard tier), as listed 2025-08.
    ("gpt-5", 1.25, 0.125, 10.0),
    ("gpt-5-mini", 0.25, 0.025, 2.0),
    ("gpt-5-nano", 0.05, 0.005, 0.40),
    ("gpt-4.1", 2.0, 0.50, 8.0),
    ("gpt-4.1-mini", 0.40, 0.10, 1.60),
    ("gpt-4.1-nano", 0.10, 0.025, 0.40),
    ("gpt-4o", 2.50, 1.25, 10.0),
    ("gpt-4o-mini", 0.15, 0.075, 0.60),
    ("o3", 2.0, 0.50, 8.0),
    ("o4-mini", 1.10, 0.275, 4.40),
    // Anthropic, https://docs.anthropic.com/en/docs/about-claude/pricing (base input, cache
    // hits, output), as listed 2025-10.
    ("claude-sonnet-4", 3.0, 0.30, 15.0),
    ("claude-sonnet-4-5", 3.0, 0.30, 15.0),
    ("claude-sonnet-4.5", 3.0, 0.30, 15.0),
    ("claude-opus-4-1", 15.0, 1.50, 75.0),
    ("claude-opus-4.1", 15.0, 1.50, 75.0),
    ("claude-haiku-4-5", 1.0, 0.10, 5.0),
    ("claude-haiku-4.5", 1.0, 0.10, 5.0),
    // DeepSeek, https://api-docs.deepseek.com/quick_start/pricing (cache miss, cache hit,
    // output; V3.2 prices from 2025-09-29), as listed 2025-10.
    ("deepseek-chat", 0.28, 0.028, 0.42),
    ("deepseek-reasoner", 0.28, 0.028, 0.42),
];

/// Prices by model name: config entries first, then the built-in table.
#[derive(Debug, Clone, Default)]
pub(crate) struct PriceBook {
    configured: BTreeMap<String, Price>,
}

impl PriceBook {
    pub(crate) fn new(configured: BTreeMap<String, Price>) -> Self {
        Self { configured }
    }

    /// The price of `model`, if known.
    pub(crate) fn lookup(&self, model: &str) -> Option<Price> {
        if let Some(price) = self.configured.get(model) {
            return Some(*price);
        }
        builtin_price(model)
    }

    /// The cost of one call of `model`: `usage.cost` when sent, else tokens × price.
    /// `None` with [`CostSource::Unknown`] when neither is available.
    pub(crate) fn cost(&self, model: &str, usage: &Usage) -> (Option<f64>, CostSource) {
        if let Some(cost) = usage.cost.filter(|c| c.is_finite() && *c >= 0.0) {
            return (Some(cost), CostSource::Usage);
        }
        match self.lookup(model) {
            Some(price) => (Some(priced(&price, usage)), CostSource::Price),
            None => (None, CostSource::Unknown),
        }
    }
}

/// Tokens × price, in USD.
pub(crate) fn priced(price: &Price, usage: &Usage) -> f64 {
    let cached = usage.cached_tokens.unwrap_or(0).min(usage.prompt_tokens);
    let fresh = usage.prompt_tokens - cached;
    let cached_price = price.cached_input_per_mtok.unwrap_or(price.input_per_mtok);
    (fresh as f64 * price.input_per_mtok
        + cached as f64 * cached_price
        + usage.completion_tokens as f64 * price.output_per_mtok)
        / 1_000_000.0
}

/// The built-in price of `model` (see the module doc for how names match).
pub(crate) fn builtin_price(model: &str) -> Option<Price> {
    let name = model.rsplit('/').next().unwrap_or(model);
    BUILTIN
        .iter()
        .find(|(key, ..)| name == *key || is_snapshot_of(name, key))
        .map(|&(_, input, cached, output)| Price {
            input_per_mtok: input,
            output_per_mtok: output,
            cached_input_per_mtok: Some(cached),
        })
}

/// `gpt-4o-2024-08-06`, `claude-sonnet-4-20250514` or `gpt-4o-latest` for key `gpt-4o`.
fn is_snapshot_of(name: &str, key: &str) -> bool {
    let Some(suffix) = name.strip_prefix(key).and_then(|s| s.strip_prefix('-')) else {
        return false;
    };
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let parts: Vec<&str> = suffix.split('-').collect();
    match parts.as_slice() {
        ["latest"] => true,
        [date] => digits(date, 8),
        [y, m, d] => digits(y, 4) && digits(m, 2) && digits(d, 2),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt: u64, completion: u64, cached: Option<u64>, cost: Option<f64>) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            cached_tokens: cached,
            cost,
        }
    }

    #[test]
    fn usage_cost_wins() {
        let book = PriceBook::default();
        assert_eq!(
            book.cost("gpt-4o", &usage(1000, 10, None, Some(0.25))),
            (Some(0.25), CostSource::Usage)
        );
    }

    #[test]
    fn prices_with_cached_tokens() {
        let mut configured = BTreeMap::new();
        configured.insert(
            "m".to_string(),
            Price {
                input_per_mtok: 2.0,
                output_per_mtok: 10.0,
                cached_input_per_mtok: Some(0.5),
            },
        );
        let book = PriceBook::new(configured);
        let (cost, source) = book.cost("m", &usage(1_000_000, 100_000, Some(400_000), None));
        assert_eq!(source, CostSource::Price);
        // 600k fresh × 2 + 400k cached × 0.5 + 100k out × 10 = 1.2 + 0.2 + 1.0
        assert!((cost.unwrap_or(0.0) - 2.4).abs() < 1e-9, "{cost:?}");
    }

    #[test]
    fn unknown_model_has_no_price() {
        let book = PriceBook::default();
        assert_eq!(
            book.cost("qwen2.5-coder", &usage(10, 5, None, None)),
            (None, CostSource::Unknown)
        );
    }

    #[test]
    fn builtin_names_match_strictly() {
        assert!(builtin_price("gpt-4o").is_some());
        assert!(builtin_price("openai/gpt-4o-mini").is_some());
        assert!(builtin_price("gpt-4o-2024-08-06").is_some());
        assert!(builtin_price("claude-sonnet-4-20250514").is_some());
        assert!(builtin_price("anthropic/claude-sonnet-4.5").is_some());
        assert_eq!(
            builtin_price("gpt-4o-mini").map(|p| p.input_per_mtok),
            Some(0.15)
        );
        assert!(builtin_price("gpt-4o-audio-preview").is_none());
        assert!(builtin_price("gpt-4").is_none());
        assert!(builtin_price("mock-model").is_none());
    }
}
