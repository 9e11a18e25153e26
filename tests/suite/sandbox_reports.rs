//! The issue-15 cases of tests/data/reports-2026-12.jsonl (categories a, c, d), replayed
//! through the permission engine and end to end: the `agent` binary under `--yes`, the mock
//! model scripting the reported commands, a temp HOME full of fake secrets. What the model
//! receives is checked in the recorded request bodies.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use agent::permissions::{Decision, PathContext, PermissionEngine};
use serde_json::{Value, json};

use super::bash_tool::{script, tool_results};
use super::sandbox::{marker, survivors};
use crate::support::env::texts;
use crate::support::kernel::{fake_secrets, landlock, namespaces};
use crate::support::sse::tool_events;
use crate::support::{MockServer, Reply, TestEnv};

use Decision::{Allow, Ask, Deny};

const REPORTS: &str = include_str!("../data/reports-2026-12.jsonl");

/// The case with `id`.
fn case(id: &str) -> Value {
    REPORTS
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str::<Value>(line).expect("case is JSON"))
        .find(|case| case["id"] == id)
        .unwrap_or_else(|| panic!("case {id} missing from tests/data/reports-2026-12.jsonl"))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("a list")
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

fn engine(env: &TestEnv) -> PermissionEngine {
    PermissionEngine::new(
        Vec::new(),
        PathContext {
            workspace: env.workspace.clone(),
            cwd: env.workspace.clone(),
            home: Some(env.home.clone()),
            agent_home: env.agent_home.clone(),
        },
    )
}

/// A fake private key at `$HOME/.ssh/id_rsa` (besides every other fake secret).
const KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY----- FAKE-KEY";

fn env_with_secrets(server: &MockServer) -> TestEnv {
    let env = TestEnv::with_server(server);
    fake_secrets(&env.home, &env.agent_home);
    std::fs::write(env.home.join(".ssh/id_rsa"), format!("{KEY}\n")).unwrap();
    env
}

/// Runs a one-shot `--yes` session; returns the tool results and stderr.
fn run_yes(env: &TestEnv, server: &MockServer) -> (Vec<String>, String) {
    let output = env.run(&["--yes", "do it"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "all done\n", "{stderr}");
    (tool_results(server), stderr)
}

/// Every request body the mock received, as text.
fn bodies(server: &MockServer) -> String {
    server
        .chat_requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.raw_body).into_owned())
        .collect()
}

