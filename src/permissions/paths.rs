//! Paths named by shell commands, resolved the way the command will see them (§5.1).
//!
//! A path argument is checked as written (lexically normalized: `.` and `..` removed) and as
//! resolved on disk (symlinks and `..` followed physically; for a path that does not exist
//! yet, its deepest existing ancestor is resolved). Relative paths are tried against the
//! starting directory and every literal `cd` target of the command line. Globs are expanded
//! against the file system (at most [`MAX_GLOB_MATCHES`] matches) and also checked as
//! written, so `cat ~/.ssh/*` names `~/.ssh/**` even before anything is listed.
//!
//! A [`Resolver`] lives for one decision: it resolves each directory once and lists it once
//! to learn which of its entries are symlinks, so a command line naming many files in a few
//! directories costs a few system calls, not a few per file.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use super::shell::PathArg;

/// Glob matches examined per argument.
pub(crate) const MAX_GLOB_MATCHES: usize = 256;
/// Directories relative paths are tried against (the start directory and `cd` targets).
pub(crate) const MAX_BASES: usize = 8;

/// Resolves paths for one decision, caching directories.
#[derive(Debug, Default)]
pub(crate) struct Resolver {
    directories: HashMap<std::ffi::OsString, PathBuf>,
    /// Per resolved directory, the names of its entries that are symlinks (`None` when the
    /// directory is too large or unreadable to list: then each name is checked alone).
    symlinks: HashMap<std::ffi::OsString, Option<HashSet<std::ffi::OsString>>>,
}

/// Directories with more entries than this are not listed.
const MAX_LISTED: usize = 512;

/// The names of the symlinks in `dir`; an empty set when it does not exist.
fn list_symlinks(dir: &Path) -> Option<HashSet<std::ffi::OsString>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(HashSet::new()),
        Err(_) => return None,
    };
    let mut names = HashSet::new();
    for (i, entry) in entries.enumerate() {
        let entry = entry.ok()?;
        if i >= MAX_LISTED {
            return None;
        }
        if entry.file_type().ok()?.is_symlink() {
            names.insert(entry.file_name());
        }
    }
    Some(names)
}

impl Resolver {
    /// Every path `arg` may refer to, lexical and resolved. `root` maps the variable a path
    /// starts with (`HOME`, `AGENT_HOME`, a variable the line assigns) to the directories it
    /// may hold; none means the path cannot be checked (no candidates).
    pub(crate) fn candidates(
        &mut self,
        arg: &PathArg,
        bases: &[PathBuf],
        root: impl Fn(&str) -> Vec<PathBuf>,
    ) -> Vec<PathBuf> {
        let mut written: Vec<(PathBuf, &str)> = Vec::new();
        if let Some(name) = &arg.root {
            written.extend(root(name).into_iter().map(|dir| (dir, arg.text.as_str())));
        } else if let Some(rest) = arg.text.strip_prefix('/') {
            written.push((PathBuf::from("/"), rest));
        } else {
            written.extend(bases.iter().map(|base| (base.clone(), arg.text.as_str())));
        }
        let mut all = Vec::new();
        for (base, rest) in written {
            if arg.glob {
                self.expand_glob(&base, rest, &mut all);
            }
            let path = base.join(rest);
            let lexical = normalize(&path);
            let resolved = self.resolve(&path);
            if resolved != lexical {
                all.push(resolved);
            }
            all.push(lexical);
        }
        all
    }

    /// The canonical form of a directory, resolved once per decision.
    fn directory(&mut self, dir: &Path) -> PathBuf {
        if let Some(found) = self.directories.get(dir.as_os_str()) {
            return found.clone();
        }
        let resolved = resolve(dir);
        self.directories
            .insert(dir.as_os_str().to_os_string(), resolved.clone());
        resolved
    }

