//! At session start: what commands may not change inside writable directories, and the git
//! configuration overrides for every command the agent runs (issue 15).
//!
//! Protected (made read-only by [`super::namespaces`]) — everything that makes git run a
//! program the next time someone uses the repository, found for every repository in the
//! workspace (the top level, nested ones, and those a worktree or submodule `.git` file points
//! to):
//! - `hooks/` of each git directory (and of its common directory), plus the directory
//!   `core.hooksPath` names in the repository's or the user's git config;
//! - `config` and `config.worktree`: they name programs (`core.fsmonitor`, `core.hooksPath`,
//!   `diff.external`, textconv and filter drivers, `core.sshCommand`, aliases, `include.path`);
//! - `commondir` (in the git directory and under `worktrees/`): it redirects to another git
//!   directory, whose config and hooks would then apply;
//! - a `.git` *file*: it names the git directory;
//! - the workspace's `.agents/` (rules, roles and skills for the next session) and
//!   `[sandbox] read_only`.
//!
//! Not protected, and why: `info/attributes` and `.gitattributes` only choose among drivers
//! the config defines, so they cannot add a program; `info/exclude`, refs, objects, the
//! index, `HEAD`, logs and `packed-refs` name no program, and git writes them in ordinary work
//! (`add`, `commit`, `branch`, `stash`), which keeps working.
//!
//! Pinned (bound onto themselves, still writable, so they cannot be renamed or removed): every
//! `.git` directory and every directory from the workspace down to each repository, because
//! `mv .git x && mkdir .git` (or moving the directory holding a repository) would otherwise
//! replace the protected files with unprotected copies.
//!
//! A repository is a `.git` directory git itself would accept (`HEAD`, `objects/`, `refs/`)
//! or a `.git` file. A missing `hooks/` in one is created empty (as `git init` does) so it can
//! be protected; a command could otherwise create it. So is a missing `.agents/` in a trusted
//! workspace, where a planted `.agents/config.toml` would be obeyed in full next session; in an
//! untrusted one a project config can only tighten, so nothing is created there.
//!
//! What stops working: commands that write a protected file, `git config` (set, unset),
//! `git remote add`, `git init` run again in an existing repository (it rewrites `config`),
//! moving or removing a repository. The result explains the refusal, so the model can ask the
//! user to do it.
//!
//! Git overrides (`GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`, which git reads
//! after every config file): `core.fsmonitor=false` always, and for each key of
//! [`OVERRIDES`] that a repository's own config sets, a harmless value, so `git status`,
//! `git diff` or `git log -p` never run a program a repository's config names. Drivers from
//! the user's own global config (git-lfs, for example) are left alone. Hooks still run (inside
//! the sandbox): those present at start are the user's, and commands cannot change them.
//!
//! Bounds: the walk does not follow symlinks, skips [`SKIPPED_DIRS`] (dependency and build
//! output, where nobody runs git), stops after [`MAX_DIRS`] directories and protects at most
//! [`MAX_REPOSITORIES`] repositories, with a warning when a bound is hit.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// Directory names not searched for repositories.
pub(crate) const SKIPPED_DIRS: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "__pycache__",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".gradle",
];
/// Directories visited at most while looking for repositories.
pub(crate) const MAX_DIRS: usize = 10_000;
/// Repositories protected at most.
pub(crate) const MAX_REPOSITORIES: usize = 64;

/// What an external diff is replaced with: it says why and fails (git then stops the diff).
const REFUSE_DIFF: &str = "echo \"agent: this repository's config names an external diff program, which is not run for the agent's commands; use git diff --no-ext-diff\" >&2; exit 1";

/// Keys that make git run a program, as `(section, variable)` with `*` for any subsection,
/// and the value that neutralizes them.
pub(crate) const OVERRIDES: &[(&str, &str, &str)] = &[
    ("diff", "external", REFUSE_DIFF),
    ("diff.*", "command", REFUSE_DIFF),
    ("diff.*", "textconv", "cat"),
    ("filter.*", "clean", ""),
    ("filter.*", "smudge", ""),
    ("filter.*", "process", ""),
    ("filter.*", "required", "false"),
    ("merge.*", "driver", "false"),
    ("core", "sshcommand", "ssh"),
    ("core", "askpass", ""),
    ("credential", "helper", ""),
    ("gpg", "program", "gpg"),
    ("gpg.openpgp", "program", "gpg"),
    ("gpg.x509", "program", "gpgsm"),
    ("gpg.ssh", "program", "ssh-keygen"),
    ("remote.*", "uploadpack", "git-upload-pack"),
    ("remote.*", "receivepack", "git-receive-pack"),
    ("protocol.ext", "allow", "never"),
];

