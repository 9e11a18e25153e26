//! `git`: global options, the subcommand, and options that write or run programs (§5.2).
//!
//! Global options before the subcommand are split into harmless ones (`--no-pager`, `-P`,
//! pathspec modes), which are dropped so `git --no-pager log` matches `git log*`, and risky
//! ones (`-c`, `-C`, `--git-dir`, `--work-tree`, `--exec-path`, `-p`, `--namespace`,
//! `--config-env`, anything unknown), which keep the command at least `ask`. Deny rules also
//! see the command without any global option, so `git -C . push` is `git push`.
//!
//! After the subcommand, `--output` (writes a file), `--ext-diff` and `--textconv` (run
//! configured programs), `git grep -O` (runs a pager) are floors, as are `git branch` forms
//! that create, delete or move branches, and run-time arguments that could be options.

use super::join;
use super::options::long_match;
use super::words::Word;

const HARMLESS: &[&str] = &[
    "-P",
    "--no-pager",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-optional-locks",
    "--no-advice",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
];

/// Global options whose value is the next word.
const VALUED: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
];

/// Options any subcommand may take that write a file or run a program.
const WRITERS: &[(&str, &str)] = &[
    ("--output", "writes its output to a file"),
    ("--ext-diff", "runs an external diff program"),
    ("--textconv", "runs configured conversion programs"),
    ("--open-files-in-pager", "runs a pager program"),
];

/// Exact options that abbreviate a writer's name but are harmless themselves.
const EXACT_SAFE: &[&str] = &["text"];

/// A git command line after global options are classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GitView {
    /// The words with harmless global options removed.
    pub(crate) words: Vec<Word>,
    /// The text without any global option, when it differs (for `deny` rules).
    pub(crate) alias: Option<String>,
    /// Floors from risky global options.
    pub(crate) floors: Vec<String>,
}

/// Where the subcommand is, and which global options came before it.
struct Globals {
    /// Index (in the arguments after `git`) of the subcommand.
    subcommand: usize,
    harmless: Vec<usize>,
    risky: Vec<String>,
}

fn globals(args: &[Word]) -> Globals {
    let mut found = Globals {
        subcommand: args.len(),
        harmless: Vec::new(),
        risky: Vec::new(),
    };
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let text = word.text.as_str();
        if word.dynamic
            || !text.starts_with('-')
            || matches!(text, "--version" | "--help" | "-v" | "-h")
        {
            found.subcommand = i;
            return found;
        }
        if HARMLESS.contains(&text) {
            found.harmless.push(i);
            i += 1;
            continue;
        }
        found.risky.push(text.to_string());
        i += if VALUED.contains(&text) { 2 } else { 1 };
    }
    found.subcommand = args.len().min(i);
    found
}

/// Splits `git` global options (words include the program).
pub(crate) fn normalize(words: &[Word]) -> GitView {
    let args = words.get(1..).unwrap_or_default();
    let found = globals(args);
    let kept: Vec<Word> = words
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || !found.harmless.contains(&(i - 1)))
        .map(|(_, w)| w.clone())
        .collect();
    let floors = found
        .risky
        .iter()
        .map(|option| {
            format!("the git option `{option}` before the subcommand can change what git runs or where it writes")
        })
        .collect();
    let alias = (!found.risky.is_empty()).then(|| {
        let rest = args.get(found.subcommand..).unwrap_or_default();
        let tail = join(rest);
        if tail.is_empty() {
            "git".to_string()
        } else {
            format!("git {tail}")
        }
    });
    GitView {
        words: kept,
        alias,
        floors,
    }
}

/// Floors from the subcommand and its options (`args` are the words after `git`).
pub(crate) fn hazards(args: &[Word]) -> Vec<String> {
    let found = globals(args);
    let Some(sub) = args.get(found.subcommand) else {
        return Vec::new();
    };
    let rest = &args[found.subcommand + 1..];
    let mut floors = Vec::new();
    let mut operands_only = false;
    for word in rest {
        let text = word.text.as_str();
        if operands_only {
            continue;
        }
        if word.dynamic {
            if word.may_be_option {
                floors.push(format!(
                    "`{text}` is only known at run time and could be an option such as `--output`"
                ));
            }
            continue;
        }
        if text == "--" {
            operands_only = true;
        } else if let Some(long) = text.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or(long);
            if !EXACT_SAFE.contains(&name)
                && let Some((option, what)) = long_match(WRITERS, name)
            {
                floors.push(format!("`git {} {option}` {what}", sub.text));
            }
        } else if sub.text == "grep" && text.starts_with('-') && short_has_o(text) {
            floors.push("`git grep -O` runs a pager program".into());
        }
    }
    if sub.text == "branch" {
        floors.extend(branch(rest));
    }
    floors
}

