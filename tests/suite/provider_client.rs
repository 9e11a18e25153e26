//! The model client as a library against the mock server, with a sleeper the test controls:
//! the waits between attempts are asserted exactly (Retry-After, backoff, cap) without real
//! sleeping, and a tool-call stream cut at every byte never yields a partial call.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent::config::Endpoint;
use agent::model::retry::Sleeper;
use agent::model::{
    ChatRequest, Client, Completion, Message, ModelError, ProviderSettings, StreamEvent, ToolCall,
    ToolSpec,
};
use serde_json::json;

use crate::support::sse::{text_events, tool_events};
use crate::support::{MockServer, Reply};

/// A virtual clock: `sleep` records the duration, advances virtual time and returns at once.
#[derive(Debug, Default)]
struct VirtualClock {
    waits: Mutex<Vec<Duration>>,
}

impl VirtualClock {
    fn waits(&self) -> Vec<Duration> {
        self.waits.lock().unwrap().clone()
    }
}

impl Sleeper for VirtualClock {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        self.waits.lock().unwrap().push(duration);
        Box::pin(async {})
    }
}

fn client(server: &MockServer, settings: ProviderSettings) -> (Client, Arc<VirtualClock>) {
    let clock = Arc::new(VirtualClock::default());
    let endpoint = Endpoint {
        base_url: server.base_url(),
        api_key: "sk-test".into(),
        model: "mock-model".into(),
    };
    let client = Client::new(endpoint, settings)
        .unwrap()
        .with_sleeper(clock.clone());
    (client, clock)
}

fn bash_tool() -> ToolSpec {
    ToolSpec {
        name: "bash",
        description: "Run a command.",
        parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
    }
}

fn request() -> ChatRequest {
    ChatRequest {
        messages: vec![Message::system("sys"), Message::user("go")],
        tools: vec![bash_tool()],
        max_tokens: None,
    }
}

/// Runs one request; returns the result and every event.
fn complete(
    client: &Client,
    request: &ChatRequest,
) -> (Result<Completion, ModelError>, Vec<StreamEvent>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut events = Vec::new();
    let result = runtime.block_on(client.complete(request, &mut |event| events.push(event)));
    (result, events)
}

fn retry_delays(events: &[StreamEvent]) -> Vec<(u32, Duration)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retrying { attempt, delay, .. } => Some((*attempt, *delay)),
            _ => None,
        })
        .collect()
}

fn raw_status(status: &str, headers: &str) -> Reply {
    Reply::Raw(format!("HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{headers}\r\n{{\"error\":{{\"message\":\"slow down\"}}}}").into_bytes())
}

#[test]
fn retry_after_seconds_is_the_gap_between_attempts() {
    let server = MockServer::start(vec![
        raw_status("429 Too Many Requests", "Retry-After: 7\r\n"),
        Reply::Sse(text_events(&["ok"])),
    ]);
    let (client, clock) = client(&server, ProviderSettings::default());
    let (result, events) = complete(&client, &request());
    assert_eq!(result.unwrap().message.text_content(), "ok");
    assert_eq!(clock.waits(), vec![Duration::from_secs(7)]);
    assert_eq!(retry_delays(&events), vec![(2, Duration::from_secs(7))]);
    assert_eq!(server.chat_requests().len(), 2);
}

#[test]
fn retry_after_http_date_and_ms_header() {
    let in_30s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 30;
    let date = httpdate(in_30s);
    let server = MockServer::start(vec![
        raw_status(
            "503 Service Unavailable",
            &format!("Retry-After: {date}\r\n"),
        ),
        raw_status(
            "429 Too Many Requests",
            "retry-after-ms: 1500\r\nRetry-After: 2\r\n",
        ),
        Reply::Sse(text_events(&["ok"])),
    ]);
    let (client, clock) = client(&server, ProviderSettings::default());
    let (result, _) = complete(&client, &request());
    assert!(result.is_ok());
    let waits = clock.waits();
    assert!(
        waits[0] >= Duration::from_secs(28) && waits[0] <= Duration::from_secs(30),
        "{waits:?}"
    );
    assert_eq!(waits[1], Duration::from_millis(1500));
}

#[test]
fn retry_after_is_capped() {
    let server = MockServer::start(vec![
        raw_status("429 Too Many Requests", "Retry-After: 3600\r\n"),
        Reply::Sse(text_events(&["ok"])),
    ]);
    let settings = ProviderSettings {
        max_retry_wait: Duration::from_secs(20),
        ..ProviderSettings::default()
    };
    let (client, clock) = client(&server, settings);
    assert!(complete(&client, &request()).0.is_ok());
    assert_eq!(clock.waits(), vec![Duration::from_secs(20)]);
}

