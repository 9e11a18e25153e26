//! Recognises failures caused by the sandbox, so the model is told "blocked by sandbox" and
//! does not retry the same write in a loop (issue 4, point 3).
//!
//! Approach, for a confined command:
//! 1. Lines with a permission error (`Permission denied`, `Operation not permitted`,
//!    `EACCES`, `EPERM`, `Invalid cross-device link` — Landlock answers a cross-directory
//!    link or rename with `EXDEV`) are searched for paths: quoted strings (`'x'`, `"x"`,
//!    `` `x' ``, `‘x’`) and bare words starting with `/`, `./`, `../`. When the error line
//!    names none, the two lines before it are searched (`Caused by:` chains).
//! 2. Each path is resolved as the kernel would (relative to the working directory, `..`
//!    removed, symlinks followed, `/proc/self/root` included, via the nearest existing
//!    ancestor for paths not yet created).
//! 3. It is reported as blocked only if the policy does not allow writing there **and** the
//!    agent, which is not confined, could write there itself (`access(2)` with `W_OK` on the
//!    path or its nearest existing ancestor). So an ordinary permission problem (a file owned
//!    by another user) is not blamed on the sandbox. Reads are never blocked by the sandbox,
//!    so a failing operation on a path the agent may write must have been a write.
//! 4. With network off, lines with a network failure (name resolution, unreachable, connect
//!    refused with `EACCES`/`EPERM`, socket creation refused, client-library messages) add
//!    one note naming `--network`.
//! 5. A permission error naming no path at all, in a command that failed, adds a hedged note.
//! 6. With namespaces (issue 15), any failing line (also `No such file or directory`,
//!    `Read-only file system`, `Device or resource busy`) naming a path under a hidden secret
//!    location says the read was blocked; one naming a protected path says the write was
//!    blocked and why; a busy pinned directory says it cannot be moved or removed.

use std::path::{Component, Path, PathBuf};

use super::SandboxMode;
use super::policy::Policy;

const DENIALS: &[&str] = &[
    "permission denied",
    "operation not permitted",
    "eacces",
    "eperm",
    "invalid cross-device link",
    "exdev",
];

const NETWORK_FAILURES: &[&str] = &[
    "network is unreachable",
    "could not resolve host",
    "could not resolve proxy",
    "temporary failure in name resolution",
    "name or service not known",
    "no address associated with hostname",
    "failed to resolve",
    "failed to lookup address",
    "getaddrinfo",
    "eai_again",
    "enotfound",
    "dns error",
    "could not connect to server",
    "couldn't connect to server",
    "failed to connect to",
    "failed to establish a new connection",
    "newconnectionerror",
    "max retries exceeded with url",
    "tcp connect error",
    "unable to access 'http",
    "network error",
    "socket: permission denied",
    "socket: operation not permitted",
    "connect: permission denied",
    "connect: operation not permitted",
    "bind: permission denied",
    "listen: operation not permitted",
    ": /dev/tcp/",
    ": /dev/udp/",
];

/// Failures that can come from the namespaces' mounts.
const MOUNT_FAILURES: &[&str] = &[
    "no such file or directory",
    "read-only file system",
    "erofs",
    "device or resource busy",
    "ebusy",
    "not a directory",
];

/// Most blocked paths named in one result.
const MAX_PATHS: usize = 3;

