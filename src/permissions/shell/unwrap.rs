//! Commands that run other commands (§5.2): known wrappers (`env`, `timeout`, `nice`,
//! `nohup`, `stdbuf`, `command`, `builtin`, `exec`, `time`, `coproc`), `xargs`,
//! `find -exec/-execdir/-ok/-okdir`, shells with `-c` or a script on standard input,
//! `eval` and `trap`.
//!
//! Options are parsed exactly; an option we do not know, or one only known at run time,
//! means we cannot tell what runs, which is reported as [`Run::Unknown`] (`ask`). Wrappers
//! not listed here (`setsid`, `watch`, `flock`, ...) are not unwrapped: they are ordinary
//! commands, `ask` under the default rules.

use super::Unclear;
use super::words::Word;
use super::{Role, Stdin, basename, names};

/// Something a command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Run {
    /// A command given as words.
    Command(Vec<Word>),
    /// A shell script given as text.
    Script(String),
    /// Cannot tell; the reason.
    Unknown(String),
}

/// A command that runs others.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Unwrapped {
    /// How the outer command itself is rated; `None` for the default (a [`Role::Wrapper`]
    /// when the program is a bare name, else [`Role::Command`]).
    pub(crate) role: Option<Role>,
    pub(crate) runs: Vec<Run>,
    /// Floors on the outer command.
    pub(crate) floors: Vec<String>,
    /// Floors on the commands it runs (`env PATH=... cmd`).
    pub(crate) inner_floors: Vec<String>,
}

/// Shells whose `-c` payload is parsed with the bash grammar.
const SHELLS: &[&str] = &["bash", "sh", "dash", "ash", "zsh", "ksh", "mksh"];

/// `None` when `words` is not a command that runs others.
pub(crate) fn unwrap(words: &[Word], stdin: &Stdin) -> Option<Unwrapped> {
    let program = words.first()?;
    if program.dynamic {
        return None;
    }
    let name = basename(&program.text);
    let found = match name {
        "env" => env(words),
        "timeout" => after_options(words, &TIMEOUT, 1),
        "nice" => after_options(words, &NICE, 0),
        "nohup" => after_options(words, &NO_OPTIONS, 0),
        "stdbuf" => after_options(words, &STDBUF, 0),
        "command" => command(words),
        "builtin" => inner_from(words, 1),
        "coproc" => keyword_command(inner_from(words, 1)),
        "exec" => exec(words),
        "time" => time(words),
        "xargs" => xargs(words, stdin),
        "find" => find(words),
        "eval" => eval(words),
        "trap" => trap(words),
        shell if SHELLS.contains(&shell) => shell_call(words, shell, stdin),
        _ => None,
    }?;
    let default_role = if program.text.contains('/') || name == "find" {
        Role::Command
    } else {
        Role::Wrapper
    };
    Some(Unwrapped {
        role: Some(found.role.unwrap_or(default_role)),
        ..found
    })
}

/// Options of a simple wrapper.
struct Options {
    flags: &'static [&'static str],
    /// Options with a value, as a separate word or attached (`-k5`, `--signal=KILL`).
    valued: &'static [&'static str],
}

const NO_OPTIONS: Options = Options {
    flags: &[],
    valued: &[],
};
const TIMEOUT: Options = Options {
    flags: &["--preserve-status", "--foreground", "-v", "--verbose", "-f"],
    valued: &["-k", "--kill-after", "-s", "--signal"],
};
const NICE: Options = Options {
    flags: &[],
    valued: &["-n", "--adjustment"],
};
const STDBUF: Options = Options {
    flags: &[],
    valued: &["-i", "-o", "-e", "--input", "--output", "--error"],
};

fn literal(word: &Word) -> Result<&str, Unclear> {
    if word.dynamic {
        Err(format!("`{}` is only known at run time", word.text).into())
    } else {
        Ok(&word.text)
    }
}

