//! Reading the user's request (SPEC §3.5, "the user's words win"): does it ask for work to
//! be done, or only to be shown, told or explained something; does it say not to run
//! anything, or not to change anything.
//!
//! The coach asks the model to run or fix something only when the request allows it; the
//! plain loop never asks at all. The reading is deliberately conservative: when in doubt,
//! the request is *not* taken as permission for the harness to push the model further.
//!
//! Rules, over the request lowercased and split into clauses (at `, ; ! ?`, a newline, a `.`
//! or `:` followed by a space, and at `then`, `but`, or `and` before a verb):
//! - **answer only**: the first clause opens as a question or a request for information
//!   (`show`, `tell`, `explain`, `describe`, `give me`, `what`, `how`, `why`, `is`, `can I`,
//!   `can you explain`, ...) or the request says so (`explain only`, `just tell me`), and no
//!   clause opens with a verb of work (`fix`, `run`, `create`, `can you run`, ...);
//! - **no run**: a negation before a verb of running in the same clause (`don't run it`,
//!   `do not execute anything`, `without running`, `never deploy`; but not `don't forget to
//!   run`), the user running it (`I will run it myself`, `I'll test it`), or `just write`
//!   / `only the code`;
//! - **no change**: `don't change anything`, `without modifying anything`, `read-only`;
//! - **asks to run**: a word of running (`run`, `execute`, `test`, `build`, `compile`,
//!   `verify`, ...) in a clause that is not a request for information, not negated, and
//!   the request does not say not to run (that always wins).

/// What the user's request allows the harness to ask of the model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Intent {
    /// The request asks to be shown, told or explained something (or asks a question):
    /// nothing shown in the answer is executed and the harness asks for no work.
    pub(crate) answer_only: bool,
    /// The user said not to run something.
    pub(crate) no_run: bool,
    /// The user said not to change anything.
    pub(crate) no_change: bool,
    /// The request asks for something to be run, tested or built (never with `no_run`).
    pub(crate) asks_to_run: bool,
    /// The request asks for a file to be created or changed: a verb of editing
    /// ([`EDIT_VERBS`]), not negated, in a clause that is not a request for information
    /// (never with `answer_only` or `no_change`).
    pub(crate) asks_to_edit: bool,
}

impl Intent {
    /// Reads `request` (the user's own words for a turn).
    pub(crate) fn read(request: &str) -> Self {
        let text = normalize(request);
        let clauses = clauses(&text);
        let openings: Vec<Opening> = clauses.iter().map(|c| opening(c)).collect();
        let any_work = openings.contains(&Opening::Work);
        let says_only = ONLY_PHRASES.iter().any(|p| contains_phrase(&clauses, p));
        let first_is_info = openings
            .iter()
            .find(|o| **o != Opening::Empty)
            .is_some_and(|o| *o == Opening::Info);
        let answer_only = (first_is_info || says_only) && !any_work;
        let no_run = clauses.iter().any(|c| says_no_run(c));
        let asks_to_run = !no_run
            && clauses.iter().zip(&openings).any(|(clause, opening)| {
                *opening != Opening::Info
                    && clause
                        .iter()
                        .enumerate()
                        .any(|(i, w)| RUN_WORDS.contains(&w.as_str()) && !negated(clause, i))
            });
        let no_change = clauses.iter().any(|c| says_no_change(c));
        let asks_to_edit = !answer_only
            && !no_change
            && clauses.iter().zip(&openings).any(|(clause, opening)| {
                *opening != Opening::Info
                    && clause
                        .iter()
                        .enumerate()
                        .any(|(i, w)| EDIT_VERBS.contains(&w.as_str()) && !negated(clause, i))
            });
        Self {
            answer_only,
            no_run,
            no_change,
            asks_to_run,
            asks_to_edit,
        }
    }

    /// The harness may ask the model to run something.
    pub(crate) fn allows_run_request(&self) -> bool {
        !self.answer_only && !self.no_run
    }

