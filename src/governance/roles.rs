//! Roles (SPEC §9.1): which tools an agent may use, what happens to shell commands, and the
//! budget limits of a session. The five built-in roles are exactly the table of §9.1; custom
//! roles come from TOML files ([`super::role_files`]).
//!
//! Tool policy: `allowed` and `denied` are globs over tool names (`*` any text, `read_*`);
//! a tool is allowed when it matches an `allowed` glob and no `denied` glob (denied beats
//! allowed). `bash` is also refused when the shell policy is `deny` or the role allows no
//! shell calls (`max_shell_invocations = 0`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The built-in role used when nothing selects another (§9.1).
pub(crate) const DEFAULT_ROLE: &str = "coder";

/// Built-in roles a project role may only inherit from in a trusted workspace (§9.1: "nor
/// inherit a more privileged one without trust").
pub(crate) const PRIVILEGED: &[&str] = &["admin", "ops"];

/// The longest role name, in characters.
pub(crate) const MAX_NAME_LEN: usize = 64;

/// What happens to `bash` calls (§9.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShellPolicy {
    /// Allowed and counted.
    Track,
    /// Allowed and counted; output compressed ([`super::compress`]) with a note of the savings.
    Compress,
    /// The `bash` tool is blocked.
    Deny,
}

impl ShellPolicy {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ShellPolicy::Track => "track",
            ShellPolicy::Compress => "compress",
            ShellPolicy::Deny => "deny",
        }
    }
}

/// Budget limits of a role, per session (§9.2).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Tokens of tool output added to the context (estimated at 4 characters a token).
    pub max_context_tokens: u64,
    /// `bash` calls that ran.
    pub max_shell_invocations: u64,
    /// USD (§9.3).
    pub max_cost_usd: f64,
}

impl Limits {
    /// Each limit of `self`, lowered to `cap`'s where that is smaller.
    pub(crate) fn min(self, cap: Limits) -> Limits {
        Limits {
            max_context_tokens: self.max_context_tokens.min(cap.max_context_tokens),
            max_shell_invocations: self.max_shell_invocations.min(cap.max_shell_invocations),
            max_cost_usd: self.max_cost_usd.min(cap.max_cost_usd),
        }
    }
}

/// Where a role was defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoleSource {
    BuiltIn,
    /// `$AGENT_HOME/roles/*.toml`.
    User,
    /// `<workspace>/.agents/roles/*.toml`.
    Project,
}

impl RoleSource {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RoleSource::BuiltIn => "built-in",
            RoleSource::User => "user",
            RoleSource::Project => "project",
        }
    }
}

/// A resolved role: inheritance already merged.
#[derive(Debug, Clone, PartialEq)]
pub struct Role {
    pub(crate) name: String,
    pub description: String,
    /// Globs over tool names.
    pub allowed: Vec<String>,
    /// Globs over tool names; beat `allowed`.
    pub denied: Vec<String>,
    pub shell_policy: ShellPolicy,
    pub limits: Limits,
    pub source: RoleSource,
    /// The file that defined it (none for built-ins).
    pub(crate) path: Option<PathBuf>,
}

impl Role {
    /// Whether the tool policy lets this role call `tool` (§9.1), including the shell policy
    /// and the role's own shell-call limit for `bash`.
    pub fn allows_tool(&self, tool: &str) -> bool {
        self.allows_tool_under(tool, &self.limits)
    }

    /// As [`Role::allows_tool`], with `limits` in force instead of the role's own (`[budget]`
    /// overrides): `bash` is refused when they allow no shell calls.
    pub(crate) fn allows_tool_under(&self, tool: &str, limits: &Limits) -> bool {
        if tool == "bash"
            && (self.shell_policy == ShellPolicy::Deny || limits.max_shell_invocations == 0)
        {
            return false;
        }
        matches_any(&self.allowed, tool) && !matches_any(&self.denied, tool)
    }

    /// One line: tools, shell policy and limits, for `/role`.
    pub(crate) fn summary(&self, limits: &Limits) -> String {
        let mut text = format!("tools {}", list_or_dash(&self.allowed));
        if !self.denied.is_empty() {
            text.push_str(&format!("; denied {}", self.denied.join(", ")));
        }
        format!(
            "{text}; shell {}; limits tokens {}, shell {}, cost ${:.2}",
            self.shell_policy.as_str(),
            limits.max_context_tokens,
            limits.max_shell_invocations,
            limits.max_cost_usd
        )
    }
}

fn list_or_dash(globs: &[String]) -> String {
    if globs.is_empty() {
        "-".to_string()
    } else {
        globs.join(", ")
    }
}

