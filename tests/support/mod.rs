//! Test support: a loopback mock model server and a hermetic environment for the binary.
#![allow(dead_code)]

pub mod env;
pub mod kernel;
pub mod mock;
pub mod outside;
pub mod sse;

pub use env::TestEnv;
pub use mock::{MockServer, Reply};