    /// The harness may ask the model to make a change itself.
    pub(crate) fn allows_edit_request(&self) -> bool {
        !self.answer_only && !self.no_change
    }

    /// A call the model only showed (in prose) may be taken as a call of `tool`.
    pub(crate) fn allows_shown_call(&self, tool: &str) -> bool {
        match tool {
            "bash" => self.allows_run_request() && self.allows_edit_request(),
            "write_file" | "str_replace" => self.allows_edit_request(),
            _ => !self.answer_only,
        }
    }
}

/// How a clause opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// A question or a request for information.
    Info,
    /// A request for work.
    Work,
    /// Neither (a statement, a negation, a clause of only fillers).
    Other,
    /// No words.
    Empty,
}

/// Lowercase, typographic apostrophes made plain, `dont` spelled `don't`.
fn normalize(request: &str) -> String {
    request
        .to_lowercase()
        .replace(['\u{2019}', '\u{2018}', '`'], "'")
        .replace("dont ", "don't ")
}

/// The clauses of `text`, each a list of words (see the module doc).
fn clauses(text: &str) -> Vec<Vec<String>> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next_is_space = chars.peek().is_none_or(|n| n.is_whitespace());
        let breaks = matches!(c, ',' | ';' | '!' | '?' | '\n' | '(' | ')')
            || (matches!(c, '.' | ':') && next_is_space);
        if breaks {
            pieces.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    pieces.push(current);
    let mut clauses = Vec::new();
    for piece in pieces {
        let words: Vec<String> = piece
            .split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
                    .to_string()
            })
            .filter(|w| !w.is_empty())
            .collect();
        split_at_joins(words, &mut clauses);
    }
    clauses.retain(|c| !c.is_empty());
    clauses
}

/// Splits `words` at `then` and `but`, and at `and` followed by a verb, except inside an
/// object such as `how to build and run`.
fn split_at_joins(words: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut clause: Vec<String> = Vec::new();
    let mut in_object = false;
    for (i, word) in words.iter().enumerate() {
        let next = words.get(i + 1).map(String::as_str).unwrap_or("");
        let previous = i.checked_sub(1).map_or("", |p| words[p].as_str());
        if word == "to" && OBJECT_HEADS.contains(&previous) {
            in_object = true;
        }
        let joins = match word.as_str() {
            "then" | "but" => true,
            "and" => !in_object && (is_work_verb(next) || INFO_VERBS.contains(&next)),
            _ => false,
        };
        if joins {
            out.push(std::mem::take(&mut clause));
            in_object = false;
        } else {
            clause.push(word.clone());
        }
    }
    out.push(clause);
}

/// Words before `to` that make the rest of the clause the object of a question (`how to
/// run`, `the command to run`).
const OBJECT_HEADS: &[&str] = &[
    "how", "command", "commands", "way", "ways", "steps", "what", "where", "when", "whether",
    "script", "code", "need", "needed", "want", "used",
];

/// Words skipped at the start of a clause.
const FILLERS: &[&str] = &[
    "please", "pls", "plz", "hey", "hi", "ok", "okay", "so", "now", "also", "and", "just",
    "quickly", "kindly", "first", "finally", "next", "then", "agent", "well", "sure", "yes",
    "right", "alright", "only", "simply",
];

/// Verbs that ask for information.
const INFO_VERBS: &[&str] = &[
    "show",
    "tell",
    "explain",
    "describe",
    "summarize",
    "summarise",
    "outline",
    "suggest",
    "recommend",
    "teach",
    "remind",
    "walk",
    "clarify",
    "compare",
    "review",
    "define",
    "document",
    "answer",
    "list",
    "give",
];

/// Words that open a question.
const QUESTION_WORDS: &[&str] = &[
    "what", "what's", "whats", "how", "how's", "why", "why's", "which", "where", "where's", "when",
    "who", "whose", "whom", "is", "are", "was", "were", "does", "did", "has", "have", "am",
    "isn't", "aren't", "doesn't", "didn't", "wasn't",
];

