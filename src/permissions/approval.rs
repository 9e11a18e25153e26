//! Asking the user about an `ask` verdict (§5.3).

use super::decision::Evaluation;

/// What needs approval.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// Tool name.
    pub tool: String,
    /// The command or path, exactly as it will be used.
    pub subject: String,
    pub(crate) evaluation: Evaluation,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// `y`: run it once.
    Yes,
    /// `n` or Enter: do not run it.
    No,
    /// `a`: run it and allow the same command prefix for the rest of the session.
    Always,
    /// `e`: do not run it, and tell the model why.
    Explain(String),
    /// Nobody can answer (no terminal); the model is told approval was not possible.
    Unavailable,
    /// Ctrl-C at the prompt: do not run it, and interrupt the turn (§3.4).
    Interrupted,
}

/// Something that can answer approval requests: the terminal, `--yes`, or a test script.
/// Called from a blocking context.
pub trait Approver: Send + Sync {
    fn ask(&self, request: &ApprovalRequest) -> ApprovalAnswer;

    /// Whether [`Approver::ask`] waits for a person (a prompt); `--yes` and the lack of a
    /// terminal answer at once. `Notification` hooks run only when a person is asked.
    fn asks_a_person(&self) -> bool {
        true
    }
}

/// `--yes`: every `ask` becomes `allow`.
#[derive(Debug, Default)]
pub struct AlwaysYes;

impl Approver for AlwaysYes {
    fn ask(&self, _: &ApprovalRequest) -> ApprovalAnswer {
        ApprovalAnswer::Yes
    }

    fn asks_a_person(&self) -> bool {
        false
    }
}

/// No terminal to ask on: every `ask` is declined with an explanation to the model.
#[derive(Debug, Default)]
pub(crate) struct NoTerminal;

impl Approver for NoTerminal {
    fn ask(&self, _: &ApprovalRequest) -> ApprovalAnswer {
        ApprovalAnswer::Unavailable
    }

    fn asks_a_person(&self) -> bool {
        false
    }
}
