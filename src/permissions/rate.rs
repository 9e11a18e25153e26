//! Rating the commands of one shell command line (§5.1, §5.2).
//!
//! Per command: the last matching rule decides (allow rules see the command as written;
//! deny and ask rules also see the basename form of a path-qualified program and git without
//! its global options); an untrusted project rule can only make it stricter; wrappers and
//! neutral parts are only subject to deny rules; floors (risky options, redirections to
//! files) lift `allow` to `ask`; a path argument or redirection under a file `deny` rule makes
//! it `deny`; a session approval turns `ask` into `allow`.

use std::path::{Path, PathBuf};

use super::decision::{Decision, Evaluation, PartVerdict, Rule};
use super::paths::{self, MAX_BASES, Resolver};
use super::rules::Compiled;
use super::shell::{self, Item, Opaque, PathArg, RedirectKind, Role, SimpleCommand, basename};
use super::symlinks::{self, Finding};
use super::{PermissionEngine, session_rule};

/// Programs whose arguments are command names, not paths.
const NOT_PATHS: &[&str] = &["which", "type", "command"];
/// Programs that print their arguments: those name paths only when the output feeds another
/// command (`echo ~/.ssh/id_rsa | xargs cat`, `cat $(echo ~/.ssh/id_rsa)`), not when it goes
/// to the screen or a file (`echo .env >> .gitignore`).
const PRINTERS: &[&str] = &["echo", "printf"];

/// Longest text shown for an opaque part, in characters.
const SHOWN_CHARS: usize = 200;

pub(crate) fn bash(engine: &PermissionEngine, command: &str) -> Evaluation {
    let analysis = shell::analyze(command);
    let scope = Scope {
        bases: bases(engine, &analysis.directories),
        variables: &analysis.variables,
    };
    let mut resolver = Resolver::default();
    let mut parts: Vec<PartVerdict> = analysis
        .items
        .iter()
        .map(|item| match item {
            Item::Command(c) => command_part(engine, c, &scope, &mut resolver),
            Item::Opaque(o) => opaque_part(engine, o, command),
        })
        .collect();
    if parts.is_empty() {
        parts.push(PartVerdict {
            command: command.trim().to_string(),
            decision: Decision::Ask,
            rule: None,
            reason: "no command found".into(),
        });
    }
    Evaluation::from_parts(parts)
}

/// Where relative paths and variables of one command line point.
struct Scope<'a> {
    /// The start directory and every literal `cd` target.
    bases: Vec<PathBuf>,
    /// Literal values assigned to shell variables anywhere in the line.
    variables: &'a [(String, String)],
}

impl Scope<'_> {
    /// Every directory a path starting with `$name` (or `~name`) may start at: the known
    /// environment (`HOME`, `AGENT_HOME`, `PWD`) or any literal value the line assigns.
    fn roots(&self, engine: &PermissionEngine, name: &str) -> Vec<PathBuf> {
        if let Some(dir) = engine.root_dir(name) {
            return vec![dir];
        }
        let mut dirs = Vec::new();
        for (_, value) in self.variables.iter().filter(|(n, _)| n == name) {
            match value.strip_prefix('~') {
                Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                    dirs.extend(
                        engine
                            .paths
                            .home
                            .iter()
                            .map(|h| h.join(rest.trim_start_matches('/'))),
                    );
                }
                _ if value.starts_with('/') => dirs.push(PathBuf::from(value)),
                _ => dirs.extend(self.bases.iter().map(|b| b.join(value))),
            }
        }
        dirs
    }
}