/// The result of [`scan`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    /// Canonical paths to make read-only.
    pub read_only: Vec<PathBuf>,
    /// Canonical directories to pin.
    pub pinned: Vec<PathBuf>,
    /// Git config overrides, `(key, value)`, in order.
    pub git: Vec<(String, String)>,
    /// For the user, once at start.
    pub(crate) warnings: Vec<String>,
}

/// Where to look and what to do.
#[derive(Debug, Clone)]
pub struct ScanInput<'a> {
    /// Canonical workspace root.
    pub workspace: &'a Path,
    /// The user's home directory, for `~/` in `core.hooksPath`.
    pub home: Option<&'a Path>,
    /// The user's git config files (`~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`), for
    /// `core.hooksPath`.
    pub global_configs: Vec<PathBuf>,
    /// Extra paths from `[sandbox] read_only` (relative to the workspace or absolute).
    pub extra_read_only: &'a [PathBuf],
    /// Create a missing `hooks/` so it can be protected.
    pub create_missing: bool,
    /// Create a missing `.agents/` so it can be protected (worth it only in a trusted
    /// workspace, whose project config is obeyed in full next time).
    pub create_agents: bool,
}

/// Finds the repositories of the workspace and what to protect in them.
pub fn scan(input: &ScanInput<'_>) -> Protected {
    let mut out = Protected::default();
    let (dot_gits, walk_warning) = find_dot_gits(input.workspace);
    out.warnings.extend(walk_warning);
    if dot_gits.len() > MAX_REPOSITORIES {
        out.warnings.push(format!(
            "the workspace holds {} git repositories; only the first {MAX_REPOSITORIES} are protected from changes by commands",
            dot_gits.len()
        ));
    }
    let global_hooks: Vec<String> = input
        .global_configs
        .iter()
        .flat_map(|path| config_entries(path, 0))
        .filter(|e| e.section == "core" && e.sub.is_none() && e.key == "hookspath")
        .map(|e| e.value)
        .collect();
    let mut keys: Vec<String> = Vec::new();
    for dot_git in dot_gits.iter().take(MAX_REPOSITORIES) {
        protect_repository(input, dot_git, &global_hooks, &mut out, &mut keys);
    }
    let agents = input.workspace.join(".agents");
    if input.create_agents && !agents.exists() {
        let _ = std::fs::create_dir(&agents);
    }
    add_existing(&mut out.read_only, &agents);
    for extra in input.extra_read_only {
        add_existing(&mut out.read_only, &input.workspace.join(extra));
    }
    out.git
        .push(("core.fsmonitor".to_string(), "false".to_string()));
    for key in keys {
        if let Some(value) = override_for(&key) {
            out.git.push((key, value.to_string()));
        }
    }
    out.read_only.sort();
    out.read_only.dedup();
    out.pinned.sort();
    out.pinned.dedup();
    out
}

/// Every `.git` (directory or file) under `workspace`, breadth first; a warning when the walk
/// stopped early.
fn find_dot_gits(workspace: &Path) -> (Vec<PathBuf>, Option<String>) {
    let mut found = Vec::new();
    let mut queue = VecDeque::from([workspace.to_path_buf()]);
    let mut visited = 0;
    while let Some(dir) = queue.pop_front() {
        visited += 1;
        if visited > MAX_DIRS {
            return (
                found,
                Some(format!(
                    "stopped looking for nested git repositories after {MAX_DIRS} directories; deeper ones are not protected from changes by commands"
                )),
            );
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut subdirs = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if name == ".git" {
                if kind.is_dir() || kind.is_file() {
                    found.push(entry.path());
                }
            } else if kind.is_dir() && !SKIPPED_DIRS.iter().any(|s| name == *s) {
                subdirs.push(entry.path());
            }
        }
        subdirs.sort();
        queue.extend(subdirs);
    }
    (found, None)
}

