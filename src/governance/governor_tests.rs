//! Unit tests of [`super::Governor`]: verdicts, violations, crossings, restore, listings.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::*;
use crate::cancel::INTERRUPTED;
use crate::governance::events::{EventRecord, PolicyEvent, Subscriber};
use crate::permissions::Decision;

#[derive(Default)]
struct Collect(Mutex<Vec<EventRecord>>);

impl Subscriber for Collect {
    fn notify(&self, record: &EventRecord) {
        if let Ok(mut records) = self.0.lock() {
            records.push(record.clone());
        }
    }
}

impl Collect {
    fn events(&self) -> Vec<PolicyEvent> {
        self.0
            .lock()
            .map(|r| r.iter().map(|r| r.event.clone()).collect())
            .unwrap_or_default()
    }
}

fn governor(role: &str) -> (Governor, Arc<Collect>) {
    let settings = BudgetSettings {
        set: crate::config::governance::PartialLimits {
            max_shell_invocations: Some(4),
            ..Default::default()
        },
        ..Default::default()
    };
    let governor = Governor::new(
        RoleSet::default(),
        role,
        settings,
        PriceBook::default(),
        "m",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let collect = Arc::new(Collect::default());
    governor.subscribe(collect.clone());
    (governor, collect)
}

fn call(name: &str, command: &str) -> ToolCall {
    ToolCall {
        id: "c".into(),
        name: name.into(),
        arguments: serde_json::json!({ "command": command }).to_string(),
    }
}

fn outcome(content: &str, decision: Option<Decision>, blocked: bool) -> DispatchOutcome {
    DispatchOutcome {
        content: content.into(),
        ok: decision.is_some() && !blocked,
        decision,
        blocked,
        denied: false,
        by_hook: false,
        exit_code: None,
        error: None,
        display: None,
        wrote: None,
        post_hooks_ran: false,
    }
}

/// Runs one call through the hooks the way the loop and dispatcher do.
fn settle(g: &Governor, call: &ToolCall, mut result: DispatchOutcome) -> DispatchOutcome {
    g.before_tool(call);
    if let Err(reason) = g.check(&call.name, &Args::new()) {
        result = outcome(&format!("Blocked by policy: {reason}"), None, true);
    }
    g.after_tool(call, &mut result, Duration::from_millis(3));
    result
}

fn verdicts(collect: &Collect) -> Vec<String> {
    collect
        .events()
        .into_iter()
        .filter_map(|e| match e {
            PolicyEvent::ToolResult { verdict, .. } => Some(verdict),
            _ => None,
        })
        .collect()
}

#[test]
fn verdicts_of_every_path() {
    let (g, collect) = governor("coder");
    let bash = call("bash", "ls");
    settle(&g, &bash, outcome("x", Some(Decision::Allow), false));
    settle(&g, &bash, outcome("x", Some(Decision::Ask), false));
    settle(
        &g,
        &bash,
        outcome(crate::tools::dispatch::DECLINED, Some(Decision::Ask), true),
    );
    settle(
        &g,
        &bash,
        outcome("Blocked by policy: deny", Some(Decision::Deny), true),
    );
    settle(&g, &bash, outcome("Error: wrong arguments", None, false));
    settle(&g, &bash, outcome(INTERRUPTED, None, true));
    assert_eq!(
        verdicts(&collect),
        vec![
            "allow",
            "approved",
            "declined",
            "denied",
            "error",
            "interrupted"
        ]
    );
    assert_eq!(g.spending().shell_calls, 2, "only calls that ran count");
}

#[test]
fn sandbox_refusals_are_policy_violations() {
    let (g, collect) = governor("coder");
    let text = "touch: cannot touch '/etc/x': Permission denied\n\
                [write to /etc/x blocked by sandbox (workspace-write); work inside the workspace]";
    settle(
        &g,
        &call("bash", "touch /etc/x"),
        outcome(text, Some(Decision::Allow), false),
    );
    let violations: Vec<PolicyEvent> = collect
        .events()
        .into_iter()
        .filter(|e| matches!(e, PolicyEvent::PolicyViolation { .. }))
        .collect();
    assert_eq!(
        violations,
        vec![PolicyEvent::PolicyViolation {
            tool: "bash".into(),
            by: "sandbox".into(),
            rule:
                "[write to /etc/x blocked by sandbox (workspace-write); work inside the workspace]"
                    .into(),
            command: "touch /etc/x".into(),
        }]
    );
}

#[test]
fn crossings_are_announced_once() {
    let (g, collect) = governor("coder");
    let bash = call("bash", "ls");
    let ran = || outcome("x", Some(Decision::Allow), false);
    let budget_events = || {
        collect
            .events()
            .into_iter()
            .filter(|e| {
                matches!(
                    e,
                    PolicyEvent::BudgetWarning { .. } | PolicyEvent::BudgetExhausted { .. }
                )
            })
            .collect::<Vec<_>>()
    };
    // Limit 4: 3/4 is 75%, below the 80% warning threshold.
    for _ in 0..3 {
        assert_eq!(settle(&g, &bash, ran()).content, "x");
    }
    assert!(budget_events().is_empty());
    let last = settle(&g, &bash, ran()).content;
    assert!(
        last.starts_with("x\nbudget exhausted for role coder: shell 4/4 (100%)"),
        "{last}"
    );
    assert_eq!(
        budget_events(),
        vec![PolicyEvent::BudgetExhausted {
            dimension: Dimension::Shell,
            used: 4.0,
            limit: 4.0,
            percent: 100
        }],
        "straight to EXHAUSTED: one event"
    );
    let blocked = settle(&g, &bash, ran());
    assert!(
        blocked
            .content
            .starts_with("Blocked by policy: budget exhausted"),
        "{blocked:?}"
    );
    assert_eq!(budget_events().len(), 1, "no event for staying exhausted");
    assert_eq!(
        verdicts(&collect).last().map(String::as_str),
        Some("budget")
    );
}

#[test]
fn restore_keeps_spending_without_announcing_old_crossings() {
    let (g, collect) = governor("coder");
    let saved = Spending {
        tokens: 10,
        shell_calls: 4,
        cost_usd: 0.5,
        ..Spending::default()
    };
    g.restore(saved.clone());
    assert_eq!(g.spending(), saved);
    assert!(collect.events().is_empty());
    assert_eq!(
        g.exhausted_message()
            .as_deref()
            .map(|m| m.split(';').next().unwrap_or("")),
        Some("budget exhausted for role coder: shell 4/4 (100%)")
    );
    let json = serde_json::to_string(&g.spending()).unwrap_or_default();
    assert_eq!(
        json,
        r#"{"tokens":10,"shell_calls":4,"cost_usd":0.5,"unpriced_model":null,"model_calls":0,"compressed_chars_saved":0}"#
    );
}

#[test]
fn reminder_and_listing() {
    let (g, _) = governor("reviewer");
    assert_eq!(
        g.reminder_lines(),
        vec![
            "role: reviewer (reads and reviews; cannot edit files or run commands)".to_string(),
            "Budget[reviewer]: tokens 0/150000 (0%) | shell 0/4 (0%) | cost $0.00/$3.00 (0%) → OK"
                .to_string(),
        ]
    );
    let listing = g.roles_listing();
    assert!(listing.starts_with("roles (* = active):\n"), "{listing}");
    assert!(
        listing.contains(
            "* reviewer (built-in) - reads and reviews; cannot edit files or run commands\n      \
             tools read_file, read_skill, write_todos, task; denied bash, write_file, \
             str_replace; shell deny; limits tokens 150000, shell 4, cost $3.00\n"
        ),
        "{listing}"
    );
    assert!(listing.contains("\n  coder (built-in) - "), "{listing}");
}

#[test]
fn a_role_that_allows_no_shell_calls_hides_and_blocks_bash() {
    let g = Governor::builtin("m");
    let mut registry = crate::tools::Registry::builtin();
    g.switch_role("reviewer").unwrap_or_else(|e| panic!("{e}"));
    g.hide_denied(&mut registry);
    assert_eq!(registry.names(), vec!["read_file"]);
    assert!(
        registry.get("bash").is_some(),
        "still callable, to be refused"
    );
    assert_eq!(
        g.check("bash", &Args::new()),
        Err(PolicyBlock {
            reason: "role reviewer does not allow bash".to_string()
        })
    );
    g.switch_role("coder").unwrap_or_else(|e| panic!("{e}"));
    g.hide_denied(&mut registry);
    assert_eq!(registry.names().len(), 4);
}

#[test]
fn a_budget_override_of_zero_shell_calls_hides_bash_for_every_role() {
    let settings = BudgetSettings {
        set: crate::config::governance::PartialLimits {
            max_shell_invocations: Some(0),
            ..Default::default()
        },
        ..Default::default()
    };
    let g = Governor::new(
        RoleSet::default(),
        "admin",
        settings,
        PriceBook::default(),
        "m",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(!g.offers("bash"));
    assert!(g.offers("write_file"));
    assert_eq!(
        g.check("bash", &Args::new()),
        Err(PolicyBlock {
            reason: "role admin allows no shell calls (max_shell_invocations = 0); raise the \
                     limit or switch role"
                .to_string()
        })
    );
}
