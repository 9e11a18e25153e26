//! One line of recovery after a refused or failed call (coach on): what to call instead, as
//! a call in the JSON form the model writes, so a small model can copy it.
//!
//! A small model answers "not read yet" with a bash script that runs `read_file` as a
//! program, retries a denied `rm` word for word, or gives up. Each line here is decided from
//! the call's typed facts ([`CallFact`]: tool, arguments, status, error kind, exit code),
//! never from the result's text; a command's words are those the permission rules' shell
//! parser reads ([`crate::permissions::shell`]).

use serde_json::json;

use crate::agent::facts::{CallFact, CallStatus};
use crate::model::ToolCall;
use crate::permissions::shell::{self, Item};
use crate::tools::ToolErrorKind;

/// Tools a small model tends to run as shell programs.
const FILE_TOOLS: &[&str] = &["read_file", "write_file", "str_replace"];

/// The line to add to the result of `fact`, when one helps.
pub(crate) fn recovery_line(fact: &CallFact) -> Option<String> {
    let path = fact.string_argument("path");
    let call = |name: &str, arguments: serde_json::Value| {
        format!("{{\"name\": \"{name}\", \"arguments\": {arguments}}}")
    };
    let read_first = |path: &str| call("read_file", json!({ "path": path }));
    if let Some((script, run)) = python_rerun(fact) {
        return Some(format!(
            "Next: `{script}` is a Python file, not a shell script; run it with python3: {}",
            call("bash", json!({ "command": run }))
        ));
    }
    match (fact.status, fact.error) {
        (CallStatus::Failed, Some(ToolErrorKind::NotRead | ToolErrorKind::StaleFile)) => {
            let path = path?;
            Some(format!(
                "Next: read the file first with this call, then make your change again: {}",
                read_first(&path)
            ))
        }
        (CallStatus::Failed, Some(ToolErrorKind::NoMatch)) => {
            let path = path?;
            Some(format!(
                "Next: read the file and copy `old_str` exactly from it: {}",
                read_first(&path)
            ))
        }
        (CallStatus::Failed, Some(ToolErrorKind::NotFound)) if fact.name == "str_replace" => {
            let path = path?;
            Some(format!(
                "Next: to create the file, write all of it: {}",
                call("write_file", json!({ "path": path, "content": "..." }))
            ))
        }
        (CallStatus::Failed, Some(ToolErrorKind::NotFound)) => Some(format!(
            "Next: list the files to find the right path: {}",
            call("bash", json!({ "command": "ls -R" }))
        )),
        (_, Some(ToolErrorKind::SandboxRequired | ToolErrorKind::SandboxFailed)) => Some(
            "Next: commands cannot run here; do not repeat this one. Use read_file, write_file \
             and str_replace instead."
                .to_string(),
        ),
        (CallStatus::Blocked, _) => Some(format!(
            "Next: this call is not allowed; do not repeat it. Do the task another way{}, or \
             say in your answer that it needs the user's permission.",
            if fact.name == "bash" {
                " (another command, or the file tools)"
            } else {
                ""
            }
        )),
        (CallStatus::Denied, _) => Some(
            "Next: the user said no to this call; do not repeat it. Do something else, or ask \
             the user in your answer."
                .to_string(),
        ),
        (CallStatus::Ran, _) if fact.name == "bash" && fact.exit_code == Some(127) => {
            let command = fact.string_argument("command")?;
            let program = command.split_whitespace().next()?;
            let tool = FILE_TOOLS.iter().find(|t| **t == program)?;
            let path = command.split_whitespace().nth(1).unwrap_or("FILE");
            Some(format!(
                "Next: `{tool}` is a tool, not a shell command; call it: {}",
                call(tool, json!({ "path": path }))
            ))
        }
        _ => None,
    }
}