/// Notes to append to a confined command's result, one line each (empty when nothing looks
/// like the sandbox's doing). `failed` is whether the command exited non-zero.
pub fn explain(text: &str, policy: &Policy, cwd: &Path, failed: bool) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let lower: Vec<String> = lines.iter().map(|l| l.to_ascii_lowercase()).collect();
    let mut notes = Vec::new();
    let network_lines: Vec<bool> = lower
        .iter()
        .map(|l| !policy.network && NETWORK_FAILURES.iter().any(|m| l.contains(m)))
        .collect();
    if network_lines.contains(&true) {
        notes.push(
            "[network access is blocked by the sandbox (network off); if the command needs the network, ask the user to rerun the agent with --network or set `network = true` under [sandbox] in config.toml]"
                .to_string(),
        );
    }
    let mut blocked: Vec<PathBuf> = Vec::new();
    let mut mounts: Vec<String> = Vec::new();
    let mut unexplained = false;
    for (i, line) in lower.iter().enumerate() {
        let denial = DENIALS.iter().any(|m| line.contains(m));
        let mount = policy.namespaces && MOUNT_FAILURES.iter().any(|m| line.contains(m));
        if network_lines[i] || !(denial || mount) {
            continue;
        }
        let mut candidates = paths_in(lines[i]);
        for back in 1..=2 {
            if candidates.is_empty() && i >= back {
                candidates = paths_in(lines[i - back]);
            }
        }
        if candidates.is_empty() && denial {
            unexplained = true;
        }
        for candidate in candidates {
            let real = real_path(&cwd.join(candidate));
            // `git -C sub config ...` names `.git/config` relative to another directory: a
            // protected path ending the same way is the one meant (or, if several do, one of
            // them).
            let ending: Vec<&PathBuf> = policy
                .read_only
                .iter()
                .filter(|p| p.ends_with(candidate))
                .collect();
            let elsewhere = policy.protects(&real).is_none() && !candidate.starts_with('/');
            if elsewhere && ending.len() > 1 && is_change(line) {
                let note = format!(
                    "[write to {candidate} blocked by sandbox: it is protected in every repository of the workspace (read-only for commands, because it decides what git runs); ask the user to make this change]"
                );
                if !mounts.contains(&note) {
                    mounts.push(note);
                }
                continue;
            }
            let real = match ending.first() {
                Some(protected) if elsewhere => (*protected).clone(),
                _ => real,
            };
            // Another process's files (`/proc/1/environ`): Landlock keeps commands out of
            // processes outside the sandbox; nothing to do with writes.
            if real.starts_with("/proc") {
                continue;
            }
            if let Some(note) = mount_note(&real, policy, line) {
                if !mounts.contains(&note) {
                    mounts.push(note);
                }
            } else if denial
                && !policy.allows_write(&real)
                && agent_may_write(&real)
                && !blocked.contains(&real)
            {
                blocked.push(real);
            }
        }
    }
    unexplained &= mounts.is_empty();
    notes.extend(mounts.into_iter().take(MAX_PATHS));
    for path in blocked.iter().take(MAX_PATHS) {
        notes.push(blocked_note(path, policy));
    }
    if blocked.is_empty() && unexplained && failed {
        notes.push(format!(
            "[a permission error above may come from the sandbox ({}): {}; if the command must write elsewhere, ask the user to allow it]",
            policy.mode.name(),
            allowed_summary(policy)
        ));
    }
    notes
}

/// The note for a failure on `path` caused by the namespaces' mounts, if it was.
fn mount_note(path: &Path, policy: &Policy, line: &str) -> Option<String> {
    if let Some(secret) = policy.hides(path) {
        return Some(format!(
            "[read of {} blocked by sandbox: {} is a secret location, hidden from commands (they see it empty and unreadable); do not try to read it another way, ask the user if the task needs it]",
            path.display(),
            secret.display()
        ));
    }
    if !is_change(line) {
        return None;
    }
    if let Some(protected) = policy.protects(path) {
        return Some(format!(
            "[write to {} blocked by sandbox: {} is protected (read-only for commands, because it decides what git or the agent runs); ask the user to make this change]",
            path.display(),
            protected.display()
        ));
    }
    let busy = line.contains("busy");
    if busy && policy.pinned.iter().any(|p| p == path) {
        return Some(format!(
            "[{} cannot be moved or removed inside the sandbox (it holds or leads to a git repository); ask the user to do it]",
            path.display()
        ));
    }
    None
}