/// Modal verbs that open a question or a polite request (`can you run`, `should I`).
const MODALS: &[&str] = &[
    "can", "could", "would", "will", "should", "may", "might", "shall", "do", "won't", "can't",
    "couldn't", "wouldn't",
];

/// Verbs that ask for work.
const WORK_VERBS: &[&str] = &[
    "run",
    "rerun",
    "re-run",
    "execute",
    "test",
    "build",
    "rebuild",
    "compile",
    "create",
    "write",
    "rewrite",
    "add",
    "fix",
    "change",
    "edit",
    "update",
    "modify",
    "implement",
    "make",
    "install",
    "uninstall",
    "remove",
    "delete",
    "rename",
    "move",
    "refactor",
    "apply",
    "commit",
    "push",
    "pull",
    "deploy",
    "start",
    "stop",
    "restart",
    "set",
    "setup",
    "configure",
    "generate",
    "replace",
    "append",
    "insert",
    "clean",
    "format",
    "lint",
    "rebase",
    "merge",
    "checkout",
    "initialize",
    "initialise",
    "init",
    "bump",
    "upgrade",
    "downgrade",
    "patch",
    "convert",
    "migrate",
    "debug",
    "solve",
    "resolve",
    "verify",
    "try",
    "finish",
    "complete",
    "continue",
    "use",
    "put",
    "save",
    "download",
    "launch",
    "kill",
    "reset",
    "revert",
    "undo",
    "port",
    "translate",
    "optimize",
    "optimise",
    "improve",
    "sort",
    "split",
    "extract",
    "copy",
    "mkdir",
    "touch",
    "chmod",
    "cd",
    "go",
    "get",
    "do",
    "redo",
    "retry",
    "address",
    "handle",
    "bootstrap",
    "scaffold",
    "prepare",
    "draft",
    "tidy",
    "comment",
    "uncomment",
    "enable",
    "disable",
    "increase",
    "decrease",
    "raise",
    "lower",
    "drop",
    "truncate",
    "append",
    "clone",
    "fetch",
    "tag",
    "release",
    "publish",
    "package",
    "benchmark",
    "profile",
    "measure",
    "reproduce",
    "repair",
    "correct",
    "adjust",
    "tweak",
    "wire",
    "hook",
    "integrate",
];

/// Verbs of creating or changing a file.
const EDIT_VERBS: &[&str] = &[
    "create",
    "write",
    "rewrite",
    "add",
    "fix",
    "change",
    "edit",
    "update",
    "modify",
    "implement",
    "make",
    "append",
    "insert",
    "replace",
    "rename",
    "refactor",
    "correct",
    "repair",
    "patch",
    "generate",
    "save",
    "draft",
    "put",
];

/// Words of running something.
const RUN_WORDS: &[&str] = &[
    "run", "rerun", "re-run", "execute", "test", "tests", "build", "compile", "verify", "launch",
    "start",
];

/// Verbs whose negation is a request not to run something.
const RUN_VERBS: &[&str] = &[
    "run",
    "running",
    "rerun",
    "re-run",
    "execute",
    "executing",
    "exec",
    "launch",
    "launching",
    "start",
    "starting",
    "invoke",
    "invoking",
    "test",
    "testing",
    "deploy",
    "deploying",
    "install",
    "installing",
    "apply",
    "applying",
    "call",
    "calling",
];

/// Verbs whose negation (with an object such as `anything`) is a request not to change
/// anything.
const CHANGE_VERBS: &[&str] = &[
    "change",
    "changing",
    "modify",
    "modifying",
    "edit",
    "editing",
    "touch",
    "touching",
    "write",
    "writing",
    "alter",
    "altering",
    "delete",
    "deleting",
    "remove",
    "removing",
    "make",
];

/// Negations, as single words.
const NEGATIONS: &[&str] = &[
    "don't",
    "not",
    "never",
    "without",
    "avoid",
    "mustn't",
    "shouldn't",
    "no",
    "nor",
    "cannot",
    "won't",
    "refrain",
];

