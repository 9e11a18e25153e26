//! The system `git`, run on the shadow repository only and hermetically: its own `GIT_DIR`
//! (under `$AGENT_HOME/checkpoints/`), the workspace as `GIT_WORK_TREE`, a cleared
//! environment, no system or global config, no hooks, no fsmonitor, no attributes file, no
//! automatic gc. The user's repository (its index, refs, stash, hooks, config) is never
//! opened: with `GIT_DIR` set, git does not look for a `.git` in the work tree.
//!
//! The workspace's `.gitattributes` files are still read by git; the shadow repository's
//! `info/attributes` (which takes precedence, see [`ATTRIBUTES`]) turns off every conversion
//! and filter, so blobs hold the files' bytes exactly.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `$GIT_DIR/info/attributes` of the shadow repository: no end-of-line conversion, no
/// clean/smudge filter, no `$Id$` expansion, no re-encoding, whatever the workspace's
/// `.gitattributes` say (gitattributes(5): this file has the highest precedence).
pub(crate) const ATTRIBUTES: &str = "* -text -filter -ident -working-tree-encoding -diff -merge\n";

/// Settings passed with `-c` on every call (they win over the repository's config file).
const CONFIG: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.filemode=true",
    "core.ignorecase=false",
    "core.precomposeunicode=false",
    "core.quotepath=false",
    "core.protectNTFS=false",
    "core.protectHFS=false",
    "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null",
    "core.splitIndex=false",
    "core.sparseCheckout=false",
    "core.preloadIndex=true",
    "core.looseCompression=1",
    "gc.auto=0",
    "maintenance.auto=false",
    "commit.gpgSign=false",
];

/// A failed git call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`git {command}` failed: {message}")]
pub struct GitError {
    /// The subcommand and its first arguments.
    pub(crate) command: String,
    /// What git said on stderr (its last lines), or why it could not run.
    pub(crate) message: String,
}

/// Runs git on one shadow repository.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    program: PathBuf,
    git_dir: PathBuf,
    work_tree: PathBuf,
    /// `PATH` for git itself (it may run its own helpers).
    path: OsString,
}

impl Git {
    pub(crate) fn new(program: PathBuf, git_dir: PathBuf, work_tree: PathBuf) -> Self {
        let path = program
            .parent()
            .map(|dir| dir.as_os_str().to_os_string())
            .unwrap_or_default();
        Self {
            program,
            git_dir,
            work_tree,
            path,
        }
    }

    /// The command for `args`, with the hermetic environment.
    fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut command = Command::new(&self.program);
        command
            .env_clear()
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .current_dir(&self.git_dir);
        self.hermetic(&mut command);
        command.args(args);
        command
    }

    /// Creates the (bare) shadow repository at `GIT_DIR` (git refuses `GIT_WORK_TREE` here).
    ///
    /// # Errors
    /// [`GitError`] when git cannot create it.
    pub(crate) fn init(&self) -> Result<(), GitError> {
        let fail = |message: String| GitError {
            command: "init --bare".into(),
            message,
        };
        let parent = self.git_dir.parent().unwrap_or(Path::new("/"));
        let mut command = Command::new(&self.program);
        command.env_clear().current_dir(parent);
        self.hermetic(&mut command);
        command.args(["init", "--bare", "-q"]).arg(&self.git_dir);
        let output = command
            .output()
            .map_err(|e| fail(format!("cannot run {}: {e}", self.program.display())))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(fail(last_lines(&output.stderr, output.status)))
        }
    }

    /// The environment and settings every call gets.
    fn hermetic(&self, command: &mut Command) {
        command
            .env("PATH", &self.path)
            .env("HOME", &self.git_dir)
            .env("LC_ALL", "C")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_AUTHOR_NAME", "agent")
            .env("GIT_AUTHOR_EMAIL", "agent@localhost")
            .env("GIT_COMMITTER_NAME", "agent")
            .env("GIT_COMMITTER_EMAIL", "agent@localhost")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for setting in CONFIG {
            command.arg("-c").arg(setting);
        }
    }

    /// Runs `git ARGS`, feeding `input` on stdin; returns stdout.
    ///
    /// # Errors
    /// [`GitError`] when git cannot start or exits non-zero (with its stderr).
    pub(crate) fn run<S: AsRef<OsStr>>(
        &self,
        args: &[S],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, GitError> {
        let name = args
            .iter()
            .take(2)
            .map(|a| a.as_ref().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        let fail = |message: String| GitError {
            command: name.clone(),
            message,
        };
        let mut command = self.command(args);
        if input.is_some() {
            command.stdin(Stdio::piped());
        }
        let mut child = command
            .spawn()
            .map_err(|e| fail(format!("cannot run {}: {e}", self.program.display())))?;
        let stdin = child.stdin.take();
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let (out, err) = std::thread::scope(|scope| {
            if let (Some(mut stdin), Some(bytes)) = (stdin, input) {
                scope.spawn(move || {
                    // A git that exits early closes the pipe; its status says why.
                    let _ = stdin.write_all(bytes);
                });
            }
            let err = scope.spawn(move || {
                let mut text = Vec::new();
                if let Some(stderr) = stderr.as_mut() {
                    let _ = stderr.read_to_end(&mut text);
                }
                text
            });
            let mut out = Vec::new();
            if let Some(stdout) = stdout.as_mut() {
                let _ = stdout.read_to_end(&mut out);
            }
            (out, err.join().unwrap_or_default())
        });
        let status = child.wait().map_err(|e| fail(e.to_string()))?;
        if status.success() {
            Ok(out)
        } else {
            Err(fail(last_lines(&err, status)))
        }
    }

    /// The command for `git ARGS` to run in the background: hermetic like every call, with
    /// no input and its output discarded (nobody may be left to read it).
    pub(crate) fn background<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut command = self.command(args);
        command.stdout(Stdio::null()).stderr(Stdio::null());
        command
    }

    /// Runs `git ARGS` and returns stdout as trimmed text.
    ///
    /// # Errors
    /// As [`Git::run`].
    pub(crate) fn text<S: AsRef<OsStr>>(
        &self,
        args: &[S],
        input: Option<&[u8]>,
    ) -> Result<String, GitError> {
        let out = self.run(args, input)?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }
}

/// The last few lines git wrote on stderr, or the exit status when it wrote nothing.
fn last_lines(stderr: &[u8], status: std::process::ExitStatus) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return format!("git exited with {status}");
    }
    lines[lines.len().saturating_sub(3)..].join("; ")
}

/// The `git` program on `path` (a `PATH` value), without running anything.
pub(crate) fn find(path: Option<&str>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?).find_map(|dir| {
        let candidate = dir.join("git");
        let meta = std::fs::metadata(&candidate).ok()?;
        (meta.is_file() && meta.permissions().mode() & 0o111 != 0).then_some(candidate)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_git_on_the_path_only() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(find(Some(&dir.path().to_string_lossy())), None);
        assert_eq!(find(None), None);
        let fake = dir.path().join("git");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        assert_eq!(find(Some(&dir.path().to_string_lossy())), None);
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        assert_eq!(find(Some(&dir.path().to_string_lossy())), Some(fake));
    }
}