/// Index of the first word after `options` (starting at 1), or why it cannot be found.
fn skip_options(words: &[Word], options: &Options) -> Result<usize, Unclear> {
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let text = literal(word)?;
        if text == "--" {
            return Ok(i + 1);
        }
        if !text.starts_with('-') || text == "-" {
            return Ok(i);
        }
        if options.flags.contains(&text) || is_nice_number(words, text) {
            i += 1;
        } else if options.valued.contains(&text) {
            i += 2;
        } else if options.valued.iter().any(|v| attached(text, v)) {
            i += 1;
        } else {
            return Err(
                format!("`{}` has an option we do not know: `{text}`", words[0].text).into(),
            );
        }
    }
    Ok(i)
}

fn is_nice_number(words: &[Word], text: &str) -> bool {
    basename(&words[0].text) == "nice"
        && text.len() > 1
        && text[1..].chars().all(|c| c.is_ascii_digit())
}

/// `--opt=value` or `-ovalue`.
fn attached(text: &str, option: &str) -> bool {
    if option.starts_with("--") {
        text.strip_prefix(option)
            .is_some_and(|r| r.starts_with('='))
    } else {
        text.starts_with(option) && text.len() > option.len()
    }
}

/// The command after the wrapper's options and `operands` positional operands.
fn after_options(words: &[Word], options: &Options, operands: usize) -> Option<Unwrapped> {
    match skip_options(words, options) {
        Ok(start) => inner_from(words, start + operands),
        Err(reason) => Some(unknown(reason)),
    }
}

fn inner_from(words: &[Word], start: usize) -> Option<Unwrapped> {
    let inner = words.get(start..).filter(|w| !w.is_empty())?;
    Some(Unwrapped {
        runs: vec![Run::Command(inner.to_vec())],
        ..Unwrapped::default()
    })
}

fn unknown(reason: impl Into<Unclear>) -> Unwrapped {
    Unwrapped {
        runs: vec![Run::Unknown(reason.into().0)],
        ..Unwrapped::default()
    }
}

fn env(words: &[Word]) -> Option<Unwrapped> {
    let mut found = Unwrapped::default();
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let text = match literal(word) {
            Ok(text) => text,
            Err(reason) => return Some(unknown(reason)),
        };
        match text {
            "-i" | "-" | "--ignore-environment" | "-0" | "--null" | "-v" | "--debug" => i += 1,
            "-u" | "--unset" => i += 2,
            "-C" | "--chdir" => {
                found
                    .inner_floors
                    .push("`env -C` runs it in another directory".into());
                i += 2;
            }
            "-S" | "--split-string" => {
                return Some(split_string(words.get(i + 1), &words[i + 2..]));
            }
            "--" => {
                i += 1;
                break;
            }
            t if attached(t, "-u") || attached(t, "--unset") => i += 1,
            t if attached(t, "-C") || attached(t, "--chdir") => {
                found
                    .inner_floors
                    .push("`env -C` runs it in another directory".into());
                i += 1;
            }
            t if attached(t, "-S") || attached(t, "--split-string") => {
                let value = t.split_once('=').map_or(&t[2..], |(_, v)| v);
                return Some(split_string(Some(&Word::literal(value)), &words[i + 1..]));
            }
            t if t.starts_with("--") && t.contains("signal") => i += 1,
            t if t.starts_with('-') => {
                return Some(unknown(format!(
                    "`env` has an option we do not know: `{t}`"
                )));
            }
            t => match t.split_once('=') {
                Some((name, _)) => {
                    found.inner_floors.extend(names::assignment_hazard(name));
                    i += 1;
                }
                None => break,
            },
        }
    }
    let inner = words.get(i..).filter(|w| !w.is_empty())?;
    found.runs.push(Run::Command(inner.to_vec()));
    Some(found)
}

