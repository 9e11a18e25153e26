//! A hermetic environment for running the `agent` binary: temp `AGENT_HOME`, temp
//! workspace (a git repository root), temp `HOME`, and a cleared process environment.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use tempfile::TempDir;

pub(crate) struct TestEnv {
    root: TempDir,
    pub home: PathBuf,
    pub agent_home: PathBuf,
    pub workspace: PathBuf,
    vars: Vec<(String, String)>,
}

impl TestEnv {
    pub(crate) fn new() -> Self {
        let root = tempfile::tempdir().expect("tempdir");
        let base = root.path().canonicalize().expect("canonical temp dir");
        let home = base.join("home");
        let agent_home = home.join(".agents");
        let workspace = base.join("work");
        std::fs::create_dir_all(&agent_home).expect("agent home");
        std::fs::create_dir_all(workspace.join(".git")).expect("workspace");
        std::fs::write(workspace.join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        Self {
            root,
            home,
            agent_home,
            workspace,
            vars: Vec::new(),
        }
    }

    /// A test environment whose endpoint is `server` (model `mock-model`, which the coach
    /// treats like any capable model).
    pub(crate) fn with_server(server: &super::MockServer) -> Self {
        Self::with_model(server, "mock-model")
    }

    /// A test environment whose endpoint is `server`, serving `model`.
    pub(crate) fn with_model(server: &super::MockServer, model: &str) -> Self {
        let mut env = Self::new();
        env.var("BASE_URL", &server.base_url());
        env.var("MODEL", model);
        env
    }

    /// Sets a variable for every command this environment builds.
    pub(crate) fn var(&mut self, key: &str, value: &str) -> &mut Self {
        self.vars.push((key.to_string(), value.to_string()));
        self
    }

    /// Writes a file relative to the workspace, creating parents.
    pub(crate) fn write(&self, relative: &str, content: &str) -> PathBuf {
        let path = self.workspace.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("parent dirs");
        }
        std::fs::write(&path, content).expect("write file");
        path
    }

    pub(crate) fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.workspace.join(relative)).expect("read file")
    }

    /// Writes `$AGENT_HOME/config.toml`.
    pub(crate) fn config(&self, toml: &str) {
        std::fs::write(self.agent_home.join("config.toml"), toml).expect("config");
    }

    /// A scratch directory outside the workspace.
    pub(crate) fn outside(&self) -> PathBuf {
        let dir = self.root.path().join("outside");
        std::fs::create_dir_all(&dir).expect("outside dir");
        dir
    }

    /// The `agent` binary with a cleared environment, run in the workspace.
    pub(crate) fn cmd(&self) -> Command {
        let mut cmd = Command::cargo_bin("agent").expect("agent binary");
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("AGENT_HOME", &self.agent_home)
            .env("NO_COLOR", "1")
            .current_dir(&self.workspace)
            .timeout(std::time::Duration::from_secs(60));
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        cmd
    }

    /// The `agent` binary as a plain `std::process::Command` with the same environment as
    /// [`TestEnv::cmd`], for tests that spawn and kill it.
    pub(crate) fn std_cmd(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("AGENT_HOME", &self.agent_home)
            .env("NO_COLOR", "1")
            .current_dir(&self.workspace);
        for (k, v) in &self.vars {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs a one-shot task (`--yes` is not implied).
    pub(crate) fn run(&self, args: &[&str]) -> Output {
        self.cmd()
            .args(args)
            .write_stdin("")
            .output()
            .expect("run agent")
    }

    pub(crate) fn root(&self) -> &Path {
        self.root.path()
    }
}

/// stdout and stderr of an output as strings.
pub(crate) fn texts(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
