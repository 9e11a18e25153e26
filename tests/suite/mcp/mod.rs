//! The MCP client (issue 17): a small MCP server built with `rmcp`'s server side
//! (`examples/mcp_test_server.rs`), driven over stdio and over streamable HTTP on loopback,
//! through the binary with the mock model.

mod doctor;
mod http;
mod lifecycle;
mod policy;
mod readme;
mod repl;
mod seam;
mod stdio;
mod unchanged;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::TestEnv;

/// The test server binary, built once per test run (`cargo build --example`; a no-op when
/// `cargo test` already built the examples).
pub(super) fn test_server() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let mut command = Command::new(env!("CARGO"));
        command
            .args([
                "build",
                "--example",
                "mcp_test_server",
                "--message-format=json",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if !cfg!(debug_assertions) {
            command.arg("--release");
        }
        let output = command.output().expect("run cargo build");
        assert!(
            output.status.success(),
            "cannot build the MCP test server: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|m| m["target"]["name"] == "mcp_test_server")
            .find_map(|m| m["executable"].as_str().map(PathBuf::from))
            .expect("the test server's executable in cargo's output")
    })
}

/// A directory for the test server's marker files.
pub(super) fn marks(env: &TestEnv) -> PathBuf {
    let dir = env.root().join("marks");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `[mcp_servers.NAME]` table starting the test server over stdio with `args` (after
/// `--stdio --marks DIR`), plus `extra` TOML lines.
pub(super) fn stdio_server(name: &str, marks: &Path, args: &[&str], extra: &str) -> String {
    let mut all = vec![
        "--stdio".to_string(),
        "--marks".to_string(),
        marks.display().to_string(),
    ];
    all.extend(args.iter().map(|a| a.to_string()));
    format!(
        "[mcp_servers.{name}]\ncommand = {:?}\nargs = {}\n{extra}\n",
        test_server().display().to_string(),
        serde_json::to_string(&all).unwrap(),
    )
}

/// The test server over streamable HTTP on 127.0.0.1; killed when dropped.
pub(super) struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    pub(super) fn start(marks: &Path) -> Self {
        let mut child = Command::new(test_server())
            .args(["--http", "--marks"])
            .arg(marks)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the HTTP test server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("http://127.0.0.1:"), "{line:?}");
        Self {
            child,
            url: line.trim().to_string(),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for `path` to exist (the test server writes marker files as things happen).
pub(super) fn wait_for(path: &Path, within: Duration) {
    let deadline = Instant::now() + within;
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} did not appear within {within:?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` is a live (not zombie) process.
pub(super) fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().chars().next())
        })
        .flatten()
        .is_some_and(|state| state != 'Z')
}

/// The pid in a marker file.
pub(super) fn pid_in(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