/// `env -S 'cmd args' more`: the string is split into words; parsed here as a script.
fn split_string(value: Option<&Word>, rest: &[Word]) -> Unwrapped {
    let Some(value) = value else {
        return unknown("`env -S` without a value");
    };
    let mut script = match literal(value) {
        Ok(text) => text.to_string(),
        Err(reason) => return unknown(reason),
    };
    for word in rest {
        match literal(word) {
            Ok(text) => {
                script.push(' ');
                script.push_str(&shell_words::quote(text));
            }
            Err(reason) => return unknown(reason),
        }
    }
    Unwrapped {
        runs: vec![Run::Script(script)],
        ..Unwrapped::default()
    }
}

/// After the `time` and `coproc` keywords comes a whole command, which may start with
/// assignments (`time X=1 cmd`): they are skipped, and their names are floors.
fn keyword_command(found: Option<Unwrapped>) -> Option<Unwrapped> {
    let mut found = found?;
    let mut floors = Vec::new();
    for run in &mut found.runs {
        let Run::Command(words) = run else { continue };
        let assignments = words
            .iter()
            .take_while(|w| !w.dynamic && assignment_name(&w.text).is_some())
            .count();
        for word in &words[..assignments] {
            floors.extend(assignment_name(&word.text).and_then(names::assignment_hazard));
        }
        words.drain(..assignments);
        if words.is_empty() {
            *run = Run::Unknown("only assignments after the keyword".into());
        }
    }
    found.inner_floors.extend(floors);
    Some(found)
}

/// `NAME` of a `NAME=value` word.
fn assignment_name(text: &str) -> Option<&str> {
    let (name, _) = text.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some(name)
}

/// `command -p cmd` runs cmd; `command -v/-V cmd` only describes it.
fn command(words: &[Word]) -> Option<Unwrapped> {
    let mut i = 1;
    while let Some(word) = words.get(i) {
        match literal(word) {
            Ok("--") => return inner_from(words, i + 1),
            Ok(t) if t.starts_with('-') && t.len() > 1 => {
                if t.contains(['v', 'V']) {
                    return None;
                }
                if t[1..].chars().any(|c| c != 'p') {
                    return Some(unknown(format!("`command` option `{t}` is not known")));
                }
                i += 1;
            }
            Ok(_) => return inner_from(words, i),
            Err(reason) => return Some(unknown(reason)),
        }
    }
    None
}

/// `exec [-cl] [-a name] [cmd]`; without a command it only changes redirections.
fn exec(words: &[Word]) -> Option<Unwrapped> {
    let options = Options {
        flags: &["-c", "-l", "-cl", "-lc"],
        valued: &["-a"],
    };
    match skip_options(words, &options) {
        Ok(start) if start >= words.len() => Some(Unwrapped {
            role: Some(Role::Neutral(
                "`exec` without a command only changes redirections".into(),
            )),
            ..Unwrapped::default()
        }),
        Ok(start) => inner_from(words, start),
        Err(reason) => Some(unknown(reason)),
    }
}

/// The `time` keyword (`-p`) and `/usr/bin/time` (whose `-o` writes a file).
fn time(words: &[Word]) -> Option<Unwrapped> {
    let options = Options {
        flags: &[
            "-p",
            "-a",
            "--append",
            "-v",
            "--verbose",
            "--portability",
            "-q",
            "--quiet",
        ],
        valued: &["-f", "--format", "-o", "--output"],
    };
    let mut found = keyword_command(after_options(words, &options, 0))?;
    if words
        .iter()
        .skip(1)
        .any(|w| w.text == "-o" || attached(&w.text, "-o") || w.text.starts_with("--output"))
    {
        found
            .floors
            .push("`time -o` writes its report to a file".into());
    }
    Some(found)
}

