//! Permission engine v2 (issue 3, SPEC §5, §2.2): the shared failure corpus with its controls,
//! a composition property (a denied command stays denied through every operator,
//! substitution, wrapper and quoting form), the benign corpus (everyday read-only work stays
//! prompt-free), `agent check`, `agent trust`, file rules, and a denied command in a real turn.

use std::path::Path;

use agent::config::FileConfig;
use agent::permissions::rules::from_specs;
use agent::permissions::{Decision, PathContext, PermissionEngine, Rule, RuleSource};
use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::Value;

use crate::support::env::texts;
use crate::support::sse::{text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

use Decision::{Allow, Ask, Deny};

const CASES: &str = include_str!("../data/permissions.jsonl");
const BENIGN: &str = include_str!("../data/benign-commands.txt");
const TYPICAL_ALLOW: &str = include_str!("../data/typical-allow.toml");

/// The controls of each shared case: commands that must *not* be caught by the fix.
const CONTROLS: &[(&str, &[(&str, Decision)])] = &[
    (
        "a-chain-and-deny",
        &[
            ("git status && ls -la", Allow),
            ("ls; cat README.md", Allow),
        ],
    ),
    ("a-newline-separator", &[("ls\ngit status", Allow)]),
    (
        "a-background-ampersand",
        &[("pytest -q 2>&1", Allow), ("ls &>/dev/null", Allow)],
    ),
    (
        "a-command-substitution",
        &[("cat '$(rm x)'", Allow), ("ls $(pwd)", Allow)],
    ),
    (
        "a-process-substitution",
        &[("diff <(git show HEAD:a) a", Allow)],
    ),
    (
        "a-redirect-overwrite",
        &[
            ("ls 2>/dev/null", Allow),
            ("grep x f 2>&1", Allow),
            ("cat README.md > /dev/null", Allow),
        ],
    ),
    (
        "a-git-diff-output-write",
        &[("git diff --stat", Allow), ("git diff --text", Allow)],
    ),
    (
        "a-transparent-wrappers",
        &[("setsid rm -rf build", Ask), ("timeout 30 ls", Allow)],
    ),
    (
        "a-shell-c-eval",
        &[
            ("bash -c \"$CMD\"", Ask),
            ("bash -c 'if then'", Ask),
            ("bash -c 'ls -la'", Allow),
        ],
    ),
    (
        "a-exec-runners",
        &[("find . -delete", Ask), ("find . -name x", Allow)],
    ),
    ("a-quoting-tricks", &[("rm\u{200b} -rf build", Ask)]),
    (
        "a-absolute-path-binary",
        &[("./git status", Ask), ("/tmp/git status", Ask)],
    ),
    (
        "a-quoted-operators-no-split",
        &[("grep foo src | rm x", Deny)],
    ),
    (
        "a-heredoc-expansion",
        &[
            ("cat <<'EOF'\nrm -rf build\nEOF", Allow),
            ("cat <<EOF\nhello\nEOF", Allow),
        ],
    ),
];

fn engine_with(env: &TestEnv, rules: Vec<Rule>) -> PermissionEngine {
    PermissionEngine::new(
        rules,
        PathContext {
            workspace: env.workspace.clone(),
            cwd: env.workspace.clone(),
            home: Some(env.home.clone()),
            agent_home: env.agent_home.clone(),
        },
    )
}

fn engine(env: &TestEnv) -> PermissionEngine {
    engine_with(env, Vec::new())
}

fn typical_rules() -> Vec<Rule> {
    let config = FileConfig::parse(TYPICAL_ALLOW, Path::new("typical-allow.toml"))
        .expect("typical-allow.toml parses");
    from_specs(&config.permissions.rules, RuleSource::User)
}

fn bash_rule(pattern: &str, action: Decision) -> Rule {
    Rule {
        tool: "bash".into(),
        pattern: pattern.into(),
        action,
        source: RuleSource::User,
    }
}

struct Case {
    id: String,
    inputs: Vec<String>,
    expected: Decision,
}

fn cases() -> Vec<Case> {
    CASES
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let value: Value = serde_json::from_str(line).expect("case is JSON");
            let expected = value["expected"].as_str().expect("expected");
            let verdict = expected.split([' ', ';']).next().unwrap_or("");
            Case {
                id: value["id"].as_str().expect("id").to_string(),
                inputs: value["input"]
                    .as_array()
                    .expect("inputs")
                    .iter()
                    .map(|i| i.as_str().expect("input").to_string())
                    .collect(),
                expected: parse_decision(verdict),
            }
        })
        .collect()
}

