//! The coach for small models: the [`Coach`] the loop gets when the coach is on.
//!
//! - while a reply streams, it is stopped when it degenerates into a loop
//!   ([`super::repetition`]);
//! - an empty reply is asked for once more, with a note;
//! - a final answer that leaves the work to the user gets one request to do it
//!   ([`super::nudges`]), and in the reply right after that request a command or call the
//!   model only shows is taken as the call ([`super::shown`]) when the user's request allows
//!   it.

use super::intent::Intent;
use super::nudges::{Answered, Nudges};
use super::repetition::RepetitionGuard;
use super::{Coach, Step, TurnView, shown};
use crate::model::Message;

/// Appended (to that request only) after an empty reply.
const EMPTY_REPLY_NOTE: &str =
    "\n(Your last reply was empty. Continue the task: call a tool, or give your final answer.)";

/// The small-model coach for one turn.
#[derive(Debug)]
pub(crate) struct SmallModelCoach {
    intent: Intent,
    nudges: Nudges,
    stream: RepetitionGuard,
    empty_replies: u32,
}

impl SmallModelCoach {
    /// The coach for a turn whose request is `request`.
    pub(crate) fn new(request: &str) -> Self {
        Self {
            intent: Intent::read(request),
            nudges: Nudges::default(),
            stream: RepetitionGuard::default(),
            empty_replies: 0,
        }
    }
}

impl Coach for SmallModelCoach {
    fn on_text(&mut self, delta: &str) -> Option<String> {
        self.stream
            .push(delta)
            .then(|| self.stream.kept().to_string())
    }

    fn on_new_attempt(&mut self) {
        self.stream = RepetitionGuard::default();
    }

    fn after_reply(&mut self, turn: &TurnView<'_>, reply: &mut Message) -> Step {
        self.stream = RepetitionGuard::default();
        if self.nudges.take_answering() && turn.text_calls {
            shown::take_shown_call(reply, turn.offered, &self.intent);
        }
        if !reply.tool_calls.is_empty() {
            return Step::Proceed;
        }
        let answer = reply.text_content();
        if answer.trim().is_empty() {
            self.empty_replies += 1;
            return if self.empty_replies == 1 {
                Step::Retry {
                    note: EMPTY_REPLY_NOTE.to_string(),
                    warning: "the model returned an empty reply; asking once more".into(),
                }
            } else {
                Step::Proceed
            };
        }
        let answered = Answered {
            facts: turn.facts,
            intent: &self.intent,
            answer,
            offered: turn.offered,
            text_calls: turn.text_calls,
        };
        match self.nudges.next(&answered) {
            Some(request) => Step::Ask {
                request,
                notice: "asking the model to do it instead of leaving it to you".into(),
            },
            None => Step::Proceed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::facts::TurnFacts;

    fn view(facts: &TurnFacts) -> TurnView<'_> {
        TurnView {
            facts,
            offered: &["bash", "write_file"],
            text_calls: true,
        }
    }

    #[test]
    fn an_empty_reply_is_retried_once() {
        let facts = TurnFacts::new("go on");
        let mut coach = SmallModelCoach::new("go on");
        let mut empty = Message::assistant("");
        assert!(matches!(
            coach.after_reply(&view(&facts), &mut empty),
            Step::Retry { .. }
        ));
        assert_eq!(coach.after_reply(&view(&facts), &mut empty), Step::Proceed);
    }

    #[test]
    fn a_shown_command_is_taken_only_after_a_request_and_only_when_allowed() {
        let request = "Create hello.py that prints hello, then run it";
        let facts = TurnFacts::new(request);
        let mut coach = SmallModelCoach::new(request);
        let shows = "Run it:\n```bash\npython3 hello.py\n```";
        let mut answer = Message::assistant(shows);
        assert!(matches!(
            coach.after_reply(&view(&facts), &mut answer),
            Step::Ask { .. }
        ));
        assert!(
            answer.tool_calls.is_empty(),
            "the answer itself is never run"
        );
        let mut reply = Message::assistant(shows);
        assert_eq!(coach.after_reply(&view(&facts), &mut reply), Step::Proceed);
        assert_eq!(reply.tool_calls.len(), 1);

        let request = "Show me how to run hello.py";
        let facts = TurnFacts::new(request);
        let mut coach = SmallModelCoach::new(request);
        let mut answer = Message::assistant(shows);
        assert_eq!(coach.after_reply(&view(&facts), &mut answer), Step::Proceed);
        assert!(answer.tool_calls.is_empty());
    }

    #[test]
    fn a_looping_stream_is_cut() {
        let mut coach = SmallModelCoach::new("x");
        let unit = "The same paragraph, again and again, with nothing new in it at all.\n";
        let cut = (0..200).find_map(|_| coach.on_text(unit));
        let kept = cut.unwrap_or_default();
        assert_eq!(kept.matches("The same paragraph").count(), 1, "{kept}");
        coach.on_new_attempt();
        assert_eq!(coach.on_text(unit), None);
    }
}
