//! Options and operands that turn read-only programs into writers or executors (§5.2):
//! `find -delete/-fprint*/-fls`, `rg --pre/--hostname-bin`, `sed -i` and sed's `w`/`e`
//! commands, `sort -o/--compress-program`, `uniq IN OUT`, `tree -o`, `file -C`, `date -s`,
//! `printf -v`/`read` into risky variables, and `git` (see [`super::git`]).
//!
//! These are floors: the command is at least `ask` whatever rule allows it. GNU tools accept
//! any unambiguous prefix of a long option (`--out` for `--output`), so a prefix of a dangerous
//! option counts as that option. For a program with dangerous options, an argument only known
//! at run time that could be an option (`sort $opts`) is a floor too; for programs without
//! any (cat, grep, ls, ...) it is not.

use super::options::long_match;
use super::words::Word;
use super::{basename, git, names, sed};

/// How a program spells its dangerous options.
struct Spec {
    /// Long options that write or run something, with what they do.
    long: &'static [(&'static str, &'static str)],
    /// Short option letters that write or run something.
    short: &'static [(char, &'static str)],
    /// Short option letters that take a value (the rest of the cluster is that value).
    short_value: &'static str,
    /// Whole single-dash words (find style) that write or run something.
    words: &'static [(&'static str, &'static str)],
}

const FIND: Spec = Spec {
    long: &[],
    short: &[],
    short_value: "",
    words: &[
        ("-delete", "deletes files"),
        ("-fprint", "writes to a file"),
        ("-fprint0", "writes to a file"),
        ("-fprintf", "writes to a file"),
        ("-fls", "writes to a file"),
    ],
};
const RG: Spec = Spec {
    long: &[
        ("--pre", "runs a preprocessor program on every file"),
        ("--hostname-bin", "runs a program"),
    ],
    short: &[],
    short_value: "",
    words: &[],
};
const SORT: Spec = Spec {
    long: &[
        ("--output", "writes its result to a file"),
        ("--compress-program", "runs a compression program"),
    ],
    short: &[('o', "writes its result to a file")],
    short_value: "kStT",
    words: &[],
};
const TREE: Spec = Spec {
    long: &[],
    short: &[('o', "writes its listing to a file")],
    short_value: "LPIHT",
    words: &[],
};
const FILE: Spec = Spec {
    long: &[("--compile", "writes a compiled magic file")],
    short: &[('C', "writes a compiled magic file")],
    short_value: "mfeFP",
    words: &[],
};
const DATE: Spec = Spec {
    long: &[("--set", "sets the system clock")],
    short: &[('s', "sets the system clock")],
    short_value: "dfrI",
    words: &[],
};

/// Floors for one simple command (its words, program first).
pub(crate) fn inspect(words: &[Word]) -> Vec<String> {
    let Some(program) = words.first() else {
        return Vec::new();
    };
    let args = &words[1..];
    let name = basename(&program.text);
    match name {
        "find" => scan(name, &FIND, args),
        "rg" => scan(name, &RG, args),
        "sort" => scan(name, &SORT, args),
        "tree" => scan(name, &TREE, args),
        "file" => scan(name, &FILE, args),
        "date" => scan(name, &DATE, args),
        "sed" => sed::hazard(args).into_iter().collect(),
        "uniq" => uniq(args).into_iter().collect(),
        "git" => git::hazards(args),
        "printf" => printf(args).into_iter().collect(),
        "read" | "mapfile" | "readarray" => read(args),
        "cd" | "pushd" => cd(name, args),
        _ => Vec::new(),
    }
}

/// `cd -` returns to `$OLDPWD` and `pushd` without a directory (or with `+N`/`-N`) swaps
/// the stack: directories the checker does not track. A dynamic operand is not known either.
fn cd(program: &str, args: &[Word]) -> Vec<String> {
    let mut floors: Vec<String> = args
        .iter()
        .filter(|w| w.dynamic)
        .map(|w| format!("changes into `{}`, only known at run time", w.text))
        .collect();
    if args.iter().any(|w| w.text == "-") {
        floors.push(format!(
            "`{program} -` returns to the previous directory, which is not tracked"
        ));
    }
    let stack = |w: &&Word| {
        let t = w.text.as_str();
        (t.starts_with('+') || t.starts_with('-')) && t[1..].bytes().all(|b| b.is_ascii_digit())
    };
    if program == "pushd"
        && (args.iter().all(|w| w.is_option())
            || args.iter().any(|w| stack(&w) && w.text.len() > 1))
    {
        floors.push("`pushd` without a directory moves to one that is not tracked".to_string());
    }
    floors
}