/// `xargs`: its command, with the words of a statically known stdin (`xargs cat <<< FILE`,
/// `cat <<EOF | xargs cat`) as its arguments, otherwise a word only known at run time.
fn xargs(words: &[Word], stdin: &Stdin) -> Option<Unwrapped> {
    let (start, replace) = match xargs_options(words) {
        Ok(found) => found,
        Err(reason) => return Some(unknown(reason)),
    };
    let mut inner: Vec<Word> = words.get(start..).unwrap_or_default().to_vec();
    if inner.is_empty() {
        inner.push(Word::literal("echo"));
    }
    match replace {
        Some(r) if !r.is_empty() => {
            for word in &mut inner {
                if word.text.contains(&r) {
                    *word = Word::runtime(&word.text, word.text.starts_with(&r));
                }
            }
        }
        _ => match stdin {
            Stdin::Known(text) => inner.extend(text.split_whitespace().map(Word::printed)),
            _ => inner.push(Word::runtime("{stdin}", true)),
        },
    }
    Some(Unwrapped {
        runs: vec![Run::Command(inner)],
        ..Unwrapped::default()
    })
}

/// Where xargs' command starts, and its `-I` replacement string if any.
fn xargs_options(words: &[Word]) -> Result<(usize, Option<String>), Unclear> {
    const FLAGS: &[&str] = &[
        "-0",
        "--null",
        "-o",
        "--open-tty",
        "-p",
        "--interactive",
        "-r",
        "--no-run-if-empty",
        "-t",
        "--verbose",
        "-x",
        "--exit",
        "--show-limits",
    ];
    const VALUED: &[&str] = &[
        "-a",
        "-d",
        "-E",
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "--arg-file",
        "--delimiter",
        "--max-lines",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--process-slot-var",
        "--eof",
    ];
    let mut replace: Option<String> = None;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let text = literal(word)?;
        if text == "--" {
            return Ok((i + 1, replace));
        }
        if !text.starts_with('-') || text == "-" {
            break;
        }
        if text == "-I" {
            replace = words.get(i + 1).map(|w| w.text.clone());
            i += 1;
        } else if let Some(r) = text
            .strip_prefix("-I")
            .or_else(|| text.strip_prefix("--replace="))
        {
            replace = Some(r.to_string());
        } else if text == "-i" || text == "--replace" {
            replace = Some("{}".into());
        } else if VALUED.contains(&text) {
            i += 1;
        } else if let Some(r) = text.strip_prefix("-i") {
            replace = Some(r.to_string());
        } else if !(FLAGS.contains(&text)
            || VALUED.iter().any(|v| attached(text, v))
            || text.starts_with("-e")
            || text.starts_with("-l"))
        {
            return Err(format!("`xargs` has an option we do not know: `{text}`").into());
        }
        i += 1;
    }
    Ok((i, replace))
}

/// `find ... -exec cmd {} ;` (also `+`, `-execdir`, `-ok`, `-okdir`).
fn find(words: &[Word]) -> Option<Unwrapped> {
    let mut found = Unwrapped::default();
    let mut i = 1;
    while i < words.len() {
        if !matches!(
            words[i].text.as_str(),
            "-exec" | "-execdir" | "-ok" | "-okdir"
        ) {
            i += 1;
            continue;
        }
        let start = i + 1;
        let end = (start..words.len()).find(|&k| {
            let t = words[k].text.as_str();
            t == ";" || (t == "+" && k > start && words[k - 1].text.contains("{}"))
        });
        let Some(end) = end else {
            found.runs.push(Run::Unknown(format!(
                "`{}` without a closing `;` or `+`",
                words[i].text
            )));
            break;
        };
        let inner = words[start..end]
            .iter()
            .map(|w| {
                if w.text.contains("{}") {
                    Word::runtime(&w.text, false)
                } else {
                    w.clone()
                }
            })
            .collect::<Vec<_>>();
        if inner.is_empty() {
            found
                .runs
                .push(Run::Unknown("`-exec` without a command".into()));
        } else {
            found.runs.push(Run::Command(inner));
        }
        i = end + 1;
    }
    (!found.runs.is_empty()).then_some(found)
}

