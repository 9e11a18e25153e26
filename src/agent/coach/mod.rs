//! The coach: everything that exists to help weak models, behind one seam (SPEC §3.5).
//!
//! Small local models stop after writing a file and tell the user to run it, show a command
//! instead of running it, write tool calls inside prose, return empty replies, or repeat one
//! paragraph until the context is full. The coach answers those with one more request, or
//! stops the reply. A capable model needs none of it, and for it each of those requests
//! would be the harness overriding what the user asked; so the loop talks to a [`Coach`] at
//! a few named points, and with the coach off that is [`Plain`], which does nothing: the
//! model's final answer is final.
//!
//! Whether the coach is on is decided by [`CoachSwitch`] from `[model] coach` / `--coach`:
//! `on`, `off`, or `auto` (the default), which turns it on only with evidence that the model
//! needs it: its name is that of a small local model ([`is_small_model`]), or it wrote a
//! tool call as text in this session.
//!
//! In every mode the user's words win: a request to show, tell or explain something, or one
//! that says not to run or change anything ([`intent::Intent`]), never gets a request to run or fix
//! it, and nothing shown in the answer to it is taken as a call.

mod intent;
mod lenient;
mod listing;
mod nudges;
mod profile;
mod recovery;
mod repetition;
mod shown;
mod small;
mod wrapped;

use std::path::Path;
use std::sync::Mutex;

use super::facts::{CallFact, TurnFacts};
use crate::model::{ChatRequest, Message, ToolCall};
use crate::tools::DispatchOutcome;

pub(crate) use crate::config::loop_settings::CoachSetting;

/// Whether the coach is on, and why (for the banner, `agent doctor` and `--json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoachStatus {
    pub(crate) on: bool,
    /// A short reason, e.g. `auto: qwen2.5-coder-1.5b-instruct is a small model`.
    pub(crate) reason: String,
}

impl CoachStatus {
    /// `coach on (auto: ...)` / `coach off (...)`.
    pub(crate) fn line(&self) -> String {
        format!(
            "coach {} ({})",
            if self.on { "on" } else { "off" },
            self.reason
        )
    }
}

/// Decides, for a session, whether the coach is on: from the setting, the model's name, and
/// evidence seen while the session runs. Shared (behind an `Arc`) with subagents, which use
/// the same model.
#[derive(Debug)]
pub struct CoachSwitch {
    setting: CoachSetting,
    state: Mutex<CoachStatus>,
}

impl CoachSwitch {
    /// The switch for `model` under `setting`.
    pub fn new(setting: CoachSetting, model: &str) -> Self {
        Self {
            setting,
            state: Mutex::new(initial_status(setting, model)),
        }
    }