/// Floors from `spec` over `args`.
fn scan(program: &str, spec: &Spec, args: &[Word]) -> Vec<String> {
    let mut floors = Vec::new();
    let mut operands_only = false;
    let example = spec
        .words
        .first()
        .map(|(w, _)| *w)
        .or_else(|| spec.long.first().map(|(l, _)| *l))
        .unwrap_or("-o");
    for word in args {
        let text = word.text.as_str();
        if word.dynamic && word.may_be_option && !operands_only {
            floors.push(format!(
                "`{text}` is only known at run time and could be an option such as \
                 `{program} {example}`"
            ));
            continue;
        }
        if let Some((w, what)) = spec.words.iter().find(|(w, _)| *w == text) {
            floors.push(format!("`{program} {w}` {what}"));
        } else if operands_only || word.dynamic {
            continue;
        } else if text == "--" {
            operands_only = true;
        } else if let Some(name) = text.strip_prefix("--") {
            let name = name.split('=').next().unwrap_or(name);
            if let Some((long, what)) = long_match(spec.long, name) {
                floors.push(format!("`{program} {long}` {what}"));
            }
        } else if let Some(cluster) = text.strip_prefix('-') {
            for c in cluster.chars() {
                if let Some((_, what)) = spec.short.iter().find(|(s, _)| *s == c) {
                    floors.push(format!("`{program} -{c}` {what}"));
                    break;
                }
                if spec.short_value.contains(c) {
                    break;
                }
            }
        }
    }
    floors
}

/// `uniq [OPTION]... [INPUT [OUTPUT]]` writes OUTPUT.
fn uniq(args: &[Word]) -> Option<String> {
    let mut operands = 0;
    let mut skip_value = false;
    for word in args {
        if skip_value {
            skip_value = false;
            continue;
        }
        if word.dynamic {
            return Some(format!(
                "`{}` is only known at run time and could be an output file of `uniq`",
                word.text
            ));
        }
        match word.text.as_str() {
            "-f" | "-s" | "-w" => skip_value = true,
            t if t.starts_with('-') && t.len() > 1 => {}
            _ => operands += 1,
        }
    }
    (operands > 1).then(|| "`uniq` writes its second operand as an output file".to_string())
}

/// `printf -v NAME` assigns a variable.
fn printf(args: &[Word]) -> Option<String> {
    let position = args.iter().position(|w| w.text == "-v")?;
    let name = args.get(position + 1)?;
    if name.dynamic {
        return Some("`printf -v` assigns a variable only known at run time".into());
    }
    names::assignment_hazard(&name.text)
}

/// `read NAME...`, `mapfile NAME`: the names must be safe to assign.
fn read(args: &[Word]) -> Vec<String> {
    let mut floors = Vec::new();
    let mut skip_value = false;
    for word in args {
        if skip_value {
            skip_value = false;
            continue;
        }
        if word.dynamic {
            floors.push(format!("assigns `{}`, only known at run time", word.text));
            continue;
        }
        match word.text.as_str() {
            "-d" | "-i" | "-n" | "-N" | "-p" | "-t" | "-u" | "-C" | "-c" | "-O" | "-s" => {
                skip_value = true;
            }
            "-a" => {}
            t if t.starts_with('-') => {}
            name => floors.extend(names::assignment_hazard(name)),
        }
    }
    floors
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split_whitespace().map(Word::literal).collect()
    }

    fn floors(line: &str) -> Vec<String> {
        inspect(&words(line))
    }

    #[test]
    fn writers() {
        assert_eq!(floors("find . -name x"), Vec::<String>::new());
        assert_eq!(
            floors("find . -delete"),
            vec!["`find -delete` deletes files"]
        );
        assert_eq!(floors("find . -fprint out").len(), 1);
        assert_eq!(floors("rg --pre=cat x").len(), 1);
        assert_eq!(floors("rg --pretty x"), Vec::<String>::new());
        assert_eq!(floors("sort -o out in").len(), 1);
        assert_eq!(floors("sort -nro out in").len(), 1);
        assert_eq!(floors("sort -t o in"), Vec::<String>::new());
        assert_eq!(floors("sort --out=x in").len(), 1);
        assert_eq!(floors("sort -- -o"), Vec::<String>::new());
        assert_eq!(floors("uniq a b").len(), 1);
        assert_eq!(floors("uniq -c a"), Vec::<String>::new());
        assert_eq!(floors("tree -o x").len(), 1);
        assert_eq!(floors("file -C -m x").len(), 1);
        assert_eq!(floors("printf -v PATH x").len(), 1);
        assert_eq!(floors("printf -v line x"), Vec::<String>::new());
        assert_eq!(floors("read -r line"), Vec::<String>::new());
        assert_eq!(floors("read -r PATH").len(), 1);
    }

    #[test]
    fn dynamic_arguments() {
        let mut args = words("sort");
        args.push(Word::runtime("$opts", true));
        assert_eq!(inspect(&args).len(), 1);
        let mut args = words("cat");
        args.push(Word::runtime("$file", true));
        assert_eq!(inspect(&args), Vec::<String>::new());
        let mut args = words("sort --");
        args.push(Word::runtime("$file", true));
        assert_eq!(inspect(&args), Vec::<String>::new());
    }
}
