//! When and how long to wait before another attempt (§11 retries).
//!
//! Retried: HTTP 408, 429, 500, 502, 503, 504, 520-524 (Cloudflare in front of a provider),
//! 529 (Anthropic-style "overloaded"), connection errors, timeouts and interrupted streams.
//! Never retried: every other 4xx (400/401/403/404 mean the request or the setup is wrong).
//!
//! The wait before attempt `k + 1` is the server's `Retry-After` (or `retry-after-ms`) when
//! given, else `1 s · 2^(k-1)` with ±25 % jitter; both capped by `max_retry_wait`. Waiting
//! goes through a [`Sleeper`] so tests can observe the waits without sleeping.

use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// First backoff step when the server gives no `Retry-After`.
const BASE_DELAY: Duration = Duration::from_secs(1);

/// Whether an HTTP status is worth another attempt.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429 | 500 | 502 | 503 | 504 | 520..=524 | 529)
}

/// Waits between attempts. The client uses [`TokioSleeper`]; tests pass one that records
/// the requested durations and returns at once.
pub trait Sleeper: Send + Sync + std::fmt::Debug {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// Sleeps on the tokio timer.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TokioSleeper;

impl Sleeper for TokioSleeper {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// The default sleeper, shared.
pub(crate) fn tokio_sleeper() -> Arc<dyn Sleeper> {
    Arc::new(TokioSleeper)
}

/// The wait before attempt `attempt + 1` (`attempt` ≥ 1 just failed): the server's hint
/// when given, else exponential backoff scaled by `jitter` (a factor in `0.75..=1.25`);
/// never more than `max`.
pub(crate) fn retry_delay(
    attempt: u32,
    retry_after: Option<Duration>,
    max: Duration,
    jitter: f64,
) -> Duration {
    if let Some(delay) = retry_after {
        return delay.min(max);
    }
    let base = BASE_DELAY.saturating_mul(1 << attempt.saturating_sub(1).min(16));
    base.mul_f64(jitter.clamp(0.75, 1.25)).min(max)
}

/// A jitter factor in `0.75..1.25`.
pub(crate) fn random_jitter() -> f64 {
    let unit = (random_u64() >> 11) as f64 / (1u64 << 53) as f64;
    0.75 + unit * 0.5
}

/// 64 random-enough bits from the standard library's randomly keyed hasher and the clock
/// (for jitter and id offsets; not for anything secret; no random-number crate needed).
pub(crate) fn random_u64() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.finish()
}

/// The server's wait hint from response headers: `retry-after-ms` (OpenAI, Azure) in
/// milliseconds, else `Retry-After` as seconds or an HTTP date.
pub(crate) fn retry_after_from_headers(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms.min(1e12) / 1000.0));
    }
    text("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now()))
}

/// `Retry-After` as delay-seconds (RFC 9110 §10.2.3; fractions accepted) or an HTTP date
/// relative to `now` (a date in the past means no wait).
pub(crate) fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::from_secs_f64(seconds.min(1e9)));
    }
    let when = httpdate_to_unix(value)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(when.saturating_sub(now)))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7) into Unix
/// seconds. The obsolete RFC 850 and asctime forms are not accepted (no server we target
/// sends them); an unparsable date means "no hint".
pub(crate) fn httpdate_to_unix(value: &str) -> Option<u64> {
    let parts: Vec<&str> = value.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: u64 = day.parse().ok().filter(|d| (1..=31).contains(d))?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u64
        + 1;
    let year: u64 = year.parse().ok().filter(|y| (1970..=9999).contains(y))?;
    let mut hms = time.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y / 400;
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + m * 60 + s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn retry_after_forms() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770);
        assert_eq!(parse_retry_after("7", now), Some(Duration::from_secs(7)));
        assert_eq!(
            parse_retry_after(" 1.5 ", now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            parse_retry_after(
                "Sun, 06 Nov 1994 08:49:37 GMT",
                now + Duration::from_secs(60)
            ),
            Some(Duration::ZERO)
        );
        assert_eq!(
            httpdate_to_unix("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(
            parse_retry_after("Sun, 99 Nov 1994 08:49:37 GMT", now),
            None
        );
    }

    #[test]
    fn retry_after_ms_header_wins() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(
            "retry-after",
            reqwest::header::HeaderValue::from_static("9"),
        );
        assert_eq!(
            retry_after_from_headers(&headers),
            Some(Duration::from_secs(9))
        );
        headers.insert(
            "retry-after-ms",
            reqwest::header::HeaderValue::from_static("250"),
        );
        assert_eq!(
            retry_after_from_headers(&headers),
            Some(Duration::from_millis(250))
        );
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let max = Duration::from_secs(60);
        let delays: Vec<Duration> = (1..=4).map(|a| retry_delay(a, None, max, 1.0)).collect();
        assert_eq!(
            delays,
            [1, 2, 4, 8].map(Duration::from_secs).to_vec(),
            "1 s, doubling"
        );
        assert_eq!(retry_delay(2, None, max, 0.75), Duration::from_millis(1500));
        assert_eq!(retry_delay(30, None, max, 1.25), max);
        assert_eq!(
            retry_delay(1, Some(Duration::from_secs(600)), max, 1.0),
            max
        );
        assert_eq!(
            retry_delay(3, Some(Duration::from_secs(7)), max, 1.0),
            Duration::from_secs(7)
        );
        for _ in 0..100 {
            let jitter = random_jitter();
            assert!((0.75..=1.25).contains(&jitter), "{jitter}");
        }
    }

    #[test]
    fn retryable_statuses() {
        let retried: Vec<u16> = (100..600).filter(|s| is_retryable_status(*s)).collect();
        assert_eq!(
            retried,
            vec![408, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529]
        );
    }
}