/// Protects one repository whose `.git` is at `dot_git`.
fn protect_repository(
    input: &ScanInput<'_>,
    dot_git: &Path,
    global_hooks: &[String],
    out: &mut Protected,
    keys: &mut Vec<String>,
) {
    let Some(root) = dot_git.parent() else {
        return;
    };
    let git_dir = if dot_git.is_dir() {
        if !is_git_directory(dot_git) {
            return;
        }
        out.pinned.push(dot_git.to_path_buf());
        dot_git.to_path_buf()
    } else {
        add_existing(&mut out.read_only, dot_git);
        match pointer(dot_git, "gitdir:") {
            Some(dir) => dir,
            None => return,
        }
    };
    for dir in root.ancestors() {
        if !dir.starts_with(input.workspace) {
            break;
        }
        out.pinned.push(dir.to_path_buf());
    }
    let mut git_dirs = vec![git_dir.clone()];
    git_dirs.extend(submodule_git_dirs(&git_dir));
    let mut hooks_paths: Vec<String> = global_hooks.to_vec();
    for dir in &git_dirs {
        let common = pointer(&dir.join("commondir"), "").filter(|c| c.is_dir());
        for gd in std::iter::once(dir).chain(common.as_ref()) {
            if input.create_missing && gd.starts_with(input.workspace) && !gd.join("hooks").exists()
            {
                let _ = std::fs::create_dir(gd.join("hooks"));
            }
            for name in ["hooks", "config", "config.worktree", "commondir"] {
                add_existing(&mut out.read_only, &gd.join(name));
            }
            for config in ["config", "config.worktree"] {
                for entry in config_entries(&gd.join(config), 0) {
                    if entry.section == "core" && entry.sub.is_none() && entry.key == "hookspath" {
                        hooks_paths.push(entry.value.clone());
                    }
                    let key = entry.name();
                    if !keys.contains(&key) {
                        keys.push(key);
                    }
                }
            }
            if let Ok(worktrees) = std::fs::read_dir(gd.join("worktrees")) {
                for worktree in worktrees.flatten() {
                    for name in ["config.worktree", "commondir"] {
                        add_existing(&mut out.read_only, &worktree.path().join(name));
                    }
                }
            }
        }
    }
    for hooks in hooks_paths {
        let path = match hooks.strip_prefix("~/") {
            Some(rest) => match input.home {
                Some(home) => home.join(rest),
                None => continue,
            },
            None => root.join(&hooks),
        };
        add_existing(&mut out.read_only, &path);
    }
}

/// Whether git would take `dir` for a git directory: `HEAD`, `objects/` and `refs/` (the
/// last two may live in the common directory a `commondir` file names).
fn is_git_directory(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
        && (dir.join("commondir").is_file()
            || dir.join("objects").is_dir() && dir.join("refs").is_dir())
}

/// The git directories of submodules under `git_dir/modules` (directories holding `HEAD`).
fn submodule_git_dirs(git_dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut queue = vec![(git_dir.join("modules"), 0)];
    while let Some((dir, depth)) = queue.pop() {
        if depth > 6 || found.len() >= MAX_REPOSITORIES {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let path = entry.path();
            if is_git_directory(&path) {
                queue.push((path.join("modules"), depth + 1));
                found.push(path);
            } else {
                queue.push((path, depth + 1));
            }
        }
    }
    found
}

/// The directory a `.git` file (`gitdir: X`) or a `commondir` file (`X`) points to,
/// canonical; relative targets are relative to the file's directory.
fn pointer(file: &Path, prefix: &str) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.lines().next()?.strip_prefix(prefix)?.trim();
    if target.is_empty() {
        return None;
    }
    file.parent()?.join(target).canonicalize().ok()
}

/// Adds `path` (canonical) to `list` if it exists.
fn add_existing(list: &mut Vec<PathBuf>, path: &Path) {
    if let Ok(real) = path.canonicalize() {
        list.push(real);
    }
}

/// The neutral value for config key `key` (`section.sub.variable`), if it names a program.
fn override_for(key: &str) -> Option<&'static str> {
    let (head, variable) = key.rsplit_once('.')?;
    let (section, sub) = match head.split_once('.') {
        Some((section, sub)) => (section.to_ascii_lowercase(), Some(sub)),
        None => (head.to_ascii_lowercase(), None),
    };
    let variable = variable.to_ascii_lowercase();
    OVERRIDES.iter().find_map(|(s, v, value)| {
        let section_matches = match (s.split_once('.'), sub) {
            (Some((name, "*")), Some(_)) => name == section,
            (Some((name, want)), Some(sub)) => name == section && want.eq_ignore_ascii_case(sub),
            (None, None) => *s == section,
            _ => false,
        };
        (section_matches && *v == variable).then_some(*value)
    })
}