    pub(crate) fn status(&self) -> CoachStatus {
        match self.state.lock() {
            Ok(state) => state.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    pub(crate) fn is_on(&self) -> bool {
        self.status().on
    }

    /// The model changed (`/model NAME`): evidence about the old one no longer counts.
    pub(crate) fn set_model(&self, model: &str) {
        self.set(initial_status(self.setting, model));
    }

    /// The model wrote its tool calls as text. Under `auto` this turns the coach on; returns
    /// the notice to show when it does.
    pub(crate) fn saw_calls_as_text(&self) -> Option<String> {
        if self.setting != CoachSetting::Auto || self.is_on() {
            return None;
        }
        let status = CoachStatus {
            on: true,
            reason: "auto: the model wrote a tool call as text".into(),
        };
        let notice = format!(
            "{}; the agent will now help it along (set `[model] coach = \"off\"` to stop this)",
            status.line()
        );
        self.set(status);
        Some(notice)
    }

    /// The coach for a turn whose request is `request`, in `workspace`: the small-model
    /// coach when on, else [`Plain`].
    pub(crate) fn coach_for_turn(&self, request: &str, workspace: &Path) -> Box<dyn Coach> {
        if self.is_on() {
            Box::new(small::SmallModelCoach::new(request, workspace))
        } else {
            Box::new(Plain)
        }
    }

    fn set(&self, status: CoachStatus) {
        match self.state.lock() {
            Ok(mut state) => *state = status,
            Err(poisoned) => *poisoned.into_inner() = status,
        }
    }
}

fn initial_status(setting: CoachSetting, model: &str) -> CoachStatus {
    match setting {
        CoachSetting::On => CoachStatus {
            on: true,
            reason: "set to on".into(),
        },
        CoachSetting::Off => CoachStatus {
            on: false,
            reason: "set to off".into(),
        },
        CoachSetting::Auto if is_small_model(model) => CoachStatus {
            on: true,
            reason: format!("auto: `{model}` is a small local model"),
        },
        CoachSetting::Auto => CoachStatus {
            on: false,
            reason: "auto: no sign the model needs help".into(),
        },
    }
}

/// The largest model size, in billions of parameters, that counts as small.
pub(crate) const SMALL_MODEL_MAX_BILLIONS: f64 = 8.0;

/// Whether `model` names a small local model: a size token of at most
/// [`SMALL_MODEL_MAX_BILLIONS`] (`qwen2.5-coder-1.5b-instruct`, `qwen2.5-coder:7b`,
/// `Llama-3.2-3B-Instruct`, `gemma2:2b`, `phi3:3.8b`), where a size token is a number with a
/// `b` suffix standing alone between separators (`-`, `_`, `:`, `/`, `.`, `@`). A
/// mixture-of-experts name is judged by its total size (`qwen3-30b-a3b` is not small), and a
/// name without a size (`gpt-5`, `claude-sonnet`) never is.
pub(crate) fn is_small_model(model: &str) -> bool {
    let name = model.to_ascii_lowercase();
    let sizes: Vec<f64> = name
        .split(['-', '_', ':', '/', '@', ' '])
        .filter_map(|part| {
            // A whole part (`1.5b`), else the tail after a dot (`model.7b`).
            size_in_billions(part).or_else(|| {
                part.rsplit_once('.')
                    .and_then(|(_, tail)| size_in_billions(tail))
            })
        })
        .collect();
    let largest = sizes.iter().copied().fold(f64::NAN, f64::max);
    !largest.is_nan() && largest <= SMALL_MODEL_MAX_BILLIONS
}

/// `1.5b` → 1.5; anything else → `None`.
fn size_in_billions(token: &str) -> Option<f64> {
    let number = token.strip_suffix('b')?;
    if number.is_empty() || !number.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    number.parse::<f64>().ok().filter(|n| *n > 0.0)
}

/// What the loop knows at a coach point.
pub(crate) struct TurnView<'a> {
    /// The facts of the turn so far.
    pub(crate) facts: &'a TurnFacts,
    /// The tools offered in this request.
    pub(crate) offered: &'a [&'a str],
    /// Tool calls written as text may be read (`[provider] text_tool_calls`).
    pub(crate) text_calls: bool,
}

/// What the loop does after a reply ([`Coach::after_reply`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Go on as the plain loop would: run the reply's calls, or end the turn with its
    /// answer (an empty answer ends it with a warning).
    Proceed,
    /// The reply was empty: send the same request again with `note` appended to its last
    /// message (not stored), after showing `warning`.
    Retry { note: String, warning: String },
    /// Keep the answer and send `request` as a harness message, after showing `notice`.
    Ask { request: String, notice: String },
}

/// The seam between the inner loop and the help for weak models. Every method defaults to
/// doing nothing, which is the plain loop ([`Plain`]).
pub(crate) trait Coach: Send {
    /// While a reply streams, a piece of its text. `Some(kept)` stops the reply, keeping
    /// `kept` as its whole text (a reply that degenerated into a loop).
    fn on_text(&mut self, _delta: &str) -> Option<String> {
        None
    }

    /// The request is being sent again (a retry, or without streaming): text streamed so
    /// far belongs to an abandoned attempt.
    fn on_new_attempt(&mut self) {}

