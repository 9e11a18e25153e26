//! Rating the commands of one shell command line (§5.1, §5.2).
//!
//! Per command: the last matching rule decides (allow rules see the command as written;
//! deny and ask rules also see the basename form of a path-qualified program and git without
//! its global options); an untrusted project rule can only make it stricter; wrappers and
//! neutral parts are only subject to deny rules; floors (risky options, redirections to
//! files) lift `allow` to `ask`; a path argument or redirection under a file `deny` rule makes
//! it `deny`; a session approval turns `ask` into `allow`.

use std::path::PathBuf;

use super::decision::{Decision, Evaluation, PartVerdict, Rule};
use super::paths::{self, MAX_BASES};
use super::rules::Compiled;
use super::shell::{self, Item, Opaque, PathArg, RedirectKind, Role, SimpleCommand, basename};
use super::{PermissionEngine, session_rule};

/// Programs whose arguments are never opened as files.
const NOT_PATHS: &[&str] = &["echo", "printf", "which", "type", "command"];

/// Longest text shown for an opaque part, in characters.
const SHOWN_CHARS: usize = 200;

pub fn bash(engine: &PermissionEngine, command: &str) -> Evaluation {
    let analysis = shell::analyze(command);
    let bases = bases(engine, &analysis.directories);
    let mut parts: Vec<PartVerdict> = analysis
        .items
        .iter()
        .map(|item| match item {
            Item::Command(c) => command_part(engine, c, &bases),
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

/// The start directory and every literal `cd` target.
fn bases(engine: &PermissionEngine, directories: &[shell::Word]) -> Vec<PathBuf> {
    let start = engine.paths.start_dir().to_path_buf();
    let mut bases = vec![start.clone()];
    for dir in directories {
        let Some(arg) = &dir.path else { continue };
        let base = if arg.home {
            match &engine.paths.home {
                Some(home) => home.join(&arg.text),
                None => continue,
            }
        } else {
            start.join(&arg.text)
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
    bases: &[PathBuf],
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
    if !command.floors.is_empty() && decision <= Decision::Ask {
        decision = Decision::Ask;
        reason = dedup(&command.floors).join("; ");
    }
    if decision < Decision::Deny
        && let Some((deny, path)) = path_deny(engine, command, bases)
    {
        decision = Decision::Deny;
        reason = format!("names `{}`: {}", path.display(), deny.explain());
        rule = Some(deny.rule);
    }
    if decision == Decision::Ask && session_allows(engine, command, &display) {
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
    let main = engine.rules.iter().rev().find(matches);
    let tight = engine.tighten.iter().rev().find(matches);
    match (main, tight) {
        (Some(m), Some(t)) if t.rule.action > m.rule.action => Some(t),
        (m, t) => m.or(t),
    }
}

fn session_allows(engine: &PermissionEngine, command: &SimpleCommand, display: &str) -> bool {
    engine.session_commands.iter().any(|prefix| {
        display == prefix
            || command.floors.is_empty()
                && command.role == Role::Command
                && display.starts_with(&format!("{prefix} "))
    })
}

/// The first path the command names that a file rule denies.
fn path_deny(
    engine: &PermissionEngine,
    command: &SimpleCommand,
    bases: &[PathBuf],
) -> Option<(Compiled, PathBuf)> {
    const ANY: &[(&str, bool)] = &[("read_file", false), ("write_file", true)];
    const READ: &[(&str, bool)] = &[("read_file", false)];
    const WRITE: &[(&str, bool)] = &[("write_file", true)];
    let program = command.program().map_or("", basename);
    let arguments = if NOT_PATHS.contains(&program) || matches!(command.role, Role::Neutral(_)) {
        &[][..]
    } else {
        command.words.get(1..).unwrap_or_default()
    };
    let words = arguments
        .iter()
        .filter_map(|w| argument_path(w).map(|p| (p, ANY)));
    let redirects = command.redirects.iter().filter_map(|r| {
        let views = match r.kind {
            RedirectKind::Read => READ,
            RedirectKind::Write => WRITE,
            RedirectKind::Descriptor => return None,
        };
        r.target.path.clone().map(|p| (p, views))
    });
    for (arg, views) in words.chain(redirects) {
        for path in paths::candidates(&arg, bases, engine.paths.home.as_deref()) {
            for (tool, write) in views {
                if let Some(deny) = engine.file_deny(tool, &path, *write) {
                    return Some((deny, path));
                }
            }
        }
    }
    None
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
            home: true,
            text: rest.trim_start_matches('/').to_string(),
            glob: false,
        },
        _ => PathArg {
            home: false,
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
    /// The deny rule deciding `tool` on `path`, when the verdict is deny. Only paths some
    /// deny rule matches are evaluated in full, which keeps argument checks cheap.
    fn file_deny(&self, tool: &str, path: &std::path::Path, write: bool) -> Option<Compiled> {
        let denies = |list: &[Compiled]| {
            list.iter().any(|c| {
                c.rule.action == Decision::Deny && c.for_file(tool, write) && c.matches_path(path)
            })
        };
        if !denies(&self.rules) && !denies(&self.tighten) {
            return None;
        }
        let part = self.file_part(tool, path, write);
        let rule: Rule = part.rule?;
        (part.decision == Decision::Deny).then(|| {
            self.rules
                .iter()
                .chain(&self.tighten)
                .find(|c| c.rule == rule)
                .cloned()
        })?
    }
}