/// The start directory and every literal `cd` target.
fn bases(engine: &PermissionEngine, directories: &[shell::Word]) -> Vec<PathBuf> {
    let start = engine.paths.start_dir().to_path_buf();
    let mut bases = vec![start.clone()];
    for arg in directories
        .iter()
        .flat_map(|d| d.path.iter().chain(&d.alternatives))
    {
        let base = match &arg.root {
            Some(name) => match engine.root_dir(name) {
                Some(root) => root.join(&arg.text),
                None => continue,
            },
            None => start.join(&arg.text),
        };
        let base = paths::normalize(&base);
        if !bases.contains(&base) && bases.len() < MAX_BASES {
            bases.push(base);
        }
    }
    bases
}

fn opaque_part(engine: &PermissionEngine, opaque: &Opaque, command: &str) -> PartVerdict {
    let source = if opaque.text.trim().is_empty() {
        command
    } else {
        &opaque.text
    };
    let shown: String = source.trim().chars().take(SHOWN_CHARS).collect();
    if engine.session_commands.contains(&shown) {
        return PartVerdict {
            rule: Some(session_rule("bash", &shown)),
            command: shown,
            decision: Decision::Allow,
            reason: "approved for this session".into(),
        };
    }
    PartVerdict {
        command: shown,
        decision: Decision::Ask,
        rule: None,
        reason: opaque.reason.clone(),
    }
}

fn command_part(
    engine: &PermissionEngine,
    command: &SimpleCommand,
    scope: &Scope<'_>,
    resolver: &mut Resolver,
) -> PartVerdict {
    let text = command.text();
    let display = command.display();
    let mut aliases = command.deny_aliases.clone();
    if let Some(program) = command.program().filter(|p| p.contains('/')) {
        aliases.push(format!("{}{}", basename(program), &text[program.len()..]));
        aliases.extend(command.deny_aliases.iter().filter_map(|a| {
            a.strip_prefix(program)
                .map(|rest| format!("{}{rest}", basename(program)))
        }));
    }
    let decider = decide(engine, &text, &aliases);
    let (mut decision, mut rule, mut reason) = match (&command.role, decider) {
        (Role::Command, Some(c)) => (c.rule.action, Some(c.rule.clone()), c.explain()),
        (Role::Command, None) => (Decision::Ask, None, "no rule matched".to_string()),
        (_, Some(c)) if c.rule.action == Decision::Deny => {
            (Decision::Deny, Some(c.rule.clone()), c.explain())
        }
        (Role::Wrapper, _) => (
            Decision::Allow,
            None,
            "runs another command, which is rated on its own".to_string(),
        ),
        (Role::Neutral(what), _) => (Decision::Allow, None, what.clone()),
    };
    let mut floors = dedup(&command.floors);
    if decision < Decision::Deny {
        floors.extend(recursive_floor(engine, command, scope, resolver));
    }
    if !floors.is_empty() && decision <= Decision::Ask {
        decision = Decision::Ask;
        reason = floors.join("; ");
    }
    if decision < Decision::Deny
        && let Some((deny, path)) = path_deny(engine, command, scope, resolver)
    {
        decision = Decision::Deny;
        reason = format!("names `{}`: {}", path.display(), deny.explain());
        rule = Some(deny.rule);
    }
    if decision == Decision::Ask && session_allows(engine, command, &display, floors.is_empty()) {
        decision = Decision::Allow;
        reason = "approved for this session".into();
        rule = Some(session_rule("bash", &display));
    }
    PartVerdict {
        command: display,
        decision,
        rule,
        reason,
    }
}

/// The deciding bash rule: last match of the main list, unless a tightening rule is stricter.
fn decide<'e>(
    engine: &'e PermissionEngine,
    text: &str,
    aliases: &[String],
) -> Option<&'e Compiled> {
    let matches = |c: &&Compiled| {
        c.for_bash()
            && (c.matches_command(text)
                || c.rule.action != Decision::Allow && aliases.iter().any(|a| c.matches_command(a)))
    };
    let mut candidates = engine.bash_index.wildcard.clone();
    for t in std::iter::once(text).chain(aliases.iter().map(String::as_str)) {
        if let Some(first) = t.as_bytes().first() {
            candidates.extend(&engine.bash_index.by_first[usize::from(*first)]);
        }
    }
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    candidates.dedup();
    let main = candidates.iter().map(|i| &engine.rules[*i]).find(matches);
    let tight = engine.tighten.iter().rev().find(matches);
    match (main, tight) {
        (Some(m), Some(t)) if t.rule.action > m.rule.action => Some(t),
        (m, t) => m.or(t),
    }
}

