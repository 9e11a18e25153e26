//! Property tests of the stream parsing (issue 7 "done means"): `SseParser` + `Accumulator`
//! over random valid streams, random chunkings, truncations and byte mutations, plus the text
//! gates (`Holdback`, `ThinkSplitter`). Each property runs `PROPTEST_CASES` cases (default
//! 1,000; CI can raise it).
//!
//! Properties:
//! 1. a valid stream gives the modelled answer (text, reasoning, calls in index order,
//!    usage), whatever the chunking and framing (LF/CRLF/CR, `data:` with or without space,
//!    comments, `[DONE]` with or without space);
//! 2. a valid stream cut anywhere before its `finish_reason` event is complete gives no
//!    answer (never a partial call);
//! 3. any byte sequence (mutated streams) never panics, and its result does not depend on the
//!    chunking;
//! 4. the holdback gate shows nothing of a text-written call, loses no text, decides the
//!    same for any chunking, and releases text that goes on after a call form;
//! 5. the think splitter loses no text and is chunking-independent.

use agent::model::StreamEvent;
use agent::model::accumulate::Accumulator;
use agent::model::holdback::Holdback;
use agent::model::sse::SseParser;
use agent::model::text_calls;
use agent::model::think::{self, ThinkSplitter};
use agent::model::types::{ToolCall, Usage};
use agent::model::wire::RawCompletion;
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

/// Feeds `bytes` split at `cuts`; returns (shown text, shown reasoning, answer).
fn feed(bytes: &[u8], cuts: &[Index]) -> (String, String, Option<RawCompletion>) {
    let mut points: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut parser = SseParser::new();
    let mut accumulator = Accumulator::new();
    let (mut text, mut reasoning) = (String::new(), String::new());
    let mut start = 0;
    let mut apply = |events: Vec<agent::model::sse::SseEvent>, acc: &mut Accumulator| {
        for event in events {
            for shown in acc.apply(&event) {
                match shown {
                    StreamEvent::Text(t) => text.push_str(&t),
                    StreamEvent::Reasoning(r) => reasoning.push_str(&r),
                    _ => {}
                }
            }
        }
    };
    for point in points.into_iter().chain([bytes.len()]) {
        apply(parser.push(&bytes[start..point]), &mut accumulator);
        start = point;
    }
    apply(parser.finish(), &mut accumulator);
    (text, reasoning, accumulator.finish())
}

/// How events are framed on the wire.
#[derive(Debug, Clone)]
struct Framing {
    line_end: &'static str,
    space: bool,
    comments: bool,
    done_space: bool,
}

fn framing() -> impl Strategy<Value = Framing> {
    (
        prop::sample::select(vec!["\n", "\r\n", "\r"]),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(line_end, space, comments, done_space)| Framing {
            line_end,
            space,
            comments,
            done_space,
        })
}

fn render(events: &[Value], framing: &Framing, done: bool) -> Vec<u8> {
    let end = framing.line_end;
    let data = if framing.space { "data: " } else { "data:" };
    let mut out = String::new();
    for (i, event) in events.iter().enumerate() {
        if framing.comments && i % 2 == 0 {
            out.push_str(&format!(": keep-alive{end}{end}"));
        }
        out.push_str(&format!("{data}{event}{end}{end}"));
    }
    if done {
        let marker = if framing.done_space {
            "data: [DONE]"
        } else {
            "data:[DONE]"
        };
        out.push_str(&format!("{marker}{end}{end}"));
    }
    out.into_bytes()
}

/// Text that stresses JSON escaping, tags, fences and multi-byte characters.
fn text() -> impl Strategy<Value = String> {
    "[a-z {}\\[\\]\"\\\\<>/`:é漢\n]{0,12}"
}

/// A modelled stream: its chunks and the answer it must give.
#[derive(Debug, Clone)]
struct Script {
    events: Vec<Value>,
    content: String,
    reasoning: String,
    calls: Vec<ToolCall>,
    usage: Option<Usage>,
}

prop_compose! {
    fn call()(name in prop::sample::select(vec!["bash", "read_file", "write_file"]),
               command in text(), id in "[a-zA-Z0-9_]{1,8}", pieces in 1usize..6)
               -> (String, String, String, usize) {
        (id, name.to_string(), json!({"command": command, "n": 1}).to_string(), pieces)
    }
}

prop_compose! {
    fn script()(texts in prop::collection::vec(text(), 0..5),
                reasonings in prop::collection::vec(text(), 0..3),
                calls in prop::collection::vec(call(), 0..4),
                indexed in any::<bool>(),
                ids_on_first in any::<bool>(),
                order in prop::collection::vec(any::<Index>(), 0..40),
                usage in any::<bool>()) -> Script {
        build_script(&texts, &reasonings, &calls, indexed, ids_on_first, &order, usage)
    }
}