#[test]
fn backoff_doubles_with_jitter_then_gives_up_after_five_attempts() {
    let server = MockServer::start((0..5).map(|_| Reply::error(502, "bad gateway")).collect());
    let (client, clock) = client(&server, ProviderSettings::default());
    let (result, events) = complete(&client, &request());
    let waits = clock.waits();
    assert_eq!(waits.len(), 4, "{waits:?}");
    for (i, wait) in waits.iter().enumerate() {
        let base = Duration::from_secs(1 << i);
        assert!(
            *wait >= base.mul_f64(0.75) && *wait <= base.mul_f64(1.25),
            "wait {i}: {wait:?}"
        );
    }
    let attempts: Vec<u32> = retry_delays(&events).iter().map(|(a, _)| *a).collect();
    assert_eq!(attempts, vec![2, 3, 4, 5]);
    match result {
        Err(ModelError::RetriesExhausted { attempts: 5, last }) => {
            assert_eq!(
                last.to_string(),
                "the model server answered 502: bad gateway"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.chat_requests().len(), 5);
}

#[test]
fn client_errors_do_not_wait() {
    for status in [400, 401, 403, 404] {
        let server = MockServer::start(vec![Reply::error(status, "no")]);
        let (client, clock) = client(&server, ProviderSettings::default());
        let (result, events) = complete(&client, &request());
        assert!(matches!(result, Err(ModelError::Status { status: s, .. }) if s == status));
        assert!(clock.waits().is_empty() && events.is_empty(), "{status}");
        assert_eq!(server.chat_requests().len(), 1);
    }
}

#[test]
fn context_length_in_any_wording_is_its_own_error() {
    for body in [
        r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","code":"context_length_exceeded"}}"#,
        r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
        r#"{"error":"prompt is too long: 210000 tokens > 200000 maximum"}"#,
    ] {
        let server = MockServer::start(vec![Reply::Status {
            status: 400,
            headers: vec![],
            body: body.into(),
        }]);
        let (client, clock) = client(&server, ProviderSettings::default());
        let (result, _) = complete(&client, &request());
        assert!(
            matches!(result, Err(ModelError::ContextLengthExceeded { .. })),
            "{body}: {result:?}"
        );
        assert!(clock.waits().is_empty());
    }
}

/// The full byte stream of one bash call, and the call it must produce.
fn tool_stream() -> (Vec<u8>, ToolCall) {
    let arguments = r#"{"command":"echo run >> effects.txt"}"#;
    let mut bytes = Vec::new();
    for event in tool_events("call_x", "bash", arguments) {
        bytes.extend_from_slice(format!("data: {event}\n\n").as_bytes());
    }
    bytes.extend_from_slice(b"data: [DONE]\n\n");
    let call = ToolCall {
        id: "call_x".into(),
        name: "bash".into(),
        arguments: arguments.into(),
    };
    (bytes, call)
}

#[test]
fn a_stream_cut_at_any_byte_never_yields_a_partial_call() {
    let (bytes, call) = tool_stream();
    let finish_at = bytes
        .windows(13)
        .position(|w| w == b"finish_reason")
        .unwrap();
    // The end of the finish_reason event's JSON: a cut before it is an interrupted stream.
    let finish_end = finish_at + bytes[finish_at..].iter().position(|&b| b == b'\n').unwrap();
    let server = MockServer::start(vec![]);
    let settings = ProviderSettings {
        max_attempts: 2,
        ..ProviderSettings::default()
    };
    let (client, clock) = client(&server, settings);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for cut in 0..bytes.len() {
        server.push(Reply::SseRaw(vec![(Duration::ZERO, bytes[..cut].to_vec())]));
        server.push(Reply::SseRaw(vec![(Duration::ZERO, bytes.clone())]));
        let waits_before = clock.waits().len();
        let mut events = Vec::new();
        let result = runtime.block_on(client.complete(&request(), &mut |e| events.push(e)));
        let completion = result.unwrap_or_else(|e| panic!("cut {cut}: {e}"));
        assert_eq!(
            completion.message.tool_calls,
            vec![call.clone()],
            "cut {cut}"
        );
        let retried = clock.waits().len() > waits_before;
        // A cut before the finish_reason event is whole is an interrupted stream and is
        // retried; once that event is in, the stream counts as finished.
        assert_eq!(retried, cut < finish_end, "cut {cut}");
        assert_eq!(server.remaining(), usize::from(!retried), "cut {cut}");
        assert!(
            !events.iter().any(|e| matches!(e, StreamEvent::Text(_))),
            "cut {cut}"
        );
        if !retried {
            // Consume the unused second reply.
            let spare = runtime.block_on(client.complete(&request(), &mut |_| {}));
            assert!(spare.is_ok());
        }
    }
}

#[test]
fn a_text_written_call_is_held_back_and_plain_text_released() {
    let call =
        "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>";
    let pieces: Vec<String> = call.chars().map(String::from).collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![
        Reply::Sse(text_events(&refs)),
        Reply::Sse(text_events(&["<tool", "_call> is a tag"])),
    ]);
    let (client, _) = client(&server, ProviderSettings::default());
    let (result, events) = complete(&client, &request());
    let message = result.unwrap().message;
    assert_eq!(message.content, None);
    assert_eq!(message.tool_calls.len(), 1);
    assert!(
        events.iter().all(|e| matches!(e, StreamEvent::Held { .. })),
        "{events:?}"
    );
    let (result, events) = complete(&client, &request());
    assert_eq!(
        result.unwrap().message.text_content(),
        "<tool_call> is a tag"
    );
    assert_eq!(
        events,
        vec![
            StreamEvent::Held { chars: 5 },
            StreamEvent::Text("<tool_call> is a tag".into())
        ]
    );
}

#[test]
fn synthesized_ids_are_unique_within_the_session() {
    let server = MockServer::start(vec![
        Reply::Json(
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "tool_calls": [
                {"type": "function", "function": {"name": "bash", "arguments": "{}"}},
                {"id": "", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
                {"id": "dup", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
                {"id": "dup", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]}}]}),
        ),
        Reply::Json(
            json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "tool_calls": [{"type": "function", "function": {"name": "bash", "arguments": "{}"}}]}}]}),
        ),
    ]);
    let (client, _) = client(&server, ProviderSettings::default());
    let mut ids: Vec<String> = Vec::new();
    for _ in 0..2 {
        let completion = complete(&client, &request()).0.unwrap();
        ids.extend(completion.message.tool_calls.into_iter().map(|c| c.id));
    }
    assert_eq!(ids[2], "dup");
    assert!(ids.iter().all(|id| !id.is_empty()));
    let mut unique = ids.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 5, "{ids:?}");
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` for Unix seconds (test-only formatter).
fn httpdate(unix: u64) -> String {
    let days = unix / 86_400;
    let secs = unix % 86_400;
    // Civil from days (Howard Hinnant).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{weekday}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        months[(month - 1) as usize],
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[test]
fn test_httpdate_formatter_matches_rfc_example() {
    assert_eq!(httpdate(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
}

/// A reply held back as a possible tool call reports its progress (characters held, never
/// decreasing) and no text; a reply that turns out to be prose is shown once it is decided.
#[test]
fn a_held_reply_reports_progress_instead_of_text() {
    let call = r#"{"name": "bash", "arguments": {"command": "ls"}}"#;
    let pieces: Vec<String> = call
        .chars()
        .collect::<Vec<_>>()
        .chunks(5)
        .map(|c| c.iter().collect())
        .collect();
    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
    let server = MockServer::start(vec![
        Reply::Sse(text_events(&refs)),
        Reply::Sse(text_events(&["{\"a\": 1}", " is JSON"])),
    ]);
    let (client, _) = client(&server, ProviderSettings::default());
    let held = |events: &[StreamEvent]| -> Vec<usize> {
        events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Held { chars } => Some(*chars),
                _ => None,
            })
            .collect()
    };
    let (result, events) = complete(&client, &request());
    assert_eq!(result.unwrap().message.tool_calls.len(), 1);
    let counts = held(&events);
    assert_eq!(counts.first(), Some(&5), "{events:?}");
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    assert!(counts.iter().all(|n| *n <= call.len()), "{counts:?}");
    assert!(
        !events.iter().any(|e| matches!(e, StreamEvent::Text(_))),
        "{events:?}"
    );

    let (result, events) = complete(&client, &request());
    assert_eq!(result.unwrap().message.text_content(), "{\"a\": 1} is JSON");
    assert_eq!(
        events,
        vec![
            StreamEvent::Held { chars: 8 },
            StreamEvent::Text("{\"a\": 1} is JSON".into())
        ]
    );
}
