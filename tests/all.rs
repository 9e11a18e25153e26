#![allow(clippy::expect_used, clippy::unwrap_used)]
//! The one integration-test binary: `support` (mock model server, test environment) and
//! `suite` (the tests, one module per area).

mod support;
mod suite;