/// Whether a (lower-case) error line says a change was refused.
fn is_change(line: &str) -> bool {
    const CHANGES: &[&str] = &[
        "read-only file system",
        "erofs",
        "permission denied",
        "operation not permitted",
        "device or resource busy",
        "ebusy",
    ];
    CHANGES.iter().any(|m| line.contains(m))
}

fn blocked_note(path: &Path, policy: &Policy) -> String {
    match policy.mode {
        SandboxMode::ReadOnly => format!(
            "[write to {} blocked by sandbox (read-only); ask the user to allow writes (--sandbox workspace-write) or do the task without writing files]",
            path.display()
        ),
        _ => format!(
            "[write to {} blocked by sandbox (workspace-write: {}); ask the user to allow it or work inside the workspace]",
            path.display(),
            allowed_summary(policy)
        ),
    }
}

fn allowed_summary(policy: &Policy) -> String {
    if policy.writable.is_empty() {
        return "no writes allowed".to_string();
    }
    let dirs: Vec<String> = policy
        .writable
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    format!("writes allowed only under {}", dirs.join(", "))
}

/// Path-like strings in one line of output.
fn paths_in(line: &str) -> Vec<&str> {
    let mut found = quoted(line);
    if let Some(field) = field_before_denial(line)
        && !found.contains(&field)
    {
        found.push(field);
    }
    for word in line.split_whitespace() {
        let word = word.trim_start_matches(['(', '[']);
        let word = word.trim_end_matches([':', ',', ';', ')', ']', '.']);
        if ["/", "./", "../"].iter().any(|p| word.starts_with(p))
            && !found.contains(&word)
            && !word.contains(['\'', '"', '`', '‘', '’'])
        {
            found.push(word);
        }
    }
    // `/dev/tcp/HOST/PORT` is bash's network redirection, not a file.
    found.retain(|p| {
        !p.is_empty()
            && !p.contains("://")
            && !p.starts_with("/dev/tcp/")
            && !p.starts_with("/dev/udp/")
            && p.len() < 4096
    });
    found
}

/// The `PATH` of `prog: [line N: ]PATH: Permission denied` (the shape of shell and many tool
/// errors): the `: `-separated field just before the error text, never the first field.
fn field_before_denial(line: &str) -> Option<&str> {
    let lower = line.to_ascii_lowercase();
    let at = [
        ": permission denied",
        ": operation not permitted",
        ": no such file or directory",
        ": read-only file system",
        ": device or resource busy",
        ": not a directory",
    ]
    .iter()
    .find_map(|m| lower.find(m))?;
    let before = &line[..at];
    let start = before.rfind(": ")? + 2;
    let mut field = before[start..].trim();
    // `could not write config file .git/config: ...`: the last word, when it is a path.
    if let Some((_, last)) = field.rsplit_once(' ')
        && last.contains('/')
    {
        field = last;
    }
    let plain = !field.is_empty() && !field.contains([' ', '\'', '"', '`', '‘', '[']);
    // `EACCES`, `ERROR`: error codes, not file names.
    let code = field
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    (plain && !code).then_some(field)
}

/// Strings between `'…'`, `"…"`, `` `…' `` and `‘…’`.
fn quoted(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find(['\'', '"', '`', '‘']) {
        let quote = rest[open..].chars().next().unwrap_or('\'');
        let after = &rest[open + quote.len_utf8()..];
        let close = match quote {
            '"' => after.find('"'),
            '‘' => after.find('’'),
            _ => after.find('\''),
        };
        let Some(close) = close else { break };
        let inner = &after[..close];
        if !inner.is_empty() && (!inner.contains(' ') || inner.starts_with('/')) {
            found.push(inner);
        }
        let closing = after[close..].chars().next().map_or(1, char::len_utf8);
        rest = &after[close + closing..];
    }
    found
}

