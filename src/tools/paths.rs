//! Path resolution for the file tools (SPEC §4.1: "paths are resolved against the workspace;
//! symlinks are resolved before permission checks").
//!
//! A path the model names is taken relative to [`ToolContext::cwd`] (absolute paths as
//! given, a leading `~/` as the home directory), normalized lexically (`.` and `..`, as `cd`
//! does in a shell: `link/..` is the directory holding `link`), then every symlink in it is
//! followed, component by component, the way the kernel would: a dangling final symlink
//! resolves to its (missing) target, a symlinked directory in the middle is followed too.
//! The tools then work on that resolved path only and the permission engine rates it, so
//! what is checked and approved is where the bytes really go.
//!
//! Escapes: a path that the model names inside the workspace but that resolves outside it
//! through a symlink is refused outright for the writing tools (`write_file`,
//! `str_replace`) with "path resolves outside the workspace" (case c-symlink-escape); a
//! path named outside on purpose (`/tmp/x`) is not refused but rated like any outside path
//! (ask). For `read_file` the same escape is not refused: the resolved outside path goes to
//! the permission engine, which asks (or denies a secret such as `~/.ssh/id_rsa`), because
//! reading through a symlinked vendor directory is common and harmless once approved.
//! A symlink that stays inside the workspace works as if the target had been named.
//!
//! [`ToolContext::cwd`]: super::ToolContext::cwd

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::ToolErrorKind;
use super::{ToolContext, ToolError};

/// Symlinks followed before giving up (Linux `MAXSYMLINKS`).
const MAX_SYMLINK_HOPS: usize = 40;

/// A path named by the model, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// Absolute, lexically normalized, symlinks not followed: what the model named.
    pub(crate) named: PathBuf,
    /// Absolute with every symlink followed: where the bytes are.
    pub(crate) real: PathBuf,
    /// `named` relative to the workspace when inside it, else absolute; for messages.
    pub(crate) shown: String,
    /// `named` lies inside the workspace.
    pub(crate) named_inside: bool,
    /// `real` lies inside the workspace.
    pub(crate) real_inside: bool,
}

impl Resolved {
    /// A path named inside the workspace that really lies outside it.
    pub(crate) fn escapes(&self) -> bool {
        self.named_inside && !self.real_inside
    }

    /// Refuses an escape (for tools that write).
    ///
    /// # Errors
    /// `outside workspace` when [`Resolved::escapes`].
    pub(crate) fn refuse_escape(&self) -> Result<(), ToolError> {
        if !self.escapes() {
            return Ok(());
        }
        Err(ToolError::new(
            ToolErrorKind::OutsideWorkspace,
            format!(
                "path resolves outside the workspace: `{}` leads to `{}` through a symlink; \
                 writes through symlinks that leave the workspace are refused, edit files \
                 inside the workspace instead",
                self.shown,
                self.real.display()
            ),
        ))
    }
}

/// Resolves `raw` (the model's `path` argument) for a tool running with `ctx`.
///
/// # Errors
/// `invalid path` for an empty path or one holding a NUL byte; `invalid path` when
/// symlinks loop (more than 40 hops).
pub(crate) fn resolve(raw: &str, ctx: &ToolContext<'_>) -> Result<Resolved, ToolError> {
    resolve_in(raw, ctx.cwd, ctx.workspace, dirs::home_dir().as_deref())
}

/// [`resolve`] for a tool that writes: a path that escapes the workspace through a symlink is
/// refused ([`Resolved::refuse_escape`]).
///
/// A name holding a control character (a newline, an escape sequence) is refused too: the
/// model meant a plain file, and such a name is hard for the user to see, type or delete,
/// and rewrites their terminal when listed.
///
/// # Errors
/// As [`resolve`], `invalid path` for a control character, and `outside workspace` for an
/// escape.
pub(crate) fn resolve_for_write(raw: &str, ctx: &ToolContext<'_>) -> Result<Resolved, ToolError> {
    let trimmed = raw.trim();
    if let Some(c) = trimmed.chars().find(|c| c.is_control() && *c != '\0') {
        return Err(ToolError::new(
            ToolErrorKind::InvalidPath,
            format!(
                "`{}` holds the control character {}; pass a plain file path",
                trimmed.escape_debug(),
                c.escape_unicode()
            ),
        ));
    }
    let resolved = resolve(raw, ctx)?;
    resolved.refuse_escape()?;
    Ok(resolved)
}

/// [`resolve`] with explicit directories (`workspace` canonical, `cwd` absolute).
///
/// # Errors
/// As [`resolve`].
pub(crate) fn resolve_in(
    raw: &str,
    cwd: &Path,
    workspace: &Path,
    home: Option<&Path>,
) -> Result<Resolved, ToolError> {
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Err(ToolError::new(
            ToolErrorKind::InvalidPath,
            "`path` is empty; pass a file path relative to the workspace",
        ));
    }
    if trimmed.contains('\0') {
        return Err(ToolError::new(
            ToolErrorKind::InvalidPath,
            format!(
                "`{}` holds a NUL byte; pass a plain file path",
                trimmed.escape_debug()
            ),
        ));
    }
    let expanded = match (trimmed.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if trimmed == "~" => home.map_or_else(|| PathBuf::from(trimmed), Path::to_path_buf),
        _ => PathBuf::from(trimmed),
    };
    let named = normalize(&cwd.join(expanded));
    let real = follow_symlinks(&named).map_err(|hops| {
        ToolError::new(
            ToolErrorKind::InvalidPath,
            format!(
                "`{trimmed}` has too many levels of symbolic links ({hops}); fix the link loop"
            ),
        )
    })?;
    let shown = match named.strip_prefix(workspace) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => named.display().to_string(),
    };
    Ok(Resolved {
        named_inside: named.starts_with(workspace),
        real_inside: real.starts_with(workspace),
        named,
        real,
        shown,
    })
}

