//! Real-model end-to-end tests. Ignored by default; run them against a live endpoint:
//!
//! ```text
//! scripts/local-model.sh start
//! AGENT_E2E_BASE_URL=http://127.0.0.1:8080/v1 cargo test --release -- --ignored e2e
//! ```
//!
//! `AGENT_E2E_MODEL` names the model (default `qwen2.5-coder-1.5b-instruct`) and
//! `AGENT_E2E_API_KEY` the key, if the endpoint needs one.

use std::time::Duration;

use crate::support::TestEnv;
use crate::support::env::texts;

fn e2e_env() -> Option<TestEnv> {
    let base_url = std::env::var("AGENT_E2E_BASE_URL").ok()?;
    let model = std::env::var("AGENT_E2E_MODEL")
        .unwrap_or_else(|_| "qwen2.5-coder-1.5b-instruct".to_string());
    let mut env = TestEnv::new();
    env.var("BASE_URL", &base_url).var("MODEL", &model);
    if let Ok(key) = std::env::var("AGENT_E2E_API_KEY") {
        env.var("API_KEY", &key);
    }
    Some(env)
}

#[test]
#[ignore = "needs a real model: set AGENT_E2E_BASE_URL"]
fn e2e_hello_py() {
    let Some(env) = e2e_env() else {
        eprintln!("skipped: AGENT_E2E_BASE_URL is not set");
        return;
    };
    let output = env
        .cmd()
        .args(["--yes", "Create hello.py that prints hello, then run it"])
        .timeout(Duration::from_secs(600))
        .write_stdin("")
        .output()
        .expect("run agent");
    let (stdout, stderr) = texts(&output);
    eprintln!("--- stderr ---\n{stderr}\n--- stdout ---\n{stdout}");
    assert_eq!(output.status.code(), Some(0));
    let script = env.workspace.join("hello.py");
    assert!(script.exists(), "hello.py was not created");
    let run = std::process::Command::new("python3")
        .arg(&script)
        .output()
        .expect("python3");
    let printed = String::from_utf8_lossy(&run.stdout).to_lowercase();
    assert!(printed.contains("hello"), "hello.py printed {printed:?}");
    assert!(
        stderr.contains("● bash") && stderr.contains("hello.py"),
        "the agent never ran hello.py"
    );
}