fn run_git(dir: &Path, home: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn a_bare_cd_secret_read() {
    let case = case("a-bare-cd-secret-read");
    let inputs = strings(&case["input"]);
    let server = MockServer::start(script(
        &inputs
            .iter()
            .map(|c| (c.as_str(), None))
            .collect::<Vec<_>>(),
    ));
    let env = env_with_secrets(&server);
    let engine = engine(&env);
    for input in &inputs {
        let recursive = input.contains("grep") || input.contains("rg ");
        let decision = engine.check_bash(input).decision;
        if recursive {
            assert!(decision >= Ask, "{input}: {decision}");
        } else {
            assert_eq!(decision, Deny, "{input}");
        }
    }
    let controls = [
        ("cd ~ && cat .ssh/id_rsa", Deny),
        ("cd ~ && grep -r KEY .", Ask),
        ("cd; ls", Allow),
        ("cd -", Ask),
        ("builtin cd; cat .ssh/id_rsa", Deny),
        ("command cd -L; cat .ssh/id_rsa", Deny),
    ];
    for (input, expected) in controls {
        assert_eq!(engine.check_bash(input).decision, expected, "{input}");
    }
    if !namespaces() {
        return;
    }
    // Under --yes the recursive ones run; the kernel keeps the key out of them.
    let (results, _) = run_yes(&env, &server);
    assert_eq!(results.len(), inputs.len());
    assert!(!bodies(&server).contains("FAKE-KEY"), "{results:?}");
    assert!(results[0].starts_with("Blocked by policy"), "{results:?}");
}

#[test]
fn a_nested_git_metadata_write() {
    let case = case("a-nested-git-metadata-write");
    let input = &case["input"];
    let bash = strings(&input["bash"]);
    let server = MockServer::start(script(
        &bash.iter().map(|c| (c.as_str(), None)).collect::<Vec<_>>(),
    ));
    let env = TestEnv::with_server(&server);
    assert_eq!(strings(&input["setup"]), vec!["git init -q vendor/sub"]);
    std::fs::create_dir_all(env.workspace.join("vendor")).unwrap();
    run_git(&env.workspace, &env.home, &["init", "-q", "vendor/sub"]);
    let engine = engine(&env);
    for path in strings(&input["file_tool_paths"]) {
        for tool in ["write_file", "str_replace"] {
            let decision = engine
                .check_file(tool, &env.workspace.join(&path), true)
                .decision;
            assert_eq!(decision, Ask, "{tool} {path}");
        }
    }
    for command in &bash {
        assert!(engine.check_bash(command).decision >= Ask, "{command}");
    }
    if !namespaces() {
        return;
    }
    let config = env.read("vendor/sub/.git/config");
    let (results, _) = run_yes(&env, &server);
    assert!(
        !env.workspace
            .join("vendor/sub/.git/hooks/pre-commit")
            .exists()
    );
    assert_eq!(env.read("vendor/sub/.git/config"), config);
    for result in &results {
        assert!(
            result.contains("blocked by sandbox:") && result.contains("is protected"),
            "{results:?}"
        );
    }
}

#[test]
fn a_symlink_secret_read() {
    let case = case("a-symlink-secret-read");
    let input = &case["input"];
    let bash = strings(&input["bash"]);
    let mut calls: Vec<Reply> = strings(&input["file_tool"])
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let path = call.strip_prefix("read_file ").expect("read_file call");
            let args = json!({ "path": path }).to_string();
            Reply::Sse(tool_events(&format!("read_{i}"), "read_file", &args))
        })
        .collect();
    calls.extend(script(
        &bash.iter().map(|c| (c.as_str(), None)).collect::<Vec<_>>(),
    ));
    let server = MockServer::start(calls);
    let env = env_with_secrets(&server);
    std::fs::write(env.home.join(".ssh/id_rsa"), "FAKE-KEY\n").unwrap();
    assert_eq!(strings(&input["setup"]).len(), 3);
    std::os::unix::fs::symlink(
        env.home.join(".ssh/id_rsa"),
        env.workspace.join("notes.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(env.home.join(".ssh"), env.workspace.join("keys")).unwrap();
    let engine = engine(&env);
    for command in &bash {
        assert!(engine.check_bash(command).decision >= Ask, "{command}");
    }
    assert_eq!(engine.check_bash("grep -r KEY src").decision, Allow);
    if !namespaces() {
        return;
    }
    let (results, _) = run_yes(&env, &server);
    assert_eq!(results.len(), 2 + bash.len());
    for result in &results[..2] {
        assert!(result.starts_with("Blocked by policy"), "{result}");
    }
    assert!(!bodies(&server).contains("FAKE-KEY"), "{results:?}");
}

#[test]
fn a_redirect_only_line() {
    let case = case("a-redirect-only-line");
    let env = TestEnv::new();
    let engine = engine(&env);
    for input in strings(&case["input"]) {
        let evaluation = engine.check_bash(&input);
        assert!(evaluation.decision >= Ask, "{input}: {evaluation:?}");
        if let Some(target) = input.strip_prefix("> ").or(input.strip_prefix(">> ")) {
            let with_program = engine.check_bash(&format!("true > {target}")).decision;
            assert_eq!(evaluation.decision, with_program, "{input}");
        }
    }
    for (input, expected) in [
        ("> ~/.ssh/authorized_keys", Deny),
        ("{ > .env; }", Deny),
        ("> /dev/null", Allow),
        ("( ls ) 2>/dev/null", Allow),
        ("{ echo hi; } > out.txt", Ask),
        ("while false; do :; done > .git/index", Ask),
    ] {
        assert_eq!(engine.check_bash(input).decision, expected, "{input}");
    }
}

/// Starts the agent on `command`, waits until the command's processes run, kills the agent
/// with SIGKILL, and returns how long the processes took to disappear.
fn kill_agent_while(env: &TestEnv, command: &str, mark: &str) -> Duration {
    let mut agent = env
        .std_cmd()
        .args(["--yes", "task"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while survivors(mark).is_empty() {
        assert!(Instant::now() < deadline, "`{command}` never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    agent.kill().unwrap();
    let killed = Instant::now();
    agent.wait().unwrap();
    while !survivors(mark).is_empty() && killed.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    killed.elapsed()
}

#[test]
fn c_agent_sigkill_orphans() {
    let case = case("c-agent-sigkill-orphans");
    let step = case["input"]["steps"][0].as_str().unwrap();
    assert!(step.contains("sleep 40; echo SLEPT"), "{step}");
    if !landlock() {
        return;
    }
    for namespaces in [true, false] {
        let mark = marker("sigkill");
        // A `setsid` grandchild too: it left the process group the agent would signal.
        let command = format!("export {mark}; setsid sleep 40 & sleep 40; echo SLEPT");
        let server = MockServer::start(vec![Reply::Sse(tool_events(
            "c1",
            "bash",
            &json!({ "command": command }).to_string(),
        ))]);
        let mut env = TestEnv::with_server(&server);
        if !namespaces {
            env.var("AGENT_SANDBOX_NO_NAMESPACES", "1");
        }
        let gone_after = kill_agent_while(&env, &command, &mark);
        assert_eq!(
            survivors(&mark),
            Vec::<u32>::new(),
            "namespaces: {namespaces}"
        );
        assert!(
            gone_after < Duration::from_secs(1),
            "namespaces: {namespaces}: {gone_after:?}"
        );
    }
}

#[test]
fn d_parent_secret_env_inherit() {
    let case = case("d-parent-secret-env-inherit");
    let parent: Vec<(String, String)> = case["input"]["parent_env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    let mut checks = vec![case["input"]["model"].as_str().unwrap().to_string()];
    checks.extend(strings(&case["input"]["check"]));
    let commands: Vec<String> = checks
        .iter()
        .map(|c| {
            c.strip_prefix("bash '")
                .and_then(|c| c.strip_suffix('\''))
                .unwrap_or(c)
                .to_string()
        })
        .chain(["cat /proc/*/environ | tr '\\0' '\\n' | grep -c FAKE".to_string()])
        .collect();
    // Namespaces, Landlock only, and no sandbox: the variables are removed in every mode.
    let modes: [(&[&str], bool); 3] = [(&[], false), (&[], true), (&["--sandbox", "off"], false)];
    if !landlock() {
        return;
    }
    for (args, landlock_only) in modes {
        let server = MockServer::start(script(
            &commands
                .iter()
                .map(|c| (c.as_str(), None))
                .collect::<Vec<_>>(),
        ));
        let mut env = TestEnv::with_server(&server);
        for (key, value) in &parent {
            env.var(key, value);
        }
        if landlock_only {
            env.var("AGENT_SANDBOX_NO_NAMESPACES", "1");
        }
        let mut all = vec!["--yes"];
        all.extend_from_slice(args);
        all.push("do it");
        let output = env.run(&all);
        let (stdout, stderr) = texts(&output);
        assert_eq!(stdout, "all done\n", "{stderr}");
        assert!(
            stderr.contains(
                "3 secret variables removed from commands (AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, OPENAI_API_KEY)"
            ),
            "{stderr}"
        );
        let results = tool_results(&server);
        assert!(results[0].contains("PATH="), "{results:?}");
        // SAFETY: geteuid has no memory effects.
        let root = unsafe { libc::geteuid() } == 0;
        if args.is_empty() && (!landlock_only || !root) {
            // Not even in another process's environment: the agent is out of sight in the PID
            // namespace, and not dumpable (which stops everyone but root) without one.
            let last = results.last().map(String::as_str).unwrap_or_default();
            assert!(last.ends_with("0\n[exit code 1]"), "{last}");
        }
        let sent = bodies(&server);
        for (_, value) in &parent {
            assert!(
                !sent.contains(value.as_str()),
                "{value} reached the model: {results:?}"
            );
        }
    }
}

/// The whole agent as `nobody` (uid 65534), as real users run it: the namespace probe, the
/// banner, a hidden secret and a protected hook. The tests otherwise run as root here.
#[test]
fn an_unprivileged_agent_gets_namespaces() {
    const NOBODY: &str = "65534";
    // SAFETY: geteuid has no memory effects.
    if unsafe { libc::geteuid() } != 0 || !namespaces() {
        return;
    }
    let Some(setpriv) = ["/usr/bin/setpriv", "/bin/setpriv"]
        .iter()
        .map(Path::new)
        .find(|p| p.is_file())
    else {
        crate::support::kernel::skip("`setpriv` (util-linux), to run the agent as nobody");
        return;
    };
    let server = MockServer::start(script(&[(
        "id -u; grep -R KEY . ; echo x > .git/hooks/pre-commit",
        None,
    )]));
    let env = env_with_secrets(&server);
    std::fs::write(env.home.join(".ssh/id_rsa"), "FAKE-KEY\n").unwrap();
    std::os::unix::fs::symlink(env.home.join(".ssh"), env.workspace.join("keys")).unwrap();
    run_git(&env.workspace, &env.home, &["init", "-q"]);
    let owner = format!("{NOBODY}:{NOBODY}");
    let chown = std::process::Command::new("chown")
        .args(["-R", &owner])
        .arg(env.root())
        .status()
        .unwrap();
    assert!(chown.success());
    let output = std::process::Command::new(setpriv)
        .args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
        ])
        .arg(env!("CARGO_BIN_EXE_agent"))
        .args(["--yes", "do it"])
        .current_dir(&env.workspace)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &env.home)
        .env("AGENT_HOME", &env.agent_home)
        .env("BASE_URL", server.base_url())
        .env("MODEL", "mock-model")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = texts(&output);
    assert_eq!(stdout, "all done\n", "{stderr}");
    assert!(stderr.contains(", namespaces)"), "{stderr}");
    let results = tool_results(&server);
    assert!(results[0].starts_with("65534\n"), "{results:?}");
    assert!(
        results[0].contains("is a secret location, hidden from commands"),
        "{results:?}"
    );
    assert!(
        results[0].contains("pre-commit: Read-only file system"),
        "{results:?}"
    );
    assert!(!bodies(&server).contains("FAKE-KEY"));
}
