//! Issue 15 at the library level (`agent::sandbox::exec::run` with the built `agent` binary as
//! the helper): every route to a secret location is unreadable, protected paths refuse writes
//! while ordinary git work goes on, programs a repository's config names are not run, and
//! nothing a command starts outlives the call — with namespaces, and (for process lifetime)
//! on the Landlock-only path too.
//!
//! The home directory of every command here is a temp directory full of fake secrets
//! (`support::kernel::fake_secrets`); the real home is never touched.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent::cancel::CancelToken;
use agent::permissions::defaults::SECRET_LOCATIONS;
use agent::sandbox::diagnose;
use agent::sandbox::exec::{Background, Confinement, Ending, ExecOutcome};
use agent::sandbox::protect::{self, ScanInput};
use agent::sandbox::secrets::hidden_paths;
use agent::sandbox::{ExecSettings, NamespaceStatus, SandboxMode};

use super::sandbox::{Place, marker, settings, survivors};
use crate::support::kernel::{FAKE, Secret, fake_secrets, landlock, namespaces};

/// A workspace, a fake home beside it, and settings that hide the home's secrets.
struct Fixture {
    place: Place,
    home: PathBuf,
    secrets: Vec<Secret>,
    settings: ExecSettings,
}

fn fixture() -> Fixture {
    let place = Place::new();
    let home = place.outside.join("home");
    let agent_home = home.join(".agents");
    let secrets = fake_secrets(&home, &agent_home);
    let locations: Vec<String> = SECRET_LOCATIONS.iter().map(|s| s.to_string()).collect();
    let (hidden, warnings) = hidden_paths(&locations, Some(&home), &agent_home, &place.ws);
    assert_eq!(warnings, Vec::<String>::new());
    let mut settings = settings(SandboxMode::WorkspaceWrite, false);
    settings.hidden = hidden;
    settings.env_set = vec![
        ("HOME".into(), home.display().to_string()),
        ("AGENT_HOME".into(), agent_home.display().to_string()),
    ];
    Fixture {
        place,
        home,
        secrets,
        settings,
    }
}

/// `settings` as on a machine without user namespaces.
fn landlock_only(mut settings: ExecSettings) -> ExecSettings {
    settings.namespaces = NamespaceStatus::Unavailable {
        reason: "test: Landlock only".into(),
    };
    settings
}

fn text(outcome: &ExecOutcome) -> &str {
    &outcome.output.text
}

#[test]
fn every_secret_location_is_unreadable_by_every_route() {
    if !namespaces() {
        return;
    }
    let f = fixture();
    assert_eq!(f.secrets.len(), SECRET_LOCATIONS.len());
    std::fs::create_dir_all(f.place.ws.join("links")).unwrap();
    let mut direct = Vec::new();
    let mut after_cd = Vec::new();
    let mut built = Vec::new();
    for (i, secret) in f.secrets.iter().enumerate() {
        let location = f.home.join(&secret.relative);
        std::os::unix::fs::symlink(&location, f.place.ws.join(format!("links/{i}"))).unwrap();
        let relative = secret
            .file
            .strip_prefix(&f.home)
            .unwrap()
            .display()
            .to_string();
        direct.push(format!("cat '{}'", secret.file.display()));
        after_cd.push(format!("cat '{relative}'"));
        // The path only exists once the command runs: no rule can see it.
        built.push(format!(
            "cat \"$(printf '%s/%s' \"$HOME\" '{relative}' | tr -d '\\n')\""
        ));
        built.push(format!("cat \"/proc/self/root$HOME/{relative}\""));
    }
    let routes = [
        ("direct path", direct.join("; ")),
        ("bare cd", format!("cd; {}", after_cd.join("; "))),
        ("cd --", format!("cd --; {}", after_cd.join("; "))),
        (
            "workspace symlinks, recursive readers",
            "grep -R FAKE .; find -L . -type f -exec cat {} +; rg -L FAKE; cat links/*".to_string(),
        ),
        ("run-time path", built.join("; ")),
        (
            "bare cd, recursive",
            "cd; grep -r FAKE . ; find . -type f -exec cat {} +".to_string(),
        ),
        (
            "glob",
            "cat ~/.ssh/* ~/.aws/* ~/.netrc $AGENT_HOME/*".to_string(),
        ),
    ];
    for (route, command) in &routes {
        let outcome = f.place.run(&f.settings, command);
        assert!(
            matches!(&outcome.confinement, Confinement::Confined(p) if p.namespaces),
            "{route}: {outcome:?}"
        );
        assert!(
            !text(&outcome).contains(FAKE),
            "{route}: {}",
            text(&outcome)
        );
    }
    // The same direct read without namespaces: the secret is there, so the test above means
    // something (and the fallback's warning is right to say so).
    let fallback = f
        .place
        .run(&landlock_only(f.settings.clone()), &routes[0].1);
    assert!(text(&fallback).contains(FAKE), "{fallback:?}");
}