/// For a write (`write_file`, `str_replace`) refused because the file was not read yet: the
/// `read_file` call whose output the coach adds to the refusal, so the file counts as read
/// and the model's next write of it can run (issue 19 item 5). `None` for anything else.
pub(crate) fn read_for_refusal(fact: &CallFact) -> Option<ToolCall> {
    let refused = fact.status == CallStatus::Failed
        && fact.error == Some(ToolErrorKind::NotRead)
        && matches!(fact.name.as_str(), "write_file" | "str_replace");
    let path = fact.string_argument("path").filter(|_| refused)?;
    Some(ToolCall {
        id: "call_coach_read".into(),
        name: "read_file".into(),
        arguments: json!({ "path": path }).to_string(),
    })
}

/// The line before the file's content added to a not-read refusal ([`read_for_refusal`]).
pub(crate) fn content_follows(path: &str) -> String {
    format!(
        "`{path}` now counts as read. Its current content is below; make your change again \
         (write_file with all of the new content, or str_replace):"
    )
}

/// The command the recovery line of `fact` tells the model to run instead, when it names
/// one (`python3 X.py` after `bash X.py` failed): the model's next reply showing exactly this
/// command in a shell block is taken as the call.
pub(crate) fn suggested_command(fact: &CallFact) -> Option<String> {
    python_rerun(fact).map(|(_, run)| run)
}

/// `(script, command)` when `fact` is a failed `bash X.py` / `sh X.py`.
fn python_rerun(fact: &CallFact) -> Option<(String, String)> {
    if fact.name != "bash"
        || fact.status != CallStatus::Ran
        || fact.exit_code.is_none_or(|code| code == 0)
    {
        return None;
    }
    python_run_by_shell(fact.string_argument("command").as_deref()?)
}