/// Whether `tool` matches one of `globs`. Globs were validated when loaded; an invalid one
/// matches nothing.
pub(crate) fn matches_any(globs: &[String], tool: &str) -> bool {
    globs
        .iter()
        .any(|g| glob::Pattern::new(g).is_ok_and(|p| p.matches(tool)))
}

/// `[A-Za-z0-9_-]{1,64}` (§9.1, issue 5).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Whether `name` is one of the five built-in roles.
pub(crate) fn is_builtin(name: &str) -> bool {
    builtin(name).is_some()
}

/// The built-in role `name`, exactly as the §9.1 table gives it.
pub(crate) fn builtin(name: &str) -> Option<Role> {
    use ShellPolicy::{Compress, Deny, Track};
    Some(match name {
        "coder" => coder(),
        "reviewer" => make(
            name,
            "reads and reviews; cannot edit files or run commands",
            &["read_file", "read_skill", "write_todos", "task"],
            &["bash", "write_file", "str_replace"],
            Deny,
            (150_000, 0, 3.0),
        ),
        "debugger" => make(
            name,
            "investigates failures; more shell calls",
            &["*"],
            &[],
            Track,
            (150_000, 200, 5.0),
        ),
        "ops" => make(
            name,
            "runs and inspects systems; shell output compressed; cannot edit files",
            &["read_file", "bash", "read_skill", "write_todos", "task"],
            &["write_file", "str_replace"],
            Compress,
            (100_000, 300, 3.0),
        ),
        "admin" => make(
            name,
            "everything, with high limits",
            &["*"],
            &[],
            Track,
            (500_000, 500, 50.0),
        ),
        _ => return None,
    })
}

/// The default built-in role, `coder` (§9.1).
pub(crate) fn coder() -> Role {
    make(
        DEFAULT_ROLE,
        "writes and changes code (default)",
        &["*"],
        &[],
        ShellPolicy::Track,
        (200_000, 100, 5.0),
    )
}

fn make(
    name: &str,
    description: &str,
    allowed: &[&str],
    denied: &[&str],
    shell_policy: ShellPolicy,
    (tokens, shell, cost): (u64, u64, f64),
) -> Role {
    let strings = |items: &[&str]| items.iter().map(|s| (*s).to_string()).collect();
    Role {
        name: name.to_string(),
        description: description.to_string(),
        allowed: strings(allowed),
        denied: strings(denied),
        shell_policy,
        limits: Limits {
            max_context_tokens: tokens,
            max_shell_invocations: shell,
            max_cost_usd: cost,
        },
        source: RoleSource::BuiltIn,
        path: None,
    }
}

/// The built-in role names in table order.
pub(crate) const BUILTIN_NAMES: &[&str] = &["coder", "reviewer", "debugger", "ops", "admin"];

#[cfg(test)]
mod tests {
    use super::*;

    fn role(name: &str) -> Role {
        builtin(name).unwrap_or_else(|| panic!("no built-in {name}"))
    }

    #[test]
    fn names() {
        for good in ["coder", "a", "A-b_9", &"x".repeat(64)] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "a b", "ü", "a.b", "../x", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn table_of_9_1() {
        let reviewer = role("reviewer");
        for tool in ["read_file", "read_skill", "write_todos", "task"] {
            assert!(reviewer.allows_tool(tool), "{tool}");
        }
        for tool in ["bash", "write_file", "str_replace", "other"] {
            assert!(!reviewer.allows_tool(tool), "{tool}");
        }
        let ops = role("ops");
        assert!(ops.allows_tool("bash"));
        assert!(!ops.allows_tool("write_file"));
        assert!(!ops.allows_tool("str_replace"));
        assert_eq!(ops.shell_policy, ShellPolicy::Compress);
        for name in ["coder", "debugger", "admin"] {
            assert!(role(name).allows_tool("bash"));
            assert!(role(name).allows_tool("anything"));
        }
        let limits: Vec<(u64, u64, f64)> = BUILTIN_NAMES
            .iter()
            .map(|n| {
                let l = role(n).limits;
                (
                    l.max_context_tokens,
                    l.max_shell_invocations,
                    l.max_cost_usd,
                )
            })
            .collect();
        assert_eq!(
            limits,
            vec![
                (200_000, 100, 5.0),
                (150_000, 0, 3.0),
                (150_000, 200, 5.0),
                (100_000, 300, 3.0),
                (500_000, 500, 50.0)
            ]
        );
    }

    #[test]
    fn denied_beats_allowed() {
        let mut custom = role("coder");
        custom.allowed = vec!["read_*".into(), "bash".into()];
        custom.denied = vec!["read_skill".into()];
        assert!(custom.allows_tool("read_file"));
        assert!(!custom.allows_tool("read_skill"));
        assert!(!custom.allows_tool("write_file"));
        custom.limits.max_shell_invocations = 0;
        assert!(!custom.allows_tool("bash"));
    }
}
