//! Budgets (SPEC §9.2): three dimensions per session, their signals and the lines the user
//! and the model see.
//!
//! - tokens: tokens of tool output added to the context, estimated at 4 characters a token
//!   (rounded up; no tokenizer is assumed);
//! - shell: `bash` calls that ran;
//! - cost: USD from `usage` and prices (§9.3); not enforced while a model call could not be
//!   priced (shown as `cost: unknown price for <model>`).
//!
//! Signals per dimension, with `ratio = used / limit`: `OK` below `warn_at` (default 0.8),
//! `WARNING` from `warn_at`, `EXHAUSTED` from `exhaust_at` (default 1.0). A limit of 0 is
//! `OK` until anything is used. The session's signal is the worst dimension's.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::roles::Limits;

pub(crate) use crate::config::governance::Thresholds;

/// Characters per token for the estimate (§7.2).
pub(crate) const CHARS_PER_TOKEN: u64 = 4;

/// Slack for float comparisons of ratios (0.1 + 0.2 must reach 0.3).
const EPSILON: f64 = 1e-9;

/// Estimated tokens of `text`: characters / 4, rounded up.
pub(crate) fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(CHARS_PER_TOKEN)
}

/// What a session has spent. Serializable so sessions can store it and restore it on
/// `--resume` ([`super::Governor::spending`], [`super::Governor::restore`]); unknown or
/// missing fields default, so older records still load.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Spending {
    /// Estimated tokens of tool output added to the context.
    pub tokens: u64,
    /// `bash` calls that ran.
    pub shell_calls: u64,
    /// USD of the model calls that could be priced.
    pub(crate) cost_usd: f64,
    /// Set when a model call could not be priced: the model's name. The cost dimension is
    /// then shown as unknown and not enforced.
    pub(crate) unpriced_model: Option<String>,
    /// Model calls made.
    pub(crate) model_calls: u64,
    /// Characters removed by the `compress` shell policy.
    pub compressed_chars_saved: u64,
}

/// A budget signal, ordered so the worst is the `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Signal {
    Ok,
    Warning,
    Exhausted,
}

impl fmt::Display for Signal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Signal::Ok => "OK",
            Signal::Warning => "WARNING",
            Signal::Exhausted => "EXHAUSTED",
        })
    }
}

/// One budget dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dimension {
    Tokens,
    Shell,
    Cost,
}

impl Dimension {
    pub(crate) const ALL: [Dimension; 3] = [Dimension::Tokens, Dimension::Shell, Dimension::Cost];

    /// The `[budget]` / `[limits]` key that sets its limit.
    pub(crate) fn config_key(self) -> &'static str {
        match self {
            Dimension::Tokens => "max_context_tokens",
            Dimension::Shell => "max_shell_invocations",
            Dimension::Cost => "max_cost_usd",
        }
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Dimension::Tokens => 0,
            Dimension::Shell => 1,
            Dimension::Cost => 2,
        }
    }
}

/// One dimension measured against its limit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DimensionStatus {
    pub(crate) dimension: Dimension,
    pub(crate) used: f64,
    pub(crate) limit: f64,
    /// `used / limit` in whole percent, rounded down (0 for an unused zero limit).
    pub(crate) percent: u64,
    pub(crate) signal: Signal,
    /// As shown in the §9.2 line: `tokens 50000/200000 (25%)`, `cost $0.50/$5.00 (10%)`,
    /// or `cost: unknown price for <model>`.
    pub(crate) text: String,
}

/// All dimensions of a session under one role.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub(crate) role: String,
    pub(crate) dimensions: Vec<DimensionStatus>,
    pub(crate) signal: Signal,
}