/// When `command` is one simple command that runs a Python file with a shell (`bash X.py`,
/// `sh X.py ARGS`), as parsed by the permission rules' shell parser: the file, and the same
/// run with `python3`. `None` for anything else (options before the file, other commands,
/// redirections, words only known at run time).
fn python_run_by_shell(command: &str) -> Option<(String, String)> {
    let analysis = shell::analyze(command);
    let [Item::Command(simple)] = analysis.items.as_slice() else {
        return None;
    };
    let (program, operands) = simple.words.split_first()?;
    let script = operands.first()?;
    let plain = simple.redirects.is_empty() && simple.words.iter().all(|word| !word.dynamic);
    if !plain
        || !matches!(shell::basename(&program.text), "bash" | "sh")
        || script.is_option()
        || !script.text.ends_with(".py")
    {
        return None;
    }
    let run = std::iter::once("python3").chain(operands.iter().map(|word| word.text.as_str()));
    Some((script.text.clone(), shell_words::join(run)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::facts::test_fact as fact;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_file_not_read_yet_gets_the_read_call() {
        let line = recovery_line(&fact(
            "write_file",
            json!({"path": "fruits.txt", "content": "x"}),
            CallStatus::Failed,
            Some(ToolErrorKind::NotRead),
            None,
        ));
        assert_eq!(
            line.as_deref(),
            Some(
                "Next: read the file first with this call, then make your change again: \
                 {\"name\": \"read_file\", \"arguments\": {\"path\":\"fruits.txt\"}}"
            )
        );
    }

    #[test]
    fn only_a_write_refused_as_not_read_reads_the_file() {
        let refused = |name: &str, error| {
            fact(
                name,
                json!({"path": "README.md"}),
                CallStatus::Failed,
                Some(error),
                None,
            )
        };
        let read = read_for_refusal(&refused("str_replace", ToolErrorKind::NotRead));
        assert_eq!(
            read.map(|c| (c.name, c.arguments)),
            Some(("read_file".into(), r#"{"path":"README.md"}"#.into()))
        );
        assert!(read_for_refusal(&refused("write_file", ToolErrorKind::NotRead)).is_some());
        assert!(read_for_refusal(&refused("write_file", ToolErrorKind::StaleFile)).is_none());
        assert!(read_for_refusal(&refused("read_file", ToolErrorKind::NotRead)).is_none());
        let no_path = fact(
            "write_file",
            json!({}),
            CallStatus::Failed,
            Some(ToolErrorKind::NotRead),
            None,
        );
        assert!(read_for_refusal(&no_path).is_none());
    }

    #[test]
    fn only_a_python_file_run_by_a_shell_is_run_with_python3() {
        assert_eq!(
            python_run_by_shell("bash hello.py"),
            Some(("hello.py".into(), "python3 hello.py".into()))
        );
        assert_eq!(
            python_run_by_shell("/bin/sh ./src/app.py"),
            Some(("./src/app.py".into(), "python3 ./src/app.py".into()))
        );
        for other in [
            "bash run.sh",
            "bash -x hello.py",
            "bash hello.py > out.txt",
            "cd src && bash hello.py",
            "bash $SCRIPT.py",
            "zsh hello.py",
            "python3 hello.py",
            "bash -c 'python3 hello.py'",
            "bash",
            "",
        ] {
            assert_eq!(python_run_by_shell(other), None, "{other}");
        }
    }

    #[test]
    fn refusals_and_failures_each_get_one_line() {
        let cases = [
            (
                fact(
                    "bash",
                    json!({"command": "rm -rf build"}),
                    CallStatus::Blocked,
                    None,
                    None,
                ),
                "not allowed; do not repeat it",
            ),
            (
                fact(
                    "bash",
                    json!({"command": "rm x"}),
                    CallStatus::Denied,
                    None,
                    None,
                ),
                "the user said no",
            ),
            (
                fact(
                    "bash",
                    json!({"command": "ls"}),
                    CallStatus::Failed,
                    Some(ToolErrorKind::SandboxRequired),
                    None,
                ),
                "commands cannot run here",
            ),
            (
                fact(
                    "str_replace",
                    json!({"path": "a.py", "old_str": "x", "new_str": "y"}),
                    CallStatus::Failed,
                    Some(ToolErrorKind::NoMatch),
                    None,
                ),
                "copy `old_str` exactly",
            ),
            (
                fact(
                    "read_file",
                    json!({"path": "tests/a.py"}),
                    CallStatus::Failed,
                    Some(ToolErrorKind::NotFound),
                    None,
                ),
                "ls -R",
            ),
            (
                fact(
                    "bash",
                    json!({"command": "read_file fruits.txt"}),
                    CallStatus::Ran,
                    None,
                    Some(127),
                ),
                "`read_file` is a tool, not a shell command; call it: {\"name\": \"read_file\", \"arguments\": {\"path\":\"fruits.txt\"}}",
            ),
            (
                fact(
                    "bash",
                    json!({"command": "bash hello.py"}),
                    CallStatus::Ran,
                    None,
                    Some(2),
                ),
                "`hello.py` is a Python file, not a shell script; run it with python3: {\"name\": \"bash\", \"arguments\": {\"command\":\"python3 hello.py\"}}",
            ),
            (
                fact(
                    "bash",
                    json!({"command": "sh 'my tool.py' --name x"}),
                    CallStatus::Ran,
                    None,
                    Some(127),
                ),
                "{\"command\":\"python3 'my tool.py' --name x\"}",
            ),
        ];
        for (fact, expected) in cases {
            let line = recovery_line(&fact).unwrap_or_default();
            assert!(line.contains(expected), "{fact:?}: {line}");
            assert!(!line.contains('\n'), "one line: {line}");
        }
        for quiet in [
            fact(
                "bash",
                json!({"command": "ls"}),
                CallStatus::Ran,
                None,
                Some(0),
            ),
            fact(
                "bash",
                json!({"command": "nope"}),
                CallStatus::Ran,
                None,
                Some(127),
            ),
            fact(
                "read_file",
                json!({"path": "a"}),
                CallStatus::Ran,
                None,
                None,
            ),
            fact("bash", json!({}), CallStatus::NotRun, None, None),
            fact(
                "bash",
                json!({"command": "bash hello.py"}),
                CallStatus::Ran,
                None,
                Some(0),
            ),
        ] {
            assert_eq!(recovery_line(&quiet), None, "{quiet:?}");
        }
    }
}