/// Words between a negation and a verb that turn it around (`don't forget to run`).
const REVERSALS: &[&str] = &[
    "forget", "fail", "hesitate", "skip", "neglect", "omit", "stop", "wait", "just", "only",
];

/// Phrases that make a request answer-only when no clause asks for work.
const ONLY_PHRASES: &[&[&str]] = &[
    &["explain", "only"],
    &["only", "explain"],
    &["just", "explain"],
    &["show", "only"],
    &["only", "show"],
    &["just", "show"],
    &["just", "tell"],
    &["only", "tell"],
    &["answer", "only"],
    &["just", "answer"],
    &["just", "describe"],
];

/// How `clause` opens (see [`Opening`]).
fn opening(clause: &[String]) -> Opening {
    let words: Vec<&str> = clause
        .iter()
        .map(String::as_str)
        .skip_while(|w| FILLERS.contains(w))
        .collect();
    let Some(&first) = words.first() else {
        return Opening::Empty;
    };
    let second = words.get(1).copied().unwrap_or("");
    let third = words.get(2).copied().unwrap_or("");
    if matches!(first, "don't" | "never" | "no" | "not" | "without") || second == "not" {
        return Opening::Other;
    }
    // `I want you to fix`, `I'd like you to explain`, `let's run`, `help me fix`.
    if first == "let's" || (first == "help" && second == "me") {
        let rest = if first == "let's" { 1 } else { 2 };
        return verb_opening(words.get(rest).copied().unwrap_or(""));
    }
    if first == "i" || first == "i'd" || first == "we" {
        if let Some(at) = words.iter().position(|w| *w == "you") {
            let verb = words.get(at + 1).copied().unwrap_or("");
            let verb = if verb == "to" {
                words.get(at + 2).copied().unwrap_or("")
            } else {
                verb
            };
            return verb_opening(verb);
        }
        if words
            .iter()
            .any(|w| matches!(*w, "know" | "understand" | "wonder"))
        {
            return Opening::Info;
        }
        return Opening::Other;
    }
    if QUESTION_WORDS.contains(&first) || first == "give" && matches!(second, "me" | "us") {
        return Opening::Info;
    }
    if MODALS.contains(&first) {
        return match second {
            "you" | "u" | "ya" => {
                let verb = if third == "please" {
                    words.get(3).copied().unwrap_or("")
                } else {
                    third
                };
                verb_opening(verb)
            }
            "i" | "we" | "one" => Opening::Info,
            // `do the refactor` is work; `do the tests pass?` and `can this fail?` ask.
            _ if first == "do" && !clause_ends_question(clause) => Opening::Work,
            _ => Opening::Info,
        };
    }
    verb_opening(first)
}

/// `Info` for a verb asking for information, `Work` for a verb of work, else `Other`.
fn verb_opening(verb: &str) -> Opening {
    if INFO_VERBS.contains(&verb) {
        Opening::Info
    } else if is_work_verb(verb) {
        Opening::Work
    } else {
        Opening::Other
    }
}

fn is_work_verb(word: &str) -> bool {
    WORK_VERBS.contains(&word)
}

/// Clauses keep no punctuation, so a question is recognised by its opening only; this hook
/// keeps `do` + object an order (`do the refactor`) unless more words say otherwise.
fn clause_ends_question(clause: &[String]) -> bool {
    clause
        .last()
        .is_some_and(|w| matches!(w.as_str(), "pass" | "work" | "fail" | "exist" | "matter"))
}

/// Whether the word at `at` is negated within the three words before it (in its clause),
/// with nothing in between that turns the negation around.
fn negated(clause: &[String], at: usize) -> bool {
    let from = at.saturating_sub(3);
    for i in (from..at).rev() {
        let word = clause[i].as_str();
        if REVERSALS.contains(&word) && word != "just" && word != "only" {
            return false;
        }
        if NEGATIONS.contains(&word)
            || (word == "do" && clause.get(i + 1).is_some_and(|w| w == "not"))
        {
            return true;
        }
    }
    false
}