fn session_allows(
    engine: &PermissionEngine,
    command: &SimpleCommand,
    display: &str,
    no_floors: bool,
) -> bool {
    engine.session_commands.iter().any(|prefix| {
        display == prefix
            || no_floors
                && command.role == Role::Command
                && display.starts_with(&format!("{prefix} "))
    })
}

/// The first path the command names that a file rule denies: the path itself, or a
/// directory whose contents a deny rule covers (`ls ~/.ssh`).
fn path_deny(
    engine: &PermissionEngine,
    command: &SimpleCommand,
    scope: &Scope<'_>,
    resolver: &mut Resolver,
) -> Option<(Compiled, PathBuf)> {
    for (arg, views) in named_paths(command) {
        for path in resolver.candidates(&arg, &scope.bases, |name| scope.roots(engine, name)) {
            if let Some(deny) = engine.path_denied(&path, views) {
                return Some((deny, path));
            }
        }
    }
    None
}

pub(super) type Views = &'static [(&'static str, bool)];

/// Every path the command names, with the access views to rate it under: arguments are
/// rated as both read and write (we cannot tell which), redirections as what they do.
fn named_paths(command: &SimpleCommand) -> Vec<(PathArg, Views)> {
    const ANY: Views = &[("read_file", false), ("write_file", true)];
    const READ: Views = &[("read_file", false)];
    const WRITE: Views = &[("write_file", true)];
    let program = command.program().map_or("", basename);
    let printed_only = PRINTERS.contains(&program) && !command.feeds;
    let arguments =
        if NOT_PATHS.contains(&program) || printed_only || matches!(command.role, Role::Neutral(_))
        {
            &[][..]
        } else {
            command.words.get(1..).unwrap_or_default()
        };
    let pattern = search_pattern(program, arguments);
    let mut named: Vec<(PathArg, Views)> = arguments
        .iter()
        .enumerate()
        .filter(|(index, _)| Some(*index) != pattern)
        .flat_map(|(_, w)| {
            let alternatives = w.alternatives.iter().cloned();
            argument_path(w)
                .into_iter()
                .chain(alternatives)
                .map(|p| (p, ANY))
        })
        .collect();
    if command.feeds {
        let printed =
            super::printed::printed_words(program, command.words.get(1..).unwrap_or_default());
        named.extend(
            printed
                .iter()
                .filter_map(|text| shell::Word::printed(text).path)
                .map(|p| (p, ANY)),
        );
    }
    for redirect in &command.redirects {
        let views = match redirect.kind {
            RedirectKind::Read => READ,
            RedirectKind::Write => WRITE,
            RedirectKind::Descriptor => continue,
        };
        named.extend(redirect.target.path.clone().map(|p| (p, views)));
        named.extend(
            redirect
                .target
                .alternatives
                .iter()
                .cloned()
                .map(|p| (p, views)),
        );
    }
    named
}