fn eval(words: &[Word]) -> Option<Unwrapped> {
    let args = words.get(1..).filter(|a| !a.is_empty())?;
    let mut script = Vec::new();
    for word in args {
        match literal(word) {
            Ok(text) => script.push(text),
            Err(_) => {
                return Some(unknown(format!(
                    "`eval` runs `{}`, which is only known at run time",
                    word.text
                )));
            }
        }
    }
    Some(Unwrapped {
        runs: vec![Run::Script(script.join(" "))],
        ..Unwrapped::default()
    })
}

/// `trap 'handler' SIGNAL...`: the handler is a script.
fn trap(words: &[Word]) -> Option<Unwrapped> {
    let mut args = words.get(1..)?;
    if args.first().is_some_and(|w| w.text == "--") {
        args = &args[1..];
    }
    let [action, _signal, ..] = args else {
        return None;
    };
    if action.text.starts_with('-') && !action.dynamic {
        return None;
    }
    match literal(action) {
        Ok(text) if text.is_empty() || text.chars().all(|c| c.is_ascii_digit()) => None,
        Ok(text) => Some(Unwrapped {
            runs: vec![Run::Script(text.to_string())],
            ..Unwrapped::default()
        }),
        Err(reason) => Some(unknown(reason)),
    }
}

/// `bash -c 'script'`, `sh -lc '...'`, `bash` reading a script from standard input.
fn shell_call(words: &[Word], shell: &str, stdin: &Stdin) -> Option<Unwrapped> {
    let mut found = Unwrapped::default();
    if matches!(shell, "zsh" | "ksh" | "mksh") {
        found.floors.push(format!(
            "`{shell}` syntax is checked with bash rules; approve it yourself"
        ));
    }
    let (start, payload) = match shell_options(words, shell, &mut found.floors) {
        Ok(found) => found,
        Err(reason) => return Some(unknown(reason)),
    };
    if payload {
        let run = match words.get(start) {
            Some(word) if !word.dynamic => Run::Script(word.text.clone()),
            Some(word) => Run::Unknown(format!(
                "the `{shell} -c` command `{}` is only known at run time",
                word.text
            )),
            None => Run::Unknown(format!("`{shell} -c` without a command")),
        };
        found.runs.push(run);
        return Some(found);
    }
    if start < words.len() {
        let script_file = Unwrapped {
            role: Some(Role::Command),
            ..found
        };
        return (!script_file.floors.is_empty()).then_some(script_file);
    }
    match stdin {
        Stdin::Known(script) => found.runs.push(Run::Script(script.clone())),
        Stdin::Unknown => {
            found.role = Some(Role::Command);
            found.floors.push(format!(
                "`{shell}` runs commands from its standard input, which cannot be checked"
            ));
        }
        Stdin::Inherited => return None,
    }
    Some(found)
}