/// `git grep` short options: `-O` opens a pager; letters after a value-taking one are data.
fn short_has_o(text: &str) -> bool {
    if text.starts_with("--") {
        return false;
    }
    for c in text.chars().skip(1) {
        if c == 'O' {
            return true;
        }
        if "efABCm".contains(c) {
            return false;
        }
    }
    false
}

/// `git branch` is prompt-free only when it lists branches.
fn branch(args: &[Word]) -> Option<String> {
    const FLAGS: &[&str] = &[
        "-a",
        "--all",
        "-r",
        "--remotes",
        "-v",
        "-vv",
        "--verbose",
        "-l",
        "--list",
        "--show-current",
        "--color",
        "--no-color",
        "--column",
        "--no-column",
        "-i",
        "--ignore-case",
        "--no-abbrev",
        "--omit-empty",
    ];
    const VALUED: &[&str] = &[
        "--sort",
        "--format",
        "--contains",
        "--no-contains",
        "--merged",
        "--no-merged",
        "--points-at",
    ];
    let listing = args.iter().any(|w| w.text == "-l" || w.text == "--list");
    let mut skip_value = false;
    for word in args {
        let text = word.text.as_str();
        if skip_value && !text.starts_with('-') {
            skip_value = false;
            continue;
        }
        skip_value = false;
        let name = text.split('=').next().unwrap_or(text);
        if VALUED.contains(&name) {
            skip_value = !text.contains('=');
        } else if FLAGS.contains(&text)
            || text.starts_with("--abbrev")
            || text.starts_with("--color=")
        {
        } else if text.starts_with('-') {
            return Some(format!("`git branch {text}` changes branches"));
        } else if !listing {
            return Some(format!("`git branch {text}` creates a branch"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split_whitespace().map(Word::literal).collect()
    }

    #[test]
    fn global_options() {
        let view = normalize(&words("git --no-pager log -5"));
        assert_eq!(join(&view.words), "git log -5");
        assert_eq!((view.alias, view.floors.len()), (None, 0));
        let view = normalize(&words("git -C . push origin"));
        assert_eq!(join(&view.words), "git -C . push origin");
        assert_eq!(view.alias.as_deref(), Some("git push origin"));
        assert_eq!(view.floors.len(), 1);
        let view = normalize(&words("git -c core.pager=x --git-dir=/x status"));
        assert_eq!(view.alias.as_deref(), Some("git status"));
        assert_eq!(view.floors.len(), 2);
    }

    #[test]
    fn subcommand_writers() {
        let floors = |line: &str| hazards(&words(line)[1..]);
        assert_eq!(floors("git diff --stat"), Vec::<String>::new());
        assert_eq!(floors("git diff --text"), Vec::<String>::new());
        assert_eq!(floors("git diff --output=/tmp/x").len(), 1);
        assert_eq!(floors("git diff --output /tmp/x").len(), 1);
        assert_eq!(floors("git diff --out=x").len(), 1);
        assert_eq!(floors("git diff --ext-diff HEAD").len(), 1);
        assert_eq!(floors("git log --textconv -p").len(), 1);
        assert_eq!(
            floors("git diff --output-indicator-new=+"),
            Vec::<String>::new()
        );
        assert_eq!(floors("git diff -- --output"), Vec::<String>::new());
        assert_eq!(floors("git grep -O foo").len(), 1);
        assert_eq!(floors("git grep -e O foo"), Vec::<String>::new());
        assert_eq!(floors("git branch"), Vec::<String>::new());
        assert_eq!(floors("git branch -a -v"), Vec::<String>::new());
        assert_eq!(floors("git branch --contains HEAD"), Vec::<String>::new());
        assert_eq!(floors("git branch --list 'feat*'"), Vec::<String>::new());
        assert_eq!(floors("git branch new").len(), 1);
        assert_eq!(floors("git branch -D old").len(), 1);
    }
}