/// The index in `arguments` of a search program's pattern operand, which is text to look
/// for, not a file (`git log | grep .env` searches for ".env"). Only when that is certain:
/// `grep`/`egrep`/`fgrep`/`rg` with no option anywhere before `--` that moves the pattern
/// elsewhere or drops it (`-e`, `-f`, `--regexp`, `--file`, `--files`, `--type-list`, any
/// abbreviation of those, as GNU grep accepts `--regex=x`, or a short-option cluster holding
/// `e` or `f`), and the first operand holds no `/` (a path to a secret would). Options are
/// looked for after the operands too: both grep and rg accept them there (`grep .env -e x`
/// reads `.env`).
fn search_pattern(program: &str, arguments: &[shell::Word]) -> Option<usize> {
    if !matches!(program, "grep" | "egrep" | "fgrep" | "rg") {
        return None;
    }
    let mut operand = None;
    for (index, word) in arguments.iter().enumerate() {
        let text = word.text.as_str();
        if text == "--" {
            operand = operand.or(Some(index + 1));
            break;
        }
        if !word.is_option() {
            operand = operand.or(Some(index));
        } else if moves_pattern(text) {
            return None;
        }
    }
    let index = operand?;
    let word = arguments.get(index)?;
    (!word.text.contains('/') && !word.dynamic).then_some(index)
}

/// Whether a grep/rg option gives the pattern elsewhere or lists instead of searching.
fn moves_pattern(option: &str) -> bool {
    const LONG: &[&str] = &["regexp", "file", "files", "type-list"];
    match option.strip_prefix("--") {
        Some(long) => {
            let name = long.split('=').next().unwrap_or(long);
            LONG.iter().any(|full| full.starts_with(name))
        }
        None => option.contains(['e', 'f']),
    }
}

/// A recursive search (`grep -r`, `rg`, `find`) over a directory that holds a denied path
/// (`grep -r key ~` reads `~/.ssh`) is at least `ask`; so is one that follows symlinks
/// (`grep -R`, `rg -L`, `find -L`) over a tree holding a link to a denied path. The searched
/// directories are the named ones, or every directory the command may run in (the start
/// directory and each `cd` target, `$HOME` for a bare `cd`).
fn recursive_floor(
    engine: &PermissionEngine,
    command: &SimpleCommand,
    scope: &Scope<'_>,
    resolver: &mut Resolver,
) -> Option<String> {
    let program = command.program().map_or("", basename);
    let follows = recursion(program, command.words.get(1..).unwrap_or_default())?;
    let roots = &engine.secret_roots;
    let mut searched: Vec<PathBuf> = scope.bases.clone();
    for (arg, _) in named_paths(command) {
        searched.extend(resolver.candidates(&arg, &scope.bases, |name| scope.roots(engine, name)));
    }
    let inside = |root: &Path, dir: &Path| {
        let (root, dir) = (
            root.as_os_str().as_encoded_bytes(),
            dir.as_os_str().as_encoded_bytes(),
        );
        root.starts_with(dir)
            && (root.len() == dir.len() || dir.ends_with(b"/") || root[dir.len()] == b'/')
    };
    for dir in &searched {
        if let Some((root, reason)) = roots.iter().find(|(root, _)| inside(root, dir)) {
            return Some(format!(
                "searches `{}`, which holds `{}` ({reason}, denied)",
                dir.display(),
                root.display()
            ));
        }
    }
    if !follows {
        return None;
    }
    let denied = |target: &Path| {
        roots
            .iter()
            .find(|(root, _)| inside(target, root) || inside(root, target))
            .map(|(root, reason)| format!("`{}`: {reason}", root.display()))
    };
    match symlinks::find_link_to_secret(&searched, &denied)? {
        Finding::Link {
            link,
            target,
            reason,
        } => Some(format!(
            "follows symlinks, and `{}` links to `{}` ({reason}, denied)",
            link.display(),
            target.display()
        )),
        Finding::TooLarge => Some(format!(
            "follows symlinks through more than {} entries, too many to check for links to secrets",
            symlinks::MAX_ENTRIES
        )),
    }
}