/// One `key = value` of a git config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfigEntry {
    /// Lower case.
    pub(crate) section: String,
    /// As written (case-sensitive), for `[section "sub"]`.
    pub(crate) sub: Option<String>,
    /// Lower case.
    pub(crate) key: String,
    pub(crate) value: String,
}

impl ConfigEntry {
    /// The key as `GIT_CONFIG_KEY_n` takes it.
    pub(crate) fn name(&self) -> String {
        match &self.sub {
            Some(sub) => format!("{}.{sub}.{}", self.section, self.key),
            None => format!("{}.{}", self.section, self.key),
        }
    }
}

/// The entries of the git config file at `path`, `include.path` and `includeIf.*.path`
/// files followed (all of them, whatever their condition: erring towards more overrides).
fn config_entries(path: &Path, depth: usize) -> Vec<ConfigEntry> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut entries = parse_config(&text);
    if depth < 4 {
        let includes: Vec<PathBuf> = entries
            .iter()
            .filter(|e| (e.section == "include" || e.section == "includeif") && e.key == "path")
            .map(|e| match path.parent() {
                Some(dir) => dir.join(&e.value),
                None => PathBuf::from(&e.value),
            })
            .collect();
        for include in includes {
            entries.extend(config_entries(&include, depth + 1));
        }
    }
    entries
}

/// Parses git config syntax (`[section]`, `[section "sub"]`, `[section.sub]`, `key = value`,
/// a bare `key` meaning true, `#`/`;` comments, quotes, backslash escapes and continuations).
/// Malformed lines are skipped.
pub(crate) fn parse_config(text: &str) -> Vec<ConfigEntry> {
    let mut entries = Vec::new();
    let mut section = String::new();
    let mut sub: Option<String> = None;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            let Some(end) = trimmed.find(']') else {
                continue;
            };
            let header = &trimmed[1..end];
            (section, sub) = match header.split_once(char::is_whitespace) {
                Some((name, rest)) => {
                    let rest = rest.trim().trim_matches('"').replace("\\\"", "\"");
                    (name.to_ascii_lowercase(), Some(rest.replace("\\\\", "\\")))
                }
                None => match header.split_once('.') {
                    Some((name, s)) => (name.to_ascii_lowercase(), Some(s.to_ascii_lowercase())),
                    None => (header.to_ascii_lowercase(), None),
                },
            };
            // A key may follow the header on the same line.
            let after = trimmed[end + 1..].trim();
            if !after.is_empty() && !after.starts_with(['#', ';']) {
                push_entry(&mut entries, &section, &sub, after, &mut lines);
            }
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) || section.is_empty() {
            continue;
        }
        push_entry(&mut entries, &section, &sub, trimmed, &mut lines);
    }
    entries
}

fn push_entry<'a>(
    entries: &mut Vec<ConfigEntry>,
    section: &str,
    sub: &Option<String>,
    line: &str,
    rest: &mut impl Iterator<Item = &'a str>,
) {
    let (key, raw) = match line.split_once('=') {
        Some((key, value)) => (key.trim(), Some(value)),
        None => (line.trim(), None),
    };
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return;
    }
    let value = match raw {
        Some(raw) => config_value(raw, rest),
        None => "true".to_string(),
    };
    entries.push(ConfigEntry {
        section: section.to_string(),
        sub: sub.clone(),
        key: key.to_ascii_lowercase(),
        value,
    });
}

