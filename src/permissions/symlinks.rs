//! Symlinks to secrets under a directory tree, for recursive readers that follow links
//! (`grep -R`, `rg -L`, `find -L`): the links are on disk when the command is rated, so a
//! search that would follow one into `~/.ssh` is found before it runs (issue 15). Unlike a
//! path built at run time, this needs no guessing.
//!
//! The walk follows symlinked directories as the reader would (each real directory once),
//! and stops after [`MAX_ENTRIES`] entries: a tree too large to check is reported as such, so
//! the caller can fail closed.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Directory entries examined at most per decision.
pub(crate) const MAX_ENTRIES: usize = 20_000;

/// What a walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Finding {
    /// The link at `link` resolves to `target`, which is or holds a path `denied` returns a
    /// reason for.
    Link {
        link: PathBuf,
        target: PathBuf,
        reason: String,
    },
    /// The tree has more than [`MAX_ENTRIES`] entries.
    TooLarge,
}

/// The first symlink under `roots` whose target `denied` names (the target itself, or a
/// directory holding a denied location), walking through symlinked directories.
pub(crate) fn find_link_to_secret(
    roots: &[PathBuf],
    denied: &dyn Fn(&Path) -> Option<String>,
) -> Option<Finding> {
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut queue: Vec<PathBuf> = roots.iter().filter(|r| r.is_dir()).cloned().collect();
    let mut entries = 0;
    while let Some(dir) = queue.pop() {
        let Ok(real) = dir.canonicalize() else {
            continue;
        };
        if !seen.insert(real) {
            continue;
        }
        let Ok(list) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in list.flatten() {
            entries += 1;
            if entries > MAX_ENTRIES {
                return Some(Finding::TooLarge);
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_symlink() {
                let Ok(target) = path.canonicalize() else {
                    continue;
                };
                if let Some(reason) = denied(&target) {
                    return Some(Finding::Link {
                        link: path,
                        target,
                        reason,
                    });
                }
                if target.is_dir() {
                    queue.push(path);
                }
            } else if kind.is_dir() {
                queue.push(path);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn finds_links_into_secrets_through_linked_directories() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        let secret = base.join("home/.ssh");
        let ws = base.join("ws");
        let other = base.join("other");
        std::fs::create_dir_all(&secret)?;
        std::fs::create_dir_all(ws.join("src"))?;
        std::fs::create_dir_all(&other)?;
        std::fs::write(secret.join("id_rsa"), "k")?;
        let denied = |p: &Path| {
            (p.starts_with(&secret) || secret.starts_with(p)).then(|| "SSH keys".to_string())
        };
        assert_eq!(
            find_link_to_secret(std::slice::from_ref(&ws), &denied),
            None
        );
        std::os::unix::fs::symlink(&other, ws.join("src/ext"))?;
        std::os::unix::fs::symlink(&ws, ws.join("loop"))?;
        std::os::unix::fs::symlink(base.join("home"), other.join("home"))?;
        assert_eq!(
            find_link_to_secret(std::slice::from_ref(&ws), &denied),
            Some(Finding::Link {
                link: ws.join("src/ext/home"),
                target: base.join("home"),
                reason: "SSH keys".into(),
            })
        );
        Ok(())
    }
}