/// Measures `spending` against `limits`.
pub(crate) fn status(
    role: &str,
    limits: &Limits,
    spending: &Spending,
    thresholds: Thresholds,
) -> Status {
    let tokens = measure(
        Dimension::Tokens,
        spending.tokens as f64,
        limits.max_context_tokens as f64,
        thresholds,
    );
    let shell = if limits.max_shell_invocations == 0 {
        // A role without shell calls is not offered bash at all (see `Role::allows_tool_under`):
        // there is nothing to ration, so calls made under an earlier role (kept across
        // `/role`) must not exhaust this one and block its reads.
        DimensionStatus {
            dimension: Dimension::Shell,
            used: spending.shell_calls as f64,
            limit: 0.0,
            percent: 0,
            signal: Signal::Ok,
            text: format!("shell {}/0 (0%)", spending.shell_calls),
        }
    } else {
        measure(
            Dimension::Shell,
            spending.shell_calls as f64,
            limits.max_shell_invocations as f64,
            thresholds,
        )
    };
    let cost = match &spending.unpriced_model {
        Some(model) => DimensionStatus {
            dimension: Dimension::Cost,
            used: spending.cost_usd,
            limit: limits.max_cost_usd,
            percent: 0,
            signal: Signal::Ok,
            text: format!("cost: unknown price for {model}"),
        },
        None => measure(
            Dimension::Cost,
            spending.cost_usd,
            limits.max_cost_usd,
            thresholds,
        ),
    };
    let dimensions = vec![tokens, shell, cost];
    let signal = dimensions
        .iter()
        .map(|d| d.signal)
        .max()
        .unwrap_or(Signal::Ok);
    Status {
        role: role.to_string(),
        dimensions,
        signal,
    }
}

fn measure(dimension: Dimension, used: f64, limit: f64, thresholds: Thresholds) -> DimensionStatus {
    let (percent, signal) = if limit <= 0.0 {
        if used > 0.0 {
            (100, Signal::Exhausted)
        } else {
            (0, Signal::Ok)
        }
    } else {
        let ratio = used / limit;
        let signal = if ratio + EPSILON >= thresholds.exhaust_at {
            Signal::Exhausted
        } else if ratio + EPSILON >= thresholds.warn_at {
            Signal::Warning
        } else {
            Signal::Ok
        };
        ((ratio * 100.0 + EPSILON).floor() as u64, signal)
    };
    let text = match dimension {
        Dimension::Tokens => format!("tokens {used:.0}/{limit:.0} ({percent}%)"),
        Dimension::Shell => format!("shell {used:.0}/{limit:.0} ({percent}%)"),
        Dimension::Cost => format!("cost ${used:.2}/${limit:.2} ({percent}%)"),
    };
    DimensionStatus {
        dimension,
        used,
        limit,
        percent,
        signal,
        text,
    }
}

impl Status {
    pub(crate) fn dimension(&self, dimension: Dimension) -> &DimensionStatus {
        &self.dimensions[dimension.index()]
    }

    /// The `/budget` line, exactly as §9.2 gives it:
    /// `Budget[coder]: tokens 50000/200000 (25%) | shell 5/100 (5%) | cost $0.50/$5.00 (10%) → OK`.
    pub(crate) fn line(&self) -> String {
        let parts: Vec<&str> = self.dimensions.iter().map(|d| d.text.as_str()).collect();
        format!(
            "Budget[{}]: {} → {}",
            self.role,
            parts.join(" | "),
            self.signal
        )
    }

    fn texts_at(&self, signal: Signal) -> Vec<&str> {
        self.dimensions
            .iter()
            .filter(|d| d.signal == signal)
            .map(|d| d.text.as_str())
            .collect()
    }

    /// The line appended to tool results while the session is at `WARNING`:
    /// `Budget warning: tokens 160000/200000 (80%) for role coder; tool calls stop at 100%.`
    pub(crate) fn warning_line(&self, thresholds: Thresholds) -> String {
        format!(
            "Budget warning: {} for role {}; tool calls stop at {}%.",
            self.texts_at(Signal::Warning).join(", "),
            self.role,
            (thresholds.exhaust_at * 100.0).round()
        )
    }