/// A value: quotes removed, escapes resolved, comments cut, continuations joined.
fn config_value<'a>(raw: &str, rest: &mut impl Iterator<Item = &'a str>) -> String {
    let mut value = String::new();
    let mut quoted = false;
    let mut current = raw.to_string();
    loop {
        let mut chars = current.chars().peekable();
        let mut continued = false;
        while let Some(c) = chars.next() {
            match c {
                '"' => quoted = !quoted,
                '\\' => match chars.next() {
                    Some('n') => value.push('\n'),
                    Some('t') => value.push('\t'),
                    Some(other) => value.push(other),
                    None => continued = true,
                },
                '#' | ';' if !quoted => break,
                c => value.push(c),
            }
        }
        if !continued {
            break;
        }
        match rest.next() {
            Some(next) => current = next.to_string(),
            None => break,
        }
    }
    value.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn entry(section: &str, sub: Option<&str>, key: &str, value: &str) -> ConfigEntry {
        ConfigEntry {
            section: section.into(),
            sub: sub.map(Into::into),
            key: key.into(),
            value: value.into(),
        }
    }

    #[test]
    fn parses_git_config_syntax() {
        let text = "[core]\n\tfsmonitor = \"touch x; echo\" # planted\n\tbare\n[diff \"Pic\"]\n\ttextconv = exif \\\n  --all\n[Filter.lfs] clean = git-lfs clean -- %f\n; comment\n[include]\n\tpath = ../more.cfg\n";
        assert_eq!(
            parse_config(text),
            vec![
                entry("core", None, "fsmonitor", "touch x; echo"),
                entry("core", None, "bare", "true"),
                entry("diff", Some("Pic"), "textconv", "exif   --all"),
                entry("filter", Some("lfs"), "clean", "git-lfs clean -- %f"),
                entry("include", None, "path", "../more.cfg"),
            ]
        );
    }

    #[test]
    fn overrides_only_program_keys() {
        let cases = [
            ("diff.external", Some(REFUSE_DIFF)),
            ("diff.Pic.textconv", Some("cat")),
            ("diff.pic.binary", None),
            ("filter.lfs.clean", Some("")),
            ("core.sshcommand", Some("ssh")),
            ("core.editor", None),
            ("gpg.ssh.program", Some("ssh-keygen")),
            ("protocol.ext.allow", Some("never")),
            ("protocol.file.allow", None),
            ("user.name", None),
        ];
        for (key, expected) in cases {
            assert_eq!(override_for(key), expected, "{key}");
        }
    }

    #[test]
    fn scan_finds_nested_repositories_worktree_files_and_drivers() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let ws = dir.path().canonicalize()?;
        for repo in [".git", "vendor/sub/.git", ".git/modules/lib"] {
            std::fs::create_dir_all(ws.join(repo).join("objects"))?;
            std::fs::create_dir_all(ws.join(repo).join("refs"))?;
            std::fs::write(ws.join(repo).join("HEAD"), "ref: refs/heads/main\n")?;
        }
        std::fs::create_dir_all(ws.join("not-a-repo/.git"))?;
        std::fs::create_dir_all(ws.join(".git/hooks"))?;
        std::fs::write(ws.join(".git/config"), "[core]\n\thooksPath = .githooks\n")?;
        std::fs::create_dir_all(ws.join(".githooks"))?;
        std::fs::write(
            ws.join("vendor/sub/.git/config"),
            "[diff \"x\"]\n\ttextconv = evil\n[core]\n\tfsmonitor = evil\n",
        )?;
        std::fs::write(ws.join(".git/modules/lib/config"), "")?;
        std::fs::create_dir_all(ws.join("lib"))?;
        std::fs::write(ws.join("lib/.git"), "gitdir: ../.git/modules/lib\n")?;
        std::fs::create_dir_all(ws.join("node_modules/x/.git"))?;
        let protected = scan(&ScanInput {
            workspace: &ws,
            home: None,
            global_configs: Vec::new(),
            extra_read_only: &[],
            create_missing: true,
            create_agents: true,
        });
        let rel = |paths: &[PathBuf]| -> Vec<String> {
            paths
                .iter()
                .map(|p| p.strip_prefix(&ws).unwrap_or(p).display().to_string())
                .collect()
        };
        assert_eq!(
            rel(&protected.read_only),
            vec![
                ".agents",
                ".git/config",
                ".git/hooks",
                ".git/modules/lib/config",
                ".git/modules/lib/hooks",
                ".githooks",
                "lib/.git",
                "vendor/sub/.git/config",
                "vendor/sub/.git/hooks",
            ]
        );
        assert_eq!(
            rel(&protected.pinned),
            vec!["", ".git", "lib", "vendor", "vendor/sub", "vendor/sub/.git"]
        );
        assert_eq!(
            protected.git,
            vec![
                ("core.fsmonitor".to_string(), "false".to_string()),
                ("diff.x.textconv".to_string(), "cat".to_string()),
            ]
        );
        Ok(())
    }
}