/// `don't run it`, `I will run it myself`, `just write`, `only the code` in `clause`.
fn says_no_run(clause: &[String]) -> bool {
    let negated_run = clause
        .iter()
        .enumerate()
        .any(|(i, w)| RUN_VERBS.contains(&w.as_str()) && negated(clause, i));
    let self_run = clause.iter().enumerate().any(|(i, w)| {
        let opener = matches!(w.as_str(), "i'll" | "i'd" | "we'll")
            || (matches!(w.as_str(), "i" | "we")
                && clause
                    .get(i + 1)
                    .is_some_and(|n| matches!(n.as_str(), "will" | "can" | "shall")))
            || (w == "let" && clause.get(i + 1).is_some_and(|n| n == "me"))
            || (matches!(w.as_str(), "i'm" | "we're")
                && clause.get(i + 1).is_some_and(|n| n == "going"));
        opener
            && clause
                .iter()
                .skip(i + 1)
                .take(4)
                .any(|n| RUN_VERBS.contains(&n.as_str()))
    });
    // `just write it`, `only the code` (but not `write only the number into answer.txt`).
    let just_write = clause.windows(3).any(|words| {
        matches!(words[0].as_str(), "just" | "only")
            && (matches!(
                words[1].as_str(),
                "write" | "create" | "draft" | "generate" | "give" | "add" | "edit"
            ) || (words[1] == "the"
                && matches!(
                    words[2].as_str(),
                    "code" | "script" | "file" | "files" | "snippet" | "function" | "diff"
                )))
    }) || clause.len() >= 2
        && matches!(clause[clause.len() - 2].as_str(), "just" | "only")
        && matches!(
            clause[clause.len() - 1].as_str(),
            "write" | "create" | "draft" | "generate" | "give" | "add" | "edit"
        );
    let leave_it = contains_words(clause, &["leave", "it", "to", "me"])
        || contains_words(clause, &["leave", "that", "to", "me"])
        || contains_words(clause, &["leave", "the", "running", "to", "me"]);
    negated_run || self_run || just_write || leave_it
}

/// `don't change anything`, `without modifying any files`, `read-only`, `no changes`.
fn says_no_change(clause: &[String]) -> bool {
    let negated_change = clause.iter().enumerate().any(|(i, w)| {
        CHANGE_VERBS.contains(&w.as_str())
            && negated(clause, i)
            && clause.iter().skip(i + 1).take(3).any(|n| {
                matches!(
                    n.as_str(),
                    "anything" | "any" | "nothing" | "files" | "changes" | "code"
                )
            })
    });
    negated_change
        || contains_words(clause, &["read-only"])
        || contains_words(clause, &["read", "only"])
        || contains_words(clause, &["no", "changes"])
        || contains_words(clause, &["change", "nothing"])
}

fn contains_words(clause: &[String], words: &[&str]) -> bool {
    clause
        .windows(words.len())
        .any(|window| window.iter().zip(words).all(|(a, b)| a == b))
}