/// Whether `program` with `args` searches recursively: `None` if not, else whether it follows
/// symlinks inside the tree (`rg -L`/`--follow`, `find -L`/`-follow`, `grep -R`/
/// `--dereference-recursive`).
fn recursion(program: &str, args: &[shell::Word]) -> Option<bool> {
    let short = |w: &shell::Word, flag: char| {
        let t = w.text.as_str();
        t.starts_with('-') && !t.starts_with("--") && t.contains(flag)
    };
    match program {
        "rg" => Some(args.iter().any(|w| w.text == "--follow" || short(w, 'L'))),
        "find" => Some(args.iter().any(|w| w.text == "-L" || w.text == "-follow")),
        "grep" | "egrep" | "fgrep" => {
            let follows = args
                .iter()
                .any(|w| w.text.starts_with("--dereference-recursive") || short(w, 'R'));
            let recursive = follows
                || args.iter().any(|w| {
                    let t = w.text.as_str();
                    t.starts_with("--recursive")
                        || t.starts_with("--directories=recurse")
                        || short(w, 'r')
                });
            recursive.then_some(follows)
        }
        _ => None,
    }
}

/// The path an argument names: the word itself, or the value of `--option=value`.
fn argument_path(word: &shell::Word) -> Option<PathArg> {
    if !word.is_option() {
        return word.path.clone();
    }
    let (option, value) = word.text.split_once('=')?;
    if !option.starts_with("--") || word.dynamic || value.is_empty() {
        return None;
    }
    Some(match value.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => PathArg {
            root: Some("HOME".into()),
            text: rest.trim_start_matches('/').to_string(),
            glob: false,
        },
        _ => PathArg {
            root: None,
            text: value.to_string(),
            glob: false,
        },
    })
}

fn dedup(floors: &[String]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for floor in floors {
        if !seen.contains(floor) {
            seen.push(floor.clone());
        }
    }
    seen
}

impl PermissionEngine {
    /// The value of a variable a path may start with.
    pub(super) fn root_dir(&self, name: &str) -> Option<PathBuf> {
        let home = self.paths.home.as_deref();
        match name {
            "HOME" => self.paths.home.clone(),
            user if user.starts_with('~') => {
                let user = &user[1..];
                match home {
                    Some(h) if h.file_name().is_some_and(|n| n == user) => Some(h.to_path_buf()),
                    _ if user == "root" => Some(PathBuf::from("/root")),
                    _ => None,
                }
            }
            "AGENT_HOME" => Some(self.paths.agent_home.clone()),
            "PWD" => Some(self.paths.start_dir().to_path_buf()),
            _ => None,
        }
    }

    /// The deny rule deciding `path` under any of `views`, if one does. A cheap pass over
    /// the deny rules' literal ends comes first; the full evaluation (last match wins) only
    /// runs for a path some deny rule matches.
    fn path_denied(&self, path: &std::path::Path, views: Views) -> Option<Compiled> {
        self.exact_denied(path, views).or_else(|| {
            self.secret_dirs
                .iter()
                .any(|dir| dir.as_os_str() == path.as_os_str())
                .then(|| self.exact_denied(&path.join("agent-permission-probe"), views))?
        })
    }

    fn exact_denied(&self, path: &std::path::Path, views: Views) -> Option<Compiled> {
        let compiled = |d: &super::DenyIndex| {
            if d.tighten {
                &self.tighten[d.index]
            } else {
                &self.rules[d.index]
            }
        };
        let viewed = |c: &Compiled| views.iter().any(|(tool, write)| c.for_file(tool, *write));
        let text = path.to_string_lossy();
        let candidate = self.denies.iter().any(|d| {
            text.starts_with(d.prefix.as_str())
                && text.ends_with(d.suffix.as_str())
                && viewed(compiled(d))
                && compiled(d).matches_path(path)
        });
        if !candidate {
            return None;
        }
        views.iter().find_map(|(tool, write)| {
            let part = self.file_part(tool, path, *write);
            let rule: Rule = part.rule?;
            (part.decision == Decision::Deny).then(|| {
                self.rules
                    .iter()
                    .chain(&self.tighten)
                    .find(|c| c.rule == rule)
                    .cloned()
            })?
        })
    }
}
