//! Test support: a loopback mock model server and a hermetic environment for the binary.
#![allow(dead_code)]

pub mod env;
pub mod kernel;
pub mod mock;
pub mod outside;
pub mod sse;

pub use env::TestEnv;
pub use mock::{MockServer, Reply};

/// A model name the coach recognises as small (the model `scripts/local-model.sh` serves).
pub const SMALL_MODEL: &str = "qwen2.5-coder-1.5b-instruct";
/// A capable model's name: the coach stays off unless the model shows it needs help.
pub const CAPABLE_MODEL: &str = "gpt-5";
