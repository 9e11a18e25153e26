//! Puts approval requests and answers on the event stream.
//!
//! The approver (terminal prompt, `--yes`, no terminal) is wrapped so that every sink hears
//! of an `ask` before the prompt appears ([`AgentEvent::ApprovalRequested`]: the terminal sink
//! stops its spinner and ends its line, `--json` prints `approval.requested`) and of the
//! answer after it ([`AgentEvent::ApprovalAnswered`]).

use std::sync::Arc;

use crate::events::{AgentEvent, EventSink};
use crate::permissions::{ApprovalAnswer, ApprovalRequest, Approver};

/// An [`Approver`] that reports to a sink around the real one.
pub(crate) struct AnnouncingApprover {
    inner: Arc<dyn Approver>,
    sink: Arc<dyn EventSink>,
}

impl AnnouncingApprover {
    pub(crate) fn new(inner: Arc<dyn Approver>, sink: Arc<dyn EventSink>) -> Self {
        Self { inner, sink }
    }
}

impl Approver for AnnouncingApprover {
    fn asks_a_person(&self) -> bool {
        self.inner.asks_a_person()
    }

    fn ask(&self, request: &ApprovalRequest) -> ApprovalAnswer {
        let deciding = request
            .evaluation
            .parts
            .iter()
            .filter(|p| p.decision == request.evaluation.decision);
        let mut reasons = Vec::new();
        let mut rule = None;
        for part in deciding {
            reasons.push(part.reason.clone());
            if rule.is_none() {
                rule = part.rule.as_ref().map(ToString::to_string);
            }
        }
        self.sink.emit(AgentEvent::ApprovalRequested {
            tool: request.tool.clone(),
            subject: request.subject.clone(),
            reason: reasons.join("; "),
            rule,
        });
        let answer = self.inner.ask(request);
        let (word, approved) = match &answer {
            ApprovalAnswer::Yes => ("yes", true),
            ApprovalAnswer::Always => ("always", true),
            ApprovalAnswer::No => ("no", false),
            ApprovalAnswer::Explain(_) => ("explain", false),
            ApprovalAnswer::Unavailable => ("unavailable", false),
            ApprovalAnswer::Interrupted => ("interrupted", false),
        };
        self.sink.emit(AgentEvent::ApprovalAnswered {
            tool: request.tool.clone(),
            answer: word.to_string(),
            approved,
        });
        answer
    }
}