    /// After a reply is complete, before its tool calls run. May turn calls the reply only
    /// showed into calls (`reply.tool_calls`).
    fn after_reply(&mut self, _turn: &TurnView<'_>, _reply: &mut Message) -> Step {
        Step::Proceed
    }

    /// After [`Coach::after_reply`], before the reply is stored and its calls run: may
    /// rewrite a call into the call it wraps (keeping its id), which then goes through the
    /// dispatcher and the permission rules like any call. The plain loop runs calls as sent.
    fn rewrite_calls(&mut self, _turn: &TurnView<'_>, _calls: &mut [ToolCall]) {}

    /// After the tool results of a reply are in the history.
    fn after_results(&mut self, _turn: &TurnView<'_>) {}

    /// Before a request goes out: may shape it (its system prompt, the tools offered, a
    /// bound on the reply's length). The plain loop sends it as built.
    fn shape_request(&self, _request: &mut ChatRequest) {}

    /// A tool result, before it goes into the history: may add to `content` what to do
    /// next, decided from `fact` (never from the result's text). `run` runs a call of the
    /// coach's own through the dispatcher (permission rules, hooks and sandbox apply as to
    /// any call) and returns its outcome; the plain loop never uses it.
    fn on_result(&mut self, _fact: &CallFact, _content: &mut String, _run: &mut RunCall<'_>) {}
}

/// Runs a call of the coach's through the dispatcher ([`Coach::on_result`]).
pub(crate) type RunCall<'r> = dyn FnMut(&ToolCall) -> DispatchOutcome + 'r;

/// Gives calls the coach made out of a reply's text their ids (`call_v` + a per-reply stamp
/// + the index), unique within the session.
pub(crate) fn give_ids(calls: &mut [ToolCall]) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for (index, call) in calls.iter_mut().enumerate() {
        call.id = format!("call_v{nanos:08x}{index}");
    }
}

/// The plain loop: no help, the model's final answer is final.
#[derive(Debug, Default)]
pub(crate) struct Plain;

impl Coach for Plain {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_models_by_name() {
        for small in [
            "qwen2.5-coder-1.5b-instruct",
            "Qwen2.5-Coder-1.5B-Instruct-GGUF",
            "qwen2.5-coder:7b",
            "llama3.2:3b",
            "Llama-3.2-3B-Instruct",
            "gemma2:2b",
            "phi3:3.8b",
            "deepseek-coder-6.7b-instruct",
            "qwen/qwen2.5-coder-7b-instruct",
            "mistral-7b-instruct-v0.3",
            "llama-3.1-8b",
        ] {
            assert!(is_small_model(small), "{small}");
        }
        for capable in [
            "gpt-5",
            "gpt-4.1-mini",
            "claude-sonnet-4-5",
            "qwen/qwen-2.5-coder-32b-instruct",
            "qwen3-coder-30b-a3b",
            "llama-3.3-70b",
            "mock-model",
            "deepseek-v3",
            "o4-mini",
            "",
        ] {
            assert!(!is_small_model(capable), "{capable}");
        }
    }

    #[test]
    fn the_switch_says_why() {
        let auto_small = CoachSwitch::new(CoachSetting::Auto, "qwen2.5-coder-1.5b-instruct");
        assert!(auto_small.is_on());
        assert!(auto_small.status().line().contains("small local model"));
        let auto = CoachSwitch::new(CoachSetting::Auto, "gpt-5");
        assert_eq!(
            auto.status().line(),
            "coach off (auto: no sign the model needs help)"
        );
        assert!(auto.saw_calls_as_text().is_some());
        assert!(auto.is_on());
        assert_eq!(auto.saw_calls_as_text(), None, "said once");
        auto.set_model("gpt-5.1");
        assert!(!auto.is_on(), "evidence about another model does not count");
        let off = CoachSwitch::new(CoachSetting::Off, "qwen2.5-coder-1.5b-instruct");
        assert!(!off.is_on());
        assert_eq!(off.saw_calls_as_text(), None);
        assert!(CoachSwitch::new(CoachSetting::On, "gpt-5").is_on());
        assert!(CoachSetting::parse("sometimes").is_err());
    }
}
