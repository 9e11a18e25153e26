//! Where a run's files are: the workspace and working directory (SPEC §2.3), the user's home
//! and `$AGENT_HOME` (§2.2), and the files and directories under them.

use std::path::{Path, PathBuf};

use super::ConfigError;

/// The directories of one run, canonical where they exist.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Paths {
    /// Workspace root (§2.3), canonical.
    pub(crate) workspace: PathBuf,
    /// Directory the agent was started in (or `-C DIR`), canonical.
    pub(crate) cwd: PathBuf,
    /// The user's home directory, when known (for `~` in rules and writable roots).
    pub(crate) home: Option<PathBuf>,
    /// `$AGENT_HOME` (default `~/.agents`).
    pub(crate) agent_home: PathBuf,
}

/// The user's config file: `$AGENT_HOME/config.toml` (SPEC §2.2).
pub fn user_file(agent_home: &Path) -> PathBuf {
    agent_home.join("config.toml")
}

/// A workspace's project config file: `<workspace>/.agents/config.toml` (SPEC §2.2).
pub fn project_file(workspace: &Path) -> PathBuf {
    workspace.join(".agents").join("config.toml")
}

impl Paths {
    /// [`user_file`] of this run.
    pub fn user_file(&self) -> PathBuf {
        user_file(&self.agent_home)
    }

    /// [`project_file`] of this run's workspace.
    pub fn project_file(&self) -> PathBuf {
        project_file(&self.workspace)
    }

    /// `$AGENT_HOME/sessions`: the session files (§8.3).
    pub(crate) fn sessions_dir(&self) -> PathBuf {
        self.agent_home.join("sessions")
    }

    /// `$AGENT_HOME/history`: the REPL's input history.
    pub(crate) fn history_file(&self) -> PathBuf {
        self.agent_home.join("history")
    }

    /// The directories of `$AGENT_HOME` and the workspace, for `agent_home` relative to `cwd`
    /// and `directory` (`-C DIR`) as given.
    ///
    /// # Errors
    /// [`ConfigError::Directory`] when a directory cannot be resolved,
    /// [`ConfigError::Invalid`] when `-C` names something that is not a directory.
    pub(crate) fn resolve(
        cwd: &Path,
        directory: Option<&Path>,
        home: Option<PathBuf>,
        agent_home: PathBuf,
    ) -> Result<Self, ConfigError> {
        let (cwd, workspace) = resolve_dirs(cwd, directory)?;
        Ok(Self {
            workspace,
            cwd,
            home,
            agent_home,
        })
    }
}

/// `path` made absolute against `base`.
pub(crate) fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// The working directory and workspace root (§2.3): `-C DIR` makes DIR both; otherwise the
/// workspace is the nearest ancestor of the current directory holding `.git`, else the
/// current directory itself.
fn resolve_dirs(cwd: &Path, directory: Option<&Path>) -> Result<(PathBuf, PathBuf), ConfigError> {
    let canonical = |path: &Path| {
        path.canonicalize()
            .map_err(|source| ConfigError::Directory {
                path: path.to_path_buf(),
                source,
            })
    };
    if let Some(dir) = directory {
        let dir = canonical(&absolute(cwd, dir))?;
        if !dir.is_dir() {
            return Err(ConfigError::Invalid(format!(
                "`{}` is not a directory",
                dir.display()
            )));
        }
        return Ok((dir.clone(), dir));
    }
    let cwd = canonical(cwd)?;
    let workspace = cwd
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(&cwd)
        .to_path_buf();
    Ok((cwd, workspace))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_is_nearest_git_ancestor() -> Result<(), Box<dyn std::error::Error>> {
        let root = tempfile::tempdir()?;
        let root_path = root.path().canonicalize()?;
        std::fs::create_dir_all(root_path.join(".git"))?;
        std::fs::create_dir_all(root_path.join("a/b"))?;
        let (cwd, workspace) = resolve_dirs(&root_path.join("a/b"), None)?;
        assert_eq!(cwd, root_path.join("a/b"));
        assert_eq!(workspace, root_path);
        let (_, workspace) = resolve_dirs(&root_path, Some(Path::new("a")))?;
        assert_eq!(workspace, root_path.join("a"));
        Ok(())
    }
}