/// Where a shell's operands start, and whether `-c` was given; startup files are floors.
fn shell_options(
    words: &[Word],
    shell: &str,
    floors: &mut Vec<String>,
) -> Result<(usize, bool), Unclear> {
    const LONG: &[&str] = &[
        "--norc",
        "--noprofile",
        "--login",
        "--posix",
        "--restricted",
        "--verbose",
        "--noediting",
        "--debugger",
    ];
    let mut payload = false;
    let mut i = 1;
    while let Some(word) = words.get(i) {
        let text = literal(word)?;
        match text {
            "--" | "-" => return Ok((i + 1, payload)),
            "-o" | "+o" | "-O" | "+O" => i += 1,
            "--rcfile" | "--init-file" => {
                floors.push(format!("`{text}` runs a startup file that is not checked"));
                i += 1;
            }
            t if LONG.contains(&t) => {}
            t if t.starts_with("--") => {
                return Err(format!("`{shell}` option `{t}` is not known").into());
            }
            t if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 => {
                payload |= t.starts_with('-') && t.contains('c');
            }
            _ => break,
        }
        i += 1;
    }
    Ok((i, payload))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(line: &str) -> Vec<Word> {
        line.split_whitespace().map(Word::literal).collect()
    }

    /// The text of what `line` runs, or `?reason` for unknown runs.
    fn runs(line: &str) -> Vec<String> {
        unwrap(&words(line), &Stdin::Inherited)
            .map(|u| {
                u.runs
                    .into_iter()
                    .map(|r| match r {
                        Run::Command(w) => super::super::join(&w),
                        Run::Script(s) => format!("script: {s}"),
                        Run::Unknown(why) => format!("?{why}"),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn wrappers() {
        assert_eq!(runs("timeout -s KILL 30 rm x"), vec!["rm x"]);
        assert_eq!(runs("timeout --kill-after=5 30 rm x"), vec!["rm x"]);
        assert_eq!(runs("nice -n 5 rm x"), vec!["rm x"]);
        assert_eq!(runs("nice -5 rm x"), vec!["rm x"]);
        assert_eq!(runs("env -i A=1 -u B rm x"), vec!["rm x"]);
        assert_eq!(runs("nohup rm x"), vec!["rm x"]);
        assert_eq!(runs("stdbuf -oL -e0 rm x"), vec!["rm x"]);
        assert_eq!(runs("command -p rm x"), vec!["rm x"]);
        assert_eq!(runs("command -v rm"), Vec::<String>::new());
        assert_eq!(runs("exec -a name rm x"), vec!["rm x"]);
        assert_eq!(runs("time -p rm x"), vec!["rm x"]);
        assert_eq!(runs("time X=1 rm x"), vec!["rm x"]);
        assert_eq!(runs("coproc x=1 rm x"), vec!["rm x"]);
        assert_eq!(runs("env"), Vec::<String>::new());
        assert!(runs("timeout --bogus 5 rm")[0].starts_with('?'));
        assert_eq!(runs("setsid rm x"), Vec::<String>::new());
    }

    #[test]
    fn runners() {
        assert_eq!(runs("xargs rm"), vec!["rm {stdin}"]);
        assert_eq!(runs("xargs -0 -n 1 -P4 rm -f"), vec!["rm -f {stdin}"]);
        assert_eq!(runs("xargs -I {} cp {} /tmp"), vec!["cp {} /tmp"]);
        assert_eq!(runs("xargs"), vec!["echo {stdin}"]);
        assert_eq!(
            runs("find . -exec rm {} ; -execdir cat {} +"),
            vec!["rm {}", "cat {}"]
        );
        assert!(runs("find . -exec rm {}")[0].starts_with('?'));
        assert_eq!(runs("find . -name x"), Vec::<String>::new());
        assert_eq!(runs("eval rm -rf x"), vec!["script: rm -rf x"]);
        assert_eq!(runs("trap rm EXIT"), vec!["script: rm"]);
        assert_eq!(runs("trap - EXIT"), Vec::<String>::new());
    }

    #[test]
    fn shells() {
        assert_eq!(runs("bash -c ls"), vec!["script: ls"]);
        assert_eq!(runs("sh -ec ls"), vec!["script: ls"]);
        assert_eq!(runs("bash -o pipefail -c ls"), vec!["script: ls"]);
        assert_eq!(runs("bash --norc -lc ls"), vec!["script: ls"]);
        assert_eq!(runs("bash script.sh"), Vec::<String>::new());
        assert!(runs("bash -c")[0].starts_with('?'));
        let piped = unwrap(&words("bash"), &Stdin::Known("rm x\n".into()));
        assert_eq!(
            piped.map(|u| u.runs),
            Some(vec![Run::Script("rm x\n".into())])
        );
        let unknown = unwrap(&words("sh"), &Stdin::Unknown).expect("a shell");
        assert_eq!((unknown.runs.len(), unknown.floors.len()), (0, 1));
        let zsh = unwrap(&words("zsh -c ls"), &Stdin::Inherited).expect("a shell");
        assert_eq!(zsh.floors.len(), 1);
    }
}