/// `path` as the kernel resolves it: `..` removed, symlinks (up to 8) followed, and the
/// nearest existing ancestor canonicalized for paths that do not exist yet.
pub(crate) fn real_path(path: &Path) -> PathBuf {
    let mut path = normalize(path);
    for _ in 0..8 {
        match std::fs::read_link(&path) {
            Ok(target) => {
                let parent = path.parent().unwrap_or(Path::new("/"));
                path = normalize(&parent.join(target));
            }
            Err(_) => break,
        }
    }
    let mut rest = Vec::new();
    for ancestor in path.ancestors() {
        if let Ok(real) = ancestor.canonicalize() {
            return rest.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        if let Some(name) = ancestor.file_name() {
            rest.push(name.to_os_string());
        }
    }
    path
}

/// `.` and `..` removed without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether this (unconfined) process may write `path`, or create it in its nearest existing
/// ancestor directory.
fn agent_may_write(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Some(existing) = path.ancestors().find(|p| p.symlink_metadata().is_ok()) else {
        return false;
    };
    let mode = if existing == path {
        libc::W_OK
    } else {
        libc::W_OK | libc::X_OK
    };
    let Ok(c_path) = std::ffi::CString::new(existing.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: access(2) reads a NUL-terminated path we own for the duration of the call.
    unsafe { libc::access(c_path.as_ptr(), mode) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn policy(mode: SandboxMode, writable: &[&Path]) -> Policy {
        Policy {
            mode,
            writable: writable.iter().map(|p| p.to_path_buf()).collect(),
            ..Policy::default()
        }
    }

    #[test]
    fn hidden_reads_and_protected_writes_are_explained() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        let base = root.path().canonicalize()?;
        let ws = base.join("ws");
        let ssh = base.join("home/.ssh");
        std::fs::create_dir_all(ws.join(".git/hooks"))?;
        std::fs::create_dir_all(&ssh)?;
        std::fs::write(ssh.join("id_rsa"), "k")?;
        std::os::unix::fs::symlink(&ssh, ws.join("keys"))?;
        let policy = Policy {
            writable: vec![ws.clone()],
            namespaces: true,
            hidden: vec![ssh.clone()],
            read_only: vec![ws.join(".git/hooks")],
            pinned: vec![ws.join(".git")],
            ..Policy::default()
        };
        let text = "cat: keys/id_rsa: No such file or directory
             bash: line 1: .git/hooks/pre-commit: Read-only file system
             mv: cannot move '.git' to 'old': Device or resource busy
             cat: missing.txt: No such file or directory
";
        let notes = explain(text, &policy, &ws, true);
        assert_eq!(notes.len(), 3, "{notes:?}");
        assert!(notes[0].starts_with(&format!(
            "[read of {} blocked by sandbox: {} is a secret location",
            ssh.join("id_rsa").display(),
            ssh.display()
        )));
        assert!(notes[1].starts_with(&format!(
            "[write to {} blocked by sandbox: {} is protected",
            ws.join(".git/hooks/pre-commit").display(),
            ws.join(".git/hooks").display()
        )));
        assert!(notes[2].starts_with(&format!(
            "[{} cannot be moved or removed inside the sandbox",
            ws.join(".git").display()
        )));
        Ok(())
    }

    #[test]
    fn finds_paths_in_common_error_formats() {
        let cases: &[(&str, &[&str])] = &[
            ("bash: line 1: /etc/x: Permission denied", &["/etc/x"]),
            (
                "touch: cannot touch '/etc/x': Permission denied",
                &["/etc/x"],
            ),
            (
                "touch: cannot touch ‘/etc/x’: Permission denied",
                &["/etc/x"],
            ),
            (
                "PermissionError: [Errno 13] Permission denied: '/opt/a b/c'",
                &["/opt/a b/c"],
            ),
            (
                "Error: EACCES: permission denied, open '../up/x'",
                &["../up/x"],
            ),
            (
                "ln: failed to create hard link 'hl' => '/o/f': Invalid cross-device link",
                &["hl", "/o/f"],
            ),
            (
                "mkdir: cannot create directory `/q': Permission denied",
                &["/q"],
            ),
            (
                "error: could not lock config file /r/.gitconfig: Permission denied",
                &["/r/.gitconfig"],
            ),
            ("bash: line 1: out.txt: Permission denied", &["out.txt"]),
            (
                "error: could not write config file .git/config: Device or resource busy",
                &[".git/config"],
            ),
            ("Error: Permission denied (os error 13)", &[]),
            ("fetch https://x.org/y failed: Permission denied", &[]),
        ];
        for (line, expected) in cases {
            assert_eq!(paths_in(line), *expected, "{line}");
        }
    }

    #[test]
    fn write_outside_roots_is_reported() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        let base = root.path().canonicalize()?;
        let ws = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(&ws)?;
        std::fs::create_dir_all(&outside)?;
        std::os::unix::fs::symlink(&outside, ws.join("link"))?;
        let policy = policy(SandboxMode::WorkspaceWrite, &[&ws]);
        let text = "touch: cannot touch '../outside/a': Permission denied\n\
             bash: link/b: Permission denied\n\
             touch: cannot touch 'inside': Permission denied\n";
        let notes = explain(text, &policy, &ws, true);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].starts_with(&format!(
            "[write to {} blocked by sandbox (workspace-write: writes allowed only under {})",
            outside.join("a").display(),
            ws.display()
        )));
        assert!(notes[1].contains(&outside.join("b").display().to_string()));
        Ok(())
    }

    #[test]
    fn read_only_blames_workspace_writes() -> std::io::Result<()> {
        let ws = tempfile::tempdir()?;
        let ws = ws.path().canonicalize()?;
        let policy = policy(SandboxMode::ReadOnly, &[]);
        let notes = explain("bash: out.txt: Permission denied", &policy, &ws, true);
        assert_eq!(
            notes,
            vec![format!(
                "[write to {} blocked by sandbox (read-only); ask the user to allow writes (--sandbox workspace-write) or do the task without writing files]",
                ws.join("out.txt").display()
            )]
        );
        Ok(())
    }

    #[test]
    fn network_failures_get_one_note() {
        let policy = policy(SandboxMode::WorkspaceWrite, &[Path::new("/nowhere")]);
        let text = "curl: (6) Could not resolve host: example.com\nbash: connect: Permission denied\nbash: line 1: /dev/tcp/127.0.0.1/80: Permission denied\n";
        let notes = explain(text, &policy, Path::new("/"), true);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].starts_with("[network access is blocked by the sandbox (network off)"));
        let open = Policy {
            network: true,
            ..policy
        };
        assert!(
            explain(
                "curl: (6) Could not resolve host: x",
                &open,
                Path::new("/"),
                true
            )
            .is_empty()
        );
    }

    #[test]
    fn unnamed_permission_error_gets_a_hedged_note_only_on_failure() {
        let policy = policy(SandboxMode::WorkspaceWrite, &[Path::new("/w")]);
        let notes = explain(
            "Error: Permission denied (os error 13)",
            &policy,
            Path::new("/w"),
            true,
        );
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("[a permission error above may come from the sandbox"));
        assert!(explain("Permission denied", &policy, Path::new("/w"), false).is_empty());
        assert!(explain("all good", &policy, Path::new("/w"), true).is_empty());
    }

    #[test]
    fn real_path_resolves_dotdot_symlinks_and_proc_root() -> std::io::Result<()> {
        let root = tempfile::tempdir()?;
        let base = root.path().canonicalize()?;
        std::fs::create_dir_all(base.join("a"))?;
        std::os::unix::fs::symlink(base.join("target-missing"), base.join("a/dangling"))?;
        assert_eq!(real_path(&base.join("a/../b/c")), base.join("b/c"));
        assert_eq!(
            real_path(&base.join("a/dangling")),
            base.join("target-missing")
        );
        let via_proc =
            PathBuf::from("/proc/self/root").join(base.strip_prefix("/").unwrap_or(&base));
        assert_eq!(real_path(&via_proc.join("new")), base.join("new"));
        Ok(())
    }
}