    /// Why tool calls are blocked and how to continue (§9.2), for the model and the user.
    pub(crate) fn exhausted_message(&self) -> String {
        let keys: Vec<&str> = self
            .dimensions
            .iter()
            .filter(|d| d.signal == Signal::Exhausted)
            .map(|d| d.dimension.config_key())
            .collect();
        format!(
            "budget exhausted for role {}: {}; tool calls are blocked. To continue, switch role \
             (/role NAME, or --role NAME) or raise the limit ({} under [budget] in config.toml)",
            self.role,
            self.texts_at(Signal::Exhausted).join(", "),
            keys.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn limits(tokens: u64, shell: u64, cost: f64) -> Limits {
        Limits {
            max_context_tokens: tokens,
            max_shell_invocations: shell,
            max_cost_usd: cost,
        }
    }

    fn spent(tokens: u64, shell_calls: u64, cost_usd: f64) -> Spending {
        Spending {
            tokens,
            shell_calls,
            cost_usd,
            ..Spending::default()
        }
    }

    #[test]
    fn line_of_9_2() {
        let status = status(
            "coder",
            &limits(200_000, 100, 5.0),
            &spent(50_000, 5, 0.5),
            Thresholds::default(),
        );
        assert_eq!(
            status.line(),
            "Budget[coder]: tokens 50000/200000 (25%) | shell 5/100 (5%) | cost $0.50/$5.00 (10%) → OK"
        );
    }

    #[test]
    fn signals_at_thresholds() {
        let t = Thresholds::default();
        let l = limits(100, 10, 1.0);
        let signal = |s: Spending| status("r", &l, &s, t).signal;
        assert_eq!(signal(spent(79, 7, 0.79)), Signal::Ok);
        assert_eq!(signal(spent(80, 0, 0.0)), Signal::Warning);
        assert_eq!(signal(spent(0, 8, 0.0)), Signal::Warning);
        assert_eq!(signal(spent(0, 0, 0.8)), Signal::Warning);
        assert_eq!(signal(spent(99, 9, 0.99)), Signal::Warning);
        assert_eq!(signal(spent(100, 0, 0.0)), Signal::Exhausted);
        assert_eq!(signal(spent(0, 10, 0.0)), Signal::Exhausted);
        assert_eq!(signal(spent(0, 0, 0.1 + 0.2 + 0.7)), Signal::Exhausted);
        let custom = Thresholds {
            warn_at: 0.5,
            exhaust_at: 0.9,
        };
        assert_eq!(
            status("r", &l, &spent(50, 0, 0.0), custom).signal,
            Signal::Warning
        );
        assert_eq!(
            status("r", &l, &spent(90, 0, 0.0), custom).signal,
            Signal::Exhausted
        );
    }

    #[test]
    fn zero_limit_and_unknown_price() {
        let mut spending = spent(0, 0, 0.0);
        spending.unpriced_model = Some("local-qwen".into());
        let status = status(
            "reviewer",
            &limits(150_000, 0, 3.0),
            &spending,
            Thresholds::default(),
        );
        assert_eq!(
            status.line(),
            "Budget[reviewer]: tokens 0/150000 (0%) | shell 0/0 (0%) | cost: unknown price for local-qwen → OK"
        );
    }

    #[test]
    fn warning_and_exhausted_texts() {
        let l = limits(200_000, 2, 5.0);
        let t = Thresholds::default();
        let warning = status("coder", &l, &spent(160_000, 1, 0.0), t);
        assert_eq!(
            warning.warning_line(t),
            "Budget warning: tokens 160000/200000 (80%) for role coder; tool calls stop at 100%."
        );
        let exhausted = status("coder", &l, &spent(0, 2, 0.0), t);
        assert_eq!(
            exhausted.exhausted_message(),
            "budget exhausted for role coder: shell 2/2 (100%); tool calls are blocked. To \
             continue, switch role (/role NAME, or --role NAME) or raise the limit \
             (max_shell_invocations under [budget] in config.toml)"
        );
    }

    #[test]
    fn token_estimate() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("abc"), 1);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        assert_eq!(estimate_tokens("ééééé"), 2);
    }

    #[test]
    fn spending_round_trips_and_tolerates_missing_fields() {
        let spending = Spending {
            tokens: 5,
            shell_calls: 1,
            cost_usd: 0.25,
            unpriced_model: None,
            model_calls: 2,
            compressed_chars_saved: 10,
        };
        let text = serde_json::to_string(&spending).unwrap_or_default();
        let back: Spending = serde_json::from_str(&text).unwrap_or_default();
        assert_eq!(back, spending);
        let old: Spending = serde_json::from_str(r#"{"tokens": 3}"#).unwrap_or_default();
        assert_eq!(old.tokens, 3);
    }
}
