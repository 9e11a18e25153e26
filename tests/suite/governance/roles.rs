//! Role resolution, inheritance, the project-file rules, selection, and the tool list the
//! model is offered.

use std::path::{Path, PathBuf};

use agent::governance::roles::{Limits, RoleSource, ShellPolicy};
use agent::governance::{GovernanceError, RoleSet};
use pretty_assertions::assert_eq;

use super::offered_tools;
use crate::support::env::texts;
use crate::support::sse::text_events;
use crate::support::{MockServer, Reply, TestEnv};

struct Dirs {
    _root: tempfile::TempDir,
    user: PathBuf,
    project: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let user = root.path().join("home/roles");
    let project = root.path().join("work/.agents/roles");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    Dirs {
        _root: root,
        user,
        project,
    }
}

fn write(dir: &Path, file: &str, text: &str) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path
}

fn load(d: &Dirs, trusted: bool) -> Result<(RoleSet, Vec<String>), GovernanceError> {
    RoleSet::load(&d.user, &d.project, trusted)
}

fn error(d: &Dirs, trusted: bool) -> String {
    match load(d, trusted) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn inheritance_merges_parent_then_child() {
    let d = dirs();
    write(
        &d.user,
        "auditor.toml",
        "[role]\ninherits = \"reviewer\"\ndescription = \"audits\"\n\
         [tools]\nallowed = [\"read_*\"]\n[limits]\nmax_cost_usd = 1.5\n",
    );
    write(
        &d.user,
        "deep.toml",
        "[role]\nname = \"deep\"\ninherits = \"auditor\"\n[limits]\nmax_context_tokens = 1000\n",
    );
    let (roles, warnings) = load(&d, false).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let auditor = roles.get("auditor").unwrap();
    assert_eq!(auditor.description, "audits");
    assert_eq!(auditor.allowed, vec!["read_*"], "child list replaces");
    assert_eq!(
        auditor.denied,
        vec!["bash", "write_file", "str_replace"],
        "inherited"
    );
    assert_eq!(auditor.shell_policy, ShellPolicy::Deny);
    assert_eq!(
        auditor.limits,
        Limits {
            max_context_tokens: 150_000,
            max_shell_invocations: 0,
            max_cost_usd: 1.5
        }
    );
    let deep = roles.get("deep").unwrap();
    assert_eq!(deep.description, "audits");
    assert_eq!(
        deep.limits,
        Limits {
            max_context_tokens: 1000,
            max_shell_invocations: 0,
            max_cost_usd: 1.5
        }
    );
    assert_eq!(deep.source, RoleSource::User);
    assert!(deep.allows_tool("read_skill"));
    assert!(!deep.allows_tool("bash"));
    assert_eq!(
        roles.names(),
        vec![
            "admin", "auditor", "coder", "debugger", "deep", "ops", "reviewer"
        ]
    );
}

#[test]
fn a_role_without_parent_starts_from_coder() {
    let d = dirs();
    write(&d.user, "lean.toml", "[tools]\ndenied = [\"write_*\"]\n");
    let (roles, _) = load(&d, false).unwrap();
    let lean = roles.get("lean").unwrap();
    assert_eq!(lean.allowed, vec!["*"]);
    assert_eq!(lean.shell_policy, ShellPolicy::Track);
    assert_eq!(lean.limits, roles.get("coder").unwrap().limits);
    assert!(lean.allows_tool("bash"));
    assert!(!lean.allows_tool("write_file"), "denied beats allowed");
}

#[test]
fn a_user_role_may_replace_a_builtin() {
    let d = dirs();
    write(
        &d.user,
        "coder.toml",
        "[role]\ninherits = \"coder\"\n[limits]\nmax_cost_usd = 20.0\n",
    );
    let (roles, _) = load(&d, false).unwrap();
    let coder = roles.get("coder").unwrap();
    assert_eq!(coder.limits.max_cost_usd, 20.0);
    assert_eq!(coder.limits.max_shell_invocations, 100);
    assert_eq!(coder.source, RoleSource::User);
}

#[test]
fn a_cycle_is_an_error_naming_it() {
    let d = dirs();
    write(&d.user, "a.toml", "[role]\ninherits = \"b\"\n");
    write(&d.user, "b.toml", "[role]\ninherits = \"c\"\n");
    write(&d.user, "c.toml", "[role]\ninherits = \"a\"\n");
    assert_eq!(
        error(&d, false),
        "role inheritance cycle `a -> b -> c -> a`; remove one of these `inherits`"
    );
    let d = dirs();
    write(&d.user, "self.toml", "[role]\ninherits = \"self\"\n");
    assert_eq!(
        error(&d, false),
        "role inheritance cycle `self -> self`; remove one of these `inherits`"
    );
}

#[test]
fn bad_names_are_errors() {
    let d = dirs();
    let path = write(&d.user, "x.toml", "[role]\nname = \"bad name\"\n");
    assert_eq!(
        error(&d, false),
        format!(
            "invalid role name `bad name` in {}; use 1 to 64 letters, digits, `_` or `-`",
            path.display()
        )
    );
    let d = dirs();
    let long = "x".repeat(65);
    write(
        &d.user,
        "y.toml",
        &format!("[role]\ninherits = \"{long}\"\n"),
    );
    assert!(error(&d, false).starts_with(&format!("invalid role name `{long}`")));
    let d = dirs();
    write(&d.user, "ok.toml", "[role]\ninherits = \"nobody\"\n");
    assert!(
        error(&d, false).contains("inherits unknown role `nobody`; available: admin, coder"),
        "{}",
        error(&d, false)
    );
}

#[test]
fn unknown_keys_bad_policies_and_globs_are_errors() {
    let d = dirs();
    write(&d.user, "x.toml", "[role]\nshell = \"deny\"\n");
    assert!(
        error(&d, false).contains("unknown field `shell`"),
        "{}",
        error(&d, false)
    );
    let d = dirs();
    write(&d.user, "x.toml", "[role]\nshell_policy = \"never\"\n");
    assert!(
        error(&d, false).contains("unknown variant `never`"),
        "{}",
        error(&d, false)
    );
    let d = dirs();
    write(&d.user, "x.toml", "[tools]\nallowed = [\"read_[\"]\n");
    assert!(
        error(&d, false).starts_with("invalid tool glob `read_[`"),
        "{}",
        error(&d, false)
    );
}

#[test]
fn a_project_role_may_not_shadow_a_builtin() {
    let d = dirs();
    let path = write(&d.project, "admin.toml", "[limits]\nmax_cost_usd = 1.0\n");
    let expected = format!(
        "project role `admin` in {} shadows the built-in role `admin`; rename it",
        path.display()
    );
    assert_eq!(error(&d, false), expected);
    assert_eq!(error(&d, true), expected, "not even when trusted");
}

#[test]
fn a_project_role_may_inherit_admin_or_ops_only_when_trusted() {
    let d = dirs();
    let path = write(&d.project, "yolo.toml", "[role]\ninherits = \"admin\"\n");
    assert_eq!(
        error(&d, false),
        format!(
            "project role `yolo` in {} inherits the privileged role `admin`; run `agent trust` \
             if you trust this workspace, or inherit a less privileged role",
            path.display()
        )
    );
    let (roles, _) = load(&d, true).unwrap();
    assert_eq!(roles.get("yolo").unwrap().limits.max_cost_usd, 50.0);

    // Through a user role that inherits `ops`.
    let d = dirs();
    write(&d.user, "myops.toml", "[role]\ninherits = \"ops\"\n");
    write(&d.project, "sneaky.toml", "[role]\ninherits = \"myops\"\n");
    assert!(error(&d, false).contains("inherits the privileged role `ops`"));
    // The user's own role is fine.
    let d = dirs();
    write(&d.user, "myops.toml", "[role]\ninherits = \"ops\"\n");
    assert!(load(&d, false).is_ok());
}

#[test]
fn an_untrusted_project_role_only_tightens_and_never_replaces_a_user_role() {
    let d = dirs();
    write(
        &d.project,
        "ci.toml",
        "[role]\ninherits = \"reviewer\"\n[limits]\nmax_cost_usd = 100.0\nmax_context_tokens = 1000\n",
    );
    let (roles, warnings) = load(&d, false).unwrap();
    let ci = roles.get("ci").unwrap();
    assert_eq!(ci.limits.max_cost_usd, 3.0, "capped at the parent's");
    assert_eq!(ci.limits.max_context_tokens, 1000, "tightening is kept");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("project role `ci`"), "{warnings:?}");
    let (roles, warnings) = load(&d, true).unwrap();
    assert_eq!(roles.get("ci").unwrap().limits.max_cost_usd, 100.0);
    assert!(warnings.is_empty());

    let d = dirs();
    write(&d.user, "mine.toml", "[role]\ninherits = \"reviewer\"\n");
    write(&d.project, "mine.toml", "[role]\ninherits = \"coder\"\n");
    assert!(
        error(&d, false).starts_with("project role `mine` in "),
        "{}",
        error(&d, false)
    );
    let (roles, _) = load(&d, true).unwrap();
    assert_eq!(roles.get("mine").unwrap().source, RoleSource::Project);
}

