//! Rating tools the agent cannot look into (tools of MCP servers, issue 17) by their name.
//!
//! A rule applies when its `tool` matches the tool's name, `*` matching any text
//! (`mcp__github__*`, `mcp__*`; a configured `*` rule matches every tool), and its `pattern`
//! matches the call's arguments as compact JSON, `*` matching any text (`*` for every call).
//! As for other rules the last match wins, an untrusted project's `ask`/`deny` rules can only
//! make the verdict stricter, and with no match the verdict is `ask`. Built-in rules never
//! apply (they are about shell commands and paths). `a` at the approval prompt allows the
//! tool, whatever its arguments, for the rest of the session; it never overrides a `deny`.

use super::PermissionEngine;
use super::decision::{Decision, Evaluation, PartVerdict, Rule, RuleSource};
use super::rules::{Compiled, glob_text};

impl PermissionEngine {
    /// Rates a call of `tool` with `arguments` (compact JSON). The one part's `command` is
    /// the tool's name, which is what `a` at the prompt allows.
    pub(crate) fn check_tool(&self, tool: &str, arguments: &str) -> Evaluation {
        let pick = |list: &[Compiled]| {
            list.iter()
                .rev()
                .find(|c| {
                    c.rule.source != RuleSource::Default && c.matches_tool_call(tool, arguments)
                })
                .cloned()
        };
        let decider = match (pick(&self.rules), pick(&self.tighten)) {
            (Some(m), Some(t)) if t.rule.action > m.rule.action => Some(t),
            (m, t) => m.or(t),
        };
        let mut part = match decider {
            Some(c) => PartVerdict {
                command: tool.to_string(),
                decision: c.rule.action,
                reason: c.explain(),
                rule: Some(c.rule),
            },
            None => PartVerdict {
                command: tool.to_string(),
                decision: Decision::Ask,
                rule: None,
                reason: "tools of MCP servers ask unless a rule allows them".into(),
            },
        };
        if part.decision == Decision::Ask && self.session_tools.iter().any(|t| t == tool) {
            part.decision = Decision::Allow;
            part.reason = "approved for this session".into();
            part.rule = Some(Rule {
                tool: tool.to_string(),
                pattern: "*".to_string(),
                action: Decision::Allow,
                source: RuleSource::Session,
            });
        }
        Evaluation::from_parts(vec![part])
    }

    /// Remembers `tool` approved with `a`: its later calls are allowed unless a rule denies
    /// them.
    pub(crate) fn allow_tool_for_session(&mut self, tool: &str) {
        if !tool.is_empty() && !self.session_tools.iter().any(|t| t == tool) {
            self.session_tools.push(tool.to_string());
        }
    }
}

impl Compiled {
    /// Whether this rule rates a call of `tool` (rated by name) with `arguments`.
    pub(crate) fn matches_tool_call(&self, tool: &str, arguments: &str) -> bool {
        let pieces: Vec<String> = self.rule.tool.split('*').map(str::to_string).collect();
        glob_text(&pieces, tool) && self.matches_command(arguments)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PathContext, PermissionEngine, Rule, RuleSource};
    use super::*;
    use pretty_assertions::assert_eq;

    fn rule(tool: &str, pattern: &str, action: Decision, source: RuleSource) -> Rule {
        Rule {
            tool: tool.into(),
            pattern: pattern.into(),
            action,
            source,
        }
    }

    fn engine(rules: Vec<Rule>) -> PermissionEngine {
        PermissionEngine::new(rules, PathContext::default())
    }

    #[test]
    fn ask_without_a_rule_and_last_match_wins() {
        let e = engine(vec![
            rule("mcp__github__*", "*", Decision::Allow, RuleSource::User),
            rule(
                "mcp__github__delete_*",
                "*",
                Decision::Deny,
                RuleSource::User,
            ),
            rule(
                "mcp__fs__read",
                "*\"path\":\"/tmp/*",
                Decision::Allow,
                RuleSource::User,
            ),
        ]);
        let rate = |tool: &str, args: &str| e.check_tool(tool, args).decision;
        assert_eq!(rate("mcp__other__x", "{}"), Decision::Ask);
        assert_eq!(rate("mcp__github__list_issues", "{}"), Decision::Allow);
        assert_eq!(rate("mcp__github__delete_repo", "{}"), Decision::Deny);
        assert_eq!(
            rate("mcp__fs__read", r#"{"path":"/tmp/a"}"#),
            Decision::Allow
        );
        assert_eq!(rate("mcp__fs__read", r#"{"path":"/etc/a"}"#), Decision::Ask);
        let evaluation = e.check_tool("mcp__other__x", "{}");
        assert_eq!(
            evaluation.parts[0].reason,
            "tools of MCP servers ask unless a rule allows them"
        );
        assert_eq!(evaluation.parts[0].command, "mcp__other__x");
    }

    #[test]
    fn built_in_rules_never_apply_and_a_configured_star_does() {
        assert_eq!(
            engine(Vec::new()).check_tool("mcp__x__y", "{}").decision,
            Decision::Ask
        );
        let e = engine(vec![rule("*", "*", Decision::Allow, RuleSource::User)]);
        assert_eq!(e.check_tool("mcp__x__y", "{}").decision, Decision::Allow);
    }

    #[test]
    fn session_approval_allows_the_tool_but_not_over_a_deny() {
        let mut e = engine(vec![rule(
            "mcp__x__bad",
            "*",
            Decision::Deny,
            RuleSource::User,
        )]);
        e.allow_tool_for_session("mcp__x__good");
        e.allow_tool_for_session("mcp__x__bad");
        assert_eq!(
            e.check_tool("mcp__x__good", "{\"a\":1}").decision,
            Decision::Allow
        );
        assert_eq!(e.check_tool("mcp__x__bad", "{}").decision, Decision::Deny);
        assert_eq!(e.check_tool("mcp__x__other", "{}").decision, Decision::Ask);
    }

    #[test]
    fn mcp_rules_do_not_touch_commands_or_paths() {
        let plain = engine(Vec::new());
        let e = engine(vec![rule("mcp__*", "*", Decision::Deny, RuleSource::User)]);
        for command in ["ls", "cat /etc/hosts", "grep -r x /", "cargo build"] {
            assert_eq!(
                e.check_bash(command).decision,
                plain.check_bash(command).decision,
                "{command}"
            );
        }
        for path in ["/w/a", "/etc/hosts"] {
            for (tool, write) in [("read_file", false), ("write_file", true)] {
                let path = std::path::Path::new(path);
                assert_eq!(
                    e.check_file(tool, path, write).decision,
                    plain.check_file(tool, path, write).decision
                );
            }
        }
    }
}