fn split_chars(text: &str, pieces: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(pieces).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn build_script(
    texts: &[String],
    reasonings: &[String],
    calls: &[(String, String, String, usize)],
    indexed: bool,
    ids: bool,
    order: &[Index],
    usage: bool,
) -> Script {
    let mut events = Vec::new();
    for r in reasonings {
        events.push(json!({"choices": [{"index": 0, "delta": {"reasoning_content": r}}]}));
    }
    for t in texts {
        events.push(json!({"choices": [{"index": 0, "delta": {"content": t}}]}));
    }
    // Fragment queues per call; the first fragment names the call.
    let mut queues: Vec<Vec<Value>> = calls
        .iter()
        .enumerate()
        .map(|(i, (id, name, args, pieces))| {
            split_chars(args, *pieces)
                .into_iter()
                .enumerate()
                .map(|(k, piece)| {
                    let mut fragment = json!({"function": {"arguments": piece}});
                    if indexed {
                        fragment["index"] = json!(i);
                    }
                    if k == 0 {
                        fragment["function"]["name"] = json!(name);
                        fragment["type"] = json!("function");
                        if ids || !indexed {
                            fragment["id"] = json!(id);
                        }
                    }
                    fragment
                })
                .collect()
        })
        .collect();
    // Indexed calls interleave in a random order; unindexed ones follow each other.
    let mut picks = order.iter();
    while queues.iter().any(|q| !q.is_empty()) {
        let open: Vec<usize> = (0..queues.len())
            .filter(|&i| !queues[i].is_empty())
            .collect();
        let pick = match (indexed, picks.next()) {
            (true, Some(index)) => open[index.index(open.len())],
            _ => open[0],
        };
        let fragment = queues[pick].remove(0);
        events.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]}));
    }
    let reason = if calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    events.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}));
    let usage = usage.then_some(Usage {
        prompt_tokens: 12,
        completion_tokens: 3,
        cached_tokens: Some(4),
        cost: None,
    });
    if usage.is_some() {
        events.push(json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}}}));
    }
    let split = think::split_whole(&texts.concat());
    Script {
        events,
        content: split.content,
        reasoning: reasonings.concat() + &split.reasoning,
        calls: calls
            .iter()
            .map(|(id, name, args, _)| ToolCall {
                id: if ids || !indexed {
                    id.clone()
                } else {
                    String::new()
                },
                name: name.clone(),
                arguments: args.clone(),
            })
            .collect(),
        usage,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Property 1.
    #[test]
    fn valid_streams_give_the_modelled_answer_for_any_chunking(
        script in script(), framing in framing(), done in any::<bool>(),
        cuts in prop::collection::vec(any::<Index>(), 0..12),
    ) {
        let bytes = render(&script.events, &framing, done);
        let (text, reasoning, answer) = feed(&bytes, &cuts);
        let answer = answer.expect("a stream with a finish_reason is complete");
        prop_assert_eq!(&answer.content, &script.content);
        prop_assert_eq!(&text, &script.content, "shown text is the content");
        prop_assert_eq!(&answer.reasoning, &script.reasoning);
        prop_assert_eq!(&reasoning, &script.reasoning);
        prop_assert_eq!(&answer.tool_calls, &script.calls);
        prop_assert_eq!(answer.usage, script.usage);
    }

    /// Property 2.
    #[test]
    fn streams_cut_before_their_finish_give_no_answer(
        script in script(), framing in framing(), at in any::<Index>(),
        cuts in prop::collection::vec(any::<Index>(), 0..6),
    ) {
        let bytes = render(&script.events, &framing, true);
        // The end of the finish_reason event's JSON (texts never contain `finish_reason`).
        let at_name = bytes.windows(13).position(|w| w == b"finish_reason").unwrap();
        let whole_json = at_name + bytes[at_name..].iter().position(|&b| b == b'\n' || b == b'\r').unwrap();
        let cut = at.index(whole_json);
        let (_, _, answer) = feed(&bytes[..cut], &cuts);
        prop_assert!(answer.is_none(), "cut at {} of {}", cut, bytes.len());
    }

    /// Property 3.
    #[test]
    fn any_bytes_never_panic_and_do_not_depend_on_chunking(
        script in script(), framing in framing(),
        mutations in prop::collection::vec((any::<Index>(), any::<u8>(), 0u8..4), 0..12),
        cuts in prop::collection::vec(any::<Index>(), 0..12),
    ) {
        let mut bytes = render(&script.events, &framing, true);
        for (at, byte, kind) in mutations {
            if bytes.is_empty() {
                bytes.push(byte);
                continue;
            }
            let i = at.index(bytes.len());
            match kind {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                2 => { bytes.remove(i); }
                _ => bytes.truncate(i),
            }
        }
        let whole = feed(&bytes, &[]);
        let chunked = feed(&bytes, &cuts);
        prop_assert_eq!(whole, chunked);
    }

    /// Property 4.
    #[test]
    fn holdback_never_shows_a_call_and_loses_no_text(
        opener in prop::sample::select(vec!["", "  ", "{", "```json\n", "```\n", "```python\n", "<tool_call>", "<tool_call>\n{\"name\": \"bash\", \"arguments\": {}}</tool_call>"]),
        body in text(),
        closer in prop::sample::select(vec!["", "}", "\n```", "</tool_call>", "} tail", "\n```\nmore", "\u{3000}", "\u{a0}\n"]),
        call in any::<bool>(),
        cuts in prop::collection::vec(any::<Index>(), 0..10),
    ) {
        let text = if call {
            format!("{opener}{{\"name\": \"bash\", \"arguments\": {{\"command\": {}}}}}{closer}", json!(body))
        } else {
            format!("{opener}{body}{closer}")
        };
        let run = |cuts: &[Index]| {
            let mut points: Vec<usize> = cuts.iter().map(|i| i.index(text.len() + 1)).collect();
            points.sort_unstable();
            let mut gate = Holdback::new(true);
            let mut shown = String::new();
            let mut start = 0;
            for point in points.into_iter().chain([text.len()]) {
                let point = (point..=text.len()).find(|p| text.is_char_boundary(*p)).unwrap_or(text.len());
                if point < start { continue; }
                if let Some(s) = gate.push(&text[start..point]) { shown.push_str(&s); }
                start = point;
            }
            (shown, gate.take_held())
        };
        let (shown, held) = run(&cuts);
        prop_assert_eq!(format!("{shown}{held}"), text.clone(), "no text lost");
        prop_assert_eq!((shown.clone(), held.clone()), run(&[]), "chunking-independent");
        if text_calls::extract(&text, &["bash"]).is_some() {
            prop_assert_eq!(shown, "", "a call is never shown");
        }
    }

    /// Property 4b: a call form followed by more text is released while streaming.
    #[test]
    fn holdback_releases_text_that_goes_on_after_a_call_form(
        form in prop::sample::select(vec![
            "{\"name\": \"bash\", \"arguments\": {}}",
            "```json\n{\"name\": \"bash\", \"arguments\": {}}\n```",
            "<tool_call>{\"name\": \"bash\", \"arguments\": {}}</tool_call>",
        ]),
        gap in "[ \n]{0,3}",
        tail in "[a-z.!]{1,8}",
        cuts in prop::collection::vec(any::<Index>(), 0..10),
    ) {
        let text = format!("{form}{gap}{tail}");
        let mut points: Vec<usize> = cuts.iter().map(|i| i.index(text.len() + 1)).collect();
        points.sort_unstable();
        let mut gate = Holdback::new(true);
        let mut shown = String::new();
        let mut start = 0;
        for point in points.into_iter().chain([text.len()]) {
            if let Some(s) = gate.push(&text[start..point]) { shown.push_str(&s); }
            start = point;
        }
        prop_assert_eq!(shown, text);
        prop_assert!(!gate.is_holding());
    }

    /// Property 5.
    #[test]
    fn think_splitter_is_chunking_independent(
        prefix in prop::sample::select(vec!["", " ", "<think>", "<thi", "\n<think>\n"]),
        body in "[a-z<>/ \n]{0,20}",
        middle in prop::sample::select(vec!["", "</think>", "</thi", "</think>\n\n"]),
        rest in "[a-z<>/ \n]{0,10}",
        cuts in prop::collection::vec(any::<Index>(), 0..8),
    ) {
        let text = format!("{prefix}{body}{middle}{rest}");
        let whole = think::split_whole(&text);
        let mut points: Vec<usize> = cuts.iter().map(|i| i.index(text.len() + 1)).collect();
        points.sort_unstable();
        let mut splitter = ThinkSplitter::new();
        let (mut reasoning, mut content) = (String::new(), String::new());
        let mut start = 0;
        for point in points.into_iter().chain([text.len()]) {
            let part = splitter.push(&text[start..point]);
            reasoning.push_str(&part.reasoning);
            content.push_str(&part.content);
            start = point;
        }
        let tail = splitter.finish();
        reasoning.push_str(&tail.reasoning);
        content.push_str(&tail.content);
        prop_assert_eq!((reasoning, content), (whole.reasoning, whole.content));
    }
}
