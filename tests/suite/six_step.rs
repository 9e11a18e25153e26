//! The scripted six-step session of issue 2: read a failing test, run it, read the source,
//! `str_replace` the bug, rerun, answer. The mock plays the model; the binary runs every tool
//! for real. Checks the file was fixed, each tool saw what it should, and every request was
//! well formed with a byte-identical prefix (system prompt and tools).

use serde_json::json;

use super::file_tools::without_reminder;
use crate::support::env::texts;
use crate::support::sse::{check_request_invariants, text_events, tool_events};
use crate::support::{MockServer, Reply, TestEnv};

const TEST_SH: &str = "\
. ./calc.sh
if [ \"$(add 2 3)\" = 5 ]; then echo PASS; else echo \"FAIL: add 2 3 gave $(add 2 3)\"; exit 1; fi
";
const CALC_SH: &str = "# calc.sh: arithmetic helpers\nadd() {\n  echo $(($1 - $2))\n}\n";

#[test]
fn six_step_session_fixes_the_bug() {
    let calls = [
        ("read_file", json!({"path": "test.sh"})),
        ("bash", json!({"command": "sh test.sh"})),
        ("read_file", json!({"path": "calc.sh"})),
        (
            "str_replace",
            json!({"path": "calc.sh", "old_str": "echo $(($1 - $2))", "new_str": "echo $(($1 + $2))"}),
        ),
        ("bash", json!({"command": "sh test.sh"})),
    ];
    let mut replies: Vec<Reply> = calls
        .iter()
        .enumerate()
        .map(|(i, (tool, args))| {
            Reply::Sse(tool_events(&format!("call_{i}"), tool, &args.to_string()))
        })
        .collect();
    replies.push(Reply::Sse(text_events(&[
        "Fixed `add` in calc.sh ",
        "(it subtracted); test.sh passes.",
    ])));
    let server = MockServer::start(replies);
    let env = TestEnv::with_server(&server);
    env.write("test.sh", TEST_SH);
    env.write("calc.sh", CALC_SH);

    // `sh test.sh` is rated `ask` by the default rules; `--yes` approves it.
    let output = env.run(&["--yes", "test.sh fails; fix it"]);
    let (stdout, stderr) = texts(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "Fixed `add` in calc.sh (it subtracted); test.sh passes.\n"
    );
    assert_eq!(
        env.read("calc.sh"),
        "# calc.sh: arithmetic helpers\nadd() {\n  echo $(($1 + $2))\n}\n"
    );

    let requests = server.chat_requests();
    assert_eq!(requests.len(), 6, "{stderr}");
    for request in &requests {
        check_request_invariants(&request.body).unwrap();
        assert_eq!(
            request.body["tools"], requests[0].body["tools"],
            "tools must not change"
        );
        assert_eq!(
            request.messages()[0],
            requests[0].messages()[0],
            "system prompt must not change"
        );
    }
    let last = requests[5].messages();
    let results: Vec<String> = last
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| without_reminder(m["content"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(results.len(), 5);
    assert!(
        results[0].starts_with("     1\t. ./calc.sh\n"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("FAIL: add 2 3 gave -1") && results[1].contains("[exit code 1]"),
        "{}",
        results[1]
    );
    assert!(
        results[2].contains("     3\t  echo $(($1 - $2))"),
        "{}",
        results[2]
    );
    assert!(
        results[3].starts_with("Edited `calc.sh` at line 3."),
        "{}",
        results[3]
    );
    assert!(
        results[3].contains("     3\t  echo $(($1 + $2))"),
        "{}",
        results[3]
    );
    assert_eq!(results[4], "PASS\n");
}