    /// The physical path: the resolved parent directory (cached) joined with the last
    /// component, followed if it is a symlink.
    pub(crate) fn resolve(&mut self, path: &Path) -> PathBuf {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return resolve(path);
        };
        let directory = self.directory(parent);
        let joined = directory.join(name);
        if self.is_symlink(&directory, name) {
            resolve(&joined)
        } else {
            joined
        }
    }

    /// Whether `dir/name` is a symlink, from one listing of `dir` per decision.
    fn is_symlink(&mut self, dir: &Path, name: &std::ffi::OsStr) -> bool {
        let listed = self
            .symlinks
            .entry(dir.as_os_str().to_os_string())
            .or_insert_with(|| list_symlinks(dir));
        match listed {
            Some(names) => names.contains(name),
            None => std::fs::symlink_metadata(dir.join(name))
                .is_ok_and(|meta| meta.file_type().is_symlink()),
        }
    }

    /// Expands `pattern` (a glob, quoted metacharacters escaped) under `base` as bash would
    /// (no `globstar`: `**` is `*`; names starting with `.` only match a literal dot),
    /// pushing each match as written and as resolved. Directory listings give the entry
    /// types, so only symlinks cost an extra system call.
    fn expand_glob(&mut self, base: &Path, pattern: &str, into: &mut Vec<PathBuf>) {
        let options = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: true,
        };
        let mut level: Vec<(PathBuf, bool)> = vec![(base.to_path_buf(), false)];
        for component in pattern.split('/').filter(|c| !c.is_empty()) {
            if !component.contains(['*', '?', '[']) || is_escaped_literal(component) {
                let literal = unescape_glob(component);
                level = level
                    .into_iter()
                    .map(|(p, _)| (p.join(&literal), false))
                    .collect();
                continue;
            }
            let Ok(matcher) = glob::Pattern::new(&component.replace("**", "*")) else {
                return;
            };
            let mut next = Vec::new();
            for (dir, _) in &level {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    continue;
                };
                for entry in entries.flatten().take(MAX_GLOB_MATCHES * 4) {
                    let name = entry.file_name();
                    if matcher.matches_with(&name.to_string_lossy(), options) {
                        let symlink = entry.file_type().is_ok_and(|t| t.is_symlink());
                        next.push((dir.join(&name), symlink));
                    }
                }
            }
            next.truncate(MAX_GLOB_MATCHES);
            level = next;
        }
        for (path, symlink) in level {
            let resolved = if symlink {
                resolve(&path)
            } else {
                match (path.parent(), path.file_name()) {
                    (Some(parent), Some(name)) => self.directory(parent).join(name),
                    _ => resolve(&path),
                }
            };
            into.push(resolved);
            into.push(path);
        }
    }
}

/// A component whose only metacharacters are escapes (`[*]`).
fn is_escaped_literal(component: &str) -> bool {
    let stripped = component
        .replace("[*]", "")
        .replace("[?]", "")
        .replace("[[]", "")
        .replace("[]]", "");
    !stripped.contains(['*', '?', '['])
}

/// Removes [`glob::Pattern::escape`]'s escapes.
fn unescape_glob(component: &str) -> String {
    component
        .replace("[*]", "*")
        .replace("[?]", "?")
        .replace("[[]", "[")
        .replace("[]]", "]")
}

/// Removes `.` and resolves `..` without touching the disk.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let at_root = out.has_root() && out.parent().is_none();
                if !out.pop() && !at_root {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Follows symlinks: the canonical path, or for a path that does not exist, the canonical
/// deepest existing ancestor joined with the rest.
pub(crate) fn resolve(path: &Path) -> PathBuf {
    if let Ok(canonical) = path.canonicalize() {
        return canonical;
    }
    let mut rest = Vec::new();
    let mut current = path;
    while let Some(parent) = current.parent() {
        if let Some(name) = current.file_name() {
            rest.push(name.to_os_string());
        }
        if let Ok(canonical) = parent.canonicalize() {
            let mut resolved = canonical;
            for name in rest.iter().rev() {
                resolved.push(name);
            }
            return resolved;
        }
        current = parent;
    }
    path.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical() {
        assert_eq!(
            normalize(Path::new("/w/a/../b/./c")),
            PathBuf::from("/w/b/c")
        );
        assert_eq!(normalize(Path::new("/w/../../x")), PathBuf::from("/x"));
    }

    #[test]
    fn symlinks_and_globs() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path().canonicalize()?;
        std::fs::create_dir_all(root.join("secret"))?;
        std::fs::write(root.join("secret/key"), "k")?;
        std::os::unix::fs::symlink(root.join("secret"), root.join("link"))?;
        let arg = PathArg {
            root: None,
            text: "link/key".into(),
            glob: false,
        };
        let found =
            Resolver::default().candidates(&arg, std::slice::from_ref(&root), |_| Vec::new());
        assert!(found.contains(&root.join("secret/key")), "{found:?}");
        let arg = PathArg {
            root: None,
            text: "link/new".into(),
            glob: false,
        };
        let found =
            Resolver::default().candidates(&arg, std::slice::from_ref(&root), |_| Vec::new());
        assert!(found.contains(&root.join("secret/new")), "{found:?}");
        std::fs::create_dir_all(root.join("secret/inner"))?;
        std::os::unix::fs::symlink(root.join("secret/inner"), root.join("link2"))?;
        let arg = PathArg {
            root: None,
            text: "link2/../key".into(),
            glob: false,
        };
        let found =
            Resolver::default().candidates(&arg, std::slice::from_ref(&root), |_| Vec::new());
        assert!(found.contains(&root.join("key")), "as written: {found:?}");
        assert!(
            found.contains(&root.join("secret/key")),
            "physically: {found:?}"
        );
        let arg = PathArg {
            root: Some("HOME".into()),
            text: "sec*/k?y".into(),
            glob: true,
        };
        let found = Resolver::default().candidates(&arg, &[], |name| {
            if name == "HOME" {
                vec![root.clone()]
            } else {
                Vec::new()
            }
        });
        assert!(found.contains(&root.join("secret/key")), "{found:?}");
        Ok(())
    }
}
