//! Test support: a loopback mock model server and a hermetic environment for the binary.
#![allow(dead_code)]

pub(crate) mod env;
pub(crate) mod kernel;
pub(crate) mod mock;
pub(crate) mod outside;
pub(crate) mod sse;

pub(crate) use env::TestEnv;
pub(crate) use mock::{MockServer, Reply};

/// A model name the coach recognises as small (the model `scripts/local-model.sh` serves).
pub(crate) const SMALL_MODEL: &str = "qwen2.5-coder-1.5b-instruct";
/// A capable model's name: the coach stays off unless the model shows it needs help.
pub(crate) const CAPABLE_MODEL: &str = "gpt-5";
