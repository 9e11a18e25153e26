//! Paths named by shell commands, resolved the way the command will see them (§5.1).
//!
//! A path argument is checked as written (lexically normalized: `.` and `..` removed) and as
//! resolved on disk (symlinks and `..` followed physically; for a path that does not exist
//! yet, its deepest existing ancestor is resolved). Relative paths are tried against the
//! starting directory and every literal `cd` target of the command line. Globs are expanded
//! against the file system (at most [`MAX_GLOB_MATCHES`] matches) and also checked as
//! written, so `cat ~/.ssh/*` names `~/.ssh/**` even before anything is listed.
//!
//! A [`Resolver`] lives for one decision: it remembers resolved directories, so a command
//! line naming many files in a few directories costs one `lstat` per file.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use super::shell::PathArg;

/// Glob matches examined per argument.
pub const MAX_GLOB_MATCHES: usize = 256;
/// Directories relative paths are tried against (the start directory and `cd` targets).
pub const MAX_BASES: usize = 8;

/// Resolves paths for one decision, caching directories.
#[derive(Debug, Default)]
pub struct Resolver {
    directories: HashMap<PathBuf, PathBuf>,
}

impl Resolver {
    /// Every path `arg` may refer to, lexical and resolved. `root` maps the variable a path
    /// starts with (`HOME`, `AGENT_HOME`) to its value; a variable it does not know means the
    /// path cannot be checked (no candidates).
    pub fn candidates(
        &mut self,
        arg: &PathArg,
        bases: &[PathBuf],
        root: impl Fn(&str) -> Option<PathBuf>,
    ) -> Vec<PathBuf> {
        let mut written = Vec::new();
        if let Some(name) = &arg.root {
            let Some(dir) = root(name) else {
                return Vec::new();
            };
            written.push(dir.join(&arg.text));
        } else if arg.text.starts_with('/') {
            written.push(PathBuf::from(&arg.text));
        } else {
            written.extend(bases.iter().map(|base| base.join(&arg.text)));
        }
        let mut all = Vec::new();
        for path in written {
            let lexical = normalize(&path);
            if arg.glob {
                for found in expand_glob(&lexical) {
                    all.push(self.resolve(&found));
                    all.push(found);
                }
            }
            let resolved = self.resolve(&path);
            if resolved != lexical {
                all.push(resolved);
            }
            all.push(lexical);
        }
        all
    }

    /// The physical path: the resolved parent directory (cached) joined with the last
    /// component, followed if it is a symlink.
    pub fn resolve(&mut self, path: &Path) -> PathBuf {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return resolve(path);
        };
        let directory = match self.directories.get(parent) {
            Some(dir) => dir.clone(),
            None => {
                let dir = resolve(parent);
                self.directories.insert(parent.to_path_buf(), dir.clone());
                dir
            }
        };
        let joined = directory.join(name);
        match std::fs::symlink_metadata(&joined) {
            Ok(meta) if meta.file_type().is_symlink() => resolve(&joined),
            _ => joined,
        }
    }
}

/// Removes `.` and resolves `..` without touching the disk.
pub fn normalize(path: &Path) -> PathBuf {
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
pub fn resolve(path: &Path) -> PathBuf {
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

fn expand_glob(pattern: &Path) -> Vec<PathBuf> {
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    // Bash without `globstar` reads `**` as `*`.
    let text = pattern.to_string_lossy().replace("**", "*");
    match glob::glob_with(&text, options) {
        Ok(paths) => paths
            .filter_map(Result::ok)
            .take(MAX_GLOB_MATCHES)
            .collect(),
        Err(_) => Vec::new(),
    }
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
        let found = Resolver::default().candidates(&arg, std::slice::from_ref(&root), |_| None);
        assert!(found.contains(&root.join("secret/key")), "{found:?}");
        let arg = PathArg {
            root: None,
            text: "link/new".into(),
            glob: false,
        };
        let found = Resolver::default().candidates(&arg, std::slice::from_ref(&root), |_| None);
        assert!(found.contains(&root.join("secret/new")), "{found:?}");
        std::fs::create_dir_all(root.join("secret/inner"))?;
        std::os::unix::fs::symlink(root.join("secret/inner"), root.join("link2"))?;
        let arg = PathArg {
            root: None,
            text: "link2/../key".into(),
            glob: false,
        };
        let found = Resolver::default().candidates(&arg, std::slice::from_ref(&root), |_| None);
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
        let found = Resolver::default()
            .candidates(&arg, &[], |name| (name == "HOME").then(|| root.clone()));
        assert!(found.contains(&root.join("secret/key")), "{found:?}");
        Ok(())
    }
}