#[test]
fn unknown_role_lists_available_ones_and_exits_2() {
    let server = MockServer::start(vec![]);
    let env = TestEnv::with_server(&server);
    std::fs::create_dir_all(env.agent_home.join("roles")).unwrap();
    std::fs::write(
        env.agent_home.join("roles/auditor.toml"),
        "[role]\ninherits = \"reviewer\"\n",
    )
    .unwrap();
    let output = env.run(&["--role", "nope", "hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.ends_with(
            "agent: error: unknown role `nope`; available: admin, auditor, coder, debugger, ops, reviewer\n"
        ),
        "{stderr}"
    );
    assert!(server.chat_requests().is_empty());
}

#[test]
fn an_empty_role_name_is_an_unknown_role_not_the_default() {
    // Both used to run as coder without a word.
    let server = MockServer::start(vec![]);
    let env = TestEnv::with_server(&server);
    let output = env.run(&["--role=", "hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("unknown role ``; available: admin, coder"),
        "{stderr}"
    );
    env.config("default_role = \"\"\n");
    let output = env.run(&["hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unknown role ``"), "{stderr}");
    assert!(server.chat_requests().is_empty());
}

#[test]
fn a_cycle_in_role_files_exits_2() {
    let server = MockServer::start(vec![]);
    let env = TestEnv::with_server(&server);
    env.write(".agents/roles/a.toml", "[role]\ninherits = \"b\"\n");
    env.write(".agents/roles/b.toml", "[role]\ninherits = \"a\"\n");
    let output = env.run(&["hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("role inheritance cycle `a -> b -> a`"),
        "{stderr}"
    );
}

fn offered_for(configure: impl FnOnce(&mut TestEnv), args: &[&str]) -> Vec<String> {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let mut env = TestEnv::with_server(&server);
    configure(&mut env);
    let mut argv = args.to_vec();
    argv.push("hello");
    let output = env.run(&argv);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    offered_tools(&server.chat_requests()[0].body)
}

#[test]
fn selection_order_and_the_offered_tools() {
    let all = vec![
        "bash",
        "read_file",
        "write_file",
        "str_replace",
        "write_todos",
        "task",
    ];
    assert_eq!(offered_for(|_| {}, &[]), all);
    assert_eq!(
        offered_for(|_| {}, &["--role", "reviewer"]),
        vec!["read_file", "write_todos", "task"]
    );
    assert_eq!(
        offered_for(|_| {}, &["--role", "ops"]),
        vec!["bash", "read_file", "write_todos", "task"]
    );
    let env_role = |env: &mut TestEnv| {
        env.var("AGENT_ROLE", "reviewer");
    };
    assert_eq!(
        offered_for(env_role, &[]),
        vec!["read_file", "write_todos", "task"]
    );
    assert_eq!(
        offered_for(env_role, &["--role", "admin"]),
        all,
        "--role beats AGENT_ROLE"
    );
    let config_role = |env: &mut TestEnv| env.config("default_role = \"ops\"\n");
    assert_eq!(
        offered_for(config_role, &[]),
        vec!["bash", "read_file", "write_todos", "task"]
    );
    let both = |env: &mut TestEnv| {
        env.config("default_role = \"ops\"\n");
        env.var("AGENT_ROLE", "reviewer");
    };
    assert_eq!(
        offered_for(both, &[]),
        vec!["read_file", "write_todos", "task"],
        "AGENT_ROLE beats config"
    );
    let custom = |env: &mut TestEnv| {
        env.write(
            ".agents/roles/no-edit.toml",
            "[tools]\nallowed = [\"*\"]\ndenied = [\"write_*\", \"str_replace\"]\n",
        );
    };
    assert_eq!(
        offered_for(custom, &["--role", "no-edit"]),
        vec!["bash", "read_file", "task"]
    );
}

#[test]
fn an_untrusted_project_default_role_is_ignored_with_a_warning() {
    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    env.write(".agents/config.toml", "default_role = \"reviewer\"\n");
    let output = env.run(&["hello"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("ignoring default_role = `reviewer` in the project config"),
        "{stderr}"
    );
    assert_eq!(offered_tools(&server.chat_requests()[0].body).len(), 6);

    let server = MockServer::start(vec![Reply::Sse(text_events(&["ok"]))]);
    let env = TestEnv::with_server(&server);
    env.write(".agents/config.toml", "default_role = \"reviewer\"\n");
    env.config(&format!(
        "trusted_workspaces = [\"{}\"]\n",
        env.workspace.display()
    ));
    let output = env.run(&["hello"]);
    assert_eq!(output.status.code(), Some(0), "{}", texts(&output).1);
    assert_eq!(
        offered_tools(&server.chat_requests()[0].body),
        vec!["read_file", "write_todos", "task"]
    );
}

#[test]
fn a_role_file_that_is_a_directory_or_a_symlink_loop_is_an_error_a_dangling_link_is_skipped() {
    // Both used to be skipped without a word, so `--role NAME` said the role did not exist.
    let d = dirs();
    std::fs::create_dir(d.user.join("dir.toml")).unwrap();
    let message = error(&d, false);
    assert!(message.starts_with("cannot read "), "{message}");
    assert!(message.contains("dir.toml"), "{message}");
    std::fs::remove_dir(d.user.join("dir.toml")).unwrap();

    std::os::unix::fs::symlink(d.project.join("loop.toml"), d.project.join("loop.toml")).unwrap();
    let message = error(&d, false);
    assert!(message.contains("loop.toml"), "{message}");
    std::fs::remove_file(d.project.join("loop.toml")).unwrap();

    std::os::unix::fs::symlink(d.user.join("gone"), d.user.join("dangling.toml")).unwrap();
    write(&d.user, "auditor.toml", "[role]\ninherits = \"reviewer\"\n");
    let (roles, _) = load(&d, false).unwrap();
    assert!(roles.get("auditor").is_some());
    assert!(roles.get("dangling").is_none());
}