/// Removes `.` and resolves `..` lexically (`/a/b/../c` → `/a/c`; `..` at the root stays at
/// the root). `path` must be absolute.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Follows every symlink in the absolute `path`, component by component, as the kernel
/// would; components that do not exist are kept as they are. `Err(hops)` on a loop.
fn follow_symlinks(path: &Path) -> Result<PathBuf, usize> {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    push_front_components(&mut pending, path);
    let mut out = PathBuf::from("/");
    let mut hops = 0;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            out.pop();
            continue;
        }
        let candidate = out.join(&name);
        let target = match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => std::fs::read_link(&candidate).ok(),
            _ => None,
        };
        match target {
            Some(target) => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(hops);
                }
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                push_front_components(&mut pending, &target);
            }
            None => out = candidate,
        }
    }
    Ok(out)
}

/// Puts the normal and `..` components of `path` in front of `pending`, in order.
fn push_front_components(pending: &mut VecDeque<OsString>, path: &Path) {
    let names: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    for name in names.into_iter().rev() {
        pending.push_front(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::os::unix::fs::symlink;

    struct Dirs {
        _root: tempfile::TempDir,
        ws: PathBuf,
        outside: PathBuf,
    }

    fn dirs() -> Dirs {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let ws = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        Dirs {
            _root: root,
            ws,
            outside,
        }
    }

    fn resolve(d: &Dirs, raw: &str) -> Resolved {
        resolve_in(raw, &d.ws, &d.ws, Some(Path::new("/home/u"))).unwrap()
    }

    #[test]
    fn relative_absolute_home_and_dots() {
        let d = dirs();
        let r = resolve(&d, "./src/../src/a.rs");
        assert_eq!(r.real, d.ws.join("src/a.rs"));
        assert_eq!(r.shown, "src/a.rs");
        assert!(r.named_inside && r.real_inside);
        let r = resolve_in("a.rs", &d.ws.join("src"), &d.ws, None).unwrap();
        assert_eq!(r.shown, "src/a.rs");
        let r = resolve(&d, "/tmp/../etc/x");
        assert_eq!(
            (r.real.clone(), r.named_inside, r.escapes()),
            ("/etc/x".into(), false, false)
        );
        assert_eq!(resolve(&d, "~/notes").named, PathBuf::from("/home/u/notes"));
        assert_eq!(resolve(&d, "../../../..").named, PathBuf::from("/"));
    }

    #[test]
    fn symlinks_out_of_the_workspace_escape() {
        let d = dirs();
        symlink(d.outside.join("victim.txt"), d.ws.join("notes.txt")).unwrap();
        std::fs::write(d.outside.join("victim.txt"), "v").unwrap();
        symlink(d.outside.join("new.txt"), d.ws.join("draft.txt")).unwrap();
        symlink(&d.outside, d.ws.join("linkdir")).unwrap();
        for (raw, real) in [
            ("notes.txt", d.outside.join("victim.txt")),
            ("draft.txt", d.outside.join("new.txt")),
            ("linkdir/cron.d/x", d.outside.join("cron.d/x")),
            ("linkdir/sub/../y", d.outside.join("y")),
        ] {
            let r = resolve(&d, raw);
            assert_eq!(r.real, real, "{raw}");
            assert!(r.escapes(), "{raw}");
            let err = r.refuse_escape().unwrap_err();
            assert!(
                err.message
                    .starts_with("path resolves outside the workspace"),
                "{err}"
            );
        }
        // `..` is resolved lexically first (like `cd` in a shell), so this stays inside.
        let r = resolve(&d, "linkdir/../src/a.rs");
        assert_eq!((r.real, r.named_inside), (d.ws.join("src/a.rs"), true));
    }

    #[test]
    fn symlinks_inside_the_workspace_work() {
        let d = dirs();
        std::fs::write(d.ws.join("src/real.rs"), "x").unwrap();
        symlink("src/real.rs", d.ws.join("alias.rs")).unwrap();
        symlink("../src", d.ws.join("src/self")).unwrap();
        let r = resolve(&d, "alias.rs");
        assert_eq!(
            (r.real.clone(), r.escapes()),
            (d.ws.join("src/real.rs"), false)
        );
        let r = resolve(&d, "src/self/self/real.rs");
        assert_eq!(r.real, d.ws.join("src/real.rs"));
        // Named outside, really inside: rated as inside.
        symlink(&d.ws, d.outside.join("ws-link")).unwrap();
        let r = resolve(&d, d.outside.join("ws-link/src/real.rs").to_str().unwrap());
        assert_eq!((r.named_inside, r.real_inside), (false, true));
    }

    #[test]
    fn loops_and_bad_input_are_errors() {
        let d = dirs();
        symlink("b", d.ws.join("a")).unwrap();
        symlink("a", d.ws.join("b")).unwrap();
        let err = resolve_in("a/x", &d.ws, &d.ws, None).unwrap_err();
        assert!(
            err.message.contains("too many levels of symbolic links"),
            "{err}"
        );
        assert_eq!(
            resolve_in("  ", &d.ws, &d.ws, None).unwrap_err().kind,
            ToolErrorKind::InvalidPath
        );
        assert_eq!(
            resolve_in("a\0b", &d.ws, &d.ws, None).unwrap_err().kind,
            ToolErrorKind::InvalidPath
        );
    }
}