#[test]
fn a_hidden_read_is_explained() {
    if !namespaces() {
        return;
    }
    let f = fixture();
    let ssh = f.home.join(".ssh");
    std::os::unix::fs::symlink(&ssh, f.place.ws.join("keys")).unwrap();
    let outcome = f.place.run(&f.settings, "cat keys/secret");
    let Confinement::Confined(policy) = &outcome.confinement else {
        panic!("{outcome:?}")
    };
    let notes = diagnose::explain(text(&outcome), policy, &f.place.ws, true);
    assert_eq!(
        notes.first().map(|n| n.split(':').next().unwrap_or("")),
        Some(
            format!(
                "[read of {} blocked by sandbox",
                ssh.join("secret").display()
            )
            .as_str()
        ),
        "{}\n{notes:?}",
        text(&outcome)
    );
}

/// `git` with a clean environment and a fake home, in `dir`.
fn git(dir: &Path, home: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap()
}

/// A repository at the workspace root with one commit, and a nested one in `vendor/sub`.
fn repositories(f: &Fixture) {
    let ws = &f.place.ws;
    assert!(git(ws, &f.home, &["init", "-q"]).status.success());
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    assert!(git(ws, &f.home, &["add", "a.txt"]).status.success());
    assert!(git(ws, &f.home, &["commit", "-qm", "one"]).status.success());
    std::fs::create_dir_all(ws.join("vendor/sub")).unwrap();
    assert!(
        git(&ws.join("vendor/sub"), &f.home, &["init", "-q"])
            .status
            .success()
    );
    for repo in [".git", "vendor/sub/.git"] {
        let hook = ws.join(repo).join("hooks/pre-commit");
        std::fs::write(&hook, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    std::fs::create_dir_all(ws.join(".agents")).unwrap();
    std::fs::write(ws.join(".agents/config.toml"), "# project\n").unwrap();
}

/// The fixture's settings plus what a session start finds in the workspace.
fn protected_settings(f: &Fixture) -> ExecSettings {
    let found = protect::scan(&ScanInput {
        workspace: &f.place.ws,
        home: Some(&f.home),
        global_configs: Vec::new(),
        extra_read_only: &[],
        create_missing: true,
        create_agents: true,
    });
    let mut settings = f.settings.clone();
    settings.read_only = found.read_only;
    settings.pinned = found.pinned;
    let count = found.git.len();
    for (i, (key, value)) in found.git.into_iter().enumerate() {
        settings.env_set.push((format!("GIT_CONFIG_KEY_{i}"), key));
        settings
            .env_set
            .push((format!("GIT_CONFIG_VALUE_{i}"), value));
    }
    settings
        .env_set
        .push(("GIT_CONFIG_COUNT".into(), count.to_string()));
    settings
}

#[test]
fn protected_writes_are_refused_by_the_kernel_and_explained() {
    if !namespaces() {
        return;
    }
    let f = fixture();
    repositories(&f);
    let settings = protected_settings(&f);
    let ws = &f.place.ws;
    let targets = [
        ".git/hooks/pre-commit",
        ".git/config",
        "vendor/sub/.git/hooks/pre-commit",
        "vendor/sub/.git/config",
        ".agents/config.toml",
    ];
    let before: Vec<Option<String>> = targets
        .iter()
        .map(|t| std::fs::read_to_string(ws.join(t)).ok())
        .collect();
    for target in targets {
        for command in [
            format!("printf '#!/bin/sh\\nid\\n' > {target}"),
            format!("echo '[core] fsmonitor = id' >> {target}"),
            format!("rm -f {target}"),
            format!("mv {target} moved"),
        ] {
            let outcome = f.place.run(&settings, &command);
            assert_ne!(outcome.ending, Ending::Exited(0), "`{command}` succeeded");
            let Confinement::Confined(policy) = &outcome.confinement else {
                panic!("{outcome:?}")
            };
            let notes = diagnose::explain(text(&outcome), policy, ws, true);
            assert!(
                notes.iter().any(|n| n.contains("blocked by sandbox")
                    || n.contains("cannot be moved or removed")),
                "`{command}`: {}\n{notes:?}",
                text(&outcome)
            );
        }
    }
    for route in [
        "git -C vendor/sub config core.hooksPath ../../hooks",
        "mv .git .git-old",
        "mv vendor/sub vendor/other",
        "mv vendor elsewhere",
        "rm -rf vendor/sub/.git",
    ] {
        let outcome = f.place.run(&settings, route);
        assert_ne!(outcome.ending, Ending::Exited(0), "`{route}`: {outcome:?}");
    }
    let after: Vec<Option<String>> = targets
        .iter()
        .map(|t| std::fs::read_to_string(ws.join(t)).ok())
        .collect();
    assert_eq!(after, before);
    // `rm -rf` emptied the nested repository, but its hooks, config and directory are left.
    assert!(ws.join(".git/HEAD").exists() && ws.join("vendor/sub/.git").is_dir());
}

#[test]
fn ordinary_git_work_keeps_working() {
    if !namespaces() {
        return;
    }
    let f = fixture();
    repositories(&f);
    let settings = protected_settings(&f);
    let command = "set -e; export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@x GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@x; \
        echo two >> a.txt; git add a.txt; git commit -qm two; git branch topic; git switch -q topic; \
        echo three >> a.txt; git stash -q; git stash pop -q; git commit -qam three; git switch -q -; \
        (cd vendor/sub && echo x > x && git add x && git commit -qm x); \
        git log --oneline --all | wc -l; git status --short";
    let outcome = f.place.run(&settings, command);
    assert_eq!(outcome.ending, Ending::Exited(0), "{outcome:?}");
    assert_eq!(
        text(&outcome),
        "3\n?? .agents/\n?? vendor/\n",
        "{outcome:?}"
    );
}

#[test]
fn programs_named_by_a_repository_config_are_not_run() {
    if !namespaces() {
        return;
    }
    let f = fixture();
    repositories(&f);
    let ws = &f.place.ws;
    let ran = ws.join("ran");
    std::fs::write(ws.join(".gitattributes"), "*.txt diff=x\n").unwrap();
    let config = ws.join(".git/config");
    let mut text_config = std::fs::read_to_string(&config).unwrap();
    text_config.push_str(&format!(
        "[core]\n\tfsmonitor = \"echo fsmonitor >> {0}; false\"\n[diff \"x\"]\n\ttextconv = \"sh -c 'echo textconv >> {0}; cat \\\"$0\\\"'\"\n",
        ran.display()
    ));
    std::fs::write(&config, text_config).unwrap();
    std::fs::write(ws.join("a.txt"), "changed\n").unwrap();
    // Planted for real: the user's own git runs them.
    assert!(git(ws, &f.home, &["status", "--short"]).status.success());
    git(ws, &f.home, &["diff"]);
    let planted = std::fs::read_to_string(&ran).unwrap_or_default();
    assert!(
        planted.contains("fsmonitor") && planted.contains("textconv"),
        "{planted}"
    );
    std::fs::remove_file(&ran).unwrap();
    let settings = protected_settings(&f);
    let outcome = f.place.run(
        &settings,
        "git status --short; git diff; git log -p -1 >/dev/null; git show >/dev/null",
    );
    assert_eq!(outcome.ending, Ending::Exited(0), "{outcome:?}");
    assert!(text(&outcome).contains("+changed"), "{outcome:?}");
    assert!(
        !ran.exists(),
        "{}",
        std::fs::read_to_string(&ran).unwrap_or_default()
    );
}

#[test]
fn a_setsid_grandchild_is_gone_when_the_call_ends() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    let mut all = vec![settings(SandboxMode::WorkspaceWrite, false)];
    all.push(landlock_only(all[0].clone()));
    for settings in all {
        let mark = marker("setsid");
        let command = format!(
            "export {mark}; setsid sleep 300 & (setsid sh -c 'sleep 300 & sleep 300' &); sleep 0.2; echo started"
        );
        let outcome = place.run(&settings, &command);
        assert_eq!(text(&outcome), "started\n", "{outcome:?}");
        assert_eq!(outcome.ending, Ending::Exited(0));
        assert_eq!(outcome.background, Background::Stopped, "{outcome:?}");
        assert_eq!(
            survivors(&mark),
            Vec::<u32>::new(),
            "{:?}",
            settings.namespaces
        );
    }
}

#[test]
fn a_timeout_reaches_setsid_processes_too() {
    if !landlock() {
        return;
    }
    let place = Place::new();
    let mut all = vec![settings(SandboxMode::WorkspaceWrite, false)];
    all.push(landlock_only(all[0].clone()));
    for settings in all {
        let mark = marker("setsid-timeout");
        let command = format!("export {mark}; setsid sleep 300 & sleep 300");
        let outcome = place.run_with(
            &settings,
            &command,
            Duration::from_secs(1),
            &CancelToken::new(),
        );
        assert_eq!(outcome.ending, Ending::TimedOut(Duration::from_secs(1)));
        assert_eq!(
            survivors(&mark),
            Vec::<u32>::new(),
            "{:?}",
            settings.namespaces
        );
    }
}

#[test]
fn commands_see_their_own_pid_namespace() {
    if !namespaces() {
        return;
    }
    let place = Place::new();
    let outcome = place.run(
        &settings(SandboxMode::ReadOnly, false),
        "echo $$; ls /proc | grep -c '^[0-9]'",
    );
    // The shell is PID 2 (the supervisor is 1); only a few processes are visible.
    let lines: Vec<&str> = text(&outcome).lines().collect();
    assert_eq!(lines.first(), Some(&"2"), "{outcome:?}");
    let visible: usize = lines[1].parse().unwrap();
    assert!(visible <= 5, "{outcome:?}");
}

/// The tests run as root on the development machine; real users do not. This runs the helper
/// as `nobody` (uid 65534) through `setpriv`, so the unprivileged path (the init writes its
/// own id maps, after giving up setgroups) is exercised too.
#[test]
fn an_unprivileged_user_gets_the_same_sandbox() {
    const NOBODY: u32 = 65534;
    // SAFETY: geteuid has no memory effects.
    if unsafe { libc::geteuid() } != 0 {
        // Not root: every other test here already runs unprivileged.
        return;
    }
    if !namespaces() {
        return;
    }
    let Ok(setpriv) = which("setpriv") else {
        crate::support::kernel::skip("`setpriv` (util-linux), to run the helper as nobody");
        return;
    };
    let root = tempfile::tempdir_in("/var/tmp").unwrap();
    let base = root.path().canonicalize().unwrap();
    let (ws, home) = (base.join("ws"), base.join("home"));
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "FAKE-KEY\n").unwrap();
    let chown = std::process::Command::new("chown")
        .args(["-R", &format!("{NOBODY}:{NOBODY}")])
        .arg(&base)
        .status()
        .unwrap();
    assert!(chown.success());
    let mark = marker("nobody");
    let script = format!(
        "cat /proc/self/uid_map; id -u; cat ~/.ssh/id_rsa; echo x > .git/hooks/pre-commit; \
         echo ok > ok.txt && cat ok.txt; export {mark}; setsid sleep 300 & echo $$"
    );
    let output = std::process::Command::new(setpriv)
        .args([
            format!("--reuid={NOBODY}"),
            format!("--regid={NOBODY}"),
            "--clear-groups".to_string(),
        ])
        .arg(env!("CARGO_BIN_EXE_agent"))
        .args(["__sandbox", "--mode", "workspace-write", "--write"])
        .arg(&ws)
        .args(["--namespaces", "--hide"])
        .arg(home.join(".ssh"))
        .arg("--read-only")
        .arg(ws.join(".git/hooks"))
        .args(["--pin"])
        .arg(&ws)
        .args(["--", "bash", "-c", &script])
        .current_dir(&ws)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(
        stdout.split_whitespace().collect::<Vec<_>>(),
        vec!["65534", "65534", "1", "65534", "ok", "2"],
        "{stdout}{stderr}"
    );
    assert!(stderr.contains("id_rsa: Permission denied"), "{stderr}");
    assert!(
        stderr.contains("pre-commit: Read-only file system"),
        "{stderr}"
    );
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(survivors(&mark), Vec::<u32>::new());
}

fn which(program: &str) -> Result<PathBuf, ()> {
    std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .map(|dir| Path::new(dir).join(program))
        .find(|p| p.is_file())
        .ok_or(())
}