fn contains_phrase(clauses: &[Vec<String>], words: &[&str]) -> bool {
    clauses.iter().any(|clause| contains_words(clause, words))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// What the coach may do after each request: ask for a run, ask for an edit, and whether
    /// the request counts as asking to run something.
    #[derive(Debug, PartialEq, Eq)]
    struct Reading {
        answer_only: bool,
        no_run: bool,
        no_change: bool,
        asks_to_run: bool,
    }

    fn reading(request: &str) -> Reading {
        let intent = Intent::read(request);
        Reading {
            answer_only: intent.answer_only,
            no_run: intent.no_run,
            no_change: intent.no_change,
            asks_to_run: intent.asks_to_run,
        }
    }

    /// (request, answer_only, no_run, no_change, asks_to_run)
    const TABLE: &[(&str, bool, bool, bool, bool)] = &[
        // Requests for work that ask to run something.
        ("run the tests", false, false, false, true),
        (
            "Run the tests and fix any failures",
            false,
            false,
            false,
            true,
        ),
        (
            "Create hello.py that prints hello, then run it",
            false,
            false,
            false,
            true,
        ),
        ("please run cargo test", false, false, false, true),
        ("Can you run the tests?", false, false, false, true),
        (
            "Could you build the project and tell me if it works?",
            false,
            false,
            false,
            true,
        ),
        ("execute the script", false, false, false, true),
        (
            "Write a script that counts lines in src and run it",
            false,
            false,
            false,
            true,
        ),
        (
            "I want you to run the test suite",
            false,
            false,
            false,
            true,
        ),
        ("Don't just tell me, run it", false, false, false, true),
        ("Don't forget to run the tests", false, false, false, true),
        (
            "Do not skip the tests; run them all",
            false,
            false,
            false,
            true,
        ),
        (
            "Explain the bug, then fix it and run the tests",
            false,
            false,
            false,
            true,
        ),
        (
            "How do I run the tests? Run them for me.",
            false,
            false,
            false,
            true,
        ),
        ("let's build it", false, false, false, true),
        ("Fix the failing test", false, false, false, true),
        (
            "Run the tests but don't change anything",
            false,
            false,
            true,
            true,
        ),
        // Requests for work that say nothing about running.
        ("Fix the bug in calc.py", false, false, false, false),
        (
            "Could you fix the bug in calc.py?",
            false,
            false,
            false,
            false,
        ),
        ("Add a --verbose flag", false, false, false, false),
        (
            "Create hello.py that prints hello",
            false,
            false,
            false,
            false,
        ),
        ("Rename foo to bar everywhere", false, false, false, false),
        ("Do the refactor we discussed", false, false, false, false),
        ("Append banana to notes.txt", false, false, false, false),
        // Requests to be shown, told or explained something.
        (
            "Show me how to rebase my branch onto main",
            true,
            false,
            false,
            false,
        ),
        (
            "Tell me the command to run the tests",
            true,
            false,
            false,
            false,
        ),
        ("How do I run the tests?", true, false, false, false),
        ("What command runs the tests?", true, false, false, false),
        ("Describe the build process", true, false, false, false),
        ("explain the failure", true, false, false, false),
        ("why does it fail?", true, false, false, false),
        (
            "Which command should I use to deploy?",
            true,
            false,
            false,
            false,
        ),
        (
            "Give me the command to build and run the server",
            true,
            false,
            false,
            false,
        ),
        (
            "Show me how to build and run the app",
            true,
            false,
            false,
            false,
        ),
        (
            "Can you explain what main.rs does?",
            true,
            false,
            false,
            false,
        ),
        (
            "Can I run the tests in parallel?",
            true,
            false,
            false,
            false,
        ),
        ("Is the parser tested?", true, false, false, false),
        ("Do the tests pass?", true, false, false, false),
        ("What would `git clean -fdx` do?", true, false, false, false),
        ("Please show me the diff", true, false, false, false),
        (
            "walk me through the deploy script",
            true,
            false,
            false,
            false,
        ),
        (
            "What is the message format for a tool call? Just explain, do not run anything.",
            true,
            true,
            false,
            false,
        ),
        (
            "Explain how tool calls look; explain only, don't change anything",
            true,
            false,
            true,
            false,
        ),
        ("Just tell me the command", true, false, false, false),
        (
            "don't run the tests, just explain why they fail",
            true,
            true,
            false,
            false,
        ),
        // Requests that say not to run.
        (
            "Write deploy.sh that rsyncs dist/ to prod. Do not run it, I will run it myself after review.",
            false,
            true,
            false,
            false,
        ),
        (
            "Create the migration script but don't run it",
            false,
            true,
            false,
            false,
        ),
        ("just write the file", false, true, false, false),
        (
            "Write a test for parse(); don't run the tests",
            false,
            true,
            false,
            false,
        ),
        (
            "Fix the bug without running anything",
            false,
            true,
            false,
            false,
        ),
        (
            "Update the Makefile. No need to run it.",
            false,
            true,
            false,
            false,
        ),
        (
            "write the script, do not execute it",
            false,
            true,
            false,
            false,
        ),
        (
            "Generate the SQL but never run it against the database",
            false,
            true,
            false,
            false,
        ),
        (
            "Add the cron job; I'll test it myself",
            false,
            true,
            false,
            false,
        ),
        (
            "Prepare the release notes, I will deploy it",
            false,
            true,
            false,
            false,
        ),
        (
            "Refactor utils.py. Don’t run anything.",
            false,
            true,
            false,
            false,
        ),
        ("Dont run it", false, true, false, false),
        (
            "Write the installer; leave it to me to run",
            false,
            true,
            false,
            false,
        ),
        // Requests that say not to change anything.
        (
            "Run the linter without changing any files",
            false,
            false,
            true,
            true,
        ),
        (
            "Look at the logs, read-only please",
            false,
            false,
            true,
            false,
        ),
    ];

    #[test]
    fn requests_are_read_as_the_user_meant_them() {
        assert!(TABLE.len() >= 40);
        let mut wrong = Vec::new();
        for &(request, answer_only, no_run, no_change, asks_to_run) in TABLE {
            let expected = Reading {
                answer_only,
                no_run,
                no_change,
                asks_to_run,
            };
            let got = reading(request);
            if got != expected {
                wrong.push(format!("{request:?}: got {got:?}, expected {expected:?}"));
            }
        }
        assert_eq!(wrong, Vec::<String>::new());
    }

    #[test]
    fn what_each_reading_allows() {
        let show = Intent::read("Show me how to rebase my branch onto main");
        assert!(!show.allows_run_request() && !show.allows_edit_request());
        assert!(!show.allows_shown_call("bash") && !show.allows_shown_call("read_file"));
        let write_only = Intent::read("Write deploy.sh. Do not run it.");
        assert!(!write_only.allows_run_request() && write_only.allows_edit_request());
        assert!(!write_only.allows_shown_call("bash"));
        assert!(write_only.allows_shown_call("write_file"));
        let work = Intent::read("Create hello.py that prints hello, then run it");
        assert!(work.allows_run_request() && work.allows_shown_call("bash"));
        let look = Intent::read("Run the linter without changing any files");
        assert!(look.allows_run_request() && !look.allows_edit_request());
        assert!(
            !look.allows_shown_call("bash"),
            "a shell command can change files"
        );
    }

    #[test]
    fn odd_input_never_panics() {
        for request in [
            "",
            "   ",
            "?!.,;",
            "don't",
            "can you",
            "i",
            "and and and",
            "🙂 run",
        ] {
            let _ = Intent::read(request);
        }
        assert!(!Intent::read("").answer_only);
    }

    #[test]
    fn requests_to_create_or_change_a_file() {
        for request in [
            "Create count.py that prints how many lines words.txt has, then run it.",
            "Fix the bug in calc.py",
            "Add a function is_even(n) to mathutil.py",
            "In config.json, change the port to 9090",
            "How many rows have the region EU? Write only the number into answer.txt.",
            "please write hello.py",
        ] {
            assert!(Intent::read(request).asks_to_edit, "{request}");
        }
        for request in [
            "Show me how to write count.py",
            "Explain how to fix calc.py",
            "What would you change in calc.py?",
            "Fix calc.py? No, don't change anything, just explain",
            "Run the tests",
            "don't create any files",
        ] {
            assert!(!Intent::read(request).asks_to_edit, "{request}");
        }
        // `only the number` is what to write, not a request not to run.
        let count = Intent::read("How many rows? Write only the number into answer.txt.");
        assert!(!count.no_run && count.allows_run_request());
        assert!(Intent::read("Write only the code, I will run it").no_run);
        assert!(Intent::read("just the script please, only the code").no_run);
    }
}
