//! The built-in rules (SPEC §5.1), evaluated before any config rule (last match wins).
//!
//! Bash: everything is `ask` unless listed. The allow list is everyday read-only work, so
//! looking around a project never prompts; each entry can neither write files nor run other
//! programs *through the words the rule covers* — the options that would (`sort -o`,
//! `find -delete`, `git diff --output`, `sed -i`, ...) are floors in
//! [`super::shell::hazards`] and keep the command at least `ask` regardless of these rules.
//! `pytest` is allowed because the SPEC lists it (it runs project code, inside the sandbox).
//! The deny list is the SPEC's: deleting files, running as root, network transfers, and
//! publishing commits (plus `doas`/`pkexec`, the other ways to run as root).
//!
//! Files: reads and writes inside the workspace are allowed, anything outside is `ask`,
//! writes to a path with a `.git` component at any depth (hooks, config: they change what git
//! runs, in nested repositories too; a worktree's `.git` file names its git directory) and
//! under `.agents/` (project rules, roles, skills) are `ask`, reading `.env` files is `ask`
//! (their secrets would go to the model provider), and the [`SECRET_LOCATIONS`] are `deny`.

use super::decision::Decision::{self, Allow, Ask, Deny};

/// One built-in rule: tool, pattern, action, and why (shown when it decides).
pub(crate) type DefaultRule = (&'static str, &'static str, Decision, &'static str);

const READ: &str = "read-only: reads files or prints information";

/// Built-in bash rules, in evaluation order.
pub(crate) const BASH: &[DefaultRule] = &[
    ("bash", "*", Ask, "no rule allows this command"),
    ("bash", "ls", Allow, READ),
    ("bash", "ls *", Allow, READ),
    ("bash", "cat", Allow, READ),
    ("bash", "cat *", Allow, READ),
    ("bash", "head", Allow, READ),
    ("bash", "head *", Allow, READ),
    ("bash", "tail", Allow, READ),
    ("bash", "tail *", Allow, READ),
    ("bash", "wc", Allow, READ),
    ("bash", "wc *", Allow, READ),
    ("bash", "grep *", Allow, READ),
    ("bash", "egrep *", Allow, READ),
    ("bash", "fgrep *", Allow, READ),
    (
        "bash",
        "rg *",
        Allow,
        "read-only search (`--pre` and `--hostname-bin` still ask)",
    ),
    (
        "bash",
        "find *",
        Allow,
        "lists files (`-delete`, `-fprint*` ask; `-exec` commands are rated on their own)",
    ),
    ("bash", "tree", Allow, READ),
    ("bash", "tree *", Allow, "lists files (`-o` asks)"),
    ("bash", "file *", Allow, "identifies file types (`-C` asks)"),
    ("bash", "stat *", Allow, READ),
    ("bash", "du", Allow, READ),
    ("bash", "du *", Allow, READ),
    ("bash", "df", Allow, READ),
    ("bash", "df *", Allow, READ),
    ("bash", "pwd", Allow, READ),
    ("bash", "echo", Allow, "prints its arguments"),
    ("bash", "echo *", Allow, "prints its arguments"),
    (
        "bash",
        "printf *",
        Allow,
        "prints its arguments (`-v` into risky variables asks)",
    ),
    ("bash", "which *", Allow, "locates programs"),
    ("bash", "type *", Allow, "locates programs"),
    ("bash", "command -v *", Allow, "locates programs"),
    ("bash", "command -V *", Allow, "locates programs"),
    ("bash", "basename *", Allow, "prints part of a path"),
    ("bash", "dirname *", Allow, "prints part of a path"),
    ("bash", "realpath *", Allow, "prints a resolved path"),
    ("bash", "readlink *", Allow, "prints a link target"),
    ("bash", "sort", Allow, READ),
    (
        "bash",
        "sort *",
        Allow,
        "sorts its input (`-o` and `--compress-program` ask)",
    ),
    ("bash", "uniq", Allow, READ),
    (
        "bash",
        "uniq *",
        Allow,
        "filters its input (an output file operand asks)",
    ),
    ("bash", "cut *", Allow, "text filter"),
    ("bash", "tr *", Allow, "text filter"),
    ("bash", "nl", Allow, READ),
    ("bash", "nl *", Allow, "text filter"),
    ("bash", "tac", Allow, READ),
    ("bash", "tac *", Allow, "text filter"),
    ("bash", "diff *", Allow, "compares files"),
    ("bash", "cmp *", Allow, "compares files"),
    ("bash", "comm *", Allow, "compares files"),
    (
        "bash",
        "jq *",
        Allow,
        "JSON filter with no option that writes or runs programs",
    ),
    (
        "bash",
        "sed *",
        Allow,
        "text filter (`-i`, `w`, `e` and `r` ask)",
    ),
    ("bash", "sha256sum *", Allow, "checksums"),
    ("bash", "md5sum *", Allow, "checksums"),
    ("bash", "date", Allow, "prints the date"),
    ("bash", "date *", Allow, "prints the date (`-s` asks)"),
    ("bash", "true", Allow, "does nothing"),
    ("bash", "false", Allow, "does nothing"),
    ("bash", "test *", Allow, "tests a condition"),
    ("bash", "sleep *", Allow, "waits"),
    ("bash", "cd", Allow, "changes this shell's directory only"),
    ("bash", "cd *", Allow, "changes this shell's directory only"),
    ("bash", "read", Allow, "reads a line into a shell variable"),
    (
        "bash",
        "read *",
        Allow,
        "reads a line into a shell variable (risky names ask)",
    ),
    ("bash", "git status", Allow, "read-only git"),
    ("bash", "git status *", Allow, "read-only git"),
    ("bash", "git diff", Allow, "read-only git"),
    (
        "bash",
        "git diff *",
        Allow,
        "read-only git (`--output`, `--ext-diff`, `--textconv` ask)",
    ),
    ("bash", "git log", Allow, "read-only git"),
    (
        "bash",
        "git log *",
        Allow,
        "read-only git (`--output` asks)",
    ),
    ("bash", "git show", Allow, "read-only git"),
    (
        "bash",
        "git show *",
        Allow,
        "read-only git (`--output` asks)",
    ),
    ("bash", "git branch", Allow, "lists branches"),
    (
        "bash",
        "git branch *",
        Allow,
        "lists branches (creating, deleting, moving ask)",
    ),
    ("bash", "git rev-parse *", Allow, "read-only git"),
    ("bash", "git ls-files", Allow, "read-only git"),
    ("bash", "git ls-files *", Allow, "read-only git"),
    ("bash", "git blame *", Allow, "read-only git"),
    ("bash", "git grep *", Allow, "read-only git (`-O` asks)"),
    ("bash", "git describe", Allow, "read-only git"),
    ("bash", "git describe *", Allow, "read-only git"),
    ("bash", "git remote", Allow, "lists remotes"),
    ("bash", "git remote -v", Allow, "lists remotes"),
    ("bash", "git stash list", Allow, "read-only git"),
    ("bash", "git --version", Allow, "prints the git version"),
    ("bash", "cargo metadata", Allow, "prints package metadata"),
    ("bash", "cargo metadata *", Allow, "prints package metadata"),
    (
        "bash",
        "pytest",
        Allow,
        "runs the tests (SPEC default; inside the sandbox)",
    ),
    (
        "bash",
        "pytest *",
        Allow,
        "runs the tests (SPEC default; inside the sandbox)",
    ),
    ("bash", "rm", Deny, "deletes files"),
    ("bash", "rm *", Deny, "deletes files"),
    ("bash", "sudo", Deny, "runs commands as root"),
    ("bash", "sudo *", Deny, "runs commands as root"),
    ("bash", "doas *", Deny, "runs commands as root"),
    ("bash", "pkexec *", Deny, "runs commands as root"),
    ("bash", "curl", Deny, "network transfer"),
    ("bash", "curl *", Deny, "network transfer"),
    ("bash", "wget", Deny, "network transfer"),
    ("bash", "wget *", Deny, "network transfer"),
    ("bash", "git push", Deny, "publishes commits"),
    ("bash", "git push *", Deny, "publishes commits"),
];

/// Built-in file rules, in evaluation order. `$WORKSPACE`, `$AGENT_HOME` and `~` are
/// expanded when the engine is built.
pub const FILES: &[DefaultRule] = &[
    ("*", "**", Ask, "outside the workspace"),
    ("*", "$WORKSPACE/**", Allow, "inside the workspace"),
    (
        "read_file",
        "$WORKSPACE",
        Allow,
        "the workspace itself (a listing)",
    ),
    (
        "write_file",
        "**/.git/**",
        Ask,
        "writes under a .git/ (any repository) can change what git runs",
    ),
    (
        "str_replace",
        "**/.git/**",
        Ask,
        "writes under a .git/ (any repository) can change what git runs",
    ),
    (
        "write_file",
        "**/.git",
        Ask,
        "a .git file names the repository git uses",
    ),
    (
        "str_replace",
        "**/.git",
        Ask,
        "a .git file names the repository git uses",
    ),
    (
        "write_file",
        "$WORKSPACE/.agents/**",
        Ask,
        "project agent settings (rules, roles, skills)",
    ),
    (
        "str_replace",
        "$WORKSPACE/.agents/**",
        Ask,
        "project agent settings (rules, roles, skills)",
    ),
    (
        "read_file",
        "**/.env",
        Ask,
        "may hold secrets that would be sent to the model provider",
    ),
    ("write_file", "**/.env", Deny, "secrets file"),
    ("str_replace", "**/.env", Deny, "secrets file"),
    ("*", "~/.ssh/**", Deny, "SSH keys"),
    ("*", "~/.gnupg/**", Deny, "GPG keys"),
    ("*", "~/.aws/**", Deny, "cloud credentials"),
    ("*", "~/.config/gcloud/**", Deny, "cloud credentials"),
    ("*", "~/.azure/**", Deny, "cloud credentials"),
    ("*", "~/.kube/**", Deny, "cluster credentials"),
    ("*", "~/.docker/config.json", Deny, "registry credentials"),
    ("*", "~/.netrc", Deny, "login credentials"),
    ("*", "~/.git-credentials", Deny, "git credentials"),
    ("*", "~/.config/gh/**", Deny, "GitHub token"),
    ("*", "~/.cargo/credentials.toml", Deny, "crates.io token"),
    ("*", "~/.cargo/credentials", Deny, "crates.io token"),
    ("*", "~/.pypirc", Deny, "PyPI token"),
    ("*", "~/.npmrc", Deny, "npm token"),
    ("*", "$AGENT_HOME/env", Deny, "the agent's API key"),
];

/// Secret locations (`~` is the home directory): denied to the file tools and to paths named
/// in commands by [`FILES`], and hidden from commands by the sandbox (issue 15). A directory
/// is listed by its own path and covered by a `/**` rule.
pub const SECRET_LOCATIONS: &[&str] = &[
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.config/gcloud",
    "~/.azure",
    "~/.kube",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/gh",
    "~/.cargo/credentials.toml",
    "~/.cargo/credentials",
    "~/.pypirc",
    "~/.npmrc",
    "$AGENT_HOME/env",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_location_has_a_deny_rule() {
        for location in SECRET_LOCATIONS {
            let file = FILES
                .iter()
                .any(|(t, p, a, _)| *t == "*" && *p == *location && *a == Deny);
            let dir = FILES
                .iter()
                .any(|(t, p, a, _)| *t == "*" && *p == format!("{location}/**") && *a == Deny);
            assert!(file || dir, "{location} has no deny rule");
        }
    }
}