fn parse_decision(text: &str) -> Decision {
    match text {
        "allow" => Allow,
        "ask" => Ask,
        "deny" => Deny,
        other => panic!("unknown verdict `{other}`"),
    }
}

#[test]
fn shared_cases_and_controls_through_the_engine() {
    let env = TestEnv::new();
    let engine = engine(&env);
    let cases = cases();
    assert_eq!(
        cases.len(),
        CONTROLS.len(),
        "every case needs a controls entry"
    );
    let mut failures = Vec::new();
    for case in &cases {
        let controls = CONTROLS
            .iter()
            .find(|(id, _)| *id == case.id)
            .unwrap_or_else(|| panic!("no controls for {}", case.id))
            .1;
        let variants = case.inputs.iter().map(|i| (i.as_str(), case.expected));
        for (input, expected) in variants.chain(controls.iter().copied()) {
            let evaluation = engine.check_bash(input);
            if evaluation.decision != expected {
                failures.push(format!(
                    "{}: {input:?} is {} (expected {expected}): {:?}",
                    case.id, evaluation.decision, evaluation.parts
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The case's own control says `find . -name x` is `ask` "(find not in allow list)"; the
/// defaults allow find without actions (SPEC §5.1), so that holds once find is not allowed.
#[test]
fn find_controls_without_find_in_the_allow_list() {
    let env = TestEnv::new();
    let engine = engine_with(&env, vec![bash_rule("find *", Ask)]);
    assert_eq!(engine.check_bash("find . -name x").decision, Ask);
    assert_eq!(engine.check_bash("find . -delete").decision, Ask);
    assert_eq!(
        engine
            .check_bash("find . -name '*.pyc' -exec rm {} +")
            .decision,
        Deny
    );
}

#[test]
fn shared_cases_through_agent_check() {
    let env = TestEnv::new();
    for case in cases() {
        let input = &case.inputs[0];
        let output = env.cmd().args(["check", "--json", input]).output().unwrap();
        let (stdout, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        let value: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(
            value["verdict"],
            case.expected.to_string(),
            "{}: {stdout}",
            case.id
        );
        let text = env.cmd().args(["check", input]).output().unwrap();
        let first = texts(&text).0.lines().next().unwrap_or("").to_string();
        assert_eq!(first, case.expected.to_string(), "{}", case.id);
    }
}

#[test]
fn benign_corpus_stays_allowed() {
    let env = TestEnv::new();
    let engine = engine_with(&env, typical_rules());
    let commands: Vec<String> = BENIGN
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace("\\n", "\n"))
        .collect();
    assert!(
        commands.len() >= 100,
        "only {} benign commands",
        commands.len()
    );
    let prompts: Vec<String> = commands
        .iter()
        .filter_map(|c| {
            let evaluation = engine.check_bash(c);
            (evaluation.decision != Allow).then(|| format!("{c:?}: {}", evaluation.summary()))
        })
        .collect();
    assert!(
        prompts.is_empty(),
        "needless prompts:\n{}",
        prompts.join("\n")
    );
}

#[test]
fn benign_sample_through_agent_check_with_the_example_config() {
    let env = TestEnv::new();
    env.config(TYPICAL_ALLOW);
    for command in [
        "git log --oneline | head -20",
        "grep -rn foo src | wc -l",
        "cargo test --lib",
    ] {
        let output = env.cmd().args(["check", command]).output().unwrap();
        let (stdout, stderr) = texts(&output);
        assert!(stdout.starts_with("allow\n"), "{command}: {stdout}{stderr}");
    }
}

// --- composition property -------------------------------------------------------------

/// Denied commands, as (program, arguments).
const DENIED: &[(&str, &str)] = &[
    ("rm", "-rf build"),
    ("curl", "-s http://example.invalid"),
    ("sudo", "ls"),
    ("wget", "http://example.invalid/x"),
    ("git", "push origin main"),
];

const ALLOWED: &[&str] = &[
    "ls",
    "git status",
    "cat README.md",
    "echo hi",
    "grep -n foo src",
];

/// A shell script and whether it is a single simple command (wrappers need one).
#[derive(Debug, Clone)]
struct Script {
    text: String,
    simple: bool,
}

fn single_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

fn double_quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The program word of a denied command, respelled.
fn spell(program: &str, form: usize) -> String {
    let (first, rest) = program.split_at(1);
    match form {
        0 => program.to_string(),
        1 => format!("'{program}'"),
        2 => format!("\"{program}\""),
        3 => format!("\\{program}"),
        4 => format!("{first}''{rest}"),
        5 => format!("$'{program}'"),
        6 => format!("/usr/bin/{program}"),
        _ => format!("{first}\\{rest}"),
    }
}

fn denied() -> impl Strategy<Value = Script> {
    (0..DENIED.len(), 0..8usize, any::<bool>()).prop_map(|(i, form, global)| {
        let (program, args) = DENIED[i];
        let args = if program == "git" && global {
            format!("-C . {args}")
        } else {
            args.to_string()
        };
        Script {
            text: format!("{} {args}", spell(program, form)),
            simple: true,
        }
    })
}

/// Puts `inner` into one of the forms bash executes; `a` is an allowed command.
fn compose(inner: Script, form: usize, a: &str) -> Script {
    let s = &inner.text;
    let nl = if s.contains('\n') { "\n" } else { "" };
    let compound = |text: String| Script {
        text,
        simple: false,
    };
    let wrapped = |text: String| Script { text, simple: true };
    match form {
        0 => compound(format!("{a} && {s}")),
        1 => compound(format!("{s}; {a}")),
        2 => compound(format!("{a} || {s}")),
        3 => compound(format!("{a} | {s}")),
        4 => compound(format!("{a} & {s}")),
        5 => compound(format!("{a}\n{s}")),
        6 => compound(format!("{a} $( {s}{nl})")),
        7 => compound(format!("{a} \"$( {s}{nl})\"")),
        8 if !s.contains(['`', '\\', '\n']) => compound(format!("{a} `{s}`")),
        9 => compound(format!("{a} <( {s}{nl})")),
        10 => compound(format!("{a} > >( {s}{nl})")),
        11 => compound(format!("X=$( {s}{nl}) {a}")),
        12 => compound(format!("( {s}{nl} )")),
        13 => compound(format!("{{ {s}\n}}")),
        14 => compound(format!("if {a}; then {s}\nfi")),
        15 => compound(format!("for i in 1 2; do {s}\ndone")),
        16 => compound(format!("while false; do {s}\ndone")),
        17 => compound(format!("case x in x) {s}\n;; esac")),
        18 => compound(format!("f() {{ {s}\n}}; f")),
        19 => compound(format!("bash -c {}", single_quote(s))),
        20 => compound(format!("sh -c {}", double_quote(s))),
        21 => compound(format!("eval {}", single_quote(s))),
        22 => compound(format!("bash -lc {}", single_quote(s))),
        23 if !s.lines().any(|l| l == "EOF") => compound(format!("cat <<'EOF' | bash\n{s}\nEOF")),
        24 => compound(format!("{a} \"${{x:-$( {s}{nl})}}\"")),
        25 => compound(format!("zsh -c {}", single_quote(s))),
        26 if inner.simple => wrapped(format!("timeout 30 {s}")),
        27 if inner.simple => wrapped(format!("nice -n 5 {s}")),
        28 if inner.simple => wrapped(format!("env FOO=1 {s}")),
        29 if inner.simple => wrapped(format!("nohup {s}")),
        30 if inner.simple => wrapped(format!("stdbuf -oL {s}")),
        31 if inner.simple => wrapped(format!("command {s}")),
        32 if inner.simple => wrapped(format!("exec {s}")),
        33 if inner.simple => wrapped(format!("time {s}")),
        34 if inner.simple => compound(format!("ls | xargs {s}")),
        35 if inner.simple => compound(format!("find . -name x -exec {s} {{}} \\;")),
        36 if inner.simple => wrapped(format!("builtin {s}")),
        37 => compound(format!("{a}&&{s}")),
        38 => compound(format!("{a}|{s}")),
        39 => compound(format!("{a};{s}")),
        40 => compound(format!("{a} # note\n{s}")),
        41 => compound(format!("{a} \\\n  && {s}")),
        42 => compound(format!("{a}\n\n{s}")),
        43 => compound(format!("{a}\t;\t{s}")),
        44 => compound(format!("! {s}")),
        45 => compound(format!("{s} &")),
        46 if inner.simple => wrapped(format!("coproc {s}")),
        47 => compound(format!("[[ -n x ]] && {s}")),
        48 => compound(format!("{a} |& {s}")),
        49 => compound(format!("{a} 2>&1 | {s}")),
        _ => compound(format!("{{ {a}; {s}\n}}")),
    }
}

fn composed() -> impl Strategy<Value = Script> {
    denied().prop_recursive(3, 16, 1, |inner| {
        (inner, 0..50usize, 0..ALLOWED.len()).prop_map(|(s, form, a)| compose(s, form, ALLOWED[a]))
    })
}

/// Forms where the denied program is only known at run time: never `allow`.
fn hidden() -> impl Strategy<Value = Script> {
    let base = prop_oneof![
        Just("$(echo rm) -rf build".to_string()),
        Just("X=rm; $X -rf build".to_string()),
        Just("eval \"$(echo rm -rf build)\"".to_string()),
        Just("bash -c \"$CMD\"".to_string()),
        Just("setsid rm -rf build".to_string()),
        Just("ls | bash".to_string()),
        Just("/bin/r? -rf build".to_string()),
        Just("{r,}m -rf build".to_string()),
        Just("`echo rm` -rf build".to_string()),
    ]
    .prop_map(|text| Script {
        text,
        simple: false,
    });
    base.prop_recursive(2, 8, 1, |inner| {
        (inner, 0..50usize, 0..ALLOWED.len()).prop_map(|(s, form, a)| compose(s, form, ALLOWED[a]))
    })
}

/// Whether bash itself accepts the script (`bash -n` reads without executing); `None` when
/// no bash is available.
fn bash_accepts(script: &str) -> Option<bool> {
    let status = std::process::Command::new("bash")
        .args(["-n", "-c", script])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    Some(status.success())
}

/// The verdict an evaluation must have: its strictest part's, `ask` when it has none.
fn strictest(evaluation: &agent::permissions::Evaluation) -> Decision {
    evaluation
        .parts
        .iter()
        .map(|part| part.decision)
        .max()
        .unwrap_or(Ask)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn a_visible_denied_command_is_denied_in_every_form(script in composed()) {
        let env = TestEnv::new();
        let verdict = engine(&env).check_bash(&script.text).decision;
        prop_assert_ne!(verdict, Allow, "{:?}", script.text);
        if bash_accepts(&script.text) != Some(false) {
            prop_assert_eq!(verdict, Deny, "{:?}", script.text);
        }
    }

    #[test]
    fn a_hidden_denied_command_is_never_allowed(script in hidden()) {
        let env = TestEnv::new();
        let verdict = engine(&env).check_bash(&script.text).decision;
        prop_assert_ne!(verdict, Allow, "{:?}", script.text);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let env = TestEnv::new();
        let evaluation = engine(&env).check_bash(&text);
        prop_assert_eq!(evaluation.decision, strictest(&evaluation), "{:?}", text);
    }

    #[test]
    fn shell_soup_never_panics(
        text in "(rm|ls|cat|echo|git|bash|-c|eval|xargs|find|-exec|[;&|<>(){}$`'\"\\!#*?~=\n\t ]|<<|EOF|x){0,40}"
    ) {
        let env = TestEnv::new();
        let evaluation = engine(&env).check_bash(&text);
        prop_assert_eq!(evaluation.decision, strictest(&evaluation), "{:?}", text);
    }
}

// --- agent check ------------------------------------------------------------------------

#[test]
fn check_exit_status_is_zero_whatever_the_verdict() {
    let env = TestEnv::new();
    for (command, verdict) in [
        ("ls -la", "allow"),
        ("cargo build", "ask"),
        ("rm -rf build", "deny"),
    ] {
        let output = env.cmd().args(["check", command]).output().unwrap();
        let (stdout, _) = texts(&output);
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(stdout.lines().next(), Some(verdict), "{stdout}");
    }
    let usage = env.cmd().arg("check").output().unwrap();
    assert_eq!(usage.status.code(), Some(2));
    let unknown = env
        .cmd()
        .args(["check", "--tool", "nope", "x"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(texts(&unknown).1.contains("unknown tool `nope`"));
}

#[test]
fn check_json_shape() {
    let env = TestEnv::new();
    let output = env
        .cmd()
        .args(["check", "--json", "git status && rm -rf build"])
        .output()
        .unwrap();
    let value: Value = serde_json::from_str(&texts(&output).0).unwrap();
    assert_eq!(
        value,
        serde_json::json!({
            "verdict": "deny",
            "parts": [
                {"command": "git status", "verdict": "allow",
                 "rule": "allow bash `git status` (default)", "reason": "read-only git"},
                {"command": "rm -rf build", "verdict": "deny",
                 "rule": "deny bash `rm *` (default)", "reason": "deletes files"}
            ]
        })
    );
}

#[test]
fn check_explains_each_part_and_escapes_invisible_characters() {
    let env = TestEnv::new();
    let output = env
        .cmd()
        .args(["check", "ls\u{200b} -la"])
        .output()
        .unwrap();
    let (stdout, _) = texts(&output);
    assert_eq!(
        stdout,
        "ask\n  ask    ls\\u200b -la  — no rule allows this command  [ask bash `*` (default)]\n"
    );
}

#[test]
fn check_file_tools() {
    let env = TestEnv::new();
    env.write("src/main.rs", "fn main() {}\n");
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    std::fs::write(env.home.join(".ssh/id_rsa"), "key").unwrap();
    std::os::unix::fs::symlink(
        env.home.join(".ssh/id_rsa"),
        env.workspace.join("notes.txt"),
    )
    .unwrap();
    let rate = |tool: &str, path: &str| {
        let output = env
            .cmd()
            .args(["check", "--tool", tool, path])
            .output()
            .unwrap();
        texts(&output).0.lines().next().unwrap_or("").to_string()
    };
    assert_eq!(rate("read_file", "src/main.rs"), "allow");
    assert_eq!(
        rate("read_file", "."),
        "allow",
        "listing the workspace root"
    );
    assert_eq!(rate("read_file", ".."), "ask");
    assert_eq!(rate("write_file", "src/new.rs"), "allow");
    assert_eq!(rate("read_file", "/etc/hostname"), "ask");
    assert_eq!(rate("write_file", ".git/config"), "ask");
    assert_eq!(rate("read_file", ".git/config"), "allow");
    assert_eq!(rate("write_file", ".env"), "deny");
    assert_eq!(rate("str_replace", "app/.env"), "deny");
    assert_eq!(rate("read_file", "~/.ssh/id_rsa"), "deny");
    assert_eq!(
        rate("read_file", "notes.txt"),
        "deny",
        "symlinks are followed"
    );
    let agent_env = env.agent_home.join("env");
    assert_eq!(rate("read_file", agent_env.to_str().unwrap()), "deny");
}

#[test]
fn bash_arguments_naming_denied_paths_are_denied() {
    let env = TestEnv::new();
    // A real key, so globs like `~/.s?h/id_rsa` expand to it as bash would.
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    std::fs::write(env.home.join(".ssh/id_rsa"), "key").unwrap();
    let engine = engine(&env);
    for command in [
        "cat ~/.ssh/id_rsa",
        "cp .env /tmp",
        "cat $HOME/.ssh/id_rsa",
        "grep KEY ~/.agents/env",
        "echo x > app/.env",
        "cd ~/.ssh && cat id_rsa",
        "cat ~/.ssh/*",
        "find ~/.ssh -type f -exec cat {} +",
        "git diff --no-index ~/.ssh/id_rsa /dev/null",
        "ls ~/.ssh",
        "cat \"$(echo .env)\"",
        "f=.env; cat \"$f\"",
        "for f in a .env; do cat \"$f\"; done",
        "d=~/.ssh; cat $d/id_rsa",
        "cat < ~/.ssh/id_rsa",
        "echo \"$(<~/.ssh/id_rsa)\"",
        "cat .//.env",
        "cat ./sub/../.env",
        "cat $(echo ~/.ssh/id_rsa)",
        "cat `echo ~/.ssh/id_rsa`",
        "echo ~/.ssh/id_rsa | xargs cat",
        "printf '%s\\n' ~/.ssh/id_rsa | xargs cat",
        "echo ~/.s?h/id_rsa | xargs cat",
        "bash -c 'echo ~/.ssh/id_rsa' | xargs cat",
        "cat $(echo ~/.agents/env)",
    ] {
        assert_eq!(engine.check_bash(command).decision, Deny, "{command}");
    }
    assert_eq!(engine.check_bash("grep -r BEGIN ~").decision, Ask);
    assert_eq!(engine.check_bash("grep -r --regex=BEGIN ~").decision, Ask);
    assert_eq!(engine.check_bash("echo .env").decision, Allow);
    assert_eq!(engine.check_bash("echo ~/.ssh/id_rsa").decision, Allow);
    assert_eq!(engine.check_bash("echo .env >> .gitignore").decision, Ask);
    // A search pattern is text, not a file; a file operand is still checked.
    for command in [
        "grep -rn .env src",
        "git log --oneline | grep .env",
        "rg -n API_KEY src",
    ] {
        assert_eq!(engine.check_bash(command).decision, Allow, "{command}");
    }
    for command in [
        "grep -e x ~/.ssh/id_rsa",
        "grep -rnf .env src",
        "grep --regexp=x .env",
        "grep key .env",
        "grep ~/.ssh/id_rsa",
        "rg --files ~/.ssh",
        // Options after the pattern, and GNU grep's abbreviations of long options.
        "grep .env -e x",
        "grep .env -ie x",
        "rg .env -e x",
        "grep --regex=x .env",
        "grep --reg x .env",
        "grep .env --file=/dev/null",
    ] {
        assert_eq!(engine.check_bash(command).decision, Deny, "{command}");
    }
}

#[test]
fn configured_path_rules_apply_to_files_and_commands() {
    let env = TestEnv::new();
    env.config(
        "[[permissions.rules]]\ntool = \"write_file\"\npattern = \"src/generated/**\"\naction = \"deny\"\n",
    );
    let output = env
        .cmd()
        .args(["check", "--tool", "write_file", "src/generated/a.rs"])
        .output()
        .unwrap();
    assert!(texts(&output).0.starts_with("deny\n"));
    let output = env
        .cmd()
        .args(["check", "cp x src/generated/a.rs"])
        .output()
        .unwrap();
    assert!(
        texts(&output).0.starts_with("deny\n"),
        "{}",
        texts(&output).0
    );
}

// --- config trust -----------------------------------------------------------------------

const PROJECT_RULES: &str = "[[permissions.rules]]\ntool = \"bash\"\npattern = \"cargo build*\"\naction = \"allow\"\n\n\
    [[permissions.rules]]\ntool = \"bash\"\npattern = \"make *\"\naction = \"deny\"\n\n\
    [[permissions.rules]]\ntool = \"bash\"\npattern = \"rm *\"\naction = \"ask\"\n";

#[test]
fn untrusted_project_rules_only_tighten_until_agent_trust() {
    let env = TestEnv::new();
    env.write(".agents/config.toml", PROJECT_RULES);
    env.config("# my settings\ndefault_role = \"coder\"\n");
    let check = |command: &str| {
        let output = env.cmd().args(["check", command]).output().unwrap();
        let (stdout, stderr) = texts(&output);
        (stdout.lines().next().unwrap_or("").to_string(), stderr)
    };
    let (verdict, stderr) = check("cargo build");
    assert_eq!(verdict, "ask");
    assert_eq!(stderr.matches("warning").count(), 1, "{stderr}");
    assert!(
        stderr.contains("bash `cargo build*`") && stderr.contains("agent trust"),
        "{stderr}"
    );
    assert_eq!(check("make all").0, "deny");
    assert_eq!(
        check("rm -rf build").0,
        "deny",
        "a project ask rule cannot loosen a deny"
    );

    let output = env.cmd().arg("trust").output().unwrap();
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains(&format!("trusted {}", env.workspace.display())),
        "{stdout}"
    );
    let user = std::fs::read_to_string(env.agent_home.join("config.toml")).unwrap();
    assert_eq!(
        user,
        format!(
            "# my settings\ndefault_role = \"coder\"\ntrusted_workspaces = [\"{}\"]\n",
            env.workspace.display()
        )
    );
    let (verdict, stderr) = check("cargo build --release");
    assert_eq!((verdict.as_str(), stderr.as_str()), ("allow", ""));
    let again = env.cmd().arg("trust").output().unwrap();
    assert!(texts(&again).0.starts_with("already trusted"));
}

// --- a denied command in a real turn ---------------------------------------------------

#[test]
fn a_denied_part_blocks_the_whole_command_in_a_turn() {
    let server = MockServer::start(vec![
        Reply::Sse(tool_events(
            "call_1",
            "bash",
            r#"{"command":"ls && rm -rf victim"}"#,
        )),
        Reply::Sse(text_events(&["ok"])),
    ]);
    let env = TestEnv::with_server(&server);
    env.write("victim/file", "still here");
    let output = env.run(&["clean up"]);
    let (_, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(env.read("victim/file"), "still here");
    let requests = server.chat_requests();
    let messages = requests[1].messages();
    let tool = messages.iter().find(|m| m["role"] == "tool").unwrap();
    let content = tool["content"].as_str().unwrap();
    assert!(content.starts_with("Blocked by policy: "), "{content}");
    assert!(content.contains("rm -rf victim"), "{content}");
}

// --- session approvals through the dispatcher -------------------------------------------

mod session {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use agent::cancel::CancelToken;
    use agent::model::ToolCall;
    use agent::permissions::{ApprovalAnswer, ApprovalRequest, Approver};
    use agent::sandbox::ExecSettings;
    use agent::tools::NoPolicy;
    use agent::tools::{Dispatcher, FileTracker, Registry, ToolContext};
    use pretty_assertions::assert_eq;

    use crate::support::TestEnv;

    /// Answers from a list (then `n`), recording what was asked.
    struct Scripted {
        answers: Mutex<VecDeque<ApprovalAnswer>>,
        asked: Mutex<Vec<String>>,
    }

    impl Approver for Scripted {
        fn ask(&self, request: &ApprovalRequest) -> ApprovalAnswer {
            self.asked.lock().unwrap().push(request.subject.clone());
            self.answers
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or(ApprovalAnswer::No)
        }
    }

    #[test]
    fn always_allows_the_prefix_for_the_session_but_never_a_deny() {
        let env = TestEnv::new();
        env.write("victim/file", "x");
        let engine = Mutex::new(super::engine(&env));
        let approver = Scripted {
            answers: Mutex::new(VecDeque::from([ApprovalAnswer::Always])),
            asked: Mutex::new(Vec::new()),
        };
        let registry = Registry::builtin();
        let dispatcher = Dispatcher {
            registry: &registry,
            permissions: &engine,
            approver: &approver,
            policy: &NoPolicy,
        };
        let (files, exec, cancel) = (
            FileTracker::default(),
            ExecSettings::default(),
            CancelToken::new(),
        );
        let ctx = ToolContext {
            workspace: &env.workspace,
            cwd: &env.workspace,
            files: &files,
            exec: &exec,
            cancel: &cancel,
            max_output_chars: 10_000,
            before_run: None,
        };
        let call = |command: &str| {
            let call = ToolCall {
                id: "c".into(),
                name: "bash".into(),
                arguments: serde_json::json!({ "command": command }).to_string(),
            };
            dispatcher.dispatch(&call, &ctx)
        };
        assert!(call("id -u").ok, "approved with `a`");
        assert!(call("id -u").ok, "same command: no prompt");
        assert!(
            call("id -u -r").ok,
            "longer command with the same prefix: no prompt"
        );
        let denied = call("id -u && rm -rf victim");
        assert!(
            denied.content.starts_with("Blocked by policy: "),
            "{}",
            denied.content
        );
        assert_eq!(env.read("victim/file"), "x");
        let other = call("id -un");
        assert_eq!(other.content, "The user denied this tool call.");
        assert_eq!(*approver.asked.lock().unwrap(), vec!["id -u", "id -un"]);
    }
}

/// Brace expansion used to hide a secret path from the checker: `cat ~/.ssh/{id_rsa,x}` was
/// `allow` (the word was "dynamic", so no path was checked) and would send the key to the model.
#[test]
fn brace_expansion_cannot_hide_a_secret_path() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.home.join(".ssh")).unwrap();
    std::fs::write(env.home.join(".ssh/id_rsa"), "key\n").unwrap();
    std::fs::write(env.agent_home.join("env"), "API_KEY=sk-x\n").unwrap();
    let verdict = |command: &str| {
        let output = env.cmd().args(["check", command]).output().unwrap();
        let (stdout, stderr) = texts(&output);
        assert_eq!(output.status.code(), Some(0), "{stderr}");
        stdout.lines().next().unwrap_or_default().to_string()
    };
    for command in [
        "cat ~/.ssh/{id_rsa,x}",
        "cat ~/.ssh/id_rsa{,}",
        "cat {~/.ssh/id_rsa,README}",
        "head -c 99 ~/.ss{h,}/id_rs{a,b}",
        "cat $HOME/.ssh/{id_rsa,x}",
        "cat ~/.agents/{env,x}",
        "cat < ~/.ssh/{id_rsa,x}",
        "cd ~/.ss{h,x} && cat id_rsa",
    ] {
        assert_eq!(verdict(command), "deny", "{command}");
    }
    for command in ["ls {src,tests}", "cat src/{main,lib}.rs", "echo {1..3}"] {
        assert_eq!(verdict(command), "allow", "{command}");
    }
}

#[test]
fn xargs_known_stdin_is_checked_as_paths() {
    let env = TestEnv::new();
    let engine = engine(&env);
    let key = env.home.join(".ssh/id_rsa").display().to_string();
    for command in [
        "xargs cat <<< ~/.ssh/id_rsa".to_string(),
        "xargs -n1 cat <<< .env".to_string(),
        format!("xargs cat <<EOF\n{key}\nEOF"),
        format!("cat <<'EOF' | xargs cat\n{key}\nEOF"),
    ] {
        assert_eq!(engine.check_bash(&command).decision, Deny, "{command}");
    }
    for command in ["xargs wc -l <<< src/main.rs", "ls | xargs wc -l"] {
        assert_eq!(engine.check_bash(command).decision, Allow, "{command}");
    }
}

#[test]
fn printed_output_feeding_a_command_is_rendered_before_the_path_check() {
    let env = TestEnv::new();
    let engine = engine(&env);
    for command in [
        "cat $(printf '%s/.ssh/id_rsa' ~)",
        "printf .en%s v | xargs cat",
        "printf '%s/env\\n' \"$AGENT_HOME\" | xargs cat",
        "cat $(echo -e '\\x7e/.ssh/id_rsa')",
        "printf '\\056env' | xargs cat",
    ] {
        assert_eq!(engine.check_bash(command).decision, Deny, "{command}");
    }
    for command in ["printf '%s\\n' b a | sort", "echo -e 'a\\tb' | cut -f2"] {
        assert_eq!(engine.check_bash(command).decision, Allow, "{command}");
    }
}

#[test]
fn printing_into_a_data_filter_is_not_a_path() {
    let env = TestEnv::new();
    let engine = engine(&env);
    for command in ["echo .env | grep env", "echo ~/.ssh/id_rsa | sort | uniq"] {
        assert_eq!(engine.check_bash(command).decision, Allow, "{command}");
    }
    for command in [
        "echo .env | grep env | xargs cat",
        "printf '.env\\0' | sort --files0-from=-",
        "echo .env | cat | sh",
    ] {
        assert_eq!(engine.check_bash(command).decision, Deny, "{command}");
    }
}

/// tree-sitter-bash's scanner crashed the whole process (SIGSEGV) on a brace followed by a
/// code point above U+00FF; found by `arbitrary_text_never_panics`.
#[test]
fn non_ascii_after_a_brace_does_not_crash_the_checker() {
    let env = TestEnv::new();
    let engine = engine(&env);
    for command in [
        "{\u{e01c9}",
        "{\u{1f600}",
        "echo {\u{100}..\u{101}}",
        "ls {é,ü}",
    ] {
        let _ = engine.check_bash(command);
    }
    assert_ne!(engine.check_bash("{\u{e01c9}").decision, Allow);
    assert_eq!(
        engine.check_bash("cat ~/.ssh/{id_rsa,\u{e01c9}}").decision,
        Deny
    );
    assert_eq!(engine.check_bash("echo héllo | grep ö").decision, Allow);
    assert_eq!(engine.check_bash("rm -rf / # \u{e01c9}").decision, Deny);
}
